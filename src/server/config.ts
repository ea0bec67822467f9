/**
 * The data directory of a dirid server and its files: server.conf (realm
 * settings, the PostgreSQL database when the store is there, ports and the
 * LDAP service's limits; mode 0600, as a database URL may hold a
 * password), the master key, the SQLite store, TLS material, the KDC's
 * PKINIT certificate and key, and the
 * client files it writes for users (default.conf, ca.crt; krb5.conf and
 * host.keytab with the KDC). The running server's lock, server.lock, is
 * data-lock.ts's.
 */
import type { LdapLimits } from '../ldap-server/server.js';
import { existsSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { isIP } from 'node:net';
import { ConfigError, formatIni, parseIni } from '../cli/ini.js';
import { connectionTargets } from '../directory/pg-hosts.js';
import { DEFAULT_START_LIMITS, type AnonymousArmorIdp } from '../kdc/idp-starts.js';
import type { LogFormat } from '../log/logger.js';
import { writeFileAtomic, type DataPaths } from './data-paths.js';

export { dataPaths, writeFileAtomic, type DataPaths } from './data-paths.js';

export interface ServerConfig {
  realm: string;
  domain: string;
  hostname: string;
  baseDn: string;
  listen: string;
  httpsPort: number;
  /** plain HTTP, which only redirects to the API over HTTPS (http-redirect.ts) */
  httpPort: number;
  kdcPort: number;
  /** the password service (kdc/kpasswd.ts) */
  kpasswdPort: number;
  /** LDAP with StartTLS (docs/ldap.md) */
  ldapPort: number;
  /** LDAP over TLS from the first octet */
  ldapsPort: number;
  /** the LDAP service's limits (docs/ldap.md, "Limits") */
  ldap: LdapLimits;
  /** the HTTPS API's connections at once (docs/load.md; server/https-connections.ts) */
  apiMaxConnections: number;
  searchSizeLimit: number;
  searchTimeLimit: number;
  /** PEM files of extra CAs trusted for IdP endpoints, all of them (server.conf idp_ca_file: several separated by commas; idp-ca.ts) */
  idpCaFiles?: string[];
  /** how long the KDC holds a device-flow answer while the IdP says "pending" (docs/device-flow.md) */
  idpHoldSeconds: number;
  /** what anonymous armor (kinit -n) may do for the idp mechanism: deny (the default) or allow (docs/device-flow.md) */
  idpAnonymousArmor: AnonymousArmorIdp;
  /** device flows pending at once per user, per armor ticket and per source address (kdc/idp-starts.ts, docs/device-flow.md) */
  idpPending: { perUser: number; perTicket: number; perAddress: number };
  /** about how much memory the SQLite store may keep entries parsed in, in MiB; unset: a tenth of the machine's memory, within 64 to 1024 (autoCacheMb) */
  storeCacheMb?: number;
  /** a PostgreSQL connection URL: the store is there, shared by every server of the realm (docs/servers.md); else SQLite in the data directory */
  database?: string;
  /** the server log's lines: `text` (the default) or `json` lines (docs/logging.md) */
  logFormat?: LogFormat;
  /** the networks /dirid/metrics answers (server.conf metrics_allow: addresses or CIDR blocks separated by commas; docs/operations.md) */
  metricsAllow: string[];
}

/** Who may read /dirid/metrics when server.conf does not say: this machine only. */
export const DEFAULT_METRICS_ALLOW: readonly string[] = ['127.0.0.1/32', '::1/128'];

/** server.conf's metrics_allow, each item an address or address/prefix, checked. */
export function metricsAllowOf(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [...DEFAULT_METRICS_ALLOW];
  const items = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
  for (const item of items) {
    const [addr, prefix, extra] = item.split('/');
    const family = isIP(addr ?? '');
    const max = family === 4 ? 32 : 128;
    if (family === 0 || extra !== undefined || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max))) {
      throw new ConfigError(`server.conf: metrics_allow: '${item.slice(0, 64)}' is not an address or a network (127.0.0.1/32, 10.0.0.0/8, ::1/128)`);
    }
  }
  return items;
}


/**
 * The SQLite store's cache when server.conf says `auto`: a tenth of the
 * machine's memory, at least 64 MiB and at most 1 GiB (about 600,000
 * users' entries), as directory servers size their entry caches.
 */
