/**
 * Whether an account may authenticate now: the one place every way in asks
 * (the KDC's AS and TGS exchanges, HTTP Negotiate, password login, and each
 * request on a session cookie). Callers only translate its verdict into their
 * wire form (a KRB-ERROR code, a public error). Accounts.find is the
 * look-up by principal name of lookup.ts.
 *
 * The states, after MIT's KDB and FreeIPA's password policy:
 * - disabled: nsAccountLock is TRUE;
 * - expired: krbPrincipalExpiration is past;
 * - locked: password lockout. A failed password (KDC pre-authentication or
 *   API password login) counts in krbLoginFailedCount and krbLastFailedAuth;
 *   the count starts again when the previous failure is older than the
 *   failure interval. Reaching the realm's maximum locks the account until
 *   the lockout duration has passed since the last failure (duration 0:
 *   until an administrator resets the count), or until `user-unlock`
 *   (unlockAccount). A correct password resets it.
 *   The policy sits on the realm container (krbPwdMaxFailure,
 *   krbPwdFailureCountInterval, krbPwdLockoutDuration; by default 6
 *   failures within 60 s lock for 600 s; a maximum of 0 turns lockout off).
 *   Only users are counted: hosts and services have random keys nobody
 *   guesses, and a lockout would let anyone shut them out.
 * - password expired: krbPasswordExpiration is past; this refuses only
 *   authentication by the password itself, not tickets already issued nor
 *   IdP logins, and not the password given only to change it (the
 *   password-change service's initial ticket, as MIT's KDC allows).
 * Counters are written only on a failure and on the first success after
 * failures, so a usable account costs no write per login.
 *
 * A session (the API's session cookie) is bound to the account as it was
 * when the session began: its entry (entryUUID, so an entry deleted and made
 * again under the same name is another account) and its security stamp
 * (dirSecurityStamp, after ASP.NET Identity's SecurityStamp), a random
 * value the server replaces whenever the user's sessions must end: a
 * password change, a disablement, a rename. A session whose binding no
 * longer matches has ended, even once the account is enabled again.
 * Comparing values, not times, makes this exact whatever the clocks of the
 * realm's servers and the one-second grain of krbLastPwdChange.
 */
import { randomBytes } from 'node:crypto';
import { serialized } from '../directory/serialized.js';
import { generalizedTime } from '../directory/schema.js';
import { DirectoryError, type Attributes, type Directory, type Entry } from '../directory/types.js';
import { findPrincipal } from './lookup.js';
import { hasObjectClass } from '../directory/entry.js';
import { silentLogger, type Logger } from '../log/logger.js';

export interface Account {
  dn: string;
  /** entryUUID: which entry this is, whatever its name (absent when not read) */
  entryId?: string;
  /** dirSecurityStamp: replaced when the account's sessions end (absent while it has none) */
  securityStamp?: string;
  isUser: boolean;
  disabled: boolean;
  principalExpiration?: Date;
  passwordExpiration?: Date;
  failedLogins: number;
  lastFailedLogin?: Date;
}

export interface LockoutPolicy {
  /** failures that lock the account; 0 turns lockout off */
  maxFailures: number;
  /** seconds after which the next failure counts from one again; 0: never */
  failureIntervalSec: number;
  /** seconds the account stays locked after the last failure; 0: until reset */
  lockoutSec: number;
}

export const DEFAULT_LOCKOUT: LockoutPolicy = { maxFailures: 6, failureIntervalSec: 60, lockoutSec: 600 };

/**
 * What the caller authenticates with: the account's password (or keys
 * derived from it); the password only to change it (which an expired
 * password may still do); or anything else.
 */
export type Proof = 'password' | 'password-to-change' | 'other';

export type Refusal =
  | { state: 'disabled' }
  | { state: 'expired'; since: Date }
  /** `until` absent: locked until an administrator resets the count */
  | { state: 'locked'; until?: Date }
  | { state: 'password-expired'; since: Date };

export type Verdict = { state: 'usable' } | Refusal;

const USABLE: Verdict = { state: 'usable' };

/** A stored GeneralizedTime (`YYYYMMDDHHMMSSZ`, as the directory keeps it) as a Date. */
function parseTime(v: string | undefined): Date | undefined {
  const m = v ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(v) : null;
  return m ? new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!)) : undefined;
}

