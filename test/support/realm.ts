/**
 * Test realms: `dirid-server init` into a temporary directory and a server
 * started in the test's process on ephemeral loopback ports, with its log
 * captured so tests can check what it writes. Tests talk to it over HTTPS,
 * Kerberos and LDAP (the system tier); a test of a rule that needs no
 * transport calls commands without a server (in-process.ts, the fast tier).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { startServer, type ListenerBounds, type RunningServer } from '../../src/server/start.js';
import { httpsPost, RpcSession, type HttpReply } from './rpc-client.js';
import type { WireValue } from '../../src/rpc/codec/types.js';
import { ADMIN_PASSWORD } from './caller.js';

export { ADMIN_PASSWORD, grantRole } from './caller.js';

export interface TestRealm {
  dataDir: string;
  server: RunningServer;
  url: string;
  /** ldap://localhost:PORT (StartTLS available) and ldaps://localhost:PORT */
  ldapUrl: string;
  ldapsUrl: string;
  ca: string;
  log: string[];
  adminPassword: string;
  stop(): Promise<void>;
}

/** `serverConf`: settings added to the realm's server.conf before it starts (e.g. `idp_anonymous_armor`). */
export async function startTestRealm(opts: { realm?: string; domain?: string; hostname?: string; idpCaFile?: string; idStart?: number; bounds?: ListenerBounds; serverConf?: Record<string, string> } = {}): Promise<TestRealm> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dirid-test-'));
  const pwFile = join(dataDir, 'admin.pw');
  writeFileSync(pwFile, ADMIN_PASSWORD + '\n', { mode: 0o600 });
  await initRealm({
    dataDir: join(dataDir, 'realm'),
    realm: opts.realm ?? 'EXAMPLE.TEST',
    domain: opts.domain ?? 'example.test',
    // another name than localhost needs resolving to 127.0.0.1 where clients use it (the certificate also names localhost)
    hostname: opts.hostname ?? 'localhost',
    adminPassword: ADMIN_PASSWORD,
    ...(opts.idStart !== undefined ? { idStart: opts.idStart } : {}),
  });
  if (opts.serverConf) {
    const conf = join(dataDir, 'realm', 'server.conf');
    let text = readFileSync(conf, 'utf8');
    for (const [k, v] of Object.entries(opts.serverConf)) text = new RegExp(`^${k} = .*$`, 'm').test(text) ? text.replace(new RegExp(`^${k} = .*$`, 'm'), `${k} = ${v}`) : `${text.trimEnd()}\n${k} = ${v}\n`;
    writeFileSync(conf, text);
  }
  const log: string[] = [];
  const server = await startServer({ dataDir: join(dataDir, 'realm'), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => log.push(l), ...(opts.idpCaFile ? { idpCaFile: opts.idpCaFile } : {}), ...(opts.bounds ? { bounds: opts.bounds } : {}) });
  return {
    dataDir,
    server,
    url: `https://localhost:${server.httpsPort}`,
    ldapUrl: `ldap://localhost:${server.ldapPort}`,
    ldapsUrl: `ldaps://localhost:${server.ldapsPort}`,
    ca: readFileSync(join(dataDir, 'realm', 'ca.crt'), 'utf8'),
    log,
    adminPassword: ADMIN_PASSWORD,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A test realm and an RPC session logged in as its admin (password login, checked). */
export async function startAdminRealm(opts: Parameters<typeof startTestRealm>[0] = {}, encoding: 'json' | 'xml' = 'json'): Promise<{ realm: TestRealm; admin: RpcSession }> {
  const realm = await startTestRealm(opts);
  const admin = new RpcSession(realm.url, realm.ca, encoding);
  const login = await admin.login('admin', realm.adminPassword);
  if (login.status !== 200) throw new Error(`admin login failed: HTTP ${login.status}`);
  return { realm, admin };
}

/** An API session of the user `login`, logged in with `password`; throws when the login is refused. */
export async function userSession(realm: TestRealm, login: string, password: string): Promise<RpcSession> {
  const session = new RpcSession(realm.url, realm.ca);
  const r = await session.login(login, password);
  if (r.status !== 200) throw new Error(`${login}'s login failed: HTTP ${r.status}`);
  return session;
}

/**
 * A user's own password changed with the old one, without a session, as a
 * user whose password has expired does it over the API
 * (`/dirid/session/change_password`, FreeIPA's `/ipa/session/change_password`).
 */
export function changeOwnPassword(api: { base: string; ca: string }, user: string, oldPassword: string, newPassword: string): Promise<HttpReply> {
  return httpsPost(`${api.base}/dirid/session/change_password`, api.ca, new URLSearchParams({ user, old_password: oldPassword, new_password: newPassword }).toString(), {
    'Content-Type': 'application/x-www-form-urlencoded',
    Referer: `${api.base}/dirid/`,
  });
}

/**
 * A user as an administrator makes one and its user takes it over, as
 * FreeIPA's test tasks create an active user: `admin` adds it with a
 * temporary password of its own choosing, which has expired at once (an
 * administrator's password always does), and the user, at the first
 * login, replaces it with `password` through the API's password change.
 * The user then logs in with `password` everywhere (MIT kinit, the API, LDAP)
 * until its policy's maximum lifetime. Returns user-add's result.
 */
export async function addActiveUser(admin: RpcSession, login: string, password: string, options: Record<string, WireValue> = {}): Promise<any> {
  const temporary = `Temporary-${randomBytes(6).toString('hex')}`;
  const added = await admin.call('user_add', [login], { first: login, last: 'User', ...options, password: temporary });
  const changed = await changeOwnPassword(admin, login, temporary, password);
  if (changed.headers['x-dirid-pwchange-result'] !== 'ok') throw new Error(`${login} could not choose a password at the first login: ${changed.body}`);
  return added;
}

/**
 * The `dirid` client's side of a test realm: its default.conf pointed at
 * the realm's API, and the environment a `dirid` process runs with there
 * (the realm's krb5.conf, a ticket cache, a cache directory and HOME of
 * its own, plus `extra`).
 */
export function cliClient(realm: TestRealm, extra: NodeJS.ProcessEnv = {}): { conf: string; env: NodeJS.ProcessEnv } {
  const data = join(realm.dataDir, 'realm');
  const conf = join(data, 'default.conf');
  writeFileSync(conf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = ${realm.url}/dirid/xml`));
  return { conf, env: { KRB5_CONFIG: join(data, 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'cc')}`, XDG_CACHE_HOME: join(realm.dataDir, 'cache'), HOME: realm.dataDir, ...extra } };
}
