/**
 * HMAC (RFC 2104) as two one-shot digests: H(K^opad | H(K^ipad | data)).
 * Node's createHmac makes an OpenSSL MAC context per call, which cost the
 * KDC several times the hashing of a short message (and a native object
 * per call for the garbage collector); crypto.hash makes none visible to
 * JavaScript. The pads are built per call: a few dozen bytes, cheaper than
 * looking up a cached pair.
 */
import { hash } from 'node:crypto';

export type HmacHash = 'sha1' | 'sha256' | 'sha384';

const BLOCK_BYTES: Record<HmacHash, number> = { sha1: 64, sha256: 64, sha384: 128 };

const digest = (alg: HmacHash, data: Buffer): Buffer => hash(alg, data, 'buffer') as unknown as Buffer;

/** HMAC-`alg` under `key` of the concatenation of `parts`. */
export function hmac(alg: HmacHash, key: Buffer, parts: readonly Buffer[]): Buffer {
  const block = BLOCK_BYTES[alg];
  // a key longer than the hash's block is hashed first (RFC 2104 §2)
  const k = key.length > block ? digest(alg, key) : key;
  let len = block;
  for (const p of parts) len += p.length;
  const inner = Buffer.allocUnsafe(len);
  for (let i = 0; i < block; i++) inner[i] = (i < k.length ? k[i]! : 0) ^ 0x36;
  let off = block;
  for (const p of parts) off += p.copy(inner, off);
  const innerHash = digest(alg, inner);
  const outer = Buffer.allocUnsafe(block + innerHash.length);
  for (let i = 0; i < block; i++) outer[i] = (i < k.length ? k[i]! : 0) ^ 0x5c;
  innerHash.copy(outer, block);
  return digest(alg, outer);
}
