/**
 * The KDC's lookaside cache: replies to recent requests, so that a client
 * retransmitting over UDP gets the very same reply (RFC 4120 §3.1.3 asks a
 * KDC not to issue a second, different ticket for one request). Like MIT's,
 * it keeps at most 10 MiB of replies; replies are kept 30 s, three times as
 * long as MIT clients retransmit (docs/kerberos.md).
 *
 * Requests are keyed by their SHA-256 (the first 128 bits of it) in a
 * DigestIndex, and reply bytes are copied into one ring buffer in the order
 * they were made, so the oldest reply is always the next to be overwritten.
 * Nothing here is a JavaScript object per entry: a busy KDC adds thousands
 * of entries a second, and objects kept that long are what the garbage
 * collector pays most for. AnswerOnce puts the cache and the replies
 * still being made in front of a service (the KDC, the password service).
 */
import { digest } from '../kerberos/crypto/index.js';
import { DigestIndex } from '../kerberos/digest-index.js';

export const LOOKASIDE_TTL_MS = 30_000;
export const LOOKASIDE_MAX_BYTES = 10 * 1024 * 1024;
/** Entries at most; replies average well above 160 bytes, so the byte bound is the one that binds. */
const MAX_ENTRIES = 65_536;
/** A reply larger than this is not kept (only TCP replies can be; TCP clients do not retransmit). */
const MAX_KEPT_REPLY = 64 * 1024;

/** SHA-256 of a request (kerberos/crypto/hmac.ts's one-shot digest into a pooled Buffer: no Hash object and no native Buffer per request). */
export const requestDigest = (raw: Buffer): Buffer => digest('sha256', raw);

export class Lookaside {
  private readonly index: DigestIndex;
  private readonly offset = new Int32Array(MAX_ENTRIES);
  private readonly length = new Int32Array(MAX_ENTRIES);
  private ring: Buffer | undefined;
  /** where the next reply goes */
  private writeAt = 0;
  private bytes = 0;

  constructor(
    private readonly ringBytes = LOOKASIDE_MAX_BYTES,
    private readonly ttlMs = LOOKASIDE_TTL_MS,
  ) {
    this.index = new DigestIndex(MAX_ENTRIES, 4);
  }

  /** A copy of the reply kept for this request digest, if any. */
  get(digest: Buffer, now: number): Buffer | undefined {
    const r = this.index.find(digest, 0, now);
    if (r < 0) return undefined;
    const off = this.offset[r]!;
    return Buffer.from(this.ring!.subarray(off, off + this.length[r]!));
  }

  /** Keeps `reply` for the request with this digest, evicting expired replies and then the oldest as its room requires. */
  add(digest: Buffer, reply: Buffer, now: number): void {
    const n = reply.length;
    this.expire(now);
    if (n > MAX_KEPT_REPLY || n > this.ringBytes / 4) return;
    if (this.index.find(digest, 0, now) >= 0) return;
    this.ring ??= Buffer.allocUnsafeSlow(this.ringBytes);
    // Replies lie in the ring in the order they were added, wrapping around at most once: the oldest ones sit just past writeAt.
    if (this.writeAt + n > this.ringBytes) {
      // wrapping passes the replies above writeAt
      while (this.index.size > 0 && this.offset[this.index.oldest]! >= this.writeAt) this.dropOldest();
      this.writeAt = 0;
    }
    // the oldest replies starting in [writeAt, writeAt + n) are in the way
    while (this.index.size > 0) {
      const off = this.offset[this.index.oldest]!;
      if (off < this.writeAt || off >= this.writeAt + n) break;
      this.dropOldest();
    }
    if (this.index.size === this.index.capacity) this.dropOldest();
    reply.copy(this.ring, this.writeAt);
    const r = this.index.push(digest, 0, now + this.ttlMs);
    this.offset[r] = this.writeAt;
    this.length[r] = n;
    this.writeAt += n;
    this.bytes += n;
  }

  stats(): { entries: number; bytes: number } {
    return { entries: this.index.size, bytes: this.bytes };
  }

  private expire(now: number): void {
    for (let r = this.index.oldest; r >= 0 && this.index.expiresAt(r) <= now; r = this.index.oldest) this.dropOldest();
    if (this.index.size === 0) this.writeAt = 0;
  }

  private dropOldest(): void {
    this.bytes -= this.length[this.index.oldest]!;
    this.index.shift();
  }
}

/**
 * Each request answered once: a retransmission gets the reply kept in the
 * lookaside cache, or joins the reply still being made (keyed by the first
 * 128 bits of the request's digest). Only replies are kept, never a
 * failure to make one.
 */
export class AnswerOnce {
  private readonly lookaside: Lookaside;
  private readonly inflight = new Map<string, Promise<Buffer | null>>();

  constructor(ringBytes = LOOKASIDE_MAX_BYTES) {
    this.lookaside = new Lookaside(ringBytes);
  }

  /** The reply to `raw`: kept, in progress, or made now by `make`. */
  answer(raw: Buffer, now: () => number, make: () => Promise<Buffer | null>): Promise<Buffer | null> {
    const digest = requestDigest(raw);
    const kept = this.lookaside.get(digest, now());
    if (kept) return Promise.resolve(kept);
    const id = digest.toString('latin1', 0, 16);
    const pending = this.inflight.get(id);
    if (pending) return pending;
    const reply = make();
    this.inflight.set(id, reply);
    void reply.then(
      (r) => {
        this.inflight.delete(id);
        if (r) this.lookaside.add(digest, r, now());
      },
      () => this.inflight.delete(id),
    );
    return reply;
  }

  stats(): { entries: number; bytes: number } {
    return this.lookaside.stats();
  }
}
