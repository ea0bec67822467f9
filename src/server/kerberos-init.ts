/**
 * The realm's Kerberos principals, created by `init`: the realm container
 * with its ticket policy defaults, krbtgt/REALM, host/<hostname>,
 * HTTP/<hostname> (the API's Negotiate), ldap/<hostname> (the LDAP
 * service's SASL GSSAPI) and kadmin/changepw (the password service) with
 * random keys, the admin's credentials from the admin password (its hash
 * and keys, account/credentials.ts), and host.keytab
 * with the host's keys. An init step; krb5.conf is krb5-conf.ts's. A realm
 * made before the password service existed gets kadmin/changepw from the
 * upgrade at start (upgrade.ts, step 1).
 */
import { hostname as osHostname } from 'node:os';
import { generalizedTime } from '../directory/schema.js';
import type { Directory, WriteOp } from '../directory/types.js';
import { containers, hostDn, realmContainerDn, realmPrincipalDn, serviceDn } from '../directory/layout.js';
import { changepwPrincipal, tgsPrincipal } from '../kerberos/principal.js';
import { DEFAULT_MAX_LIFE, DEFAULT_MAX_RENEW } from '../account/realm-policy.js';
import { keytabFor, newRandomKeys, randomKeys, serializeKeys, type StoredKey } from '../account/keys.js';
import { credentialMods, DEFAULT_PASSWORD_RULES, passwordChange } from '../account/credentials.js';
import { HOST_NAME } from '../framework/params.js';
import { writeFileAtomic, type DataPaths } from './data-paths.js';
import type { InitStep, RealmNames } from './init-step.js';

/**
 * The host names of the LDAP service's principals: the server's, and for a
 * realm on `localhost` (the quickstart's demo) the machine's own name too,
 * because OpenLDAP's client library names a server it reaches over loopback
 * by the machine's name when it asks for a SASL GSSAPI ticket.
 */
export function ldapNames(hostname: string): string[] {
  const machine = localMachineName();
  return hostname === 'localhost' && machine !== null && machine !== hostname ? [hostname, machine] : [hostname];
}

/** The machine's own host name, when it is a usable DNS name. */
export function localMachineName(): string | null {
  const name = osHostname().toLowerCase();
  return HOST_NAME.test(name) ? name : null;
}

/**
 * kadmin/changepw@REALM, beside krbtgt in the realm container (not a
 * service anyone deletes with service-del): random keys, and tickets of at
 * most 5 minutes, never renewable, as MIT makes it; clients use one at once.
 */
export function passwordServiceEntry(baseDn: string, realm: string): WriteOp {
  return {
    kind: 'add',
    dn: realmPrincipalDn(baseDn, realm, changepwPrincipal(realm)),
    attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: newRandomKeys(), krbMaxTicketLife: ['300'], krbMaxRenewableAge: ['0'] },
  };
}

/**
 * The principal names one server of the realm runs on: host/<hostname> (its
 * host entry and host.keytab), HTTP/<hostname> (the API's Negotiate) and
 * ldap/ of each of the LDAP service's names (`ldap`, by default ldapNames:
 * the machine's own name too for a realm on localhost). Init and
 * replica-prepare make them, replica-prepare first checks that none exists,
 * and the API keeps them from being deleted (servers.ts serverPrincipals).
 */
export function serverPrincipalNames(hostname: string, realm: string, ldap: readonly string[] = ldapNames(hostname)): { host: string; http: string; ldap: string[] } {
  return { host: `host/${hostname}@${realm}`, http: `HTTP/${hostname}@${realm}`, ldap: ldap.map((n) => `ldap/${n}@${realm}`) };
}

/**
 * The principals of one server of the realm, with random keys:
 * host/<hostname> (its host entry), HTTP/<hostname> and ldap/<hostname>;
 * the host keys go into its host.keytab. `init` makes them for the first
 * server, replica-prepare for each other.
 */
export function serverPrincipals(baseDn: string, realm: string, hostname: string): { ops: WriteOp[]; hostKeys: StoredKey[] } {
  const hostKeys = randomKeys(1);
  const names = serverPrincipalNames(hostname, realm);
  const ops: WriteOp[] = [
    {
      kind: 'add',
      dn: hostDn(baseDn, hostname),
      attrs: { objectClass: ['top', 'dirHost', 'krbPrincipalAux'], cn: [hostname], krbPrincipalName: [names.host], krbPrincipalKey: serializeKeys(hostKeys) },
    },
    ...[names.http, ...names.ldap].map(
      (name): WriteOp => ({
        kind: 'add',
        dn: serviceDn(baseDn, name),
        attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: newRandomKeys() },
      }),
    ),
  ];
  return { ops, hostKeys };
}

/** A server's host.keytab: the keys of host/<hostname>. */
export function writeHostKeytab(paths: DataPaths, realm: string, hostname: string, hostKeys: StoredKey[]): void {
  writeFileAtomic(paths.hostKeytab, keytabFor(realm, ['host', hostname], hostKeys), 0o600);
}

async function addPrincipals(dir: Directory, config: RealmNames, paths: DataPaths, adminPassword: string): Promise<void> {
  const { realm, hostname } = config;
  const c = containers(dir.baseDn);
  const tgtKeys = randomKeys(1);
  const server = serverPrincipals(dir.baseDn, realm, hostname);
  const now = new Date();
  const admin = await passwordChange({ password: adminPassword, realm, components: ['admin'], current: null, by: 'init', now, rules: DEFAULT_PASSWORD_RULES });
  // validateInitOptions refused such a password before any step ran
  if (admin.broken) throw new Error(`the admin password ${admin.broken.message}`);
  await dir.batch([
    {
      kind: 'add',
      dn: realmContainerDn(dir.baseDn, realm),
      attrs: { objectClass: ['top', 'krbRealmContainer'], krbMaxTicketLife: [String(DEFAULT_MAX_LIFE)], krbMaxRenewableAge: [String(DEFAULT_MAX_RENEW)] },
    },
    {
      kind: 'add',
      dn: realmPrincipalDn(dir.baseDn, realm, tgsPrincipal(realm)),
      attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: serializeKeys(tgtKeys), krbLastPwdChange: [generalizedTime(now)] },
    },
    ...server.ops,
    passwordServiceEntry(dir.baseDn, realm),
    {
      kind: 'modify',
      dn: `uid=admin,${c.users}`,
      mods: [
        { op: 'add', attr: 'objectClass', values: ['krbPrincipalAux'] },
        { op: 'add', attr: 'krbPrincipalName', values: [`admin@${realm}`] },
        ...credentialMods(admin.attrs),
      ],
    },
  ]);
  writeHostKeytab(paths, realm, hostname, server.hostKeys);
}

export const kerberosInitStep: InitStep<RealmNames> = {
  name: 'Kerberos realm, krbtgt, host, HTTP, ldap and kadmin/changepw principals, host.keytab',
  run: ({ dir, config, paths, options }) => addPrincipals(dir, config, paths, options.adminPassword),
};
