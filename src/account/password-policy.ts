/**
 * Password policies (FreeIPA's pwpolicy, MIT's krbPwdPolicy attributes):
 * what a user's password must be, how long it lives, and how failed
 * passwords lock the account. The realm has a global policy
 * (cn=global_policy in the policies' container); a group may have its own,
 * with a priority, and a user is held to the policy of the group with the
 * lowest priority number among the groups it belongs to, directly or
 * through nested groups, else to the global one. The entries are
 * objects/pwpolicy.ts's; the policy in force is read here, by every way a
 * password is set (credentials.ts) and every way in (state.ts, the KDC).
 *
 * The policies are read once per change of the directory: a snapshot (the
 * global policy, and each group policy with the users of its group, nested
 * groups expanded) is kept while the directory's generation is unchanged,
 * so the look-up on the KDC's path costs a set membership per group policy
 * and no read. Without group policies it costs nothing more than the
 * global policy.
 */
import { escapeRdnValue, normalizeDn, parentDn } from '../directory/dn.js';
import { containers, globalPwpolicyDn, GLOBAL_PWPOLICY } from '../directory/layout.js';
import type { Attributes, Directory, Entry } from '../directory/types.js';

export interface PasswordPolicy {
  /** the policy's name: global_policy, or its group's */
  readonly name: string;
  /** the fewest characters a new password has */
  readonly minLength: number;
  /** the fewest character classes (upper-case, lower-case, digits, special, other) it mixes */
  readonly minClasses: number;
  /** how many of the user's last passwords (the current one included) a new one may not repeat; 0: none */
  readonly history: number;
  /** seconds a password the user set lives; 0: it never expires */
  readonly maxLifeSec: number;
  /** seconds before the user may change their password again; 0: at any time */
  readonly minLifeSec: number;
  /** failed passwords that lock the account; 0 turns lockout off */
  readonly maxFailures: number;
  /** seconds after which the next failure counts from one again; 0: never */
  readonly failureIntervalSec: number;
  /** seconds the account stays locked after the last failure; 0: until an administrator unlocks it */
  readonly lockoutSec: number;
  /** a group policy's priority (the lowest number wins) */
  readonly priority?: number;
}

/**
 * The global policy of a realm that never changed it: FreeIPA's figures
 * (8 characters, no classes, no history, 6 failures within 60 s lock for
 * 600 s), except that a password lives until it is changed and may change at
 * any time, as in every release before policies (FreeIPA: 90 days, 1 hour).
 */
export const DEFAULT_POLICY: PasswordPolicy = Object.freeze({
  name: GLOBAL_PWPOLICY,
  minLength: 8,
  minClasses: 0,
  history: 0,
  maxLifeSec: 0,
  minLifeSec: 0,
  maxFailures: 6,
  failureIntervalSec: 60,
  lockoutSec: 600,
});

/** Each figure's attribute (MIT's and FreeIPA's krbPwdPolicy names; the priority is FreeIPA's cosPriority). */
export const POLICY_ATTRIBUTES = {
  minLength: 'krbPwdMinLength',
  minClasses: 'krbPwdMinDiffChars',
  history: 'krbPwdHistoryLength',
  maxLifeSec: 'krbMaxPwdLife',
  minLifeSec: 'krbMinPwdLife',
  maxFailures: 'krbPwdMaxFailure',
  failureIntervalSec: 'krbPwdFailureCountInterval',
  lockoutSec: 'krbPwdLockoutDuration',
} as const satisfies Record<Exclude<keyof PasswordPolicy, 'name' | 'priority'>, string>;

export const PRIORITY_ATTRIBUTE = 'cosPriority';

type Figure = keyof typeof POLICY_ATTRIBUTES;

function figure(v: string | undefined, fallback: number): number {
  const n = v === undefined ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= 0 ? n : fallback;
}

/** The policy a policy entry's attributes describe; a figure it lacks is the default's. */
export function policyOf(name: string, attrs: Readonly<Attributes> | undefined, defaults: PasswordPolicy = DEFAULT_POLICY): PasswordPolicy {
  const out: Record<string, unknown> = { name };
  for (const [k, attr] of Object.entries(POLICY_ATTRIBUTES)) out[k] = figure(attrs?.[attr]?.[0], defaults[k as Figure]);
  const priority = attrs?.[PRIORITY_ATTRIBUTE]?.[0];
  if (priority !== undefined) out.priority = figure(priority, 0);
  return Object.freeze(out) as unknown as PasswordPolicy;
}

/** The stored attributes of a policy's figures. */
export function policyAttributes(p: PasswordPolicy): Attributes {
  const out: Attributes = {};
  for (const [k, attr] of Object.entries(POLICY_ATTRIBUTES)) out[attr] = [String(p[k as Figure])];
  return out;
}

