/**
 * Finding a principal's entry by its name: the one look-up by
 * krbPrincipalName that every way in uses (the KDC, HTTP Negotiate,
 * password login through Accounts, keytab retrieval), and the realm a name
 * given without one belongs to.
 */
import { escapeFilterValue } from '../directory/filter.js';
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
