/**
 * sssd.conf for a host of the realm (docs/sssd-host.md explains each line):
 * users, groups, SSH keys and sudo rules from dirid's LDAP service (RFC
 * 2307bis, user private groups derived by SSSD), read with the host's own
 * Kerberos key (SASL GSSAPI over StartTLS), passwords and device-flow
 * logins through the KDC with FAST armor from the host keytab, password
 * changes through the password service, and the account check every login
 * runs (an SSH key and a GSSAPI login too) asked of the LDAP service each
 * time, so that a user disabled in dirid is refused at once, and the
 * host-based access rules, which the LDAP service gives the host as each
 * user's `host` and `authorizedService` (docs/hbac.md). `dirid join`
 * writes it as /etc/sssd/sssd.conf; `dirid-server` writes the same text for
 * its own host name beside its krb5.conf, as an example.
 */
import { hostPort, HOST_PATHS, USUAL_PORTS } from './realm-facts.js';

export interface SssdConfInput {
  realm: string;
  domain: string;
  baseDn: string;
  /** the realm's servers, the preferred one first */
  servers: ReadonlyArray<{ hostname: string; kdc: number; kpasswd: number; ldap: number }>;
  /** the host the file is for (its host/ principal reads the directory and armors logins) */
  host: string;
  caFile?: string;
  keytab?: string;
  /** the first lines' comment */
  writtenBy: string;
}

/**
 * How long (seconds) a user's entry read for one login serves the next
 * logins of that user without asking the LDAP service again: SSSD's
 * pam_id_timeout, here written out. The account check (a disabled user) is
 * asked of the LDAP service at every login regardless (ldap_access_filter);
 * the access the rules give (host, authorizedService) comes with the entry,
 * so this is the bound within which a rule change reaches a host's logins
 * (docs/hbac.md).
 */
export const PAM_ID_TIMEOUT = 5;

/**
 * How often (seconds) a host asks for the sudo rules changed since the last
 * it saw (SSSD's smart refresh, by the entryUSN dirid's LDAP service gives
 * each change, framework/view.ts): a rule added or changed, or one whose
 * host group or command group changed, reaches hosts within this
 * (docs/sssd-host.md).
 */
export const SUDO_SMART_REFRESH_SECONDS = 15;
/**
 * How often (seconds) a host reads all its sudo rules again (SSSD's full
 * refresh): a rule deleted or disabled, or no longer naming the host,
 * reaches hosts within this (a smart refresh sees only the entries it is
 * given).
 */
export const SUDO_FULL_REFRESH_SECONDS = 60;

/** Where the sudoRole entries are (objects/sudo-roles.ts sudoersDn says the same; test/objects/sudo-roles.test.ts holds them to it). */
export function sudoSearchBase(baseDn: string): string {
  return `ou=sudoers,${baseDn}`;
}

export function sssdConfText(o: SssdConfInput): string {
  const caFile = o.caFile ?? HOST_PATHS.caFile;
  const keytab = o.keytab ?? HOST_PATHS.keytab;
  const hostPrincipal = `host/${o.host}@${o.realm}`;
  const list = (f: (s: SssdConfInput['servers'][number]) => string) => o.servers.map(f).join(', ');
  return `# ${o.writtenBy}
# Owner root, mode 0600; docs/sssd-host.md explains each line.
[sssd]
services = nss, pam, ssh, sudo
domains = ${o.domain}

[nss]

[pam]
# every login reads the user's entry and groups again, its access (host,
# authorizedService) included (SSSD's default, no_session, skips that while
# the user has a process on the host)
pam_initgroups_scheme = always
pam_id_timeout = ${PAM_ID_TIMEOUT}

[ssh]

[sudo]

[domain/${o.domain}]
id_provider = ldap
auth_provider = krb5
access_provider = ldap
sudo_provider = ldap
ldap_access_order = filter, expire, host, authorized_service
ldap_access_filter = (!(nsAccountLock=TRUE))
ldap_account_expire_policy = rhds
ldap_uri = ${list((s) => `ldap://${hostPort(s.hostname, s.ldap, USUAL_PORTS.ldap)}`)}
ldap_id_use_start_tls = true
ldap_tls_cacert = ${caFile}
ldap_search_base = ${o.baseDn}
ldap_sudo_search_base = ${sudoSearchBase(o.baseDn)}
ldap_sudo_smart_refresh_interval = ${SUDO_SMART_REFRESH_SECONDS}
ldap_sudo_full_refresh_interval = ${SUDO_FULL_REFRESH_SECONDS}
ldap_schema = rfc2307bis
ldap_sasl_mech = GSSAPI
ldap_sasl_authid = ${hostPrincipal}
ldap_krb5_keytab = ${keytab}
auto_private_groups = true
krb5_realm = ${o.realm}
krb5_server = ${list((s) => hostPort(s.hostname, s.kdc, USUAL_PORTS.kdc))}
krb5_kpasswd = ${list((s) => hostPort(s.hostname, s.kpasswd, USUAL_PORTS.kpasswd))}
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
