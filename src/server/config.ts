/**
 * The data directory of a dirid server and its files: server.conf (realm
 * settings and ports), the master key, the store, TLS material and the
 * client files it writes for users (default.conf, ca.crt; krb5.conf and
 * host.keytab with the KDC).
 */
import { chmodSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, formatIni, parseIni } from '../cli/ini.js';

export interface DataPaths {
  dir: string;
  serverConf: string;
  masterKey: string;
  store: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  defaultConf: string;
  krb5Conf: string;
  hostKeytab: string;
}

export function dataPaths(dir: string): DataPaths {
  return {
    dir,
    serverConf: join(dir, 'server.conf'),
    masterKey: join(dir, 'master.key'),
    store: join(dir, 'dirid.db'),
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    defaultConf: join(dir, 'default.conf'),
    krb5Conf: join(dir, 'krb5.conf'),
    hostKeytab: join(dir, 'host.keytab'),
  };
}

export interface ServerConfig {
  realm: string;
  domain: string;
  hostname: string;
  baseDn: string;
  listen: string;
  httpsPort: number;
  kdcPort: number;
  searchSizeLimit: number;
  searchTimeLimit: number;
  /** PEM bundle of extra CAs trusted for IdP endpoints */
  idpCaFile?: string;
  /** how long the KDC holds a device-flow answer while the IdP says "pending" (docs/device-flow.md) */
  idpHoldSeconds: number;
}

function int(v: string | undefined, name: string, dflt: number): number {
  if (v === undefined || v === '') return dflt;
  if (!/^\d{1,9}$/.test(v)) throw new ConfigError(`server.conf: ${name} must be a non-negative integer`);
  return Number(v);
}

export function readServerConfig(paths: DataPaths): ServerConfig {
  const ini = parseIni(readFileSync(paths.serverConf, 'utf8'), paths.serverConf);
  const s = ini.server;
  if (!s) throw new ConfigError(`${paths.serverConf}: missing [server] section`);
  for (const k of ['realm', 'domain', 'hostname', 'base_dn']) if (!s[k]) throw new ConfigError(`${paths.serverConf}: missing ${k}`);
  return {
    realm: s.realm!,
    domain: s.domain!,
    hostname: s.hostname!,
    baseDn: s.base_dn!,
    listen: s.listen ?? '0.0.0.0',
    httpsPort: int(s.https_port, 'https_port', 443),
    kdcPort: int(s.kdc_port, 'kdc_port', 88),
    searchSizeLimit: int(s.search_size_limit, 'search_size_limit', 100),
    searchTimeLimit: int(s.search_time_limit, 'search_time_limit', 2),
    ...(s.idp_ca_file ? { idpCaFile: s.idp_ca_file } : {}),
    idpHoldSeconds: int(s.idp_hold_seconds, 'idp_hold_seconds', 10),
  };
}

export function writeServerConfig(paths: DataPaths, c: ServerConfig): void {
  const server: Record<string, string> = {
    realm: c.realm,
    domain: c.domain,
    hostname: c.hostname,
    base_dn: c.baseDn,
    listen: c.listen,
    https_port: String(c.httpsPort),
    kdc_port: String(c.kdcPort),
    search_size_limit: String(c.searchSizeLimit),
    search_time_limit: String(c.searchTimeLimit),
    idp_hold_seconds: String(c.idpHoldSeconds),
  };
  if (c.idpCaFile) server.idp_ca_file = c.idpCaFile;
  writeFileAtomic(paths.serverConf, formatIni({ server }));
}

/** The client configuration users copy (or point `dirid -c` at). */
export function writeDefaultConf(paths: DataPaths, c: ServerConfig, httpsPort: number): void {
  const host = httpsPort === 443 ? c.hostname : `${c.hostname}:${httpsPort}`;
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

export function writeFileAtomic(path: string, data: string | Buffer, mode = 0o644): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
