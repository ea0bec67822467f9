/**
 * `dirid-server start`: opens the realm and starts its listeners (the HTTPS
 * API and plain HTTP redirecting to it, the KDC and the password service on
 * UDP and TCP, LDAP with StartTLS and LDAPS). Port 0 picks a free port; the
 * chosen ports are written back into the client files (the API's, the
 * KDC's and the password service's) and logged. Before anything listens,
 * the directory is brought to this code's version (upgrade.ts: versioned,
 * logged steps and the tree the registered objects declare), or the start
 * is refused when a newer release upgraded it; and a server without a
 * current KDC certificate (anonymous PKINIT; a file of its own data
 * directory) gets a new one. The API and LDAP accept tickets for the
 * realm's dirid servers' names only (acceptor-names.ts). Every
 * listener bounds how long a client may take (ListenerBounds, docs/load.md):
 * the HTTPS API's TLS handshake, headers, body and whole request, plain
 * HTTP's headers, the KDC's TCP messages and idle time, LDAP's PDUs and idle
 * time. One server at a time runs on a data directory: start takes its
 * lock (data-lock.ts) and refuses while another server holds it. A data
 * directory holding the admin password in a file (the quickstart's) is
 * served on loopback only, unless told otherwise.
 * SIGTERM/SIGINT stop it cleanly: listeners close, the store closes, the
 * lock is removed, exit code 0. The HTTPS port also answers the operators'
 * endpoints (ops-http.ts: health, metrics); every call to the store is
 * timed (metrics.ts). A reload (SIGHUP, main.ts) reads server.conf again
 * and applies what can change while the server runs (reloadable settings,
 * docs/operations.md), naming the settings that need a restart. Log lines
 * go to standard output one line per event, as journald takes them.
 */
