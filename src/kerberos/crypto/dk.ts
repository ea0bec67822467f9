/**
 * Key derivation of the simplified profile, RFC 3961 §5.1 and §5.3, for AES
 * (RFC 3962): DR(Key, Constant) chains AES over n-fold(Constant, 128), and
 * DK = random-to-key(DR) with random-to-key the identity for AES. Also the
 * usage constants (usage as 4 bytes big-endian || 0x99/0xAA/0x55), the
 * bounded cache of derived keys that both AES families use per request, and
 * the ring of keys derived from one-request keys.
 */
import { aesChain } from './cts.js';
import { ExpiringCache } from '../expiring-cache.js';
import { nfold } from './nfold.js';
import type { EncryptionKey } from './types.js';

const BLOCK = 16;

/** The last byte of a usage constant: which of Kc, Ke, Ki is derived. */
export const KeyPurpose = { CHECKSUM: 0x99, ENCRYPTION: 0xaa, INTEGRITY: 0x55 } as const;
export type KeyPurpose = (typeof KeyPurpose)[keyof typeof KeyPurpose];

export function usageConstant(usage: number, purpose: KeyPurpose): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(usage >>> 0, 0);
  b[4] = purpose;
  return b;
}

/** n-fold of the few distinct constants in use (usage constants, "kerberos", "prf"), memoized: n-fold costs 5x the AES work. */
const foldedConstants = new Map<string, Buffer>();
function foldedConstant(constant: Buffer): Buffer {
  const id = constant.toString('latin1');
  let folded = foldedConstants.get(id);
  if (folded === undefined) {
    folded = nfold(constant, BLOCK);
    if (foldedConstants.size >= 1024) foldedConstants.clear();
    foldedConstants.set(id, folded);
  }
  return folded;
}

/** n-fold of usage constants by usage and purpose: no constant Buffer, nor string, to make per derivation. */
const foldedUsages = new Map<number, Buffer>();
function foldedUsage(usage: number, purpose: KeyPurpose): Buffer {
  // usage is a 32-bit number, purpose a byte: the slot is exact in a double
  const slot = (usage >>> 0) * 256 + purpose;
  let folded = foldedUsages.get(slot);
  if (folded === undefined) {
    folded = nfold(usageConstant(usage, purpose), BLOCK);
    if (foldedUsages.size >= 1024) foldedUsages.clear();
    foldedUsages.set(slot, folded);
  }
  return folded;
}

/**
 * DR(base, constant): `outBytes` of AES chained over n-fold(constant), in
 * one CBC pass; `once` for a base key used in one request only (its AES
 * through aes-once.ts, no OpenSSL object).
 */
export function deriveRandom(base: Buffer, constant: Buffer, outBytes: number = base.length, once = false): Buffer {
  const out = aesChain(base, foldedConstant(constant), Math.ceil(outBytes / BLOCK), once);
  return out.length === outBytes ? out : out.subarray(0, outBytes);
}

/** DK(base, constant) for AES keys. */
export function deriveKey(base: Buffer, constant: Buffer, once = false): Buffer {
  return deriveRandom(base, constant, base.length, once);
}

/** DK(base, usage constant of `usage` and `purpose`) for AES keys: the same bytes as deriveKey(base, usageConstant(usage, purpose)). */
export function deriveUsageKey(base: Buffer, usage: number, purpose: KeyPurpose, once = false): Buffer {
  // an AES key is whole blocks: the chain is the key itself, no view of it needed
  const out = aesChain(base, foldedUsage(usage, purpose), Math.ceil(base.length / BLOCK), once);
  return out.length === base.length ? out : out.subarray(0, base.length);
}

/**
 * Keys derived from one-request keys (a TGS subkey, the session key of a
 * TGT seen once, FAST's armor keys), by base key Buffer and slot, in a
 * ring of the last few: one request that uses such a key for several
 * messages derives each key once, and nothing is kept beyond the ring's
 * turn. Not the DerivedKeyCache, which such keys would only fill.
 */
export class RecentDerivedKeys {
  private readonly bases: (Buffer | undefined)[];
  private readonly slots: Float64Array;
  private readonly values: (Buffer | undefined)[];
  private next = 0;

  constructor(private readonly size = 16) {
    this.bases = new Array<Buffer | undefined>(size).fill(undefined);
    this.slots = new Float64Array(size);
    this.values = new Array<Buffer | undefined>(size).fill(undefined);
  }

  /** The key derived from `base` for `usage` and `purpose`, made by `derive` when the ring does not have it. */
  get(base: Buffer, usage: number, purpose: number, derive: (base: Buffer, usage: number, purpose: number) => Buffer): Buffer {
    const slot = usage * 256 + purpose;
    for (let i = 0; i < this.size; i++) if (this.bases[i] === base && this.slots[i] === slot) return this.values[i]!;
    const v = derive(base, usage, purpose);
    this.bases[this.next] = base;
    this.slots[this.next] = slot;
    this.values[this.next] = v;
    this.next = (this.next + 1) % this.size;
    return v;
  }
}

/**
 * Derived keys by (base key bytes, usage, purpose). Looked up first by the
 * base key's Buffer object (long-term keys come from the principal cache and
 * TGT session keys from the opened-ticket cache, so the same Buffer recurs),
 * then by content, because a key decoded afresh from a message is a new
 * Buffer with the same bytes. Bounded: the oldest content entry goes when
 * full; the by-Buffer entries go with their Buffer. A transient key (a TGS
 * request's subkey, used for one reply) is derived afresh and not kept: it
 * would only push out keys that are used again. Key Buffers are never
 * modified in place in this code base (cts.ts relies on that too).
 */
export class DerivedKeyCache {
  private readonly cache: ExpiringCache<Buffer>;
  private byBuffer = new WeakMap<Buffer, Map<number, Buffer>>();
  constructor(max = 4096) {
    this.cache = new ExpiringCache(max);
  }

  /** `derive(base, usage, purpose)` makes the key on a miss (a function of its arguments, so no closure is made per call). */
  get(base: EncryptionKey, usage: number, purpose: number, derive: (base: Buffer, usage: number, purpose: number) => Buffer): Buffer {
    if (base.transient) return derive(base.value, usage, purpose);
    // usage is a 32-bit number (or -1 for the PRF), purpose a byte
    const slot = usage * 256 + purpose;
    let mine = this.byBuffer.get(base.value);
    const known = mine?.get(slot);
    if (known !== undefined) return known;
    const id = `${purpose}:${usage}:${base.value.toString('latin1')}`;
    let v = this.cache.get(id, 0);
    if (v === undefined) {
      // memory of its own: a view into Node's shared pool would keep the whole pool alive
      const d = derive(base.value, usage, purpose);
      v = Buffer.allocUnsafeSlow(d.length);
      d.copy(v);
      this.cache.set(id, v, Infinity, 0);
    }
    if (!mine) this.byBuffer.set(base.value, (mine = new Map()));
    mine.set(slot, v);
    return v;
  }

  get size(): number {
    return this.cache.size;
  }

  clear(): void {
    this.cache.clear();
    this.byBuffer = new WeakMap();
  }
}
