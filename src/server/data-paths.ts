/**
 * The files of a data directory (server.conf, the master key, the store,
 * TLS material, the KDC's PKINIT certificate, the client files) by path, and
 * how a file there is written: whole, with its mode, or not at all. Apart
 * from config.ts (which reads and writes server.conf) so that what writes
 * the realm's directory at init (init-tree.ts, kerberos-init.ts) needs no
 * configuration, network or database module.
 */
import { chmodSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface DataPaths {
  dir: string;
  serverConf: string;
  masterKey: string;
  store: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  /** the KDC's PKINIT certificate and key (server/kdc-cert.ts) */
  kdcCert: string;
  kdcKey: string;
  defaultConf: string;
  krb5Conf: string;
  hostKeytab: string;
  /** an sssd.conf for hosts of the realm (server/sssd-conf.ts) */
  sssdConf: string;
  /** DNS SRV records of the realm's servers, for the administrator to publish (server/servers.ts) */
  dnsZone: string;
  /** where the quickstart keeps the admin password; while it is there, start serves loopback only (start.ts) */
  adminPassword: string;
}

/**
 * The files of a data directory, as absolute paths: client files written
 * from them (default.conf's ca_file, krb5.conf's pkinit_anchors) are read
 * from elsewhere, so a relative `--data-dir` must not leak into them.
 */
export function dataPaths(given: string): DataPaths {
  const dir = resolve(given);
  return {
    dir,
    serverConf: join(dir, 'server.conf'),
    masterKey: join(dir, 'master.key'),
    store: join(dir, 'dirid.db'),
    caCert: join(dir, 'ca.crt'),
    caKey: join(dir, 'ca.key'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    kdcCert: join(dir, 'kdc.crt'),
    kdcKey: join(dir, 'kdc.key'),
    defaultConf: join(dir, 'default.conf'),
    krb5Conf: join(dir, 'krb5.conf'),
    hostKeytab: join(dir, 'host.keytab'),
    sssdConf: join(dir, 'sssd.conf'),
    dnsZone: join(dir, 'dns-srv.zone'),
    adminPassword: join(dir, 'admin.password'),
  };
}

export function writeFileAtomic(path: string, data: string | Buffer, mode = 0o644): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, path);
}
