/**
 * A password turned into what a principal stores, and the password rules:
 * the one place every way a password is set goes through (user-add,
 * user-mod --password, passwd, and through passwd the password service and
 * LDAP Password Modify; the admin's password at init). The rules are the
 * user's password policy's (password-policy.ts): the length, the character
 * classes, the history and, for a user changing their own, the minimum
 * lifetime. A password the rules refuse is answered with the rule it
 * breaks, which each caller turns into its own error (objects/user.ts a
 * public ValidationError, init an InitError); a password they take becomes
 * the directory password's hash (password-hash.ts), Kerberos keys of every
 * enctype at the next key version (keys.ts), the change time, the history,
 * and the expiry of the new password, which depends on who set it: one an
 * administrator sets has expired at once, so that its user chooses their
 * own at the first login (FreeIPA's rule); one the user sets lives the
 * policy's maximum lifetime; the admin's at init does not expire.
 */
import { generalizedTime } from '../directory/schema.js';
import type { Attributes, Modification } from '../directory/types.js';
import { keysFromPassword, serializeKeys, type StoredKey } from './keys.js';
import { hashPassword, verifyPassword } from './password-hash.js';
import { characterClasses, DEFAULT_POLICY, type PasswordPolicy } from './password-policy.js';
import { newSecurityStamp, parseTime } from './state.js';

/** What a new password must be, and how long it lives: the figures of a password policy that concern it. */
export type PasswordRules = Pick<PasswordPolicy, 'minLength' | 'minClasses' | 'history' | 'maxLifeSec' | 'minLifeSec'>;

/** The rules of a realm whose policy never changed (init holds the admin's password to them). */
export const DEFAULT_PASSWORD_RULES: PasswordRules = Object.freeze({
  minLength: DEFAULT_POLICY.minLength,
  minClasses: DEFAULT_POLICY.minClasses,
  history: DEFAULT_POLICY.history,
  maxLifeSec: DEFAULT_POLICY.maxLifeSec,
  minLifeSec: DEFAULT_POLICY.minLifeSec,
});

/** A rule a password breaks, with the words that say so (after "invalid 'password': "). */
export interface BrokenRule {
  readonly rule: 'minLength' | 'minClasses' | 'history' | 'minLife';
  readonly message: string;
}

const CLASSES = 'upper-case letters, lower-case letters, digits, special characters, other characters';

/** The first rule of the password's own (its length, its classes) that `password` breaks, or null. */
export function brokenPasswordRule(password: string, rules: Pick<PasswordRules, 'minLength' | 'minClasses'>): BrokenRule | null {
  if ([...password].length < rules.minLength) return { rule: 'minLength', message: `must be at least ${rules.minLength} characters` };
  const classes = characterClasses(password);
  if (classes < (rules.minClasses ?? 0)) {
    return { rule: 'minClasses', message: `must mix at least ${rules.minClasses} character classes of ${CLASSES} (it has ${classes})` };
  }
  return null;
}

/** Who sets a password: its user, an administrator (or a holder of User Administrators), or init (the admin's). */
export type PasswordSetter = 'self' | 'admin' | 'init';

/** The stored password hashes a change is checked against: the current one and the history (`TIME{SCRYPT}…` values, newest first or in any order). */
export interface StoredPasswords {
  readonly current?: string;
  readonly history: readonly string[];
}

export interface PasswordChange {
  password: string;
  realm: string;
  /** the principal's name components, which salt its keys: [login] for a user */
  components: readonly string[];
  /** the principal as stored now (its attributes, long-term keys and, when the rules keep a history, its password hashes); null for one being made */
  current: { readonly attrs: Readonly<Attributes>; readonly keys: readonly StoredKey[]; readonly passwords?: StoredPasswords } | null;
  /** who sets it: an administrator's password has expired at once, the minimum lifetime binds only the user */
  by: PasswordSetter;
  now: Date;
  rules: PasswordRules;
}

/**
 * What a password change stores, attribute by attribute (an empty list
 * removes the attribute), or the rule the password breaks.
 */
export type PasswordChangeResult = { broken: BrokenRule; attrs?: never } | { attrs: Attributes; broken?: never };

/** A history value: the time the password stopped being current, and its hash (389 DS's `TIME{SCHEME}hash` form). */
function historyValue(at: Date, hash: string): string {
  return `${generalizedTime(at)}${hash}`;
}

function hashOfHistory(v: string): string {
  const brace = v.indexOf('{');
  return brace < 0 ? v : v.slice(brace);
}

