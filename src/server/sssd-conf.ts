/**
 * An sssd.conf for hosts of the realm, written beside krb5.conf
 * (docs/sssd-host.md explains each line): users and groups from dirid's LDAP
 * service (RFC 2307bis, user private groups derived by SSSD), read with the
 * host's own Kerberos key (SASL GSSAPI), passwords and device-flow logins
 * through the KDC with FAST armor from the host keytab, password changes
 * through the password service, and the account check of every login
 * (disabled users refused, also when no password is asked, as with an SSH
 * key). The example names every server of the realm (this one first), the
 * server's own host, and the CA and keytab of the data directory; a host
 * joined with `dirid join` gets the same text with its own name and files
 * (host/sssd-conf.ts).
 */
import type { ServerConfig } from './config.js';
import { writeFileAtomic, type DataPaths } from './data-paths.js';
import { sssdConfText } from '../host/sssd-conf.js';
import type { InitStep } from './init-step.js';

/** Where hosts reach one dirid server (its host name is in its certificate and its ldap/ principal). */
export interface SssdServer {
  hostname: string;
  kdc: number;
  kpasswd: number;
  ldap: number;
}

/** Writes the example for the server's own host, with the ports the servers listen on. */
export function writeSssdConf(paths: DataPaths, config: ServerConfig, servers: readonly SssdServer[]): void {
  const text = sssdConfText({
    realm: config.realm,
    domain: config.domain,
    servers,
    baseDn: config.baseDn,
    host: config.hostname,
    // the files of the data directory name one CA file, the one beside them (as krb5.conf and default.conf do), and the server's own host keytab
    caFile: paths.caCert,
    keytab: paths.hostKeytab,
    writtenBy: `Written by dirid-server for realm ${config.realm}: sssd.conf for this server's own host\n# (dirid join writes one for each host it joins; see docs/sssd-host.md).`,
  });
  writeFileAtomic(paths.sssdConf, text, 0o644);
}

/** The init step that writes it with the configured ports. */
export const sssdConfStep: InitStep = {
  name: 'sssd.conf for hosts',
  async run({ paths, config }) {
    writeSssdConf(paths, config, [{ hostname: config.hostname, kdc: config.kdcPort, kpasswd: config.kpasswdPort, ldap: config.ldapPort }]);
  },
};
