/**
 * HMAC (RFC 2104) as two one-shot digests: H(K^opad | H(K^ipad | data)).
 * Node's createHmac makes an OpenSSL MAC context per call, which cost the
 * KDC several times the hashing of a short message (and a native object
 * per call for the garbage collector); crypto.hash makes none visible to
 * JavaScript. The digests are asked for as 'binary' (latin1) strings (one character
 * per byte) and written into Buffers here: a digest returned as a Buffer
 * costs Node a native allocation of its own, about three times the hashing
 * of a short message (docs/kerberos.md). The pads are built per call: a few
 * dozen bytes, cheaper than looking up a cached pair. A received MAC is
 * checked against the digest string itself (hmacMatches).
 */
import { hash } from 'node:crypto';

export type HmacHash = 'sha1' | 'sha256' | 'sha384';

const BLOCK_BYTES: Record<HmacHash, number> = { sha1: 64, sha256: 64, sha384: 128 };
const DIGEST_BYTES: Record<HmacHash, number> = { sha1: 20, sha256: 32, sha384: 48 };

/** The digest of `data` as a latin1 string: one character per byte. */
const digestLatin1 = (alg: HmacHash, data: Buffer): string => hash(alg, data, 'binary');

/** The digest of `data` in a Buffer from Node's pool (not a native allocation of its own, as crypto.hash's Buffer result is). */
export const digest = (alg: HmacHash, data: Buffer): Buffer => Buffer.from(digestLatin1(alg, data), 'latin1');

/** HMAC-`alg` under `key` of the concatenation of `parts`. */
export function hmac(alg: HmacHash, key: Buffer, parts: readonly Buffer[]): Buffer {
  const out = Buffer.allocUnsafe(DIGEST_BYTES[alg]);
  hmacInto(alg, key, parts, out, 0, out.length);
  return out;
}

/** The first `n` bytes of HMAC-`alg` under `key` of the concatenation of `parts`, written into `out` at `off`. */
export function hmacInto(alg: HmacHash, key: Buffer, parts: readonly Buffer[], out: Buffer, off: number, n: number): void {
  out.write(hmacLatin1(alg, key, parts), off, n, 'latin1');
}

/**
 * Whether `received` is HMAC-`alg` under `key` of `parts`, truncated to
 * its length (at least one byte, at most the digest's): compared with the
 * digest's characters in place, every byte looked at whatever the earlier
 * ones were, with no Buffer for the computed MAC and no native call to
 * compare (each cost more than the comparison).
 */
export function hmacMatches(alg: HmacHash, key: Buffer, parts: readonly Buffer[], received: Buffer): boolean {
  const n = received.length;
  if (n === 0 || n > DIGEST_BYTES[alg]) return false;
  const mine = hmacLatin1(alg, key, parts);
  let diff = 0;
  for (let i = 0; i < n; i++) diff |= mine.charCodeAt(i) ^ received[i]!;
  return diff === 0;
}

/** HMAC-`alg` under `key` of the concatenation of `parts`, as a latin1 string (one character per byte). */
function hmacLatin1(alg: HmacHash, key: Buffer, parts: readonly Buffer[]): string {
  const block = BLOCK_BYTES[alg];
  // a key longer than the hash's block is hashed first (RFC 2104 §2)
  const k = key.length > block ? digest(alg, key) : key;
  let len = block;
  for (const p of parts) len += p.length;
  const inner = Buffer.allocUnsafe(len);
  const outer = Buffer.allocUnsafe(block + DIGEST_BYTES[alg]);
  // both pads in one pass over the key, then the zero bytes past it (a test per byte cost more than the hashing)
  let i = 0;
  for (; i < k.length; i++) {
    const b = k[i]!;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  for (; i < block; i++) {
    inner[i] = 0x36;
    outer[i] = 0x5c;
  }
  let at = block;
  for (const p of parts) at += p.copy(inner, at);
  outer.write(digestLatin1(alg, inner), block, 'latin1');
  return digestLatin1(alg, outer);
}
