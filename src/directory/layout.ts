/**
 * Where things live in the directory tree: the containers that code below
 * objects/ names (the read and write rules' groups, roles and privileges,
 * LDAP bind's users, the principals' services and hosts), the realm's own
 * containers that no object declares (Kerberos, cn=etc and what it holds),
 * and the realm's DNs. An object names its container in its declaration
 * (framework/place.ts): one of these, or its own; the tree a realm has is
 * derived from the declarations, not listed here.
 */
import { escapeRdnValue } from './dn.js';
import type { WriteOp } from './types.js';

/** Containers, relative to the base DN, that code below objects/ names; the objects that live there name them from here. */
export const KNOWN_CONTAINERS = {
  accounts: 'cn=accounts',
  users: 'cn=users,cn=accounts',
  groups: 'cn=groups,cn=accounts',
  roles: 'cn=roles,cn=accounts',
  services: 'cn=services,cn=accounts',
  hosts: 'cn=computers,cn=accounts',
  idp: 'cn=idp',
  /** password policies: the global one and one per group (objects/pwpolicy.ts; account/password-policy.ts reads them) */
  pwpolicies: 'cn=pwpolicies,cn=accounts',
  pbac: 'cn=pbac',
  privileges: 'cn=privileges,cn=pbac',
  kerberos: 'cn=kerberos',
  /** server-wide settings: the realm's ID ranges, its servers, the directory's version */
  etc: 'cn=etc',
  ranges: 'cn=ranges,cn=etc',
  servers: 'cn=servers,cn=etc',
} as const;

/**
 * The realm's own containers, which no object declares: the Kerberos realm
 * (its container and krbtgt, kerberos-init.ts) and cn=etc with the ID
 * ranges and the realm's servers. The objects' containers come after them
 * in the tree (objects/index.ts realmTree).
 */
export const REALM_CONTAINERS: readonly string[] = [KNOWN_CONTAINERS.kerberos, KNOWN_CONTAINERS.etc, KNOWN_CONTAINERS.ranges, KNOWN_CONTAINERS.servers];

export type Containers = { base: string; adminsGroup: string } & { -readonly [K in keyof typeof KNOWN_CONTAINERS]: string };

/** containers() per base DN: a realm has one, and tests a few (bounded all the same) */
const known = new Map<string, Readonly<Containers>>();

/** The known containers' DNs below `baseDn` (worked out once per base DN; the object is shared, and frozen). */
export function containers(baseDn: string): Readonly<Containers> {
  const hit = known.get(baseDn);
  if (hit) return hit;
  const out = { base: baseDn } as Containers;
  for (const [k, rel] of Object.entries(KNOWN_CONTAINERS)) out[k as keyof typeof KNOWN_CONTAINERS] = `${rel},${baseDn}`;
  out.adminsGroup = `cn=admins,${out.groups}`;
  if (known.size >= 64) known.delete(known.keys().next().value!);
  known.set(baseDn, Object.freeze(out));
  return out;
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

/** The name of the realm's global password policy (FreeIPA's), and its entry. */
export const GLOBAL_PWPOLICY = 'global_policy';

export function globalPwpolicyDn(baseDn: string): string {
  return `cn=${GLOBAL_PWPOLICY},${containers(baseDn).pwpolicies}`;
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
