/**
 * What a host must know of its realm to be configured for it, wherever it
 * learnt it (DNS SRV records, the administrator's options, or the server's
 * answer to an enrolment): the realm and domain, the directory's base DN
 * and, for each server, the ports of its API, KDC, password service and
 * LDAP service. Also the paths the files of a host name each other by, so
 * that every file agrees on them (the CA above all).
 */

/** One dirid server as hosts reach it. */
export interface RealmServer {
  hostname: string;
  https: number;
  kdc: number;
  kpasswd: number;
  ldap: number;
}

export interface RealmFacts {
  realm: string;
  domain: string;
  baseDn: string;
  /** the preferred server first */
  servers: readonly RealmServer[];
}

/** The usual ports, which the files leave out. */
export const USUAL_PORTS = { https: 443, kdc: 88, kpasswd: 464, ldap: 389 } as const;

/** `host` or `host:port` (IPv6 literals bracketed), the port only when it is not the usual one. */
export function hostPort(host: string, port: number, usual: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return port === usual ? h : `${h}:${port}`;
}

/** `dc=example,dc=test` for `example.test`. */
export function baseDnOfDomain(domain: string): string {
  return domain
    .split('.')
    .filter((l) => l !== '')
    .map((l) => `dc=${l}`)
    .join(',');
}

/** Where a joined host keeps what the files name: one place for each, so the files agree. */
export const HOST_PATHS = {
  /** the realm CA, named by krb5.conf (pkinit_anchors), sssd.conf (ldap_tls_cacert) and default.conf (ca_file) */
  caFile: '/etc/dirid/ca.crt',
  clientConf: '/etc/dirid/default.conf',
  keytab: '/etc/krb5.keytab',
  krb5Conf: '/etc/krb5.conf',
  sssdConf: '/etc/sssd/sssd.conf',
  nsswitch: '/etc/nsswitch.conf',
  sshdDropIn: '/etc/ssh/sshd_config.d/10-dirid.conf',
  sshClientDropIn: '/etc/ssh/ssh_config.d/10-dirid.conf',
  pamProfile: '/usr/share/pam-configs/dirid',
  /** what `dirid join` saved and recorded, for `dirid leave` */
  stateDir: '/var/lib/dirid/join',
} as const;

/** SSSD's idp client plugin as Debian installs it (sssd-idp). */
export const SSSD_IDP_PLUGIN = '/usr/lib/x86_64-linux-gnu/sssd/modules/sssd_krb5_idp_plugin.so';
