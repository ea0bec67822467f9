/**
 * The `dirid` client against a real `dirid-server` process (init + start on
 * ephemeral ports), with a session cookie from
 * `POST /dirid/session/login_password` stored where the client keeps its
 * cookies, used while MIT kinit's credential cache holds a valid TGT of the
 * same principal (specification §5.1: no ticket, no access). Covers help
 * from the schema, unknown commands, idp-add/show/find, user-add and the
 * IdP link, membership output, `ping --server`, a stale cookie, and the
 * cookie refused after kdestroy, with a missing or expired cache, and to
 * another principal; a refused account's state (docs/errors.md 1004-1007)
 * shown as the server names it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:https';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const BIN = new URL('../../bin/', import.meta.url).pathname;
const PASSWORD = 'Session-test-pw1';

function login(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const body = new URLSearchParams({ user: 'admin', password: PASSWORD }).toString();
    const req = request(
      { host: '127.0.0.1', servername: 'localhost', port, path: '/dirid/session/login_password', method: 'POST', ca, headers: { Host: `localhost:${port}`, Referer: `https://localhost:${port}/dirid/`, 'Content-Type': 'application/x-www-form-urlencoded', 'Content-Length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        const sc = res.headers['set-cookie'];
        if (res.statusCode !== 200 || !sc) return reject(new Error(`login failed: HTTP ${res.statusCode}`));
        resolve(sc[0]!);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('dirid with a session cookie against a dirid-server process', () => {
  let dir: string;
  let server: ChildProcess;
  let conf: string;
  let port: number;
  let env: NodeJS.ProcessEnv;
  const dirid = (args: string[], input?: string): Promise<ToolResult> => runTool(process.execPath, [join(BIN, 'dirid.js'), '-c', conf, ...args], env, input);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dirid-cli-session-'));
    writeFileSync(join(dir, 'admin.pw'), PASSWORD + '\n', { mode: 0o600 });
    const data = join(dir, 'data');
    const init = await runTool(process.execPath, [join(BIN, 'dirid-server.js'), 'init', '--data-dir', data, '--realm', 'EXAMPLE.TEST', '--domain', 'example.test', '--hostname', 'localhost', '--admin-password-file', join(dir, 'admin.pw')], {}, undefined, 60_000);
    assert.equal(init.code, 0, init.stderr);
    server = spawn(process.execPath, [join(BIN, 'dirid-server.js'), 'start', '--data-dir', data, '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const t = setTimeout(() => reject(new Error(`dirid-server did not start: ${out}`)), 30_000);
      server.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const m = / service=https url=https:\/\/[^:]+:(\d+)\//.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
      server.on('exit', (code) => reject(new Error(`dirid-server exited with ${code}: ${out}`)));
    });
    conf = join(data, 'default.conf');
    assert.match(readFileSync(conf, 'utf8'), new RegExp(`xmlrpc_uri = https://localhost:${port}/dirid/xml`), 'start writes the chosen port back');
    env = { HOME: dir, XDG_CACHE_HOME: join(dir, 'cache'), KRB5CCNAME: `FILE:${join(dir, 'admin.cc')}`, KRB5_CONFIG: join(data, 'krb5.conf'), LANG: 'C' };
    const k = await runTool('kinit', ['admin'], env, PASSWORD + '\n');
    assert.equal(k.code, 0, k.stderr);
    const setCookie = await login(port, readFileSync(join(data, 'ca.crt'), 'utf8'));
    // stored as the client stores cookies it receives
    const { saveCookie } = await import('../../src/cli/transport.js');
    const saved = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = env.XDG_CACHE_HOME;
    try {
      saveCookie(`https://localhost:${port}`, 'admin@EXAMPLE.TEST', setCookie);
    } finally {
      if (saved === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = saved;
    }
  });
  after(async () => {
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('ping, and ping --server HOST keeping the configured port', async () => {
    const r = await dirid(['ping']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^(-+)\ndirid server version \d+\.\d+\.\d+\. API version \d+\.\d+\.\n\1\n$/);
    const v = await dirid(['-v', 'ping', '--server', 'localhost']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stderr, new RegExp(`^dirid: INFO: trying https://localhost:${port}/dirid/xml$`, 'm'));
    assert.match(v.stderr, new RegExp(`^dirid: INFO: Forwarding 'ping' to server 'https://localhost:${port}/dirid/xml'$`, 'm'));
  });

  it('ping --server HOST that does not resolve or does not answer: the connection failure, not a Kerberos error', async () => {
    for (const host of ['nosuch.invalid', '127.0.0.1:1']) {
      const r = await dirid(['-v', 'ping', '--server', host]);
      assert.equal(r.code, 1, r.stdout);
      const url = `https://${host.includes(':') ? host : `${host}:${port}`}/dirid/xml`;
      assert.match(r.stderr, new RegExp(`^dirid: WARNING: Connection to ${url.replace(/\./g, '\\.')} failed$`, 'm'), r.stderr);
      assert.match(r.stderr, /^dirid: ERROR: cannot connect to/m, r.stderr);
      assert.doesNotMatch(r.stderr, /Kerberos|principal|KDC/i, r.stderr);
    }
  });

  it('help from the schema; unknown commands and options', async () => {
    const list = await dirid(['help']);
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /^  idp-add {18}Add a new IdP reference\.$/m);
    const h = await dirid(['idp-add', '--help']);
    assert.equal(h.code, 0, h.stderr);
    assert.match(h.stdout, /^Usage: dirid \[global-options\] idp-add NAME \[options\]\n/);
    assert.match(h.stdout, /^  --secret\[=SECRET\] +.*prompted for when given without a value/m);
    assert.equal((await dirid(['help', 'idp-add'])).stdout, h.stdout);
    const unknown = await dirid(['idp-frobnicate']);
    assert.deepEqual([unknown.code, unknown.stderr], [1, "dirid: ERROR: unknown command 'idp-frobnicate'\n"]);
    const badOpt = await dirid(['idp-show', 'x', '--colour']);
    assert.deepEqual([badOpt.code, badOpt.stderr], [1, 'dirid: ERROR: no such option: --colour\n']);
  });

  it('idp-add with a template and the secret from standard input; show; find', async () => {
    const add = await dirid(['idp-add', 'kc', '--provider', 'keycloak', '--organization=main', '--base-url', 'kc.example.test', '--client-id', 'dirid', '--secret'], 'from-stdin-secret\n');
    assert.equal(add.code, 0, add.stderr);
    assert.equal(
      add.stdout,
      [
        '------------------------',
        'Added IdP reference "kc"',
        '------------------------',
        '  IdP reference name: kc',
        '  Provider: keycloak',
        '  Client identifier: dirid',
        '  Authorization URI: https://kc.example.test/realms/main/protocol/openid-connect/auth',
        '  Device authorization URI: https://kc.example.test/realms/main/protocol/openid-connect/auth/device',
        '  Token URI: https://kc.example.test/realms/main/protocol/openid-connect/token',
        '  User info URI: https://kc.example.test/realms/main/protocol/openid-connect/userinfo',
        '  Scope: openid email',
        '  Organization: main',
        '  Base URL: kc.example.test',
        '  IdP user ID attribute: email',
        '  Issuer URL: https://kc.example.test/realms/main',
        '  JWKS endpoint: https://kc.example.test/realms/main/protocol/openid-connect/certs',
        '',
      ].join('\n'),
    );
    const show = await dirid(['idp-show', 'kc']);
    assert.equal(show.stdout, add.stdout.split('\n').slice(3).join('\n'));
    const find = await dirid(['idp-find', 'kc', '--pkey-only']);
    assert.equal(find.code, 0, find.stderr);
    assert.equal(find.stdout, '-----------------------\n1 IdP reference matched\n-----------------------\n  IdP reference name: kc\n----------------------------\nNumber of entries returned 1\n----------------------------\n');
    const none = await dirid(['idp-find', '--name=nothing-like-this']);
    assert.equal(none.code, 1);
    const missing = await dirid(['idp-show', 'nope']);
    assert.deepEqual([missing.code, missing.stderr], [2, 'dirid: ERROR: nope: IdP reference not found\n']);
  });

  it('user-add, link to the IdP, membership with a failure', async () => {
    const add = await dirid(['user-add', 'carol', '--first=Carol', '--last=Jones']);
    assert.equal(add.code, 0, add.stderr);
    const link = await dirid(['user-mod', 'carol', '--user-auth-type=idp', '--idp=kc', '--idp-user-id=carol@example.test']);
    assert.equal(link.code, 0, link.stderr);
    assert.match(link.stdout, /^  User authentication types: idp\n  External IdP configuration: kc\n  External IdP user identifier: carol@example\.test\n/m);
    assert.equal((await dirid(['group-add', 'editors'])).code, 0);
    const member = await dirid(['group-add-member', 'editors', '--users=carol', '--users=nobody']);
    assert.equal(member.code, 1);
    assert.match(member.stdout, /^  Member users: carol\n  Failed members:\n    member user: nobody: no such entry\n-------------------------\nNumber of members added 1\n-------------------------\n$/m);
  });

  const sessionFile = (): { file: string; stored: { cookie: string; principal: string } } => {
    const sessions = join(dir, 'cache', 'dirid', 'sessions');
    const [name] = readdirSync(sessions);
    const file = join(sessions, name!);
    return { file, stored: JSON.parse(readFileSync(file, 'utf8')) as { cookie: string; principal: string } };
  };

  it('a cookie the server no longer accepts is dropped, and the ticket earns a new session', async () => {
    const { file, stored } = sessionFile();
    writeFileSync(file, JSON.stringify({ ...stored, cookie: 'dirid_session=forged' }));
    const r = await dirid(['ping']);
    assert.equal(r.code, 0, r.stderr);
    const fresh = sessionFile().stored;
    assert.notEqual(fresh.cookie, 'dirid_session=forged');
    assert.equal(fresh.principal, 'admin@EXAMPLE.TEST');
  });

  it('no ticket, no access: after kdestroy, and with KRB5CCNAME at a missing cache, the cached session is not used', async () => {
    assert.equal((await dirid(['ping'])).code, 0);
    const d = await runTool('kdestroy', [], env);
    assert.equal(d.code, 0, d.stderr);
    assert.ok(sessionFile().stored.cookie.startsWith('dirid_session='), 'the session is still cached');
    for (const cc of [env.KRB5CCNAME!, `FILE:${join(dir, 'no-such-ccache')}`]) {
      for (const args of [['ping'], ['idp-find'], ['user-show', 'admin']]) {
        const r = await runTool(process.execPath, [join(BIN, 'dirid.js'), '-c', conf, ...args], { ...env, KRB5CCNAME: cc });
        assert.deepEqual([r.code, r.stderr], [1, 'dirid: ERROR: Insufficient access: not authenticated\n'], `${args.join(' ')} with ${cc}`);
      }
    }
  });

  it('an expired ticket is no ticket', async () => {
    const k = await runTool('kinit', ['-l', '3s', 'admin'], env, PASSWORD + '\n');
    assert.equal(k.code, 0, k.stderr);
    assert.equal((await dirid(['ping'])).code, 0);
    await new Promise((r) => setTimeout(r, 4000));
    const r = await dirid(['ping']);
    assert.deepEqual([r.code, r.stderr], [1, 'dirid: ERROR: Insufficient access: not authenticated\n']);
  });

  it('kdestroy, then kinit as another user: the command runs as that user, never as the previous one', async () => {
    const k = await runTool('kinit', ['admin'], env, PASSWORD + '\n');
    assert.equal(k.code, 0, k.stderr);
    const add = await dirid(['user-add', 'bob', '--first=Bob', '--last=B', '--password'], 'Bob-temporary-1\nBob-temporary-1\n');
    assert.equal(add.code, 0, add.stderr);
    assert.equal((await dirid(['ping'])).code, 0, 'a session for admin is cached');
    assert.equal((await runTool('kdestroy', [], env)).code, 0);
    // the administrator's password has expired: bob chooses his own at the first login, as MIT kinit asks
    const kb = await runTool('kinit', ['bob'], env, 'Bob-temporary-1\nBob-password-123\nBob-password-123\n');
    assert.equal(kb.code, 0, kb.stderr);
    const r = await dirid(['user-add', 'mallory', '--first=M', '--last=M']);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /^dirid: ERROR: Insufficient access/);
    assert.equal(sessionFile().stored.principal, 'bob@EXAMPLE.TEST');
  });

  it('a refused account: the client shows the state the server names (1004), from its session and from a Negotiate login', async () => {
    const k = await runTool('kinit', ['admin'], env, PASSWORD + '\n');
    assert.equal(k.code, 0, k.stderr);
    const add = await dirid(['user-add', 'dora', '--first=Dora', '--last=D', '--password'], 'Dora-temporary-1\nDora-temporary-1\n');
    assert.equal(add.code, 0, add.stderr);
    // dora has her own credential cache and session cache
    const doraEnv = { ...env, KRB5CCNAME: `FILE:${join(dir, 'dora.cc')}`, XDG_CACHE_HOME: join(dir, 'dora-cache') };
    const asDora = (args: string[]): Promise<ToolResult> => runTool(process.execPath, [join(BIN, 'dirid.js'), '-c', conf, ...args], doraEnv);
    const kc = await runTool('kinit', ['dora'], doraEnv, 'Dora-temporary-1\nDora-password-123\nDora-password-123\n');
    assert.equal(kc.code, 0, kc.stderr);
    const ok = await asDora(['ping']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(readdirSync(join(dir, 'dora-cache', 'dirid', 'sessions')).length, 1, 'dora holds a session and a service ticket');
    const dis = await dirid(['user-mod', 'dora', '--setattr=nsAccountLock=TRUE']);
    assert.equal(dis.code, 0, dis.stderr);
    // the session is refused, then the Negotiate login with the cached service ticket
    const r = await asDora(['ping']);
    assert.deepEqual([r.code, r.stderr], [1, 'dirid: ERROR: Insufficient access: account disabled\n']);
    rmSync(join(dir, 'dora-cache'), { recursive: true, force: true });
    const n = await asDora(['ping']);
    assert.deepEqual([n.code, n.stderr], [1, 'dirid: ERROR: Insufficient access: account disabled\n']);
  });
});
