/**
 * Who may start a device flow, and how many at once (docs/device-flow.md,
 * "Starting a login"). A start costs a device authorization request at the
 * IdP in the realm's name (its client credentials, counted against the
 * realm's quota there) and hands its requester a user code whose approval
 * gives the requester the user's TGT (RFC 8628 §5.4). So a KDC counts the
 * flows started and still pending against the user they are for (anonymous
 * armor apart from the rest), the armor ticket that carried the request and
 * the address it came from (an IPv6 address by its /64), and refuses a start
 * past a limit without asking the IdP. A flow counts from its start until
 * it ends at this KDC (a TGT, a refusal, its code's expiry) and for
 * `windowMs` at most, since a client that gave up says nothing. A device
 * code is never handed to another request: each start is a device
 * authorization of its own.
 *
 * It also keeps, for a few seconds, each refusal of a start: MIT's client
 * sends its first AS-REQ again at once after a PREAUTH_FAILED (its retry
 * "without informational padata"), with new armor and no cookie, and that
 * repeat is answered with the same refusal instead of a second device
 * authorization.
 *
 * Memory is bounded: `maxFlows` flows counted at once (past it every
 * start is refused) and twice that queued, a key's list never longer than
 * its limit, MAX_REFUSALS refusals kept.
 */
import { isIPv4, isIPv6 } from 'node:net';
import { ExpiringCache } from '../kerberos/expiring-cache.js';
import type { KdcError } from './errors.js';

/**
 * What anonymous armor (a TGT of WELLKNOWN/ANONYMOUS from `kinit -n`) may do
 * for the idp mechanism, server.conf's idp_anonymous_armor: `deny` (the
 * default) offers the mechanism only inside armor of a principal of the
 * realm (a host keytab's, a user's TGT); `allow` lets anonymous armor start
 * device flows too, within the same limits. docs/device-flow.md says why.
 */
export type AnonymousArmorIdp = 'deny' | 'allow';

/** Who asks for a start: the user, and what carried the request. */
export interface Requester {
  /** the user the flow is for */
  user: string;
  /** a digest of the armor ticket */
  ticket?: string | undefined;
  /** whether the armor ticket is anonymous (kinit -n) */
  anonymous: boolean;
  /** the address the request came from (an IP literal) */
  address?: string | undefined;
}

export interface StartLimits {
  /** pending flows per user (counted apart for anonymous armor) */
  perUser: number;
  /** pending flows per armor ticket */
  perTicket: number;
  /** pending flows per source address (IPv6: per /64) */
  perAddress: number;
  /** the longest a flow counts, in ms */
  windowMs: number;
  /** flows counted at once by one KDC; past it every start is refused */
  maxFlows: number;
}

export const DEFAULT_START_LIMITS: Readonly<StartLimits> = { perUser: 3, perTicket: 20, perAddress: 20, windowMs: 10 * 60_000, maxFlows: 50_000 };

/** How long a refused start is answered again without asking the IdP: MIT's repeat comes at once. */
export const REFUSAL_MEMORY_MS = 5_000;
const MAX_REFUSALS = 10_000;

/** The limit a start would pass: which, its bound, and when the oldest flow it counts stops counting. */
export interface Over {
  limit: 'user' | 'ticket' | 'address' | 'kdc';
  max: number;
  /** ms until a flow it counts stops counting (the latest it could end) */
  freeInMs: number;
}

/** A refused start as it was answered: the KDC error, the log's words, and when (epoch ms). */
export interface Refusal {
  error: KdcError;
  note: string;
  at: number;
}

interface Slot {
  keys: string[];
  start: number;
  until: number;
  live: boolean;
  id?: string;
}

/** A start counted while its device authorization is made; it is confirmed under its flow's id, or cancelled. */
export interface Reservation {
  confirm(flowId: string, expiresAt: number): void;
  cancel(): void;
}

