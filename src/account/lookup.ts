/**
 * Finding a principal's entry by its name: the one look-up by
 * krbPrincipalName that every way in uses (the KDC, HTTP Negotiate,
 * password login through Accounts, keytab retrieval), the realm a name
 * given without one belongs to, and what kind of principal an entry holds
 * (a user, a host, a service, the realm's own), which decides whether
 * tickets may be issued for it.
 */
import { escapeFilterValue } from '../directory/filter.js';
import { normalizeDn, parentDn } from '../directory/dn.js';
import { hasObjectClass } from '../directory/entry.js';
import { containers, realmContainerDn } from '../directory/layout.js';
import type { Directory, Entry } from '../directory/types.js';

/** `name` with `@realm` added when it names no realm. */
export function inRealm(name: string, realm: string): string {
  return name.includes('@') ? name : `${name}@${realm}`;
}

/** The entry of the principal named `principal` (`name@REALM`); null unless exactly one. */
export async function findPrincipal(dir: Directory, principal: string): Promise<Entry | null> {
  const res = await dir.search({ base: dir.baseDn, scope: 'sub', filter: `(krbPrincipalName=${escapeFilterValue(principal)})`, sizeLimit: 2 });
  return res.entries.length === 1 ? res.entries[0]! : null;
}

/**
 * What holds a principal name, by the entry's object classes and its place
 * in the tree: a user (dirUser, whose keys come from a password), a host
 * (dirHost in the hosts container), a service (krbPrincipal in the services
 * container), the realm's own (an entry of the realm container: krbtgt/REALM,
 * kadmin/changepw), or anything else.
 */
export type PrincipalKind = 'user' | 'host' | 'service' | 'realm' | 'other';

/** The kind of principal `entry` holds, in the realm `realm` of the tree below `baseDn`. */
export function principalKind(entry: Entry, baseDn: string, realm: string): PrincipalKind {
  const classes = entry.attrs.objectClass;
  if (hasObjectClass(classes, 'dirUser')) return 'user';
  const parent = normalizeDn(parentDn(entry.dn));
  const c = containers(baseDn);
  if (hasObjectClass(classes, 'dirHost')) return parent === normalizeDn(c.hosts) ? 'host' : 'other';
  if (!hasObjectClass(classes, 'krbPrincipal')) return 'other';
  if (parent === normalizeDn(c.services)) return 'service';
  return parent === normalizeDn(realmContainerDn(baseDn, realm)) ? 'realm' : 'other';
}

/**
 * Whether a ticket may name this kind of principal as its server: only
 * principals with random keys (services, hosts, the realm's own). A ticket
 * is sealed with its server's key: one for a user would be sealed with a
 * key derived from that user's password, which anyone holding the ticket
 * could then guess offline ("Kerberoasting").
 */
export function servesTickets(kind: PrincipalKind): boolean {
  return kind === 'service' || kind === 'host' || kind === 'realm';
}
