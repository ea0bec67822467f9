/**
 * The KDC's view of the directory: principals by name (found through
 * account/state.ts, which also judges their account state) with their
 * kind (account/lookup.ts: user, host, service, the realm's own), their
 * decrypted long-term keys, authentication types and IdP link, required
 * authentication indicators, the lockout figures of a user's password
 * policy (account/password-policy.ts, read with the principal and cached
 * with it), and the realm's ticket policy.
 */
import { Accounts, accountOf, type Account, type LockoutPolicy } from '../account/state.js';
import { passwordPolicies } from '../account/password-policy.js';
import type { Directory } from '../directory/types.js';
import { parseKeys, type StoredKey } from '../account/keys.js';
import { realmContainerDn } from '../directory/layout.js';
import { DEFAULT_MAX_LIFE, DEFAULT_MAX_RENEW } from '../account/realm-policy.js';
import { principalKind, type PrincipalKind } from '../account/lookup.js';
import type { Logger } from '../log/logger.js';

export interface KdcPrincipal {
  dn: string;
  name: string;
  keys: StoredKey[];
  /** the state account/state.ts judges */
  account: Account;
  /** the lockout figures of a user's password policy; none for any other principal */
  lockout: LockoutPolicy;
  /** dirUserAuthType values (users only) */
  authTypes: string[];
  /** DN of the linked IdP reference and the user's id there */
  idpLink?: string;
  idpSub?: string;
  isUser: boolean;
  /** what holds the name (account/lookup.ts): only a service, a host or the realm's own is a ticket's server */
  kind: PrincipalKind;
  maxLife?: number;
  maxRenew?: number;
  /** krbPrincipalAuthInd: a ticket for this server needs one of these authentication indicators (kdc/auth-indicators.ts) */
  authIndRequired?: string[];
}

/** A value now, or a promise of it: cached look-ups answer without a turn of the microtask queue. */
export type Maybe<T> = T | Promise<T>;

/** `f` applied to a Maybe: at once to a value, after the promise to a promise. */
export function mapMaybe<T, U>(v: Maybe<T>, f: (t: T) => U): Maybe<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

export interface RealmPolicy {
  maxLife: number;
  maxRenew: number;
}

const NO_LOCKOUT: LockoutPolicy = Object.freeze({ maxFailures: 0, failureIntervalSec: 0, lockoutSec: 0 });

const CACHE_TTL_MS = 30_000;
const CACHE_MAX = 50_000;

export class PrincipalDb {
  /** principals by name, valid while the directory's generation is unchanged */
  private readonly cache = new Map<string, { p: KdcPrincipal | null; generation: number; expires: number }>();
  readonly accounts: Accounts;

  /** `log`: where the accounts' lockouts are logged */
  constructor(
    readonly dir: Directory,
    readonly realm: string,
    log?: Logger,
  ) {
    this.accounts = new Accounts(dir, log);
  }

  /**
   * A principal by name: from the cache without a promise (a request whose
   * principals are cached takes no turn of the microtask queue), else loaded
   * from the directory and cached.
   */
  find(name: string): Maybe<KdcPrincipal | null> {
    const now = Date.now();
    const hit = this.cache.get(name);
    if (hit && hit.generation === this.dir.generation && hit.expires > now) return hit.p;
    const generation = this.dir.generation;
    return this.load(name).then((p) => {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(name, { p, generation, expires: now + CACHE_TTL_MS });
      return p;
    });
  }

  private async load(name: string): Promise<KdcPrincipal | null> {
    const e = await this.accounts.find(name);
    if (!e) return null;
    const keys = parseKeys(await this.dir.readSecret(e.dn, 'krbPrincipalKey'));
    const a = e.attrs;
    const account = accountOf(e);
    let lockout: LockoutPolicy = NO_LOCKOUT;
    if (account.isUser) {
      const policy = passwordPolicies(this.dir).forUser(e.dn);
      lockout = policy instanceof Promise ? await policy : policy;
    }
    const p: KdcPrincipal = {
      dn: e.dn,
      name,
      keys,
      account,
      lockout,
      authTypes: (a.dirUserAuthType ?? []).map((t) => t.toLowerCase()),
      isUser: account.isUser,
      kind: principalKind(e, this.dir.baseDn, this.realm),
    };
    if (a.dirIdpConfigLink?.[0]) p.idpLink = a.dirIdpConfigLink[0];
    if (a.dirIdpSub?.[0]) p.idpSub = a.dirIdpSub[0];
    if (a.krbMaxTicketLife?.[0]) p.maxLife = Number(a.krbMaxTicketLife[0]);
    if (a.krbMaxRenewableAge?.[0]) p.maxRenew = Number(a.krbMaxRenewableAge[0]);
    if (a.krbPrincipalAuthInd?.length) p.authIndRequired = [...a.krbPrincipalAuthInd];
    return p;
  }

  async policy(): Promise<RealmPolicy> {
    const e = await this.dir.get(realmContainerDn(this.dir.baseDn, this.realm));
    return {
      maxLife: Number(e?.attrs.krbMaxTicketLife?.[0] ?? DEFAULT_MAX_LIFE),
      maxRenew: Number(e?.attrs.krbMaxRenewableAge?.[0] ?? DEFAULT_MAX_RENEW),
    };
  }
}

/** The newest key of an enctype (highest kvno). */
export function keyFor(p: KdcPrincipal, etype: number): StoredKey | undefined {
  let best: StoredKey | undefined;
  for (const k of p.keys) if (k.etype === etype && (!best || k.kvno > best.kvno)) best = k;
  return best;
}
