/**
 * One server's IdP client: the HTTP client for IdP endpoints (http.ts: one
 * TLS context, the configured IdP CAs, kept-alive connections per IdP) and
 * what it remembers between calls, the discovery documents per issuer
 * (discovery.ts) and, for a short while, the failures of logins'
 * discoveries, the JWKS key sets per URL (key-sets.ts), the device codes
 * it has already exchanged for tokens (device-flow.ts refuses a second
 * exchange of one) and, per pending device code, when it last polled it, at
 * which interval and the poll in flight (device-flow.ts polls a code once
 * per interval, whichever answer asks). The server makes
 * one and hands it to the KDC, to the discovery that idp-add runs and to
 * idp-check, so two servers in one process share no cached document, key or
 * device code.
 */
import crypto from 'node:crypto';
import type { AuthorizationServer } from 'oauth4webapi';
import type { FetchLike } from './http.js';
import { KeySetCache } from './key-sets.js';
import type { OAuthErrorCode } from './types.js';

/** How many exchanged device codes are remembered at most; past it the oldest goes first. */
export const SPENT_DEVICE_CODES_MAX = 100_000;
/** How long an exchanged device code is remembered when its expiry is not known (the KDC's flows last at most an hour). */
const SPENT_DEFAULT_MS = 3600_000;

/** What the records below know a device code at one token endpoint by: a digest of both, not the code. */
export type CodeKey = string & { readonly codeKey: unique symbol };

/** The CodeKey of `deviceCode` at `tokenUri` (one-shot digest: no Hash object); a poll makes it once and passes it to each record. */
export const codeKey = (deviceCode: string, tokenUri: string): CodeKey => crypto.hash('sha256', `${tokenUri}\0${deviceCode}`, 'base64url') as CodeKey;

/**
 * Device codes that were exchanged for tokens, each until it expires: a
 * device code is good for one exchange, whatever the IdP says to a second.
 * Only a digest of each is kept.
 */
export class SpentDeviceCodes {
  /** digest → epoch ms it may be forgotten at, in the order they were added */
  private readonly codes = new Map<string, number>();

  constructor(private readonly max = SPENT_DEVICE_CODES_MAX) {}

  has(key: CodeKey, now = Date.now()): boolean {
    const until = this.codes.get(key);
    return until !== undefined && until > now;
  }

  add(key: CodeKey, expiresAt?: number, now = Date.now()): void {
    for (const [k, until] of this.codes) {
      if (until > now && this.codes.size < this.max) break;
      this.codes.delete(k); // expired, or the oldest when full
    }
    this.codes.set(key, Math.max(expiresAt ?? 0, now + SPENT_DEFAULT_MS));
  }
}

/** How many pending device codes' polling is remembered at most; past it the one polled longest ago goes first. */
export const DEVICE_CODE_POLLS_MAX = 100_000;

/** What the client knows of its polling of one pending device code. */
export interface PollRecord {
  /** epoch ms the last token request for it went */
  lastPoll: number;
  /** seconds between polls, as slow_down answers lengthened it */
  interval: number;
  /** what the last answered token request said, when it said the code is still pending */
  lastStatus?: 'pending' | 'slow_down';
  /** the token request in flight, if one is (device-flow.ts's result of it) */
  inFlight?: Promise<unknown>;
  /** epoch ms it may be forgotten at (the device code's expiry) */
  until: number;
}

/**
 * The polling of pending device codes, each until it expires: one token
 * request per interval for a code, however many answers (or replayed
 * cookies) ask for it. Only a digest of each code is kept.
 */
export class DeviceCodePolls {
  /** digest → record, in the order they were last written */
  private readonly records = new Map<string, PollRecord>();

  constructor(private readonly max = DEVICE_CODE_POLLS_MAX) {}

  get(key: CodeKey, now = Date.now()): PollRecord | undefined {
    const r = this.records.get(key);
    return r && r.until > now ? r : undefined;
  }

  set(key: CodeKey, record: PollRecord, now = Date.now()): void {
    this.records.delete(key);
    for (const [k, r] of this.records) {
      if (r.until > now && this.records.size < this.max) break;
      this.records.delete(k); // expired, or written longest ago when full
    }
    this.records.set(key, record);
  }

  delete(key: CodeKey): void {
    this.records.delete(key);
  }

  get size(): number {
    return this.records.size;
  }

  /** Device codes being polled that have not expired (the server's metrics). */
  live(now = Date.now()): number {
    let n = 0;
    for (const r of this.records.values()) if (r.until > now) n++;
    return n;
  }
}

export class IdpClient {
  /** discovery documents by issuer URL, each with the time it expires (epoch ms) */
  readonly discovery = new Map<string, { as: AuthorizationServer; expires: number }>();
  /** failed discoveries of logins by issuer URL, each with the time it is forgotten (epoch ms), oldest first (discovery.ts) */
  readonly discoveryFailures = new Map<string, { code: OAuthErrorCode; message: string; expires: number }>();
  /** logins' discoveries in flight by issuer URL */
  readonly discoveryInFlight = new Map<string, Promise<AuthorizationServer>>();
  readonly keySets = new KeySetCache();
  readonly spentDeviceCodes = new SpentDeviceCodes();
  readonly polls = new DeviceCodePolls();

  /** replaced when the server reads its IdP CA files again (a reload); requests under way finish on the one they began with */
  constructor(public fetch: FetchLike) {}
}
