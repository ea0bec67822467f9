/**
 * A Kerberos principal name belongs to one entry in the whole tree. The KDC
 * and every look-up find a principal only when exactly one entry holds its
 * name (account/lookup.ts), so a second holder would take both out of
 * service, or, were the look-up to pick one, let the second stand for the
 * first. FreeIPA keeps krbPrincipalName unique across its tree for the same
 * reason. The rule is declared here and enforced by the directory's write
 * path inside each write's transaction (directory/unique.ts), so every
 * writer of krbPrincipalName keeps it: user add, rename and aliases,
 * service add and aliases, host add, the name a password change gives a
 * user that had none, init and replica-prepare; two servers racing for one
 * name get one success and one refusal.
 */
import type { UniqueRule } from '../directory/types.js';
import type { PendingEntry } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { hostSystemUser } from './posix.js';

/** krbPrincipalName is unique in the tree; a refusal (DuplicateEntry, framework/crud.ts) names the holder. */
export const principalNameRule: UniqueRule = {
  name: 'principal name',
  keys: [{ attrs: ['krbPrincipalName'], refusal: 'principal name "{krbPrincipalName}" is already held by {holder}' }],
};

/**
 * Refuses, for every caller, a principal name of one component that is a
 * host's own user (posix.ts hostSystemUser: `root@REALM`), among the names an
 * add or mod gives the entry: MIT's default aname_to_lname makes it the local
 * user of that name, root over GSSAPI ssh where /root/.k5login is missing.
 * (That no other entry holds a name is principalNameRule's, at the write.)
 */
export function checkNewPrincipalNames(entry: PendingEntry): void {
  if (!entry.changes('krbPrincipalName')) return;
  const held = new Set(entry.before?.attrs.krbPrincipalName ?? []);
  for (const name of entry.values('krbPrincipalName')) {
    if (held.has(name)) continue;
    const at = name.lastIndexOf('@');
    const first = at < 0 ? name : name.slice(0, at);
    const why = first.includes('/') ? null : hostSystemUser(first);
    if (why) throw publicError('ValidationError', { name: 'krbPrincipalName', error: `"${name}" names "${first}", ${why}: MIT Kerberos maps it to that local user on hosts; choose another` });
  }
}