/** The newest first, by the time each value starts with. */
function newestFirst(values: readonly string[]): string[] {
  return [...values].sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
}

/**
 * The minimum lifetime: a user changing their own password before it has
 * lived that long is refused, unless it has expired (an administrator set
 * it, or it outlived the maximum lifetime), since changing it is then the
 * way in. Administrators are not bound by it.
 */
function tooYoung(c: PasswordChange): BrokenRule | null {
  if (c.by !== 'self' || c.rules.minLifeSec <= 0 || !c.current) return null;
  const last = parseTime(c.current.attrs.krbLastPwdChange?.[0]);
  if (!last) return null;
  const expires = parseTime(c.current.attrs.krbPasswordExpiration?.[0]);
  if (expires && expires.getTime() <= c.now.getTime()) return null;
  const allowed = new Date(last.getTime() + c.rules.minLifeSec * 1000);
  if (c.now.getTime() >= allowed.getTime()) return null;
  return { rule: 'minLife', message: `may not change again before ${allowed.toISOString()}: the password policy's minimum lifetime is ${describeSeconds(c.rules.minLifeSec)}` };
}

function describeSeconds(s: number): string {
  if (s % 86400 === 0) return `${s / 86400} day${s === 86400 ? '' : 's'}`;
  if (s % 3600 === 0) return `${s / 3600} hour${s === 3600 ? '' : 's'}`;
  return `${s} seconds`;
}

/** Whether `password` is the current password or one of the history the rules keep (each checked with its own salt). */
async function inHistory(c: PasswordChange): Promise<boolean> {
  if (c.rules.history <= 0 || !c.current?.passwords) return false;
  const { current, history } = c.current.passwords;
  const remembered = [...(current ? [current] : []), ...newestFirst(history).slice(0, c.rules.history - 1).map(hashOfHistory)];
  for (const hash of remembered) if (await verifyPassword(c.password, hash)) return true;
  return false;
}

/**
 * `password` checked against the rules and, when they take it, what is
 * stored for it: userPassword (the hash), krbPrincipalKey (every enctype,
 * the key version after the highest one held, 1 for a new principal),
 * krbLastPwdChange, a new dirSecurityStamp, which ends the sessions begun
 * before (account/state.ts), and krbPasswordExpiration: now for a password
 * an administrator sets, now plus the maximum lifetime for one its user
 * sets (none when the policy sets none), none for init's. With a history,
 * the password it replaces joins passwordHistory (the newest history − 1
 * kept), so the last `history` passwords are remembered as hashes.
 */
export async function passwordChange(c: PasswordChange): Promise<PasswordChangeResult> {
  const broken = brokenPasswordRule(c.password, c.rules) ?? tooYoung(c);
  if (broken) return { broken };
  if (await inHistory(c)) {
    return { broken: { rule: 'history', message: `must not be one of the last ${c.rules.history} password${c.rules.history === 1 ? '' : 's'} of this user` } };
  }
  const kvno = Math.max(0, ...(c.current?.keys ?? []).map((k) => k.kvno)) + 1;
  const attrs: Attributes = {
    userPassword: [await hashPassword(c.password)],
    krbPrincipalKey: serializeKeys(keysFromPassword(c.password, c.realm, c.components, kvno)),
    krbLastPwdChange: [generalizedTime(c.now)],
    dirSecurityStamp: [newSecurityStamp()],
  };
  const expires = c.by === 'admin' ? c.now : c.by === 'self' && c.rules.maxLifeSec > 0 ? new Date(c.now.getTime() + c.rules.maxLifeSec * 1000) : undefined;
  if (expires) attrs.krbPasswordExpiration = [generalizedTime(expires)];
  else if (c.current?.attrs.krbPasswordExpiration) attrs.krbPasswordExpiration = [];
  const passwords = c.current?.passwords;
  if (c.rules.history > 1 && passwords?.current) {
    attrs.passwordHistory = [historyValue(c.now, passwords.current), ...newestFirst(passwords.history)].slice(0, c.rules.history - 1);
  } else if (passwords && passwords.history.length > 0) {
    attrs.passwordHistory = [];
  }
  return { attrs };
}

/** A change's attributes as modifications of the stored entry: each replaced, an empty one removed. */
export function credentialMods(attrs: Attributes): Modification[] {
  return Object.entries(attrs).map(([attr, values]) => ({ op: 'replace', attr, values }));
}
