/**
 * One server's IdP client: the HTTP client for IdP endpoints (http.ts: one
 * TLS context, the configured IdP CAs) and what it remembers between calls,
 * the discovery documents per issuer (discovery.ts), the JWKS key sets per
 * URL (key-sets.ts) and the device codes it has already exchanged for
 * tokens (device-flow.ts refuses a second exchange of one). The server makes
 * one and hands it to the KDC, to the discovery that idp-add runs and to
 * idp-check, so two servers in one process share no cached document, key or
 * device code.
 */
import { createHash } from 'node:crypto';
import type { AuthorizationServer } from 'oauth4webapi';
import type { FetchLike } from './http.js';
import { KeySetCache } from './key-sets.js';

/** How many exchanged device codes are remembered at most; past it the oldest goes first. */
export const SPENT_DEVICE_CODES_MAX = 100_000;
/** How long an exchanged device code is remembered when its expiry is not known (the KDC's flows last at most an hour). */
const SPENT_DEFAULT_MS = 3600_000;

/**
 * Device codes that were exchanged for tokens, each until it expires: a
 * device code is good for one exchange, whatever the IdP says to a second.
 * Only a digest of each is kept.
 */
export class SpentDeviceCodes {
  /** digest → epoch ms it may be forgotten at, in the order they were added */
  private readonly codes = new Map<string, number>();

  constructor(private readonly max = SPENT_DEVICE_CODES_MAX) {}

  private static key(deviceCode: string, tokenUri: string): string {
    return createHash('sha256').update(tokenUri).update('\0').update(deviceCode).digest('base64url');
  }

  has(deviceCode: string, tokenUri: string, now = Date.now()): boolean {
    const until = this.codes.get(SpentDeviceCodes.key(deviceCode, tokenUri));
    return until !== undefined && until > now;
  }

  add(deviceCode: string, tokenUri: string, expiresAt?: number, now = Date.now()): void {
    for (const [k, until] of this.codes) {
      if (until > now && this.codes.size < this.max) break;
      this.codes.delete(k); // expired, or the oldest when full
    }
    this.codes.set(SpentDeviceCodes.key(deviceCode, tokenUri), Math.max(expiresAt ?? 0, now + SPENT_DEFAULT_MS));
  }
}

export class IdpClient {
  /** discovery documents by issuer URL, each with the time it expires (epoch ms) */
  readonly discovery = new Map<string, { as: AuthorizationServer; expires: number }>();
  readonly keySets = new KeySetCache();
  readonly spentDeviceCodes = new SpentDeviceCodes();

  constructor(readonly fetch: FetchLike) {}
}