/** The character classes FreeIPA counts: upper-case and lower-case letters, digits, ASCII specials, anything else. */
export function characterClasses(password: string): number {
  let mask = 0;
  for (const ch of password) {
    if (/\p{Lu}/u.test(ch)) mask |= 1;
    else if (/\p{Ll}/u.test(ch)) mask |= 2;
    else if (/\p{Nd}/u.test(ch)) mask |= 4;
    else if (ch.charCodeAt(0) < 0x80) mask |= 8;
    else mask |= 16;
  }
  let n = 0;
  for (; mask; mask &= mask - 1) n++;
  return n;
}

/** A value now, or a promise of it: a look-up answered from the snapshot takes no turn of the microtask queue. */
export type MaybePolicy<T> = T | Promise<T>;

interface GroupPolicy {
  policy: PasswordPolicy;
  /** the group's users, nested groups expanded, as normalized DNs */
  users: ReadonlySet<string>;
}

interface Snapshot {
  global: PasswordPolicy;
  /** by priority, lowest first */
  groups: readonly GroupPolicy[];
}

/** The policies of one directory, read again after any write to it. */
export class PasswordPolicies {
  private cached: { generation: number; value: MaybePolicy<Snapshot> } | undefined;

  constructor(private readonly dir: Directory) {}

  private snapshot(): MaybePolicy<Snapshot> {
    const generation = this.dir.generation;
    if (this.cached?.generation === generation) return this.cached.value;
    const loading = this.load().then(
      (s) => {
        if (this.cached?.value === loading) this.cached = { generation, value: s };
        return s;
      },
      (e: unknown) => {
        if (this.cached?.value === loading) this.cached = undefined;
        throw e;
      },
    );
    this.cached = { generation, value: loading };
    return loading;
  }

  private async load(): Promise<Snapshot> {
    const c = containers(this.dir.baseDn);
    const res = await this.dir.search({ base: c.pwpolicies, scope: 'one', filter: '(objectClass=krbPwdPolicy)' });
    const globalDn = normalizeDn(globalPwpolicyDn(this.dir.baseDn));
    const global = policyOf(GLOBAL_PWPOLICY, res.entries.find((e) => normalizeDn(e.dn) === globalDn)?.attrs);
    const groups: GroupPolicy[] = [];
    const members = new Map<string, Promise<Entry | null>>();
    for (const e of res.entries) {
      if (normalizeDn(e.dn) === globalDn) continue;
      const name = e.attrs.cn?.[0];
      if (!name) continue;
      const group = `cn=${escapeRdnValue(name)},${c.groups}`;
      // a figure the group's policy lacks is the global policy's, as FreeIPA's CoS templates fall back
      groups.push({ policy: policyOf(name, e.attrs, global), users: await this.usersOf(group, members) });
    }
    groups.sort((a, b) => (a.policy.priority ?? 0) - (b.policy.priority ?? 0));
    return { global, groups };
  }

  /**
   * The users of the group at `dn`, through nested groups: each group is
   * read once per snapshot (`members` keeps what each read found), however
   * many policies' groups hold it.
   */
  private async usersOf(dn: string, members: Map<string, Promise<Entry | null>>): Promise<Set<string>> {
    const groupsDn = normalizeDn(containers(this.dir.baseDn).groups);
    const users = new Set<string>();
    const seen = new Set<string>();
    const queue = [dn];
    while (queue.length > 0) {
      const g = queue.shift()!;
      const key = normalizeDn(g);
      if (seen.has(key)) continue;
      seen.add(key);
      let read = members.get(key);
      if (!read) members.set(key, (read = this.dir.get(g, ['member'])));
      for (const m of (await read)?.attrs.member ?? []) {
        if (normalizeDn(parentDn(m)) === groupsDn) queue.push(m);
        else users.add(normalizeDn(m));
      }
    }
    return users;
  }

  /** The realm's global policy. */
  global(): MaybePolicy<PasswordPolicy> {
    const s = this.snapshot();
    return s instanceof Promise ? s.then((x) => x.global) : s.global;
  }

  /** The policy the user at `dn` is held to: its groups' with the lowest priority number, else the global one. */
  forUser(dn: string): MaybePolicy<PasswordPolicy> {
    const s = this.snapshot();
    return s instanceof Promise ? s.then((x) => pick(x, dn)) : pick(s, dn);
  }
}

function pick(s: Snapshot, dn: string): PasswordPolicy {
  if (s.groups.length === 0) return s.global;
  const key = normalizeDn(dn);
  return s.groups.find((g) => g.users.has(key))?.policy ?? s.global;
}

const shared = new WeakMap<Directory, PasswordPolicies>();

/** The policies of `dir`, one snapshot shared by every caller on that directory handle. */
export function passwordPolicies(dir: Directory): PasswordPolicies {
  let p = shared.get(dir);
  if (!p) shared.set(dir, (p = new PasswordPolicies(dir)));
  return p;
}
