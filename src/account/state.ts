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
 * - locked: password lockout. A failed password (KDC pre-authentication,
 *   API password login, LDAP simple bind) counts in krbLoginFailedCount and
 *   krbLastFailedAuth; the count starts again when the previous failure is
 *   older than the failure interval. Reaching the maximum locks the account
 *   until the lockout duration has passed since the last failure (duration
 *   0: until an administrator resets the count), or until `user-unlock`
 *   (unlockAccount). A correct password resets it.
 *   The figures are the user's password policy's (password-policy.ts:
 *   krbPwdMaxFailure, krbPwdFailureCountInterval, krbPwdLockoutDuration; by
 *   default 6 failures within 60 s lock for 600 s; a maximum of 0 turns
 *   lockout off). Only users are counted: hosts and services have random
 *   keys nobody guesses, and a lockout would let anyone shut them out.
 *   The count moves by compare-and-set in the store (one modify that
 *   deletes the count read and adds the next, which fails when another
 *   server moved it first, and is then tried again), so the servers of a
 *   realm sharing one PostgreSQL directory count every failure once.
 * - password expired: krbPasswordExpiration is past; this refuses only
 *   authentication by the password itself, not tickets already issued nor
 *   IdP logins, and not the password given only to change it (the
 *   password-change service's initial ticket, as MIT's KDC allows).
 * Counters are written only on a failure and on the first success after
 * failures; the last successful login (krbLastSuccessfulAuth) is written at
 * most once an hour per account, as Active Directory keeps its
 * lastLogonTimestamp only to days, so a usable account costs no write per
 * login.
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
import { DirectoryError, type Directory, type Entry, type Modification } from '../directory/types.js';
import { findPrincipal } from './lookup.js';
import { hasObjectClass } from '../directory/entry.js';
import { silentLogger, type Logger } from '../log/logger.js';
import { DEFAULT_POLICY, passwordPolicies, type MaybePolicy, type PasswordPolicy } from './password-policy.js';

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
  /** krbLastSuccessfulAuth: the last successful password login, to the hour */
  lastSuccessfulLogin?: Date;
}

export interface LockoutPolicy {
  /** failures that lock the account; 0 turns lockout off */
  maxFailures: number;
  /** seconds after which the next failure counts from one again; 0: never */
  failureIntervalSec: number;
  /** seconds the account stays locked after the last failure; 0: until reset */
  lockoutSec: number;
}

/** The lockout of a realm whose password policy never changed it. */
export const DEFAULT_LOCKOUT: LockoutPolicy = { maxFailures: DEFAULT_POLICY.maxFailures, failureIntervalSec: DEFAULT_POLICY.failureIntervalSec, lockoutSec: DEFAULT_POLICY.lockoutSec };

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
export function parseTime(v: string | undefined): Date | undefined {
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
  const lastSuccess = parseTime(a.krbLastSuccessfulAuth?.[0]);
  if (lastSuccess) account.lastSuccessfulLogin = lastSuccess;
  return account;
}

