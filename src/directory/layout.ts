/**
 * Where things live in the directory tree: the containers of accounts,
 * groups, services, hosts, IdP references and the Kerberos realm. Every DN
 * the server builds starts here, so the layout is defined once.
 */
import { escapeRdnValue } from './dn.js';
import type { WriteOp } from './types.js';

export interface Containers {
  base: string;
  accounts: string;
  users: string;
  groups: string;
  roles: string;
  services: string;
  hosts: string;
  idp: string;
  pbac: string;
  privileges: string;
  adminsGroup: string;
  kerberos: string;
  /** server-wide settings (cn=etc) and the realm's ID ranges */
  etc: string;
  ranges: string;
}

/** The containers objects are declared in. */
export type ContainerName = Exclude<keyof Containers, 'base' | 'adminsGroup' | 'etc' | 'ranges'>;

export function containers(baseDn: string): Containers {
  const accounts = `cn=accounts,${baseDn}`;
  const pbac = `cn=pbac,${baseDn}`;
  const groups = `cn=groups,${accounts}`;
  return {
    base: baseDn,
    accounts,
    users: `cn=users,${accounts}`,
    groups,
    roles: `cn=roles,${accounts}`,
    services: `cn=services,${accounts}`,
    hosts: `cn=computers,${accounts}`,
    idp: `cn=idp,${baseDn}`,
    pbac,
    privileges: `cn=privileges,${pbac}`,
    adminsGroup: `cn=admins,${groups}`,
    kerberos: `cn=kerberos,${baseDn}`,
    etc: `cn=etc,${baseDn}`,
    ranges: `cn=ranges,cn=etc,${baseDn}`,
  };
}

/** Turns a DNS domain into a base DN: example.test → dc=example,dc=test. */
export function baseDnFromDomain(domain: string): string {
  return domain
    .toLowerCase()
    .split('.')
    .filter((p) => p.length > 0)
    .map((p) => `dc=${p}`)
    .join(',');
}

/** The realm's container: its ticket and lockout policy, and krbtgt. */
export function realmContainerDn(baseDn: string, realm: string): string {
  return `cn=${escapeRdnValue(realm)},${containers(baseDn).kerberos}`;
}

/** A principal of the realm's own kept in its container (krbtgt, kadmin/changepw), named by `principal` (kerberos/principal.ts names them). */
export function realmPrincipalDn(baseDn: string, realm: string, principal: string): string {
  return `krbPrincipalName=${escapeRdnValue(principal)},${realmContainerDn(baseDn, realm)}`;
}

export function hostDn(baseDn: string, fqdn: string): string {
  return `fqdn=${escapeRdnValue(fqdn)},${containers(baseDn).hosts}`;
}

export function serviceDn(baseDn: string, principal: string): string {
  return `krbPrincipalName=${escapeRdnValue(principal)},${containers(baseDn).services}`;
}

/** The realm's POSIX ID range (uidNumber and gidNumber come from it). */
export function idRangeDn(baseDn: string, realm: string): string {
  return `cn=${escapeRdnValue(`${realm}_id_range`)},${containers(baseDn).ranges}`;
}

/** The add of a plain container entry (cn=NAME,…), as the tree's containers are made. */
export function containerEntry(dn: string): WriteOp {
  const cn = /^cn=([^,]+),/i.exec(dn)?.[1];
  if (!cn) throw new Error(`${dn} is not a cn= container`);
  return { kind: 'add', dn, attrs: { objectClass: ['top', 'dirContainer'], cn: [cn] } };
}
