/**
 * `dirid-server replica-prepare`: makes the data directory of another
 * server of a realm whose store is in PostgreSQL (docs/servers.md). In the
 * shared database: the new server's principals (host/, HTTP/, ldap/ of its
 * host name, random keys) and its record among the realm's servers. In the
 * new directory: server.conf (the realm's, with the new host name), the
 * shared master key (0600), the realm CA's certificate, a server
 * certificate for the new host name and a KDC (PKINIT) certificate issued
 * by the realm CA, its host.keytab, and client files naming every server (krb5.conf, sssd.conf,
 * default.conf, the DNS SRV records). The realm CA's key stays with the
 * first server.
 */
import { copyFileSync, chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { HOST_NAME } from '../framework/params.js';
import { dataPaths, readServerConfig, shownDatabase, writeDefaultConf, writeFileAtomic, writeServerConfig, type DataPaths, type ServerConfig } from './config.js';
import { InitError } from './init.js';
import { writeKdcCertificate } from './kdc-cert.js';
import { serverPrincipalNames, serverPrincipals, writeHostKeytab } from './kerberos-init.js';
import { issueServerCert } from './pki.js';
import { validSan } from './cert-names.js';
import { realmServers, registerServer, writeServerFiles, type RealmServer } from './servers.js';
import { openRealmStore } from './store.js';
import { upgradeDirectory } from './upgrade.js';
import { findPrincipal } from '../account/lookup.js';
import { createLogger } from '../log/logger.js';

export interface ReplicaOptions {
  /** the data directory of a server of the realm (with the realm CA's key) */
  dataDir: string;
  hostname: string;
  /** the new server's data directory */
  out: string;
  /** more names or IP addresses hosts reach the new server by, for its certificate (`--san`) */
  sans?: string[];
}

export async function prepareReplica(o: ReplicaOptions, log: (line: string) => void = () => {}): Promise<DataPaths> {
  const hostname = o.hostname.toLowerCase();
  if (!HOST_NAME.test(hostname)) throw new InitError(`invalid hostname '${o.hostname}'`);
  const sans = o.sans ?? [];
  for (const san of sans) if (!validSan(san)) throw new InitError(`invalid --san '${san}': give a host name or an IP address`);
  const from = dataPaths(o.dataDir);
  const config = readServerConfig(from);
  if (!config.database) {
    throw new InitError(`${o.dataDir}: the realm's store is SQLite, which belongs to one server; a realm with several servers keeps its store in PostgreSQL (dirid-server init --database)`);
  }
  if (hostname === config.hostname.toLowerCase()) throw new InitError(`${hostname} is the server of ${o.dataDir} itself`);
  if (!existsSync(from.caKey)) throw new InitError(`${from.caKey}: the realm CA's key is needed to issue the new server's certificate`);
  const to = dataPaths(o.out);
  if (existsSync(to.serverConf) || existsSync(to.masterKey)) throw new InitError(`${o.out} already holds a server; refusing to overwrite it`);
  const replica: ServerConfig = { ...config, hostname, ldap: { ...config.ldap } };

  const dir = await openRealmStore(from, config, false);
  try {
    // the new server's entries go into a directory at this code's version
    await upgradeDirectory(dir, { realm: config.realm, log: createLogger({ write: log, component: 'upgrade' }) });
    const names = serverPrincipalNames(hostname, config.realm);
    if (await findPrincipal(dir, names.host)) {
      throw new InitError(`${names.host} already exists: ${hostname} is already a server or host of the realm`);
    }
    // the server's other principals, said in words before the batch would fail on one of them
    for (const name of [names.http, ...names.ldap]) {
      if (await findPrincipal(dir, name)) {
        throw new InitError(
          `${name} already exists in the realm (a service, or the LDAP principal a server initialised as localhost takes for the machine's own name): prepare the server under another --hostname, or delete that service first`,
        );
      }
    }
    log(`dirid-server: replica-prepare: principals of ${hostname} in ${shownDatabase(config.database)}`);
    const principals = serverPrincipals(dir.baseDn, config.realm, hostname);
    await dir.batch(principals.ops);
    // the new server is named with the ports it is configured with until it starts and records the ones it listens on
    const self: RealmServer = { hostname, ports: { kdc: replica.kdcPort, kpasswd: replica.kpasswdPort, https: replica.httpsPort, ldap: replica.ldapPort, ldaps: replica.ldapsPort } };
    await registerServer(dir, self);
    const servers = await realmServers(dir, self);

    log(`dirid-server: replica-prepare: files of ${hostname} in ${o.out}`);
    mkdirSync(o.out, { recursive: true, mode: 0o700 });
    copyFileSync(from.masterKey, to.masterKey);
    chmodSync(to.masterKey, 0o600);
    const caPem = readFileSync(from.caCert, 'utf8');
    writeFileAtomic(to.caCert, caPem, 0o644);
    const cert = await issueServerCert({ certPem: caPem, keyPem: readFileSync(from.caKey, 'utf8') }, {
      commonName: hostname,
      dnsNames: [...new Set([hostname, ...sans.filter((s) => isIP(s) === 0).map((s) => s.toLowerCase())])],
      ipAddresses: sans.filter((s) => isIP(s) !== 0),
    });
    writeFileAtomic(to.serverKey, cert.keyPem, 0o600);
    writeFileAtomic(to.serverCert, cert.certPem + caPem, 0o644);
    writeHostKeytab(to, config.realm, hostname, principals.hostKeys);
    await writeKdcCertificate(to, config.realm, from);
    writeServerConfig(to, replica);
    writeDefaultConf(to, replica, replica.httpsPort);
    writeServerFiles(to, replica, servers);
  } finally {
    await dir.close();
  }
  log(`dirid-server: ${hostname} prepared in ${o.out}; start it with: dirid-server start --data-dir ${o.out}`);
  return to;
}
