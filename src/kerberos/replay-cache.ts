/**
 * Authenticators seen recently (RFC 4120 §3.2.3 and §3.3.2 replay
 * detection), for the one AP-REQ verification (ap-exchange.ts) that the
 * KDC's TGS exchange, its FAST armor and the HTTP Negotiate acceptor use.
 * An authenticator is identified by the last 8 bytes of its
 * ciphertext, which lie inside its MAC (12 to 24 bytes for every AES
 * enctype): distinct authenticators differ there but for a 2^-64 chance,
 * and nobody can aim for another client's value before that client has
 * sent it. (MIT's replay cache likewise keys on a hash of the ciphertext.)
 * Entries are kept twice the clock skew, an authenticator older than the
 * skew being refused anyway; past `max` entries the oldest go.
 */
import { DigestIndex } from './digest-index.js';

const TAG_BYTES = 8;

export class ReplayCache {
  private readonly seen: DigestIndex;

  constructor(
    private readonly keepMs: number,
    max = 500_000,
  ) {
    this.seen = new DigestIndex(max, 2);
  }

  /** false when this authenticator ciphertext was seen within the window; records it otherwise. */
  check(authenticatorCipher: Buffer, now: number): boolean {
    if (authenticatorCipher.length < TAG_BYTES) return false;
    const off = authenticatorCipher.length - TAG_BYTES;
    this.seen.expire(now);
    if (this.seen.find(authenticatorCipher, off, now) >= 0) return false;
    this.seen.push(authenticatorCipher, off, now + this.keepMs);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