export function autoCacheMb(totalBytes = totalmem()): number {
  return Math.max(64, Math.min(1024, Math.floor(totalBytes / 10 / 1048576)));
}

export const DEFAULT_LDAP_LIMITS: Readonly<LdapLimits> = {
  maxMessageSize: 256 * 1024,
  maxConnections: 1024,
  maxOperations: 32,
  idleTimeout: 900,
  pduTimeout: 30,
  sizeLimit: 5000,
  timeLimit: 30,
};

/** the HTTPS API's connections at once when server.conf does not say */
export const DEFAULT_API_MAX_CONNECTIONS = 1024;

function int(v: string | undefined, name: string, dflt: number): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d{1,9}$/.test(v)) throw new ConfigError(`server.conf: ${name} must be a non-negative integer`);
  return Number(v);
}

function positive(v: string | undefined, name: string, dflt: number): number {
  const n = int(v, name, dflt);
  if (n === 0) throw new ConfigError(`server.conf: ${name} must be at least 1`);
  return n;
}

/** server.conf's idp_ca_file as a list of files (empty items dropped). */
export function idpCaFilesOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** The list as server.conf's idp_ca_file holds it; undefined for none. A file name with a comma cannot be listed there. */
export function idpCaFileValue(files: readonly string[]): string | undefined {
  for (const f of files) if (f.includes(',')) throw new ConfigError(`server.conf: idp_ca_file cannot name ${f}, whose name holds a comma`);
  return files.length > 0 ? files.join(', ') : undefined;
}

/** store_cache_mb other than auto: a number of MiB. */
function cacheMb(v: string): number {
  if (!/^[1-9]\d{0,8}$/.test(v)) throw new ConfigError('server.conf: store_cache_mb must be auto or a number of MiB (at least 1)');
  return Number(v);
}

/** Why a file could not be read, in our words (a missing file, a directory, no permission). */
export function readProblem(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'a directory, not a file';
  return e instanceof Error ? e.message : String(e);
}

/** server.conf's text; a missing data directory, one without a realm, or an unreadable file said in our words. */
function serverConfText(paths: DataPaths): string {
  try {
    return readFileSync(paths.serverConf, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !existsSync(paths.dir)) throw new ConfigError(`the data directory ${paths.dir} does not exist`);
    if (code === 'ENOENT' || code === 'ENOTDIR') {
      throw new ConfigError(`${paths.dir} holds no realm (no server.conf): create one with dirid-server init --data-dir ${paths.dir}`);
    }
    if (code === 'EACCES') throw new ConfigError(`${paths.serverConf}: permission denied`);
    throw e;
  }
}

/** The settings of server.conf's [server] section: any other name is a mistake (a typo would otherwise be ignored without a word). */
const SERVER_SETTINGS = new Set([
  'realm', 'domain', 'hostname', 'base_dn', 'listen',
  'https_port', 'http_port', 'kdc_port', 'kpasswd_port', 'ldap_port', 'ldaps_port',
  'ldap_max_message_size', 'ldap_max_connections', 'ldap_max_operations', 'ldap_idle_timeout', 'ldap_pdu_timeout', 'ldap_size_limit', 'ldap_time_limit',
  'api_max_connections', 'search_size_limit', 'search_time_limit',
  'idp_ca_file', 'idp_hold_seconds', 'idp_anonymous_armor', 'idp_pending_per_user', 'idp_pending_per_armor', 'idp_pending_per_address',
  'store_cache_mb', 'database', 'log_format', 'metrics_allow',
]);
/**
 * The longest hold of a device-flow answer (docs/device-flow.md): MIT's
 * Kerberos clients give up on one reply after about 17 s.
 */
export const MAX_IDP_HOLD_SECONDS = 15;

