/**
 * One server at a time on a data directory (src/server/data-lock.ts): a
 * second `dirid-server start` is refused, naming the running server's
 * process id, and leaves the client files alone; a server killed with
 * SIGKILL leaves a stale lock the next start takes over; a clean stop
 * removes the lock. In-process starts obey the same lock. A copy of the
 * data directory (a restored backup, a copy made while the server ran)
 * starts while the original runs: its copied lock is not its own, nor is a
 * lock written on another machine.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { startServer } from '../../src/server/start.js';
import { EPHEMERAL_PORT_ARGS, SERVER_BIN, startServerProcess } from '../support/server-process.js';

const PORTS = { listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0 };

function exited(child: ChildProcess, signal?: NodeJS.Signals): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (c) => resolve(c));
    if (signal) child.kill(signal);
  });
}

describe('the lock of a data directory', () => {
  let tmp: string;
  let data: string;
  const children: ChildProcess[] = [];
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-lock-'));
    data = join(tmp, 'realm');
    await initRealm({ dataDir: data, realm: 'LOCK.TEST', domain: 'lock.test', hostname: 'localhost', adminPassword: 'Admin-pass-42' });
  });
  after(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(tmp, { recursive: true, force: true });
  });

  it('refuses a second start naming the running server, takes over the lock of a killed one, and a clean stop removes it', async () => {
    const first = await startServerProcess(data);
    children.push(first.child);
    const lock = join(data, 'server.lock');
    assert.match(readFileSync(lock, 'utf8'), new RegExp(`^${first.child.pid}\\n`));
    const files = ['krb5.conf', 'default.conf', 'sssd.conf'].map((f) => readFileSync(join(data, f), 'utf8'));

    const second = spawnSync(process.execPath, [SERVER_BIN, 'start', '--data-dir', data, ...EPHEMERAL_PORT_ARGS], { encoding: 'utf8', timeout: 15_000 });
    assert.equal(second.status, 1, second.stdout + second.stderr);
    assert.match(second.stderr, new RegExp(`^dirid-server: ERROR: ${data} is in use by another dirid-server \\(process ${first.child.pid}\\)`));
    assert.doesNotMatch(second.stdout, /listening/);
    assert.deepEqual(['krb5.conf', 'default.conf', 'sssd.conf'].map((f) => readFileSync(join(data, f), 'utf8')), files, 'the refused start rewrote client files');
    assert.match(readFileSync(lock, 'utf8'), new RegExp(`^${first.child.pid}\\n`), 'the running server keeps its lock');

    // killed: its lock stays behind, and the next start takes it over
    await exited(first.child, 'SIGKILL');
    assert.ok(existsSync(lock));
    const third = await startServerProcess(data);
    children.push(third.child);
    assert.match(readFileSync(lock, 'utf8'), new RegExp(`^${third.child.pid}\\n`));
    assert.equal(await exited(third.child, 'SIGTERM'), 0, third.out());
    assert.equal(existsSync(lock), false, 'a clean stop removes the lock');
  });

  it('a copy of the data directory starts while the original runs, and the original keeps its lock', async () => {
    const original = await startServerProcess(data);
    children.push(original.child);
    try {
      const copy = join(tmp, 'copy');
      execFileSync('cp', ['-a', data, copy]);
      assert.match(readFileSync(join(copy, 'server.lock'), 'utf8'), new RegExp(`^${original.child.pid}\\n`), 'the lock was copied with the directory');
      const started = await startServer({ dataDir: copy, ...PORTS, log: () => {} });
      try {
        assert.match(readFileSync(join(copy, 'server.lock'), 'utf8'), new RegExp(`^${process.pid}\\n`), 'the copy took its lock over');
        assert.match(readFileSync(join(data, 'server.lock'), 'utf8'), new RegExp(`^${original.child.pid}\\n`), 'the original keeps its own');
      } finally {
        await started.stop();
      }
      // and the original's own directory is still refused to a second server
      const second = spawnSync(process.execPath, [SERVER_BIN, 'start', '--data-dir', data, ...EPHEMERAL_PORT_ARGS], { encoding: 'utf8', timeout: 15_000 });
      assert.equal(second.status, 1, second.stdout + second.stderr);
      assert.match(second.stderr, new RegExp(`is in use by another dirid-server \\(process ${original.child.pid}\\)`));
      rmSync(copy, { recursive: true, force: true });
    } finally {
      assert.equal(await exited(original.child, 'SIGTERM'), 0, original.out());
    }
  });

  it('a lock written on another machine is not this one\'s: a live process of the same id here does not hold it', async () => {
    // the lock the original server writes, with another machine's name
    const one = await startServer({ dataDir: data, ...PORTS, log: () => {} });
    const [pid, identity, , directory] = readFileSync(join(data, 'server.lock'), 'utf8').split('\n');
    await one.stop();
    // this process is alive, with the same boot and start time: only the machine's name differs
    writeFileSync(join(data, 'server.lock'), `${pid}\n${identity}\nanother-machine.example\n${directory}\n`);
    const heldHere = await startServer({ dataDir: data, ...PORTS, log: () => {} });
    await heldHere.stop();
    assert.equal(existsSync(join(data, 'server.lock')), false);
  });

  it('holds for servers started in one process, and a lock another process got by the same id after a crash is stale', async () => {
    const one = await startServer({ dataDir: data, ...PORTS, log: () => {} });
    try {
      const second = await startServer({ dataDir: data, ...PORTS, log: () => {} }).then(
        async (s) => {
          await s.stop();
          return null;
        },
        (e: unknown) => e,
      );
      assert.ok(second instanceof Error, 'a second server started on the data directory');
      assert.match(second.message, /is in use by a server already started in this process/);
    } finally {
      await one.stop();
    }
    assert.equal(existsSync(join(data, 'server.lock')), false);
    // process 1 is alive, but it is not the process that wrote this lock (another start time)
    if (existsSync('/proc/1/stat')) {
      writeFileSync(join(data, 'server.lock'), '1\n00000000-0000-0000-0000-000000000000 1\n');
      const two = await startServer({ dataDir: data, ...PORTS, log: () => {} });
      await two.stop();
      assert.equal(existsSync(join(data, 'server.lock')), false);
    }
  });
});
