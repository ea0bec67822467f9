/**
 * What dirid-server says when a file or directory it was given is not
 * there: the admin password file of init, the data directory of start (or
 * one that holds no realm), a data directory that is a file: our words and
 * the path, not a raw ENOENT.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
const run = (args: string[]) => spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', timeout: 15_000 });

describe('dirid-server given a path that is not there', () => {
  let tmp: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-missing-'));
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const initArgs = (data: string, pw: string) => ['init', '--data-dir', data, '--realm', 'MISS.TEST', '--domain', 'miss.test', '--hostname', 'localhost', '--admin-password-file', pw];

  it('init: a missing admin password file is named, and nothing is created', () => {
    const pw = join(tmp, 'no-such.pw');
    const r = run(initArgs(join(tmp, 'realm'), pw));
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, `dirid-server: ERROR: cannot read the admin password file ${pw} (no such file)\n`);
    assert.equal(existsSync(join(tmp, 'realm')), false);
  });

  it('init: a data directory that is a file is refused as such', () => {
    const pw = join(tmp, 'pw');
    writeFileSync(pw, 'Admin-pass-42\n', { mode: 0o600 });
    const file = join(tmp, 'a-file');
    writeFileSync(file, 'x');
    const r = run(initArgs(file, pw));
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, `dirid-server: ERROR: --data-dir ${file} is not a directory\n`);
  });

  it('start: a missing data directory, or one without a realm, is said so', () => {
    const missing = join(tmp, 'nowhere');
    const r = run(['start', '--data-dir', missing]);
    assert.equal(r.status, 1, r.stderr);
    assert.equal(r.stderr, `dirid-server: ERROR: the data directory ${missing} does not exist\n`);
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const e = run(['start', '--data-dir', empty]);
    assert.equal(e.status, 1, e.stderr);
    assert.equal(e.stderr, `dirid-server: ERROR: ${empty} holds no realm (no server.conf): create one with dirid-server init --data-dir ${empty}\n`);
  });
});
