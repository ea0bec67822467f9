/**
 * `dirid-server init` that fails part way (here: a PostgreSQL database that
 * refuses the connection, after the master key is written) leaves the data
 * directory as it found it, so the next init in the same directory is not
 * refused for a realm that was never made. An address to listen on that is
 * none is refused before anything is written, and so is an ID range below
 * 1000 or past the 32-bit limit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';

const BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
const REFUSING_DATABASE = 'postgresql://nouser@127.0.0.1:1/db';

describe('dirid-server init that fails', () => {
  let tmp: string;
  let pw: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-init-fail-'));
    pw = join(tmp, 'pw');
    writeFileSync(pw, 'Admin-pass-42\n', { mode: 0o600 });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const init = (data: string, ...extra: string[]) =>
    spawnSync(process.execPath, [BIN, 'init', '--data-dir', data, '--realm', 'FAIL.TEST', '--domain', 'fail.test', '--hostname', 'localhost', '--admin-password-file', pw, ...extra], { encoding: 'utf8', timeout: 60_000 });

  it('refuses a --listen that is no address, writing nothing', () => {
    const data = join(tmp, 'listen');
    const r = init(data, '--listen', '0.0.0.0:88');
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, "dirid-server: ERROR: invalid --listen '0.0.0.0:88': give an IP address (0.0.0.0 for every interface, 127.0.0.1 for loopback) or a host name\n");
    assert.equal(existsSync(data), false);
  });

  it('init refuses a range below 1000 or past the 32-bit limit', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dirid-range-'));
    try {
      const o = { dataDir: join(dir, 'r'), realm: 'R.TEST', domain: 'r.test', hostname: 'localhost', adminPassword: 'Secret123-admin' };
      await assert.rejects(initRealm({ ...o, idStart: 10 }), /invalid ID range: the first ID must be at least 1000/);
      await assert.rejects(initRealm({ ...o, idStart: 2_147_400_000 }), /invalid ID range: the range must end at 2147483646 or below/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('removes the data directory it made, and a retry with SQLite succeeds there', () => {
    const data = join(tmp, 'new', 'realm');
    const failed = init(data, '--database', REFUSING_DATABASE);
    assert.equal(failed.status, 1, failed.stderr);
    assert.match(failed.stderr, /cannot use the database postgresql:\/\/nouser@127\.0\.0\.1:1\/db/);
    assert.equal(existsSync(join(tmp, 'new')), false, 'the directories init made are left behind');
    const retried = init(data);
    assert.equal(retried.status, 0, retried.stderr);
    assert.doesNotMatch(retried.stderr, /already holds a realm/);
    for (const f of ['master.key', 'dirid.db', 'server.conf', 'ca.crt']) assert.ok(existsSync(join(data, f)), f);
  });

  it('in a directory that was there, removes only what it wrote', () => {
    const data = join(tmp, 'kept');
    mkdirSync(data, { mode: 0o700 });
    writeFileSync(join(data, 'notes.txt'), 'mine\n');
    const failed = init(data, '--database', REFUSING_DATABASE);
    assert.equal(failed.status, 1, failed.stderr);
    assert.deepEqual(readdirSync(data), ['notes.txt']);
    const retried = init(data);
    assert.equal(retried.status, 0, retried.stderr);
    assert.ok(existsSync(join(data, 'master.key')));
    assert.ok(existsSync(join(data, 'notes.txt')));
  });
});
