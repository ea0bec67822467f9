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

/** krbPrincipalName is unique in the tree; a refusal (DuplicateEntry, framework/crud.ts) names the holder. */
export const principalNameRule: UniqueRule = {
  name: 'principal name',
  keys: [{ attrs: ['krbPrincipalName'], refusal: 'principal name "{krbPrincipalName}" is already held by {holder}' }],
};
