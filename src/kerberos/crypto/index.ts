/**
 * Kerberos cryptography (RFC 3961): the enctype profiles dirid supports,
 * looked up by number, plus PRF+ and KRB-FX-CF2 (RFC 6113 §5.1) for FAST.
 */
import { aes128CtsHmacSha1, aes256CtsHmacSha1 } from './aes-sha1.js';
import { aes128CtsHmacSha256, aes256CtsHmacSha384 } from './aes-sha2.js';
import { KrbCryptoError, type EncryptionKey, type EnctypeProfile } from './types.js';

export { KrbCryptoError, type EncryptionKey, type EnctypeProfile } from './types.js';

export const EncType = {
  AES128_CTS_HMAC_SHA1_96: 17,
  AES256_CTS_HMAC_SHA1_96: 18,
  AES128_CTS_HMAC_SHA256_128: 19,
  AES256_CTS_HMAC_SHA384_192: 20,
} as const;

const profiles = new Map<number, EnctypeProfile>([aes256CtsHmacSha1, aes128CtsHmacSha1, aes256CtsHmacSha384, aes128CtsHmacSha256].map((p) => [p.etype, p]));

/** Supported enctypes in the KDC's order of preference. */
export const supportedEtypes: readonly number[] = [18, 17, 20, 19];

export function isSupportedEtype(etype: number): boolean {
  return profiles.has(etype);
}

export function profile(etype: number): EnctypeProfile {
  const p = profiles.get(etype);
  if (!p) throw new KrbCryptoError(`unsupported encryption type ${etype}`);
  return p;
}

/** The profile whose keyed checksum has this type (15, 16, 19, 20). */
export function checksumProfile(cksumtype: number): EnctypeProfile {
  for (const p of profiles.values()) if (p.checksumType === cksumtype) return p;
  throw new KrbCryptoError(`unsupported checksum type ${cksumtype}`);
}

/** PRF+ (RFC 6113 §5.1): PRF(key, 1|s) | PRF(key, 2|s) | ... truncated. */
export function prfPlus(key: EncryptionKey, input: Buffer, length: number): Buffer {
  const p = profile(key.etype);
  const out: Buffer[] = [];
  let have = 0;
  for (let i = 1; have < length; i++) {
    if (i > 255) throw new KrbCryptoError('PRF+ output too long');
    const block = p.prf(key, Buffer.concat([Buffer.from([i]), input]));
    out.push(block);
    have += block.length;
  }
  return Buffer.concat(out).subarray(0, length);
}

/** KRB-FX-CF2 (RFC 6113 §5.1): combines two keys into one of key1's enctype. */
export function cf2(key1: EncryptionKey, pepper1: string, key2: EncryptionKey, pepper2: string): EncryptionKey {
  const p = profile(key1.etype);
  const a = prfPlus(key1, Buffer.from(pepper1), p.keyBytes);
  const b = prfPlus(key2, Buffer.from(pepper2), p.keyBytes);
  const out = Buffer.alloc(p.keyBytes);
  for (let i = 0; i < out.length; i++) out[i] = a[i]! ^ b[i]!;
  return { etype: key1.etype, value: out };
}