import { createServer, type Server } from 'node:https';
import type { Server as HttpServer } from 'node:http';
import { existsSync, readFileSync } from 'node:fs';
import { BlockList, isIP, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import type { Directory } from '../directory/types.js';
import { API_VERSION } from '../framework/api.js';
import type { Principal, ServerInfo } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { Accounts, type SessionBinding } from '../account/state.js';
import { buildRegistry } from '../objects/index.js';
import { BODY_TIMEOUT_MS, createRpcHandler } from '../rpc/server.js';
import { accountRefusal, AuthRefusal, passwordLogin } from '../objects/login.js';
import { changeOwnPassword, kerberosPasswordChange } from '../objects/passwd.js';
import { SessionCodec } from '../rpc/session.js';
import { createNegotiator } from '../rpc/negotiate.js';
import { boundHttpsConnections } from './https-connections.js';
import { dataPaths, hostPort, readServerConfig, writeDefaultConf, type DataPaths, type ServerConfig } from './config.js';
import { openRealmStore, readMasterKey } from './store.js';
import { SERVER_VERSION } from './version.js';
import { Kdc } from '../kdc/kdc-server.js';
import type { KpasswdService } from '../kdc/kpasswd.js';
import type { TcpLimits } from '../kdc/listener.js';
import { ensureKdcCertificate, loadKdcIdentity } from './kdc-cert.js';
import { createHttpRedirect } from './http-redirect.js';
import { upgradeDirectory } from './upgrade.js';
import { readIdpCaFiles } from './idp-ca.js';
import { ConfigError } from '../cli/ini.js';
import { lockDataDir, type DataDirLock } from './data-lock.js';
import { httpsFetch } from '../oauth/http.js';
import { IdpClient } from '../oauth/client.js';
import { deriveKey } from '../crypto/sealed-box.js';
import { discover } from '../oauth/discovery.js';
import { checkIdp } from '../oauth/check.js';
import { idpConfigOf } from '../oauth/types.js';
import { realmServers, registerServer, serverPrincipals, writeServerFiles, type RealmServer, type ServerPorts } from './servers.js';
import { LdapService, type LdapLimits } from '../ldap-server/server.js';
import { realmAcceptorNames } from './acceptor-names.js';
import { createLogger, type Logger, type RootLogger } from '../log/logger.js';
import { lineSink } from '../log/sink.js';
import { ServerMetrics, timedDirectory } from './metrics.js';
import { allowList, withOpsEndpoints } from './ops-http.js';

/** How long the HTTPS API lets a client take, in milliseconds. */
export interface HttpsTimeouts {
  /** from the TCP connection to the end of the TLS handshake */
  handshakeMs: number;
  /** from a request's first octet to the end of its headers */
  headersMs: number;
  /** from a request's first octet to its end */
  requestMs: number;
  /** from the end of the headers to the end of the body */
  bodyMs: number;
}

export const DEFAULT_HTTPS_TIMEOUTS: Readonly<HttpsTimeouts> = { handshakeMs: 10_000, headersMs: 30_000, requestMs: 60_000, bodyMs: BODY_TIMEOUT_MS };

/** The listeners' time-outs and connection bounds where they differ from the defaults (docs/load.md); tests shorten them. */
export interface ListenerBounds {
  /** the KDC's and the password service's TCP side (kdc/listener.ts DEFAULT_TCP_LIMITS) */
  kdcTcp?: Partial<TcpLimits>;
  /** the LDAP service's limits, over server.conf's */
  ldap?: Partial<LdapLimits>;
  https?: Partial<HttpsTimeouts>;
  /** the HTTPS API's connections at once, over server.conf's api_max_connections (https-connections.ts) */
  httpsMaxConnections?: number;
  /** plain HTTP: milliseconds a request's headers may take (http-redirect.ts) */
  httpMs?: number;
}

export interface StartOptions {
  dataDir: string;
  /** listen beyond loopback although the data directory holds admin.password (see loopbackWhileKnownPassword) */
  allowAdminPasswordFile?: boolean;
  /** PEM files of extra CAs trusted for IdP endpoints, all of them (replace server.conf idp_ca_file; idp-ca.ts) */
  idpCaFile?: string | readonly string[];
  listen?: string;
  httpsPort?: number;
  httpPort?: number;
  kdcPort?: number;
  kpasswdPort?: number;
  ldapPort?: number;
  ldapsPort?: number;
  bounds?: ListenerBounds;
  /** where the log's lines go, one at a time without their newline (default: standard output, a turn's lines written at once); their format is server.conf's log_format (docs/logging.md) */
  log?: (line: string) => void;
}

export interface RunningServer {
  paths: DataPaths;
  config: ServerConfig;
  dir: Directory;
  https: Server;
  httpsPort: number;
  /** plain HTTP, redirecting to the API */
  http: HttpServer;
  httpPort: number;
  kdc: Kdc;
  kdcPort: number;
  kpasswd: KpasswdService;
  kpasswdPort: number;
  /** the IdP client of this server (its KDC's and its idp-add discovery's) */
  idp: IdpClient;
  ldap: LdapService;
  ldapPort: number;
  ldapsPort: number;
  metrics: ServerMetrics;
  /** reads server.conf again and applies what may change while running; resolves with the line it logged */
  reload(): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Whether the account a session cookie names may still act (account/state.ts,
 * its refusal's public error from objects/login.ts); a deleted one may not,
 * nor one whose password changed or that was disabled or renamed since the
 * session began: those are not authenticated any more, and a client with a
 * ticket logs in again.
 */
export function sessionCheckFor(accounts: Accounts): (p: Principal, binding: SessionBinding) => Promise<AuthRefusal | null> {
  return async (p, binding) => {
    const v = await accounts.session(p.dn, binding);
    if (v.state === 'usable') return null;
    if (v.state === 'gone') return new AuthRefusal(publicError('NotAuthenticated'), 'the account no longer exists');
    if (v.state === 'ended') return new AuthRefusal(publicError('NotAuthenticated'), v.reason);
    return accountRefusal(v);
  };
}

/** Log lines to standard output, a turn's lines written at once (log/sink.ts); written out at once on exit. */
function stdoutLog(): (line: string) => void {
  const sink = lineSink((text) => process.stdout.write(text));
  process.once('exit', sink.flush);
  return sink.write;
}

export async function startServer(o: StartOptions): Promise<RunningServer> {
  // small Buffers (DER, ciphertexts) come from a shared pool; Node's 8 KiB
  // pool was refilled every other KDC request
  Buffer.poolSize = Math.max(Buffer.poolSize, 256 * 1024);
  const paths = dataPaths(o.dataDir);
  const config = readServerConfig(paths);
  const log = createLogger({ write: o.log ?? stdoutLog(), format: config.logFormat ?? 'text', component: 'server' });
  // server.conf as written, before the command line's options: what a reload compares against
  const fileConfig: ServerConfig = { ...config, ldap: { ...config.ldap } };
  if (o.listen !== undefined) config.listen = o.listen;
  if (o.httpsPort !== undefined) config.httpsPort = o.httpsPort;
  if (o.httpPort !== undefined) config.httpPort = o.httpPort;
  if (o.kdcPort !== undefined) config.kdcPort = o.kdcPort;
  if (o.kpasswdPort !== undefined) config.kpasswdPort = o.kpasswdPort;
  if (o.ldapPort !== undefined) config.ldapPort = o.ldapPort;
  if (o.ldapsPort !== undefined) config.ldapsPort = o.ldapsPort;
  if (o.idpCaFile !== undefined) config.idpCaFiles = typeof o.idpCaFile === 'string' ? [o.idpCaFile] : [...o.idpCaFile];
  // read before anything starts: a file that is missing or holds no certificate stops the start
  const idpCaPem = readIdpCaFiles(config.idpCaFiles ?? [], o.idpCaFile !== undefined ? '--idp-ca-file' : `${paths.serverConf}: idp_ca_file`);
  if (o.bounds?.ldap) config.ldap = { ...config.ldap, ...o.bounds.ldap };
  if (!o.allowAdminPasswordFile) loopbackWhileKnownPassword(paths, config.listen);
  const lock = lockDataDir(paths.dir);
  try {
    return await serve(o, paths, config, fileConfig, idpCaPem, lock, log);
  } catch (e) {
    lock.release();
    throw e;
  }
}

/** Loopback addresses: 127.0.0.0/8 and ::1 (and either written as an IPv4-mapped or long IPv6 address). */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Whether `address` (server.conf's listen, --listen) reaches only this machine. */
export function isLoopback(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return LOOPBACK.check(address, 'ipv4');
  if (family === 6) return LOOPBACK.check(address, 'ipv6');
  return address.toLowerCase() === 'localhost';
}

/**
 * A data directory that still holds its admin password in a file (the
 * quickstart's demo realm, admin.password) is served on loopback only:
 * anyone who could reach it elsewhere could read the password off the
 * disk's copy of the demo. Listening beyond loopback then needs saying so
 * (--allow-admin-password-file), or the file moved away.
 */
function loopbackWhileKnownPassword(paths: DataPaths, listen: string): void {
  if (isLoopback(listen) || !existsSync(paths.adminPassword)) return;
  throw new ConfigError(
    `${paths.adminPassword} holds the admin password, so this server listens on loopback only (127.0.0.1, ::1), not on ${listen}: keep the password elsewhere and remove the file, or start with --allow-admin-password-file`,
  );
}

/** The rest of startServer, with the data directory locked: the store, the listeners, the client files. */
async function serve(o: StartOptions, paths: DataPaths, config: ServerConfig, fileConfig: ServerConfig, idpCaPem: string | undefined, lock: DataDirLock, log: RootLogger): Promise<RunningServer> {
  const httpsTimeouts = { ...DEFAULT_HTTPS_TIMEOUTS, ...o.bounds?.https };
  const store = await openRealmStore(paths, config, false, log.child({ component: 'store' }));
  try {
    await upgradeDirectory(store, { realm: config.realm, log: log.child({ component: 'upgrade' }) });
  } catch (e) {
    await store.close();
    throw e;
  }
  const server: ServerInfo = {
    version: SERVER_VERSION,
    apiVersion: API_VERSION,
    realm: config.realm,
    domain: config.domain,
    searchSizeLimit: config.searchSizeLimit,
    searchTimeLimit: config.searchTimeLimit,
  };
  // one IdP client (one TLS context, the configured IdP CAs, the discovery documents and keys it keeps) for this
  // server's logins and its discovery at idp-add, shared with no other server in the process
  const idp = new IdpClient(httpsFetch(idpCaPem));
  let registry: ReturnType<typeof buildRegistry> | undefined;
  const metrics = new ServerMetrics({ version: SERVER_VERSION, realm: config.realm, commands: (name) => registry?.has(name) ?? false, pendingDeviceCodes: () => idp.polls.live() });
  // every caller of the store (KDC, API, LDAP, this file) goes through the one timed handle
  const dir = timedDirectory(store, metrics);
  const accounts = new Accounts(dir, log.child({ component: 'account' }));
  // the names the API and LDAP accept tickets for: this realm's dirid servers' HTTP/ and ldap/, nothing else
  const acceptors = realmAcceptorNames(dir, config.realm, config.hostname, log.child({ component: 'acceptors' }));
  // the ports this server listens on, once it does
  let listening: ServerPorts | undefined;
  registry = buildRegistry({
    oidcDiscovery: (issuer) => discover(issuer, idp),
    idpCheck: (target) => checkIdp(idpConfigOf(target.name, target.attrs, target.clientSecret, target.clientKeys), idp),
    serverPrincipals: () => serverPrincipals(dir, config.realm, config.hostname),
    // a joining host's view of the realm: its servers (this one first, with the ports it listens on) and the CA
    enrolment: async () => ({ servers: await realmServers(dir, { hostname: config.hostname, ports: listening ?? configuredPorts(config) }), caPem: readFileSync(paths.caCert, 'utf8') }),
  });
  const tls = { key: readFileSync(paths.serverKey), cert: readFileSync(paths.serverCert) };
  const handler = createRpcHandler({
    registry,
    dir,
    server,
    sessions: new SessionCodec(readMasterKey(paths)),
    passwordLogin: (user, password) => passwordLogin(accounts, config.realm, user, password),
    changePassword: (change) => changeOwnPassword({ dir, accounts, registry, server }, change),
    negotiate: createNegotiator(accounts, (name) => acceptors.accepts('http', name)),
    bindSession: (p) => accounts.bindSession(p.dn),
    checkSession: sessionCheckFor(accounts),
    bodyTimeoutMs: httpsTimeouts.bodyMs,
    log: log.child({ component: 'rpc' }),
    observe: (command, outcome, ms) => metrics.api(command, outcome, ms),
  });
  let metricsAllow: BlockList = allowList(config.metricsAllow);
  let ready = false;
  let stopped = false;
  const listenersUp: Record<string, () => boolean> = {};
  const https = createServer(
    {
      ...tls,
      minVersion: 'TLSv1.2',
      requestTimeout: httpsTimeouts.requestMs,
      headersTimeout: httpsTimeouts.headersMs,
      // how often the two are checked: by default every 30 s, which would add up to that much to both
      connectionsCheckingInterval: Math.min(1000, httpsTimeouts.headersMs),
      maxHeaderSize: 32 * 1024,
    },
    withOpsEndpoints(
      {
        version: SERVER_VERSION,
        dir,
        metrics,
        allowed: () => metricsAllow,
        state: () => ({ ready, stopping: stopped, listeners: Object.fromEntries(Object.entries(listenersUp).map(([k, up]) => [k, up()])) }),
      },
      handler,
    ),
  );
  boundHttpsConnections(https, { handshakeMs: httpsTimeouts.handshakeMs, maxConnections: o.bounds?.httpsMaxConnections ?? config.apiMaxConnections }, log.child({ component: 'https' }));
  https.on('clientError', (err: Error & { code?: string }, socket: Socket) => {
    // only a request the HTTP parser refused or that ran out of time gets an answer; a TLS failure (a handshake
    // that failed or timed out) has no channel to carry one, and ending such a socket would wait on it forever
    const http = typeof err.code === 'string' && (err.code.startsWith('HPE_') || err.code === 'ERR_HTTP_REQUEST_TIMEOUT');
    if (http && socket.writable) {
      socket.end(`HTTP/1.1 ${err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request'}\r\nConnection: close\r\n\r\n`);
      setTimeout(() => socket.destroy(), 1000).unref();
    } else socket.destroy();
  });
  const httpsPort = await listenOn(https, config.httpsPort, config.listen);
  writeDefaultConf(paths, config, httpsPort);
  const httpsOrigin = `https://${hostPort(config.hostname, httpsPort, 443)}`;
  server.origin = httpsOrigin;
  const http = createHttpRedirect(httpsOrigin, o.bounds?.httpMs);
  const httpPort = await listenOn(http, config.httpPort, config.listen);
  const kdcCertProblem = await ensureKdcCertificate(paths, config.realm);
  if (kdcCertProblem) log.warn('no_kdc_certificate', { realm: config.realm, reason: kdcCertProblem, effect: 'anonymous PKINIT is unavailable' });
  const pkinit = loadKdcIdentity(paths);
  const kdc = new Kdc({
    dir,
    realm: config.realm,
    log: log.child({ component: 'kdc' }),
    idp,
    idpHoldMs: config.idpHoldSeconds * 1000,
    idpAnonymousArmor: config.idpAnonymousArmor,
    idpPending: config.idpPending,
    cookieKey: deriveKey(readMasterKey(paths), 'dirid kdc cookie v1'),
    observe: (exchange, transport, outcome, ms, note) => metrics.kdc(exchange, transport, outcome, ms, note),
    ...(pkinit ? { pkinit } : {}),
    ...(o.bounds?.kdcTcp ? { tcp: o.bounds.kdcTcp } : {}),
  });
  const kdcPort = await kdc.listen(config.kdcPort, config.listen);
  const kpasswd = kdc.passwordService((change) => kerberosPasswordChange({ dir, accounts, registry, server, log: log.child({ component: 'kpasswd' }) }, change));
  const kpasswdPort = await kpasswd.listen(config.kpasswdPort, config.listen);
  const ldap = new LdapService({
    dir,
    accounts,
    realm: config.realm,
    registry,
    server,
    tls,
    limits: config.ldap,
    acceptsTicketFor: (name) => acceptors.accepts('ldap', name),
    log: log.child({ component: 'ldap' }),
    observe: (operation, outcome, ms) => metrics.ldap(operation, outcome, ms),
  });
  const { ldapPort, ldapsPort } = await ldap.listen(config.ldapPort, config.ldapsPort, config.listen);
  listening = { kdc: kdcPort, kpasswd: kpasswdPort, https: httpsPort, ldap: ldapPort, ldaps: ldapsPort };
  await writeClientFiles(dir, paths, config, listening, log);
  const at = isIP(config.listen) === 6 ? `[${config.listen}]` : config.listen;
  const realm = config.realm;
  log.info('listening', { realm, service: 'kdc', address: config.listen, port: kdcPort, transports: ['udp', 'tcp'] });
  log.info('listening', { realm, service: 'kpasswd', address: config.listen, port: kpasswdPort, transports: ['udp', 'tcp'] });
  log.info('listening', { realm, service: 'https', url: `https://${at}:${httpsPort}/dirid/`, hostname: config.hostname });
  log.info('listening', { realm, service: 'http', url: `http://${at}:${httpPort}/`, redirects_to: `${httpsOrigin}/` });
  log.info('listening', { realm, service: 'ldap', url: `ldap://${at}:${ldapPort}/`, starttls: true, hostname: config.hostname });
  log.info('listening', { realm, service: 'ldaps', url: `ldaps://${at}:${ldapsPort}/`, hostname: config.hostname });
  log.info('started', { realm, version: SERVER_VERSION, hostname: config.hostname });
  // the KDC's, the password service's and LDAP's sockets stay bound until stop
  listenersUp.https = () => https.listening;
  listenersUp.http = () => http.listening;
  listenersUp.kdc = listenersUp.kpasswd = listenersUp.ldap = listenersUp.ldaps = () => !stopped;
  ready = true;
  let inForce = fileConfig;
  /** server.conf read again (logged as `reload`); what changed and took effect, what needs a restart, as a sentence. */
  const reload = async (): Promise<string> => {
    const r = reloadConfig();
    if ('error' in r) {
      log.warn('reload', { realm, error: r.error, effect: 'the settings in force stay' });
      return `dirid-server: reload: ${r.error}; the settings in force stay`;
    }
    log.info('reload', { realm, applied: r.applied, restart_needed: r.restart, not_applied: r.problems.length ? r.problems : undefined });
    return (
      `dirid-server: reload: server.conf read again; applied: ${r.applied.join(', ') || 'nothing'}` +
      (r.restart.length ? `; changed but needs a restart to take effect: ${r.restart.join(', ')}` : '') +
      (r.problems.length ? `; not applied: ${r.problems.join('; ')}` : '')
    );
  };
  /** server.conf read again: what changed and took effect, what needs a restart; a file that does not read changes nothing. */
  const reloadConfig = (): { error: string } | { applied: string[]; restart: string[]; problems: string[] } => {
    let next: ServerConfig;
    try {
      next = readServerConfig(paths);
    } catch (e) {
      return { error: e instanceof Error ? e.message : String(e) };
    }
    const applied: string[] = [];
    const problems: string[] = [];
    // the IdP CA files: read again even when the list is the same (a CA file rotated in place); the command line's list wins, as at start
    const files = o.idpCaFile !== undefined ? (typeof o.idpCaFile === 'string' ? [o.idpCaFile] : [...o.idpCaFile]) : (next.idpCaFiles ?? []);
    try {
      const pem = readIdpCaFiles(files, o.idpCaFile !== undefined ? '--idp-ca-file' : `${paths.serverConf}: idp_ca_file`);
      idp.fetch = httpsFetch(pem);
      if (files.length > 0) applied.push(`idp_ca_file (${files.length} file${files.length === 1 ? '' : 's'} read again)`);
      else if ((inForce.idpCaFiles ?? []).length > 0) applied.push('idp_ca_file (none now)');
    } catch (e) {
      problems.push(`${e instanceof Error ? e.message : String(e)}; the IdP CAs in force stay`);
    }
    if (next.idpHoldSeconds !== inForce.idpHoldSeconds) {
      kdc.setIdpHold(next.idpHoldSeconds * 1000);
      applied.push(`idp_hold_seconds ${inForce.idpHoldSeconds} -> ${next.idpHoldSeconds}`);
    }
    if (next.searchSizeLimit !== inForce.searchSizeLimit) {
      server.searchSizeLimit = next.searchSizeLimit;
      applied.push(`search_size_limit ${inForce.searchSizeLimit} -> ${next.searchSizeLimit}`);
    }
    if (next.searchTimeLimit !== inForce.searchTimeLimit) {
      server.searchTimeLimit = next.searchTimeLimit;
      applied.push(`search_time_limit ${inForce.searchTimeLimit} -> ${next.searchTimeLimit}`);
    }
    if ((next.logFormat ?? 'text') !== log.format) {
      applied.push(`log_format ${log.format} -> ${next.logFormat ?? 'text'}`);
      log.setFormat(next.logFormat ?? 'text');
    }
    if (next.metricsAllow.join(',') !== inForce.metricsAllow.join(',')) {
      metricsAllow = allowList(next.metricsAllow);
      applied.push(`metrics_allow ${next.metricsAllow.join(', ')}`);
    }
    const restart = RESTART_SETTINGS.filter(([, get]) => JSON.stringify(get(next)) !== JSON.stringify(get(inForce))).map(([name]) => name);
    // what needs a restart is still the old value in force: compared again at the next reload
    inForce = { ...next, ...Object.fromEntries(RESTART_FIELDS.map((k) => [k, inForce[k]])) } as ServerConfig;
    return { applied, restart, problems };
  };
  return {
    paths,
    config,
    dir,
    https,
    httpsPort,
    http,
    httpPort,
    kdc,
    kdcPort,
    kpasswd,
    kpasswdPort,
    idp,
    ldap,
    ldapPort,
    ldapsPort,
    metrics,
    reload,
    async stop() {
      if (stopped) return;
      stopped = true;
      await ldap.close();
      await kpasswd.close();
      await kdc.close();
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
      await new Promise<void>((resolve) => {
        https.close(() => resolve());
        https.closeAllConnections();
      });
      await dir.close();
      lock.release();
      log.info('stopped', { realm });
    },
  };
}

export { readServerConfig };

/** The ports server.conf names (before the listeners have theirs). */
function configuredPorts(c: ServerConfig): ServerPorts {
  return { kdc: c.kdcPort, kpasswd: c.kpasswdPort, https: c.httpsPort, ldap: c.ldapPort, ldaps: c.ldapsPort };
}
/** The ServerConfig fields a running server cannot change, and the server.conf settings they come from. */
const RESTART_FIELDS = ['realm', 'domain', 'hostname', 'baseDn', 'listen', 'httpsPort', 'httpPort', 'kdcPort', 'kpasswdPort', 'ldapPort', 'ldapsPort', 'ldap', 'apiMaxConnections', 'storeCacheMb', 'database'] as const;
const RESTART_SETTINGS: Array<[string, (c: ServerConfig) => unknown]> = [
  ['realm', (c) => c.realm],
  ['domain', (c) => c.domain],
  ['hostname', (c) => c.hostname],
  ['base_dn', (c) => c.baseDn],
  ['listen', (c) => c.listen],
  ['https_port', (c) => c.httpsPort],
  ['http_port', (c) => c.httpPort],
  ['kdc_port', (c) => c.kdcPort],
  ['kpasswd_port', (c) => c.kpasswdPort],
  ['ldap_port', (c) => c.ldapPort],
  ['ldaps_port', (c) => c.ldapsPort],
  ['ldap_* limits', (c) => c.ldap],
  ['api_max_connections', (c) => c.apiMaxConnections],
  ['store_cache_mb', (c) => c.storeCacheMb ?? null],
  ['database', (c) => c.database ?? null],
];

/** Starts `server` listening; resolves with the port it got (a free one for 0), rejects when it cannot listen. */
function listenOn(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Records this server and its ports among the realm's servers, then writes
 * the client files that name them all: krb5.conf, sssd.conf and the DNS
 * SRV records. When the directory cannot take the record, the files name
 * this server alone.
 */
async function writeClientFiles(dir: Directory, paths: DataPaths, config: ServerConfig, ports: ServerPorts, log: Logger): Promise<void> {
  const self = { hostname: config.hostname, ports };
  let servers: RealmServer[] = [self];
  try {
    await registerServer(dir, self);
    servers = await realmServers(dir, self);
  } catch (e) {
    log.warn('server_unrecorded', { realm: config.realm, error: e instanceof Error ? e.message : String(e), effect: 'client files name this server alone' });
  }
  writeServerFiles(paths, config, servers);
}
