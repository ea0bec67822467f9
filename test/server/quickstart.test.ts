/**
 * `npm run quickstart` (scripts/quickstart.sh) as a new user runs it: the
 * demo realm is served on loopback only and says so, and the server goes
 * when whatever started it goes, even when that is killed outright (no
 * orphaned dirid-server holding the ports): its parent shell, or npm (whose
 * `sh -c` stays), also before the server has started; but not the shell that
 * put npm in the background and left. The demo cannot be exposed by
 * accident: its server.conf says loopback, so a later plain
 * `dirid-server start` serves loopback too, and a start on another address
 * is refused while admin.password sits in the data directory, unless told
 * so. DIRID_IDP_CA_FILE gives the server the CA of an IdP behind a private
 * CA (idp-add's discovery then reaches it).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RpcSession } from '../support/rpc-client.js';
import { startTestIdp } from '../support/oidc-idp.js';
import { SERVER_BIN } from '../support/server-process.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** Whether a TCP connection to host:port opens. */
function opens(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host, port, timeout: 2000 });
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
    s.once('timeout', () => done(false));
  });
}

/** The live (not zombie) processes of a process group, with their command lines. */
function groupMembers(pgid: number): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(f[2]) === pgid && f[0] !== 'Z') found.push({ pid: Number(name), cmd: readFileSync(`/proc/${name}/cmdline`, 'utf8').replace(/\0/g, ' ') });
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('quickstart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dirid-quickstart-'));
  const groups: number[] = [];
  after(() => {
    // whatever a failed run left (the script, an install, the server) goes with its process group
    for (const group of groups) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const quickstartEnv = (name: string): NodeJS.ProcessEnv => ({ ...process.env, DIRID_DATA_DIR: join(dir, name), DIRID_HTTPS_PORT: '0', DIRID_HTTP_PORT: '0', DIRID_KDC_PORT: '0', DIRID_KPASSWD_PORT: '0', DIRID_LDAP_PORT: '0', DIRID_LDAPS_PORT: '0', DIRID_QUICKSTART_SKIP_INSTALL: '1' });
  /** `npm run quickstart` in its own process group, once its API listens: npm, the API port, and what it printed so far. */
  const npmQuickstart = async (name: string) => {
    const npm = spawn('npm', ['run', '--silent', 'quickstart'], { cwd: ROOT, env: quickstartEnv(name), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    groups.push(npm.pid!);
    let out = '';
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const https = await new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the quickstart did not start:\n${out}`)), 60_000);
      npm.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
    });
    return { npm, https, output: () => out };
  };
  /** waits until the group has no live process left; what is still there after the deadline */
  const groupEnds = async (pgid: number, ms: number): Promise<{ pid: number; cmd: string }[]> => {
    const deadline = Date.now() + ms;
    while (groupMembers(pgid).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    return groupMembers(pgid);
  };

  /** `bash scripts/quickstart.sh` in its own process group, once its API listens: its port, what it printed, and a stop (SIGTERM to the group). */
  const scriptQuickstart = async (name: string, env: NodeJS.ProcessEnv = {}) => {
    const child = spawn('bash', ['scripts/quickstart.sh'], { cwd: ROOT, env: { ...quickstartEnv(name), ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    groups.push(child.pid!);
    let out = '';
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const https = await new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the quickstart did not start:\n${out}`)), 60_000);
      child.once('exit', (c) => reject(new Error(`the quickstart exited with ${c}:\n${out}`)));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
        if (m && / server started /.test(out)) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
    });
    const stop = async () => {
      process.kill(-child.pid!, 'SIGTERM');
      await groupEnds(child.pid!, 10_000);
    };
    return { https, output: () => out, stop };
  };

  /**
   * `dirid-server start` on ephemeral ports with `args`: how it ended (its
   * exit code and output), or, when it started, the address its API
   * listens on (then stopped).
   */
  const serverStart = (args: string[]): Promise<{ code: number | null; listening?: string; out: string }> =>
    new Promise((resolve, reject) => {
      const ports = ['--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'];
      const child = spawn(process.execPath, [SERVER_BIN, 'start', ...ports, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let listening: string | undefined;
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`dirid-server start neither started nor ended:\n${out}`));
      }, 30_000);
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = / service=https url=https:\/\/(.+?):\d+\/dirid\//.exec(out);
        if (m && listening === undefined && / server started /.test(out)) {
          listening = m[1]!;
          child.kill('SIGTERM');
        }
      });
      child.once('exit', (code) => {
        clearTimeout(t);
        resolve({ code, ...(listening !== undefined ? { listening } : {}), out });
      });
    });

  it('the demo realm keeps loopback in its server.conf, and a server whose data directory holds admin.password listens elsewhere only when told so', async () => {
    const data = join(dir, 'exposed');
    const first = await scriptQuickstart('exposed');
    await first.stop();
    assert.match(readFileSync(join(data, 'server.conf'), 'utf8'), /^listen = 127\.0\.0\.1$/m);
    // a later plain start, as the README shows it: loopback still
    const plain = await serverStart(['--data-dir', data]);
    assert.equal(plain.listening, '127.0.0.1', plain.out);
    // another address: refused, naming the file
    const everywhere = await serverStart(['--data-dir', data, '--listen', '0.0.0.0']);
    assert.equal(everywhere.listening, undefined, 'the demo realm was served on every interface');
    assert.equal(everywhere.code, 1, everywhere.out);
    assert.match(
      everywhere.out,
      new RegExp(`^dirid-server: ERROR: ${join(data, 'admin.password').replace(/[.]/g, '\\.')} holds the admin password, so this server listens on loopback only \\(127\\.0\\.0\\.1, ::1\\), not on 0\\.0\\.0\\.0: keep the password elsewhere and remove the file, or start with --allow-admin-password-file$`, 'm'),
    );
    // told so, the rule lets it through: the address (TEST-NET-1, none of this machine's) is what fails then
    const told = await serverStart(['--data-dir', data, '--listen', '192.0.2.1', '--allow-admin-password-file']);
    assert.equal(told.code, 1, told.out);
    assert.doesNotMatch(told.out, /admin\.password/);
    assert.match(told.out, /EADDRNOTAVAIL|192\.0\.2\.1/);
  });

  it('DIRID_IDP_CA_FILE: the server trusts an IdP behind a private CA, and idp-add finds it by discovery', async () => {
    const idp = await startTestIdp();
    try {
      const caFile = join(dir, 'idp-ca.pem');
      writeFileSync(caFile, idp.caPem);
      const qs = await scriptQuickstart('idp-ca', { DIRID_IDP_CA_FILE: caFile });
      try {
        const data = join(dir, 'idp-ca');
        const admin = new RpcSession(`https://localhost:${qs.https}`, readFileSync(join(data, 'ca.crt'), 'utf8'));
        assert.equal((await admin.login('admin', readFileSync(join(data, 'admin.password'), 'utf8').trim())).status, 200);
        const added = await admin.call('idp_add', ['private-ca'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret });
        assert.deepEqual(added.result.diridptokenendpoint, [idp.endpoints.token], JSON.stringify(added.result));
      } finally {
        await qs.stop();
      }
    } finally {
      await idp.stop();
    }
  });

  it('serves on loopback only, says so, and stops when its parent is killed with SIGKILL', async () => {
    // a parent shell that starts the quickstart and prints its pid (the server's, after exec)
    const parent = spawn('bash', ['-c', 'bash scripts/quickstart.sh & echo "child=$!"; wait'], {
      cwd: ROOT,
      env: quickstartEnv('demo'),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    groups.push(parent.pid!);
    let out = '';
    parent.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const ready = await new Promise<{ pid: number; https: number; kdc: number }>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the quickstart did not start:\n${out}`)), 60_000);
      parent.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const pid = /child=(\d+)/.exec(out)?.[1];
        const https = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
        const kdc = / service=kdc address=127\.0\.0\.1 port=(\d+) /.exec(out)?.[1];
        if (pid && https && kdc) {
          clearTimeout(t);
          resolve({ pid: Number(pid), https: Number(https), kdc: Number(kdc) });
        }
      });
    });
    assert.match(out, /quickstart: serving the demo realm on loopback \(127\.0\.0\.1\) only/);
    assert.equal(await opens('127.0.0.1', ready.https), true);
    // bound to 127.0.0.1 itself, not to every address (127.0.0.2 is another loopback address)
    assert.equal(await opens('127.0.0.2', ready.https), false, 'the API answers on an address other than 127.0.0.1');
    assert.equal(await opens('127.0.0.2', ready.kdc), false, 'the KDC answers on an address other than 127.0.0.1');
    assert.ok(alive(ready.pid));

    parent.kill('SIGKILL');
    const deadline = Date.now() + 10_000;
    while (alive(ready.pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const orphan = alive(ready.pid);
    if (orphan) process.kill(ready.pid, 'SIGKILL');
    assert.equal(orphan, false, `dirid-server ${ready.pid} outlived its parent:\n${out}`);
    assert.equal(await opens('127.0.0.1', ready.https), false, 'the API port is still held');
  });

  it('npm run quickstart: SIGKILL of npm stops the server, though npm\'s shell stays', async () => {
    const { npm, https, output } = await npmQuickstart('npm');
    const server = groupMembers(npm.pid!).find((p) => p.cmd.includes('dirid-server.js start'));
    assert.ok(server, 'the server runs in npm\'s process group');
    npm.kill('SIGKILL');
    const left = await groupEnds(npm.pid!, 10_000);
    assert.deepEqual(left, [], `left running after npm was killed:\n${output()}`);
    assert.equal(await opens('127.0.0.1', https), false, 'the API port is still held');
  });

  it('nohup npm run quickstart & from a shell that then exits: the server keeps serving', async () => {
    // the shell leads the process group and ends at once; npm, the script and the server are the user's job
    const shell = spawn('bash', ['-c', 'nohup npm run --silent quickstart > "$LOG" 2>&1 & echo "npm=$!"'], {
      cwd: ROOT,
      env: { ...quickstartEnv('nohup'), LOG: join(dir, 'nohup.log') },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    groups.push(shell.pid!);
    let said = '';
    shell.stdout.on('data', (d: Buffer) => (said += d.toString()));
    await new Promise((r) => shell.once('exit', r));
    const npm = Number(/npm=(\d+)/.exec(said)?.[1]);
    assert.ok(npm > 0, said);
    const log = (): string => {
      try {
        return readFileSync(join(dir, 'nohup.log'), 'utf8');
      } catch {
        return '';
      }
    };
    const deadline = Date.now() + 60_000;
    let https: number | null = null;
    while (https === null && Date.now() < deadline && !/not starting/.test(log())) {
      await new Promise((r) => setTimeout(r, 200));
      const m = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(log());
      if (m) https = Number(m[1]);
    }
    assert.ok(https, `the quickstart did not start after its shell exited:\n${log()}`);
    // still serving a while later (the watch looks every 500 ms)
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(await opens('127.0.0.1', https), true, `the server went with the shell that started npm:\n${log()}`);
    // and it still goes with npm
    process.kill(npm, 'SIGKILL');
    const end = Date.now() + 10_000;
    while ((await opens('127.0.0.1', https)) && Date.now() < end) await new Promise((r) => setTimeout(r, 200));
    assert.equal(await opens('127.0.0.1', https), false, 'the API port is still held after npm was killed');
  });

  it('Ctrl-C (SIGINT to the foreground process group) stops npm, the script and the server', async () => {
    const { npm, https, output } = await npmQuickstart('npm');
    process.kill(-npm.pid!, 'SIGINT');
    const left = await groupEnds(npm.pid!, 10_000);
    assert.deepEqual(left, [], `left running after Ctrl-C:\n${output()}`);
    assert.equal(await opens('127.0.0.1', https), false, 'the API port is still held');
  });

  it('npm killed before the server has started: the server does not start', async () => {
    const npm = spawn('npm', ['run', '--silent', 'quickstart'], { cwd: ROOT, env: quickstartEnv('early'), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    groups.push(npm.pid!);
    let out = '';
    npm.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // the first line is the realm's init, before the server starts
    await new Promise<void>((resolve) => npm.stdout.once('data', (d: Buffer) => resolve(void (out += d.toString()))));
    npm.stdout.on('data', (d: Buffer) => (out += d.toString()));
    assert.doesNotMatch(out, /listening/);
    npm.kill('SIGKILL');
    // the script goes on (init), then the server must not stay
    const left = await groupEnds(npm.pid!, 90_000);
    assert.deepEqual(left, [], `left running after npm was killed:\n${out}`);
    assert.match(out, /dirid-server: process \d+ that started it is gone; not starting/);
  });
});
