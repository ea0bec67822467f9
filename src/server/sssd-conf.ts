/**
 * An sssd.conf for hosts of the realm, written beside krb5.conf
 * (docs/sssd-host.md explains each line): users and groups from dirid's LDAP
 * service (RFC 2307bis, user private groups derived by SSSD), read with the
 * host's own Kerberos key (SASL GSSAPI), passwords and device-flow logins
 * through the KDC with FAST armor from the host keytab, password changes
 * through the password service, and the account check of every login
 * (disabled users refused, also when no password is asked, as with an SSH
 * key; and the host-based access rules, which the LDAP service gives the
 * host as each user's `host` and `authorizedService`, docs/hbac.md). The example names every server of the
 * realm (this one first) and the server's own host; a host enrolled with `dirid host-add` and
 * `dirid keytab-get` puts its own name in the two host/ lines.
 */
import { hostPort, writeFileAtomic, type DataPaths, type ServerConfig } from './config.js';
import type { InitStep } from './init-step.js';

/** Where hosts reach one dirid server (its host name is in its certificate and its ldap/ principal). */
export interface SssdServer {
  hostname: string;
  kdc: number;
  kpasswd: number;
  ldap: number;
}

export interface SssdConfInput {
  realm: string;
  domain: string;
  /** the realm's servers, the preferred one first */
  servers: readonly SssdServer[];
  baseDn: string;
  /** the host the file is for */
  host: string;
  /** where the host keeps the realm CA and its keytab */
  caFile?: string;
  keytab?: string;
}

/**
 * How long (seconds) the user's entry SSSD read for one PAM request serves
 * the next ones of that user without asking the LDAP service again
 * (SSSD's pam_id_timeout, written out): the bound within which a change of
 * the access rules reaches a host's next login (docs/hbac.md).
 */
export const PAM_ID_TIMEOUT = 5;

export function sssdConfText(o: SssdConfInput): string {
  const caFile = o.caFile ?? '/etc/dirid/ca.crt';
  const keytab = o.keytab ?? '/etc/krb5.keytab';
  const hostPrincipal = `host/${o.host}@${o.realm}`;
  const list = (f: (s: SssdServer) => string) => o.servers.map(f).join(', ');
  return `# Written by dirid-server for realm ${o.realm}: sssd.conf for a host of the realm
# (copy to /etc/sssd/sssd.conf, owner root, mode 0600; see docs/sssd-host.md).
[sssd]
services = nss, pam
domains = ${o.domain}

[nss]

[pam]
# every login reads the user's entry again, its access (host, authorizedService)
# included, once pam_id_timeout has passed since the last read (SSSD's default,
# no_session, skips that while the user has a process on the host)
pam_initgroups_scheme = always
pam_id_timeout = ${PAM_ID_TIMEOUT}

[domain/${o.domain}]
id_provider = ldap
auth_provider = krb5
access_provider = ldap
ldap_access_order = expire, host, authorized_service
ldap_account_expire_policy = rhds
ldap_uri = ${list((s) => `ldap://${hostPort(s.hostname, s.ldap, 389)}`)}
ldap_id_use_start_tls = true
ldap_tls_cacert = ${caFile}
ldap_search_base = ${o.baseDn}
ldap_schema = rfc2307bis
ldap_sasl_mech = GSSAPI
ldap_sasl_authid = ${hostPrincipal}
ldap_krb5_keytab = ${keytab}
auto_private_groups = true
krb5_realm = ${o.realm}
krb5_server = ${list((s) => hostPort(s.hostname, s.kdc, 88))}
krb5_kpasswd = ${list((s) => hostPort(s.hostname, s.kpasswd, 464))}
krb5_use_fast = demand
krb5_fast_principal = ${hostPrincipal}
krb5_keytab = ${keytab}
krb5_auth_timeout = 60

# a prompting section makes the PAM responder offer pre-authentication, so
# pam_sss shows an IdP user the verification URL and code instead of Password:
[prompting/password]
password_prompt = Password:
`;
}

/** Writes the example for the server's own host, with the ports the servers listen on. */
export function writeSssdConf(paths: DataPaths, config: ServerConfig, servers: readonly SssdServer[]): void {
  const text = sssdConfText({ realm: config.realm, domain: config.domain, servers, baseDn: config.baseDn, host: config.hostname });
  writeFileAtomic(paths.sssdConf, text, 0o644);
}

/** The init step that writes it with the configured ports. */
export const sssdConfStep: InitStep = {
  name: 'sssd.conf for hosts',
  async run({ paths, config }) {
    writeSssdConf(paths, config, [{ hostname: config.hostname, kdc: config.kdcPort, kpasswd: config.kpasswdPort, ldap: config.ldapPort }]);
  },
};
