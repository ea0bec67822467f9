/**
 * `dirid-server init`: creates a realm in a data directory, its store there
 * (SQLite) or in a PostgreSQL database (--database). Refuses to touch an
 * existing realm, in the directory or in the database. Steps run in order and each owns its files and entries:
 * master key, store, then the directory's steps (init-directory.ts: tree and
 * administrators, the Kerberos principals and host.keytab, the objects'
 * default entries and the directory's version), krb5.conf (krb5-conf.ts), TLS, the KDC's
 * PKINIT certificate (kdc-cert.ts), client files. A failed init removes
 * what it wrote to the data directory (undoInit), so it can be run again.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { baseDnFromDomain } from '../directory/layout.js';
import { FQDN, HOST_NAME } from '../framework/params.js';
import { rangeProblem } from '../objects/posix.js';
import { createCa, issueServerCert } from './pki.js';
import { DEFAULT_START_LIMITS } from '../kdc/idp-starts.js';
import { DEFAULT_API_MAX_CONNECTIONS, DEFAULT_LDAP_LIMITS, DEFAULT_METRICS_ALLOW, databaseUrl, dataPaths, readProblem, shownDatabase, writeDefaultConf, writeFileAtomic, writeServerConfig, type DataPaths, type ServerConfig } from './config.js';
import { openRealmStore, type StoreLocation } from './store.js';
import { directorySteps, idRangeOf } from './init-directory.js';
import { krb5ConfStep } from './krb5-conf.js';
import { sssdConfStep } from './sssd-conf.js';
import { kdcCertStep } from './kdc-cert.js';
import { reachabilityWarnings, serverCertNames, validSan } from './cert-names.js';
import type { InitOptions, InitStep } from './init-step.js';
import { brokenPasswordRule, DEFAULT_PASSWORD_RULES } from '../account/credentials.js';

export type { InitOptions } from './init-step.js';

const REALM = /^[A-Z0-9][A-Z0-9.-]{0,253}$/;

export class InitError extends Error {}

export function validateInitOptions(o: InitOptions): void {
  if (!REALM.test(o.realm)) throw new InitError(`invalid realm '${o.realm}': use upper-case letters, digits, '.' and '-'`);
  if (!FQDN.test(o.domain)) throw new InitError(`invalid domain '${o.domain}'`);
  if (!HOST_NAME.test(o.hostname)) throw new InitError(`invalid hostname '${o.hostname}'`);
  for (const san of o.sans ?? []) if (!validSan(san)) throw new InitError(`invalid --san '${san}': give a host name or an IP address`);
  const broken = brokenPasswordRule(o.adminPassword, DEFAULT_PASSWORD_RULES);
  if (broken) throw new InitError(`the admin password ${broken.message}`);
  if (o.listen !== undefined && !isIP(o.listen) && !HOST_NAME.test(o.listen)) throw new InitError(`invalid --listen '${o.listen}': give an IP address (0.0.0.0 for every interface, 127.0.0.1 for loopback) or a host name`);
  if (o.database !== undefined) databaseUrl(o.database, '--database');
  const problem = o.idStart === undefined && o.idMax === undefined ? null : rangeProblem(idRangeOf(o));
  if (problem) throw new InitError(`invalid ID range: ${problem}`);
}

/**
 * A realm CA and the server's certificate. It names every name hosts may
 * reach the server by (serverCertNames): the realm's hostname, each
 * `--san`, the machine's own name (by which OpenLDAP's client library also
 * checks a server it reaches over loopback) and its network addresses,
 * localhost and the loopback addresses. A hostname other hosts cannot reach
 * the server by (localhost, what the quickstart uses) is said in words:
 * krb5.conf, sssd.conf and default.conf name the server by it, so a host
 * given those files finds no server, and SSSD goes offline without saying why.
 */
const tlsStep: InitStep = {
  name: 'certificate authority and server certificate',
  async run({ paths, config, options, log }) {
    const ca = await createCa(`Certificate Authority ${config.realm}`);
    const { dnsNames, ipAddresses } = serverCertNames(config.hostname, options.sans ?? []);
    for (const line of reachabilityWarnings(config.hostname, options.sans ?? [])) log?.(line);
    const cert = await issueServerCert(ca, { commonName: config.hostname, dnsNames, ipAddresses });
    writeFileAtomic(paths.caKey, ca.keyPem, 0o600);
    writeFileAtomic(paths.caCert, ca.certPem, 0o644);
    writeFileAtomic(paths.serverKey, cert.keyPem, 0o600);
    writeFileAtomic(paths.serverCert, cert.certPem + ca.certPem, 0o644);
  },
};