export function readServerConfig(paths: DataPaths): ServerConfig {
  const ini = parseIni(serverConfText(paths), paths.serverConf);
  const s = ini.server;
  if (!s) throw new ConfigError(`${paths.serverConf}: missing [server] section`);
  for (const k of ['realm', 'domain', 'hostname', 'base_dn']) if (!s[k]) throw new ConfigError(`${paths.serverConf}: missing ${k}`);
  const unknown = Object.keys(s).filter((k) => !SERVER_SETTINGS.has(k));
  if (unknown.length > 0) throw new ConfigError(`${paths.serverConf}: unknown setting${unknown.length > 1 ? 's' : ''} ${unknown.map((k) => `'${k.slice(0, 64)}'`).join(', ')} in [server] (docs/servers.md lists them)`);
  const hold = int(s.idp_hold_seconds, 'idp_hold_seconds', 10);
  if (hold > MAX_IDP_HOLD_SECONDS) throw new ConfigError(`server.conf: idp_hold_seconds must be at most ${MAX_IDP_HOLD_SECONDS}: MIT's Kerberos clients give up on a reply after about 17 s`);
  const idpCaFiles = idpCaFilesOf(s.idp_ca_file);
  const anonymousArmor = s.idp_anonymous_armor || 'deny';
  if (anonymousArmor !== 'deny' && anonymousArmor !== 'allow') throw new ConfigError('server.conf: idp_anonymous_armor must be deny or allow');
  const logFormat = s.log_format || 'text';
  if (logFormat !== 'text' && logFormat !== 'json') throw new ConfigError('server.conf: log_format must be text or json');
  return {
    realm: s.realm!,
    domain: s.domain!,
    hostname: s.hostname!,
    baseDn: s.base_dn!,
    listen: s.listen ?? '0.0.0.0',
    httpsPort: int(s.https_port, 'https_port', 443),
    httpPort: int(s.http_port, 'http_port', 80),
    kdcPort: int(s.kdc_port, 'kdc_port', 88),
    kpasswdPort: int(s.kpasswd_port, 'kpasswd_port', 464),
    ldapPort: int(s.ldap_port, 'ldap_port', 389),
    ldapsPort: int(s.ldaps_port, 'ldaps_port', 636),
    ldap: {
      maxMessageSize: positive(s.ldap_max_message_size, 'ldap_max_message_size', DEFAULT_LDAP_LIMITS.maxMessageSize),
      maxConnections: positive(s.ldap_max_connections, 'ldap_max_connections', DEFAULT_LDAP_LIMITS.maxConnections),
      maxOperations: positive(s.ldap_max_operations, 'ldap_max_operations', DEFAULT_LDAP_LIMITS.maxOperations),
      idleTimeout: positive(s.ldap_idle_timeout, 'ldap_idle_timeout', DEFAULT_LDAP_LIMITS.idleTimeout),
      pduTimeout: positive(s.ldap_pdu_timeout, 'ldap_pdu_timeout', DEFAULT_LDAP_LIMITS.pduTimeout),
      sizeLimit: int(s.ldap_size_limit, 'ldap_size_limit', DEFAULT_LDAP_LIMITS.sizeLimit),
      timeLimit: int(s.ldap_time_limit, 'ldap_time_limit', DEFAULT_LDAP_LIMITS.timeLimit),
    },
    apiMaxConnections: positive(s.api_max_connections, 'api_max_connections', DEFAULT_API_MAX_CONNECTIONS),
    searchSizeLimit: int(s.search_size_limit, 'search_size_limit', 100),
    searchTimeLimit: int(s.search_time_limit, 'search_time_limit', 2),
    ...(idpCaFiles.length > 0 ? { idpCaFiles } : {}),
    idpHoldSeconds: hold,
    idpAnonymousArmor: anonymousArmor,
    idpPending: {
      perUser: positive(s.idp_pending_per_user, 'idp_pending_per_user', DEFAULT_START_LIMITS.perUser),
      perTicket: positive(s.idp_pending_per_armor, 'idp_pending_per_armor', DEFAULT_START_LIMITS.perTicket),
      perAddress: positive(s.idp_pending_per_address, 'idp_pending_per_address', DEFAULT_START_LIMITS.perAddress),
    },
    ...(s.store_cache_mb && s.store_cache_mb !== 'auto' ? { storeCacheMb: cacheMb(s.store_cache_mb) } : {}),
    ...(s.database ? { database: databaseUrl(s.database, `${paths.serverConf}: database`) } : {}),
    ...(logFormat === 'json' ? { logFormat } : {}),
    metricsAllow: metricsAllowOf(s.metrics_allow),
  };
}

