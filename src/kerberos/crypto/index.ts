/**
 * Kerberos cryptography (RFC 3961): the enctype profiles dirid supports,
 * looked up by enctype or checksum type, plus KRB-FX-CF2 (RFC 6113 §5.1).
 * AES-SHA1 (RFC 3962) in aes-sha1.ts, AES-SHA2 (RFC 8009) in aes-sha2.ts.
 */
import { aes128CtsHmacSha1, aes256CtsHmacSha1 } from './aes-sha1.js';
import { aes128CtsHmacSha256, aes256CtsHmacSha384 } from './aes-sha2.js';
import { combineHalves, combineKeys, prfPlus as prfPlusWith } from './cf2.js';
import { KrbCryptoError, type EncryptionKey, type EnctypeProfile } from './types.js';

export { KrbCryptoError, type KrbCryptoErrorCode, type EncryptionKey, type EnctypeProfile } from './types.js';
export { digest } from './hmac.js';
/** Loads the JavaScript AES of one-request keys (aes-once.ts) now rather than at the first request that needs it: a KDC calls it when it starts. */
export { loadOnceAes } from './aes-once.js';

export const EncType = {
  AES128_CTS_HMAC_SHA1_96: 17,
  AES256_CTS_HMAC_SHA1_96: 18,
  AES128_CTS_HMAC_SHA256_128: 19,
  AES256_CTS_HMAC_SHA384_192: 20,
} as const;

export const ChecksumType = {
  HMAC_SHA1_96_AES128: 15,
  HMAC_SHA1_96_AES256: 16,
  HMAC_SHA256_128_AES128: 19,
  HMAC_SHA384_192_AES256: 20,
} as const;

/** Supported enctypes in the KDC's order of preference. */
export const supportedEtypes: readonly number[] = Object.freeze([18, 17, 20, 19]);

const byEtype = new Map<number, EnctypeProfile>(
  [aes256CtsHmacSha1, aes128CtsHmacSha1, aes256CtsHmacSha384, aes128CtsHmacSha256].map((p) => [p.etype, p]),
);
const byChecksumType = new Map<number, EnctypeProfile>([...byEtype.values()].map((p) => [p.checksumType, p]));

export function isSupportedEtype(etype: number): boolean {
  return byEtype.has(etype);
}

export function profile(etype: number): EnctypeProfile {
  const p = byEtype.get(etype);
  if (!p) throw new KrbCryptoError(`unsupported encryption type ${etype}`, 'UNSUPPORTED_ETYPE');
  return p;
}

/** The profile whose keyed checksum has this type (15, 16, 19, 20); verify with its verifyChecksum. */
export function checksumProfile(cksumtype: number): EnctypeProfile {
  const p = byChecksumType.get(cksumtype);
  if (!p) throw new KrbCryptoError(`unsupported checksum type ${cksumtype}`, 'UNSUPPORTED_CHECKSUM');
  return p;
}

/** PRF+ (RFC 6113 §5.1) under the key's own enctype. */
export function prfPlus(key: EncryptionKey, input: Buffer, length: number): Buffer {
  return prfPlusWith(profile(key.etype), key, input, length);
}

/**
 * KRB-FX-CF2 (RFC 6113 §5.1). The result has enctype `etype`, or key1's
 * enctype when it is omitted (as MIT's krb5_c_fx_cf2_simple does).
 */
export function cf2(etype: number, key1: EncryptionKey, pepper1: string, key2: EncryptionKey, pepper2: string): EncryptionKey;
export function cf2(key1: EncryptionKey, pepper1: string, key2: EncryptionKey, pepper2: string): EncryptionKey;
export function cf2(...args: [number, EncryptionKey, string, EncryptionKey, string] | [EncryptionKey, string, EncryptionKey, string]): EncryptionKey {
  const [etype, key1, pepper1, key2, pepper2] = args.length === 5 ? args : [args[0].etype, ...args];
  return combineKeys(profile(etype), profile(key1.etype), key1, pepper1, profile(key2.etype), key2, pepper2);
}

/**
 * KRB-FX-CF2(key1, pepper1, key2, pepper2) in key1's enctype, with
 * PRF+(key2, pepper2) given (`second`, key1's enctype's seed length, made
 * with prfPlus): for a caller that keeps that half between requests.
 */
export function cf2WithSecond(key1: EncryptionKey, pepper1: Buffer, second: Buffer, secondTransient: boolean): EncryptionKey {
  const out = profile(key1.etype);
  return combineHalves(out, prfPlus(key1, pepper1, out.keyBytes), key1.transient === true, second, secondTransient);
}