const clientFilesStep: InitStep = {
  name: 'client configuration',
  async run({ paths, config }) {
    writeDefaultConf(paths, config, config.httpsPort);
  },
};

/** Ordered init steps. */
export const initSteps: InitStep[] = [...directorySteps, krb5ConfStep, tlsStep, kdcCertStep, clientFilesStep, sssdConfStep];

export async function initRealm(o: InitOptions, log: (line: string) => void = () => {}): Promise<DataPaths> {
  validateInitOptions(o);
  const paths = dataPaths(o.dataDir);
  if (existsSync(paths.serverConf) || existsSync(paths.store) || existsSync(paths.masterKey)) {
    throw new InitError(`${o.dataDir} already holds a realm; refusing to overwrite it`);
  }
  const config: ServerConfig = {
    realm: o.realm,
    domain: o.domain,
    hostname: o.hostname,
    baseDn: baseDnFromDomain(o.domain),
    listen: o.listen ?? '0.0.0.0',
    httpsPort: o.httpsPort ?? 443,
    httpPort: o.httpPort ?? 80,
    kdcPort: o.kdcPort ?? 88,
    kpasswdPort: o.kpasswdPort ?? 464,
    ldapPort: o.ldapPort ?? 389,
    ldapsPort: o.ldapsPort ?? 636,
    ldap: { ...DEFAULT_LDAP_LIMITS },
    apiMaxConnections: DEFAULT_API_MAX_CONNECTIONS,
    searchSizeLimit: 100,
    searchTimeLimit: 2,
    idpHoldSeconds: 10,
    idpAnonymousArmor: 'deny',
    idpPending: { perUser: DEFAULT_START_LIMITS.perUser, perTicket: DEFAULT_START_LIMITS.perTicket, perAddress: DEFAULT_START_LIMITS.perAddress },
    metricsAllow: [...DEFAULT_METRICS_ALLOW],
    ...(o.database ? { database: o.database } : {}),
  };
  if (existsSync(paths.dir) && !statSync(paths.dir).isDirectory()) throw new InitError(`--data-dir ${o.dataDir} is not a directory`);
  const found = existsSync(paths.dir) ? new Set(readdirSync(paths.dir)) : null;
  // the first directory mkdir made (the data directory or a parent of it), undefined when it was there
  const made = mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
  try {
    writeFileAtomic(paths.masterKey, randomBytes(32), 0o600);
    if (config.database) await refuseExistingDatabase(paths, { baseDn: config.baseDn, database: config.database });
    const dir = await openRealmStore(paths, config, true);
    try {
      for (const step of initSteps) {
        log(`dirid-server: init: ${step.name}`);
        await step.run({ paths, config, options: o, dir, log });
      }
    } finally {
      await dir.close();
    }
    writeServerConfig(paths, config);
  } catch (e) {
    undoInit(paths.dir, made, found);
    throw e;
  }
  log(`dirid-server: realm ${config.realm} created in ${o.dataDir}`);
  return paths;
}

/**
 * After a failed init, the data directory as init found it: the directory
 * removed when init made it, else what init added to it (the master key,
 * the store, certificates, client files) removed, so that running init
 * again is not refused for a realm that was never made. What was there
 * before is left alone.
 */
function undoInit(dataDir: string, made: string | undefined, found: ReadonlySet<string> | null): void {
  try {
    if (made !== undefined) {
      rmSync(made, { recursive: true, force: true });
      return;
    }
    for (const name of readdirSync(dataDir)) if (!found?.has(name)) rmSync(join(dataDir, name), { recursive: true, force: true });
  } catch {
    // the failure that got here is the one to report
  }
}

/** A database that already holds a directory under the realm's base DN is another realm's (or this one's): init leaves it alone. */
async function refuseExistingDatabase(paths: DataPaths, at: StoreLocation & { database: string }): Promise<void> {
  let existing;
  try {
    existing = await openRealmStore(paths, at, false);
  } catch (e) {
    if (e instanceof Error && /holds no directory/.test(e.message)) return;
    throw new InitError(`cannot use the database ${shownDatabase(at.database)}: ${e instanceof Error ? e.message : String(e)}`);
  }
  await existing.close();
  throw new InitError(`the database ${shownDatabase(at.database)} already holds a realm under ${at.baseDn}; refusing to overwrite it`);
}

export function readPasswordFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new InitError(`cannot read the admin password file ${path} (${readProblem(e)})`);
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (!line) throw new InitError(`${path}: empty password file`);
  return line;
}