/** The key of a source address: an IPv4 address, or an IPv6 address's /64 (one site's, as one host may hold them all). */
export function addressKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (isIPv4(address) || !isIPv6(address)) return address;
  const bare = address.split('%')[0]!;
  const [head, tail] = bare.includes('::') ? bare.split('::') : [bare, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  // an embedded IPv4 tail takes two groups
  const groups = [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length - (right.at(-1)?.includes('.') ? 1 : 0))).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => parseInt(g, 16).toString(16)).join(':')}::/64`;
}

export class IdpStarts {
  /** counted flows in order of their start */
  private queue: Slot[] = [];
  private head = 0;
  private readonly byKey = new Map<string, Slot[]>();
  private readonly byId = new Map<string, Slot>();
  private count = 0;
  private readonly refusals = new ExpiringCache<Refusal>(MAX_REFUSALS);

  constructor(readonly limits: Readonly<StartLimits> = DEFAULT_START_LIMITS) {}

  /** flows counted now (for tests and monitoring) */
  get size(): number {
    return this.count;
  }

  /** flows in the start-order queue, ended ones not yet swept included (for tests and monitoring) */
  get queued(): number {
    return this.queue.length - this.head;
  }

  /**
   * Counts a start for `r`, or says which limit it would pass. The count is
   * taken before the device authorization is asked for, so requests that
   * come together cannot all pass the same check.
   */
  reserve(r: Requester, now: number): Reservation | Over {
    this.sweep(now);
    if (this.count >= this.limits.maxFlows) return { limit: 'kdc', max: this.limits.maxFlows, freeInMs: Math.max(0, this.queue[this.head]!.start + this.limits.windowMs - now) };
    const keys: Array<[string, Over['limit'], number]> = [[`u\0${r.anonymous ? 'anon' : 'armor'}\0${r.user}`, 'user', this.limits.perUser]];
    if (r.ticket !== undefined) keys.push([`t\0${r.ticket}`, 'ticket', this.limits.perTicket]);
    if (r.address !== undefined) keys.push([`a\0${addressKey(r.address)}`, 'address', this.limits.perAddress]);
    for (const [key, limit, max] of keys) {
      const pending = this.pending(key, now);
      if (pending.length >= max) return { limit, max, freeInMs: Math.max(0, Math.min(...pending.map((s) => s.until)) - now) };
    }
    const slot: Slot = { keys: keys.map(([k]) => k), start: now, until: now + this.limits.windowMs, live: true };
    for (const k of slot.keys) {
      const list = this.byKey.get(k);
      if (list) list.push(slot);
      else this.byKey.set(k, [slot]);
    }
    this.queue.push(slot);
    this.count++;
    return {
      confirm: (flowId, expiresAt) => {
        if (!slot.live) return;
        slot.id = flowId;
        slot.until = Math.min(slot.until, expiresAt);
        this.byId.set(flowId, slot);
      },
      cancel: () => this.drop(slot),
    };
  }

  /** The flow ended here (a TGT, a refusal, an expired code): it no longer counts. Unknown flows (started at another KDC) are ignored. */
  ended(flowId: string): void {
    const slot = this.byId.get(flowId);
    if (slot) this.drop(slot);
  }

  /** The refusal of a start `r` had a moment ago, if any (MIT's immediate repeat). */
  recentRefusal(r: Requester, now: number): Refusal | undefined {
    const key = refusalKey(r);
    return key === undefined ? undefined : this.refusals.get(key, now);
  }

  /** Keeps the refusal of a start for REFUSAL_MEMORY_MS. */
  refused(r: Requester, refusal: Refusal, now: number): void {
    const key = refusalKey(r);
    if (key !== undefined) this.refusals.set(key, refusal, now + REFUSAL_MEMORY_MS, now);
  }

  /** The live flows under `key`; those that stopped counting leave every list they are in. */
  private pending(key: string, now: number): Slot[] {
    const list = this.byKey.get(key);
    if (!list) return [];
    for (const s of list) if (s.until <= now) this.drop(s);
    return this.byKey.get(key) ?? [];
  }

  private drop(s: Slot): void {
    if (!s.live) return;
    s.live = false;
    this.count--;
    if (s.id !== undefined && this.byId.get(s.id) === s) this.byId.delete(s.id);
    for (const k of s.keys) {
      const list = this.byKey.get(k);
      if (!list) continue;
      const rest = list.filter((x) => x !== s);
      if (rest.length === 0) this.byKey.delete(k);
      else this.byKey.set(k, rest);
    }
  }

  /** Flows past the window leave, oldest first; the queue is compacted once half of it is spent. */
  private sweep(now: number): void {
    while (this.head < this.queue.length) {
      const s = this.queue[this.head]!;
      if (s.live && s.start + this.limits.windowMs > now) break;
      this.drop(s);
      this.head++;
    }
    if (this.head >= 1024 && this.head * 2 >= this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    // flows that ended early stay queued behind an older one still counted: never more than twice the bound
    if (this.queue.length - this.head > 2 * this.limits.maxFlows) {
      this.queue = this.queue.slice(this.head).filter((s) => s.live);
      this.head = 0;
    }
  }
}

/** A refusal is answered again only to the same armor ticket, user and address. */
function refusalKey(r: Requester): string | undefined {
  return r.ticket === undefined ? undefined : `${r.ticket}\0${r.user}\0${r.address ?? ''}`;
}