/** A PostgreSQL connection URL (one host, or several as libpq writes them), checked; `what` names it in the error. */
export function databaseUrl(v: string, what: string): string {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(v)?.[1]?.toLowerCase();
  if (scheme === undefined) throw new ConfigError(`${what} must be a postgresql:// URL`);
  if (scheme !== 'postgresql' && scheme !== 'postgres') throw new ConfigError(`${what} must be a postgresql:// URL, not ${scheme}:`);
  let targets;
  try {
    targets = connectionTargets(v);
  } catch (e) {
    throw new ConfigError(`${what}: ${(e as Error).message}`);
  }
  // each host's URL alone must be one node-postgres reads
  for (const h of targets.hosts) {
    try {
      new URL(targets.url(h));
    } catch {
      throw new ConfigError(`${what} must be a postgresql:// URL`);
    }
  }
  return v;
}

/** The database URL as logs and messages may show it: without its password (in the user part or the query). */
export function shownDatabase(v: string): string {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/i.exec(v);
  if (!m) return 'postgresql://…';
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const user = at >= 0 ? authority.slice(0, at) : undefined;
  const shownUser = user === undefined ? '' : `${user.includes(':') ? `${user.slice(0, user.indexOf(':'))}:***` : user}@`;
  const shownRest = rest.replace(/([?&]password=)[^&#]*/gi, '$1***');
  return `${scheme}${shownUser}${authority.slice(at + 1)}${shownRest}`;
}

export function writeServerConfig(paths: DataPaths, c: ServerConfig): void {
  const server: Record<string, string> = {
    realm: c.realm,
    domain: c.domain,
    hostname: c.hostname,
    base_dn: c.baseDn,
    listen: c.listen,
    https_port: String(c.httpsPort),
    http_port: String(c.httpPort),
    kdc_port: String(c.kdcPort),
    kpasswd_port: String(c.kpasswdPort),
    ldap_port: String(c.ldapPort),
    ldaps_port: String(c.ldapsPort),
    ldap_max_message_size: String(c.ldap.maxMessageSize),
    ldap_max_connections: String(c.ldap.maxConnections),
    ldap_max_operations: String(c.ldap.maxOperations),
    ldap_idle_timeout: String(c.ldap.idleTimeout),
    ldap_pdu_timeout: String(c.ldap.pduTimeout),
    ldap_size_limit: String(c.ldap.sizeLimit),
    ldap_time_limit: String(c.ldap.timeLimit),
    api_max_connections: String(c.apiMaxConnections),
    search_size_limit: String(c.searchSizeLimit),
    search_time_limit: String(c.searchTimeLimit),
    idp_hold_seconds: String(c.idpHoldSeconds),
    idp_anonymous_armor: c.idpAnonymousArmor,
    idp_pending_per_user: String(c.idpPending.perUser),
    idp_pending_per_armor: String(c.idpPending.perTicket),
    idp_pending_per_address: String(c.idpPending.perAddress),
    store_cache_mb: c.storeCacheMb === undefined ? 'auto' : String(c.storeCacheMb),
  };
  const idpCa = idpCaFileValue(c.idpCaFiles ?? []);
  if (idpCa) server.idp_ca_file = idpCa;
  if (c.database) server.database = c.database;
  if (c.logFormat) server.log_format = c.logFormat;
  if (c.metricsAllow.join(',') !== DEFAULT_METRICS_ALLOW.join(',')) server.metrics_allow = c.metricsAllow.join(', ');
  writeFileAtomic(paths.serverConf, formatIni({ server }), 0o600);
}

/** `host`, or `host:port` when the port is not the service's usual one (as client files name servers). */
export function hostPort(host: string, port: number, usual: number): string {
  return port === usual ? host : `${host}:${port}`;
}

/** The client configuration users copy (or point `dirid -c` at). */
export function writeDefaultConf(paths: DataPaths, c: ServerConfig, httpsPort: number): void {
  const host = hostPort(c.hostname, httpsPort, 443);
  writeFileAtomic(
    paths.defaultConf,
    formatIni({
      global: {
        realm: c.realm,
        domain: c.domain,
        server: c.hostname,
        xmlrpc_uri: `https://${host}/dirid/xml`,
        ca_file: paths.caCert,
      },
    }),
  );
}