function count(v: string | undefined, fallback: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** The account state an entry's attributes describe. */
export function accountOf(entry: Entry): Account {
  const a = entry.attrs;
  const account: Account = {
    dn: entry.dn,
    isUser: hasObjectClass(a.objectClass, 'dirUser'),
    disabled: a.nsAccountLock?.[0]?.toUpperCase() === 'TRUE',
    failedLogins: count(a.krbLoginFailedCount?.[0], 0),
  };
  const id = a.entryUUID?.[0];
  if (id) account.entryId = id;
  const stamp = a.dirSecurityStamp?.[0];
  if (stamp) account.securityStamp = stamp;
  const expires = parseTime(a.krbPrincipalExpiration?.[0]);
  if (expires) account.principalExpiration = expires;
  const pwExpires = parseTime(a.krbPasswordExpiration?.[0]);
  if (pwExpires) account.passwordExpiration = pwExpires;
  const lastFailed = parseTime(a.krbLastFailedAuth?.[0]);
  if (lastFailed) account.lastFailedLogin = lastFailed;
  return account;
}

/** The lockout policy the realm container's attributes set (defaults for what is absent). */
export function lockoutPolicyOf(attrs: Attributes | undefined): LockoutPolicy {
  return {
    maxFailures: count(attrs?.krbPwdMaxFailure?.[0], DEFAULT_LOCKOUT.maxFailures),
    failureIntervalSec: count(attrs?.krbPwdFailureCountInterval?.[0], DEFAULT_LOCKOUT.failureIntervalSec),
    lockoutSec: count(attrs?.krbPwdLockoutDuration?.[0], DEFAULT_LOCKOUT.lockoutSec),
  };
}

/** Whether the failures on record lock the account at `now`: false, or until when (undefined: until reset). */
function lockedUntil(a: Account, policy: LockoutPolicy, now: number): Date | undefined | false {
  if (policy.maxFailures === 0 || a.failedLogins < policy.maxFailures) return false;
  if (policy.lockoutSec === 0) return undefined;
  const until = (a.lastFailedLogin?.getTime() ?? 0) + policy.lockoutSec * 1000;
  return until > now ? new Date(until) : false;
}

/** The rule: whether the account may authenticate at `now` with this kind of proof. */
export function verdict(a: Account, policy: LockoutPolicy, now: number, proof: Proof = 'other'): Verdict {
  if (a.disabled) return { state: 'disabled' };
  if (a.principalExpiration && a.principalExpiration.getTime() <= now) return { state: 'expired', since: a.principalExpiration };
  const locked = lockedUntil(a, policy, now);
  if (locked !== false) return locked ? { state: 'locked', until: locked } : { state: 'locked' };
  if (proof === 'password' && a.passwordExpiration && a.passwordExpiration.getTime() <= now) return { state: 'password-expired', since: a.passwordExpiration };
  return USABLE;
}

/** The refusal in words, for logs and Kerberos e-text. */
export function describeRefusal(v: Refusal): string {
  switch (v.state) {
    case 'disabled':
      return 'account disabled';
    case 'expired':
      return `account expired at ${v.since.toISOString()}`;
    case 'locked':
      return v.until ? `account locked after too many failed logins, until ${v.until.toISOString()}` : 'account locked after too many failed logins, until an administrator unlocks it';
    case 'password-expired':
      return `password expired at ${v.since.toISOString()}`;
  }
}

/** What a session is bound to when it begins: the account's entry and its security stamp then. */
export interface SessionBinding {
  entry: string;
  stamp: string;
}

export function sessionBinding(a: Account): SessionBinding {
  return { entry: a.entryId ?? '', stamp: a.securityStamp ?? '' };
}

/** A new security stamp, for the write that ends an account's sessions. */
export function newSecurityStamp(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Whether a session bound to `b` may still act: 'gone' when the account no
 * longer exists, its refusal when it may not authenticate now, 'ended'
 * (why, for the log) when it is another entry or its stamp has changed
 * since the session began.
 */
export type SessionVerdict = Verdict | { state: 'gone' } | { state: 'ended'; reason: string };

export function sessionVerdict(a: Account | null, b: SessionBinding, policy: LockoutPolicy, now: number): SessionVerdict {
  if (!a) return { state: 'gone' };
  const v = verdict(a, policy, now);
  if (v.state !== 'usable') return v;
  if (!a.entryId || a.entryId !== b.entry) return { state: 'ended', reason: 'the account was deleted and another made under its name' };
  if ((a.securityStamp ?? '') !== b.stamp) return { state: 'ended', reason: 'the password changed, or the account was disabled or renamed, since the session began' };
  return USABLE;
}

/** The failure count after one more failure at `now` (MIT's lockout arithmetic). */
export function failuresAfter(a: Account, policy: LockoutPolicy, now: number): number {
  const last = a.lastFailedLogin?.getTime();
  let n = a.failedLogins;
  if (last !== undefined && policy.failureIntervalSec > 0 && now > last + policy.failureIntervalSec * 1000) n = 0;
  if (last !== undefined && policy.lockoutSec > 0 && policy.maxFailures > 0 && n >= policy.maxFailures && now >= last + policy.lockoutSec * 1000) n = 0;
  return n + 1;
}

/** A modify that finds the entry gone has nothing left to count. */
async function modifyIfPresent(dir: Directory, dn: string, mods: Parameters<Directory['modify']>[1]): Promise<void> {
  try {
    await dir.modify(dn, mods);
  } catch (e) {
    if (!(e instanceof DirectoryError && e.code === 'noSuchObject')) throw e;
  }
}

/** An administrator's unlock (user-unlock): the failure count starts again from none, whatever the lockout's duration. */
export function unlockAccount(dir: Directory, dn: string): Promise<void> {
  return serialized(dir, dn, () =>
    modifyIfPresent(dir, dn, [
      { op: 'replace', attr: 'krbLoginFailedCount', values: ['0'] },
      { op: 'replace', attr: 'krbLastFailedAuth', values: [] },
    ]),
  );
}

const POLICY_ATTRS = ['krbPwdMaxFailure', 'krbPwdFailureCountInterval', 'krbPwdLockoutDuration'] as const;
const COUNTER_ATTRS = ['objectClass', 'krbLoginFailedCount', 'krbLastFailedAuth'] as const;
/** what accountOf reads (an LDAP operation asks for the bound account on every request) */
const ACCOUNT_ATTRS = [
  'objectClass',
  'entryUUID',
  'dirSecurityStamp',
  'nsAccountLock',
  'krbLoginFailedCount',
  'krbPrincipalExpiration',
  'krbPasswordExpiration',
  'krbLastFailedAuth',
] as const;

export class Accounts {
  private policyCache: { value: LockoutPolicy; generation: number } | undefined;

  /** `policyDn`: the realm container holding the lockout policy; `log`: where a lockout is logged (an audit event, docs/logging.md) */
  constructor(
    readonly dir: Directory,
    readonly policyDn: string,
    private readonly log: Logger = silentLogger,
  ) {}

  /** The entry of the principal named `principal` (`name@REALM`); null unless exactly one. */
  find(principal: string): Promise<Entry | null> {
    return findPrincipal(this.dir, principal);
  }

  /** The account at `dn`, null when it no longer exists. */
  async get(dn: string): Promise<Account | null> {
    const e = await this.dir.get(dn, ACCOUNT_ATTRS);
    return e ? accountOf(e) : null;
  }

  /** Whether the session of the account at `dn`, bound to `b` when it began, may still act (one read of the account). */
  async session(dn: string, b: SessionBinding, now = Date.now()): Promise<SessionVerdict> {
    return sessionVerdict(await this.get(dn), b, await this.policy(), now);
  }

  /** What a session of the account at `dn` beginning now is bound to; an account gone meanwhile binds to nothing, which no session matches. */
  async bindSession(dn: string): Promise<SessionBinding> {
    const a = await this.get(dn);
    return a ? sessionBinding(a) : { entry: '', stamp: '' };
  }

  /** The realm's lockout policy, read again after any write to the directory. */
  async policy(): Promise<LockoutPolicy> {
    const generation = this.dir.generation;
    if (this.policyCache?.generation === generation) return this.policyCache.value;
    const e = await this.dir.get(this.policyDn, POLICY_ATTRS);
    const value = lockoutPolicyOf(e?.attrs);
    this.policyCache = { value, generation };
    return value;
  }

  /**
   * Counts a wrong password at `now` (users only), from the counters as
   * stored now. The failure that reaches the limit locks the account and
   * is logged (`lockout`); the counts themselves are not, being noise.
   */
  failedPassword(a: Account, policy: LockoutPolicy, now: number): Promise<void> {
    if (!a.isUser || policy.maxFailures === 0) return Promise.resolve();
    return serialized(this.dir, a.dn, async () => {
      const e = await this.dir.get(a.dn, COUNTER_ATTRS);
      if (!e) return;
      const n = failuresAfter(accountOf(e), policy, now);
      await modifyIfPresent(this.dir, a.dn, [
        { op: 'replace', attr: 'krbLoginFailedCount', values: [String(n)] },
        { op: 'replace', attr: 'krbLastFailedAuth', values: [generalizedTime(new Date(now))] },
      ]);
      if (n === policy.maxFailures) {
        this.log.warn('lockout', { dn: a.dn, failures: n, until: policy.lockoutSec > 0 ? new Date(now + policy.lockoutSec * 1000).toISOString() : 'an administrator unlocks it' });
      }
    });
  }

  /** A correct password resets the count; nothing to write (and no promise) when there were no failures. */
  passwordAccepted(a: Account): Promise<void> | undefined {
    if (a.failedLogins === 0) return undefined;
    return serialized(this.dir, a.dn, () => modifyIfPresent(this.dir, a.dn, [{ op: 'replace', attr: 'krbLoginFailedCount', values: ['0'] }]));
  }
}
