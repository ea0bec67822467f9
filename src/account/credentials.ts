/**
 * A password turned into what a principal stores, and the password rules:
 * the one place every way a password is set goes through (user-add,
 * user-mod --password, passwd, and through passwd the password service and
 * LDAP Password Modify; the admin's password at init). A password the rules
 * refuse is answered with the rule it breaks, which each caller turns into
 * its own error (objects/user.ts a public ValidationError, init an
 * InitError); a password they take becomes the directory password's hash
 * (password-hash.ts), Kerberos keys of every enctype at the next key
 * version (keys.ts), the change time, and the expiry of the new password.
 */
import { generalizedTime } from '../directory/schema.js';
import type { Attributes, Modification } from '../directory/types.js';
import { keysFromPassword, serializeKeys, type StoredKey } from './keys.js';
import { hashPassword } from './password-hash.js';
import { newSecurityStamp } from './state.js';

/** What a new password must be. */
export interface PasswordRules {
  /** the fewest characters it has */
  readonly minLength: number;
}

/** The rules every password is held to. */
export const DEFAULT_PASSWORD_RULES: PasswordRules = Object.freeze({ minLength: 8 });

/** A rule a password breaks, with the words that say so (after "invalid 'password': "). */
export interface BrokenRule {
  readonly rule: keyof PasswordRules;
  readonly message: string;
}

/** The first rule `password` breaks, or null when it keeps them all. */
export function brokenPasswordRule(password: string, rules: PasswordRules): BrokenRule | null {
  if (password.length < rules.minLength) return { rule: 'minLength', message: `must be at least ${rules.minLength} characters` };
  return null;
}

/** Who sets a password: its user, an administrator (or a holder of User Administrators), or init (the admin's). */
export type PasswordSetter = 'self' | 'admin' | 'init';

export interface PasswordChange {
  password: string;
  realm: string;
  /** the principal's name components, which salt its keys: [login] for a user */
  components: readonly string[];
  /** the principal as stored now (its attributes and long-term keys); null for one being made */
  current: { readonly attrs: Readonly<Attributes>; readonly keys: readonly StoredKey[] } | null;
  /** who sets it; what is stored does not depend on it yet */
  by: PasswordSetter;
  now: Date;
  rules: PasswordRules;
}

/**
 * What a password change stores, attribute by attribute (an empty list
 * removes the attribute), or the rule the password breaks.
 */
export type PasswordChangeResult = { broken: BrokenRule; attrs?: never } | { attrs: Attributes; broken?: never };

/**
 * `password` checked against the rules and, when they take it, what is
 * stored for it: userPassword (the hash), krbPrincipalKey (every enctype,
 * the key version after the highest one held, 1 for a new principal) and
 * krbLastPwdChange, and a new dirSecurityStamp, which ends the sessions
 * begun before (account/state.ts). A new password has not expired: an expiry date set for
 * the old one goes with it (as MIT's kadmin does for a principal without a
 * password policy), which is what lets a user whose password expired log in
 * again once they have changed it.
 */
export async function passwordChange(c: PasswordChange): Promise<PasswordChangeResult> {
  const broken = brokenPasswordRule(c.password, c.rules);
  if (broken) return { broken };
  const kvno = Math.max(0, ...(c.current?.keys ?? []).map((k) => k.kvno)) + 1;
  const attrs: Attributes = {
    userPassword: [await hashPassword(c.password)],
    krbPrincipalKey: serializeKeys(keysFromPassword(c.password, c.realm, c.components, kvno)),
    krbLastPwdChange: [generalizedTime(c.now)],
    dirSecurityStamp: [newSecurityStamp()],
  };
  if (c.current?.attrs.krbPasswordExpiration) attrs.krbPasswordExpiration = [];
  return { attrs };
}

/** A change's attributes as modifications of the stored entry: each replaced, an empty one removed. */
export function credentialMods(attrs: Attributes): Modification[] {
  return Object.entries(attrs).map(([attr, values]) => ({ op: 'replace', attr, values }));
}
