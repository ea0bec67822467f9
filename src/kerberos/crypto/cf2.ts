/**
 * PRF+ and KRB-FX-CF2 (RFC 6113 §5.1), the key combination FAST uses for its
 * armor, reply and challenge keys. PRF+(K, s) = PRF(K, 1|s) | PRF(K, 2|s) | ...
 * (one-byte counter); CF2(K1, K2, pepper1, pepper2) = random-to-key of
 * PRF+(K1, pepper1) xor PRF+(K2, pepper2), cut to the output enctype's
 * key-generation seed length. Profiles are passed in to keep this module
 * free of the enctype table. The result of combining a transient key (one
 * used in a single request) is transient too.
 */
import { KrbCryptoError, type EncryptionKey, type EnctypeProfile } from './types.js';

/** PRF+ output is limited by the one-byte counter. */
export function prfPlus(p: EnctypeProfile, key: EncryptionKey, input: Buffer, length: number): Buffer {
  if (!Number.isInteger(length) || length < 0 || length > 255 * p.prfBytes) throw new KrbCryptoError('PRF+ output length out of range');
  const blocks: Buffer[] = [];
  for (let i = 1, have = 0; have < length; i++) {
    const block = p.prf(key, Buffer.concat([Buffer.from([i]), input]));
    blocks.push(block);
    have += block.length;
  }
  return Buffer.concat(blocks).subarray(0, length);
}

export function combineKeys(
  out: EnctypeProfile,
  p1: EnctypeProfile,
  key1: EncryptionKey,
  pepper1: string | Buffer,
  p2: EnctypeProfile,
  key2: EncryptionKey,
  pepper2: string | Buffer,
): EncryptionKey {
  return combineHalves(out, prfPlus(p1, key1, Buffer.from(pepper1), out.keyBytes), key1.transient === true, prfPlus(p2, key2, Buffer.from(pepper2), out.keyBytes), key2.transient === true);
}

/**
 * The second step of KRB-FX-CF2 on the two PRF+ outputs already made (each
 * `out.keyBytes` long; `a` is xored in place): a caller that keeps one half
 * (FAST keeps PRF+ of a kept ticket's session key) gives it here.
 */
export function combineHalves(out: EnctypeProfile, a: Buffer, aTransient: boolean, b: Buffer, bTransient: boolean): EncryptionKey {
  if (a.length !== out.keyBytes || b.length !== out.keyBytes) throw new KrbCryptoError('KRB-FX-CF2 halves of the wrong length');
  for (let i = 0; i < a.length; i++) a[i]! ^= b[i]!;
  const key = out.randomToKey(a);
  // a combination with a key used in one request is used in that request only
  return aTransient || bTransient ? { ...key, transient: true } : key;
}