/** Whether the failures on record lock the account at `now`: false, or until when (undefined: until reset). */
export function lockedUntil(a: Account, policy: LockoutPolicy, now: number): Date | undefined | false {
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

const COUNTER_ATTRS = ['objectClass', 'krbLoginFailedCount', 'krbLastFailedAuth'] as const;
/** what accountOf reads (an LDAP operation asks for the bound account on every request) */
export const ACCOUNT_ATTRS = [
  'objectClass',
  'entryUUID',
  'dirSecurityStamp',
  'nsAccountLock',
  'krbLoginFailedCount',
  'krbPrincipalExpiration',
  'krbPasswordExpiration',
  'krbLastFailedAuth',
  'krbLastSuccessfulAuth',
] as const;

/** How stale the recorded last successful login may grow before a login writes it again. */
export const LAST_SUCCESS_GRAIN_MS = 3600_000;

/** A compare-and-set that found the value moved by another writer: read again and retry. */
function lostRace(e: unknown): boolean {
  return e instanceof DirectoryError && (e.code === 'noSuchAttribute' || e.code === 'attributeOrValueExists' || e.code === 'constraintViolation');
}

/** No lockout: the policy of principals that are not users, whose keys nobody guesses. */
const NO_LOCKOUT: LockoutPolicy = Object.freeze({ maxFailures: 0, failureIntervalSec: 0, lockoutSec: 0 });

export class Accounts {
  /** `log`: where a lockout is logged (an audit event, docs/logging.md) */
  constructor(
    readonly dir: Directory,
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

  /** The password policy a user is held to (password-policy.ts); the global one for any other principal. */
  passwordPolicy(a: Pick<Account, 'dn' | 'isUser'>): MaybePolicy<PasswordPolicy> {
    const policies = passwordPolicies(this.dir);
    return a.isUser ? policies.forUser(a.dn) : policies.global();
  }

  /** The lockout figures an account is held to: its password policy's for a user, none for any other principal. */
  async lockout(a: Pick<Account, 'dn' | 'isUser'>): Promise<LockoutPolicy> {
    return a.isUser ? this.passwordPolicy(a) : NO_LOCKOUT;
  }

  /** Whether the session of the account at `dn`, bound to `b` when it began, may still act (one read of the account). */
  async session(dn: string, b: SessionBinding, now = Date.now()): Promise<SessionVerdict> {
    const a = await this.get(dn);
    return sessionVerdict(a, b, a ? await this.lockout(a) : NO_LOCKOUT, now);
  }

  /** What a session of the account at `dn` beginning now is bound to; an account gone meanwhile binds to nothing, which no session matches. */
  async bindSession(dn: string): Promise<SessionBinding> {
    const a = await this.get(dn);
    return a ? sessionBinding(a) : { entry: '', stamp: '' };
  }

  /**
   * Counts a wrong password at `now` (users only), from the counters as
   * stored now: the next count replaces the one read by compare-and-set,
   * again from a fresh read when another server counted meanwhile. The
   * failure that reaches the limit locks the account and is logged
   * (`lockout`); the counts themselves are not, being noise.
   */
  failedPassword(a: Account, policy: LockoutPolicy, now: number): Promise<void> {
    if (!a.isUser || policy.maxFailures === 0) return Promise.resolve();
    return serialized(this.dir, a.dn, async () => {
      for (let attempt = 0; ; attempt++) {
        const e = await this.dir.get(a.dn, COUNTER_ATTRS);
        if (!e) return;
        const stored = e.attrs.krbLoginFailedCount?.[0];
        const n = failuresAfter(accountOf(e), policy, now);
        const next = { op: 'add' as const, attr: 'krbLoginFailedCount', values: [String(n)] };
        const mods: Modification[] = stored === undefined ? [next] : [{ op: 'delete', attr: 'krbLoginFailedCount', values: [stored] }, next];
        mods.push({ op: 'replace', attr: 'krbLastFailedAuth', values: [generalizedTime(new Date(now))] });
        try {
          await modifyIfPresent(this.dir, a.dn, mods);
          if (n === policy.maxFailures) {
            this.log.warn('lockout', { dn: a.dn, failures: n, until: policy.lockoutSec > 0 ? new Date(now + policy.lockoutSec * 1000).toISOString() : 'an administrator unlocks it' });
          }
          return;
        } catch (err) {
          if (!lostRace(err) || attempt >= 20) throw err;
        }
      }
    });
  }

  /**
   * A correct password: the count starts again, and the last successful
   * login is recorded when the one on record is older than an hour; nothing
   * to write (and no promise) otherwise.
   */
  passwordAccepted(a: Account, now = Date.now()): Promise<void> | undefined {
    const mods: Modification[] = [];
    if (a.failedLogins !== 0) mods.push({ op: 'replace', attr: 'krbLoginFailedCount', values: ['0'] });
    if (a.isUser && (a.lastSuccessfulLogin === undefined || now - a.lastSuccessfulLogin.getTime() >= LAST_SUCCESS_GRAIN_MS)) {
      mods.push({ op: 'replace', attr: 'krbLastSuccessfulAuth', values: [generalizedTime(new Date(now))] });
    }
    if (mods.length === 0) return undefined;
    return serialized(this.dir, a.dn, () => modifyIfPresent(this.dir, a.dn, mods));
  }
}
