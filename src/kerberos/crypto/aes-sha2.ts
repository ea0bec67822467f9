/**
 * aes128-cts-hmac-sha256-128 (19) and aes256-cts-hmac-sha384-192 (20),
 * RFC 8009. Keys are derived with KDF-HMAC-SHA2 (SP 800-108 counter mode,
 * §3); string-to-key is KDF(PBKDF2-HMAC-SHA2(password, name | 0x00 | salt,
 * iterations), "kerberos") with 32768 iterations by default (§4);
 * encryption is encrypt-then-MAC: C = AES-CTS(Ke, confounder | plaintext),
 * H = HMAC(Ki, zero IV | C) truncated (§5); checksums 19 and 20 are HMAC
 * under Kc; the PRF is KDF(key, "prf", data) (§6).
 */
import { pbkdf2Sync } from 'node:crypto';
import { ctsDecrypt, ctsEncrypt } from './cts.js';
import { DerivedKeyCache, KeyPurpose, RecentDerivedKeys, usageConstant } from './dk.js';
import { randomBytesPooled } from './random.js';
import { hmac, hmacMatches } from './hmac.js';
import { aesKeyFactory, iterationCount, keyLengthGuard, KrbCryptoError, s2kParams, type EncryptionKey, type EnctypeProfile } from './types.js';

const BLOCK = 16;
const ZERO_IV = Buffer.alloc(BLOCK);
const DEFAULT_ITERATIONS = 32768;
const KERBEROS = Buffer.from('kerberos');
const PRF_LABEL = Buffer.from('prf');
const EMPTY = Buffer.alloc(0);
const COUNTER_ONE = Buffer.from([0, 0, 0, 1]);
const ZERO_BYTE = Buffer.from([0]);

/** KDF-HMAC-SHA2(key, label, context, bits) of RFC 8009 §3; one HMAC block suffices for every use. */
export function kdfHmacSha2(hash: 'sha256' | 'sha384', key: Buffer, label: Buffer, context: Buffer, bits: number): Buffer {
  const k = Buffer.alloc(4);
  k.writeUInt32BE(bits);
  return hmac(hash, key, [COUNTER_ONE, label, ZERO_BYTE, context, k]).subarray(0, bits / 8);
}

function makeProfile(etype: 19 | 20, keyBytes: 16 | 32, hash: 'sha256' | 'sha384', macBytes: 16 | 24, checksumType: 19 | 20, name: string): EnctypeProfile {
  const cache = new DerivedKeyCache();
  const checkKey = keyLengthGuard(name, keyBytes);
  const prfBits = hash === 'sha256' ? 256 : 384;
  // Ke has the key's length; Kc and Ki the MAC's (RFC 8009 §5).
  const derive = (base: Buffer, usage: number, purpose: number): Buffer =>
    kdfHmacSha2(hash, base, usageConstant(usage, purpose as KeyPurpose), EMPTY, (purpose === KeyPurpose.ENCRYPTION ? keyBytes : macBytes) * 8);
  const recent = new RecentDerivedKeys();
  // a transient key (used in one request): its derived keys from the ring of recent ones, their AES through aes-once.ts
  const derived = (key: EncryptionKey, usage: number, purpose: KeyPurpose): Buffer => (key.transient ? recent.get(key.value, usage, purpose, derive) : cache.get(key, usage, purpose, derive));
  const mac = (ki: Buffer, c: Buffer): Buffer => hmac(hash, ki, [ZERO_IV, c]).subarray(0, macBytes);

  const profile: EnctypeProfile = {
    etype,
    name,
    keyBytes,
    checksumType,
    checksumBytes: macBytes,
    prfBytes: prfBits / 8,
    defaultS2kParams: s2kParams(DEFAULT_ITERATIONS),

    stringToKey(password, salt, s2kparams) {
      const iterations = iterationCount(s2kparams, DEFAULT_ITERATIONS);
      const saltp = Buffer.concat([Buffer.from(name), Buffer.from([0]), Buffer.from(salt)]);
      const tkey = pbkdf2Sync(Buffer.from(password), saltp, iterations, keyBytes, hash);
      return { etype, value: kdfHmacSha2(hash, tkey, KERBEROS, EMPTY, keyBytes * 8) };
    },

    ...aesKeyFactory(etype, name, keyBytes),

    encrypt(key, usage, plaintext, confounder) {
      checkKey(key);
      if (confounder !== undefined && confounder.length !== BLOCK) throw new KrbCryptoError('a confounder has 16 bytes');
      const c = ctsEncrypt(derived(key, usage, KeyPurpose.ENCRYPTION), Buffer.concat([confounder ?? randomBytesPooled(BLOCK), plaintext]), ZERO_IV, key.transient === true);
      return Buffer.concat([c, mac(derived(key, usage, KeyPurpose.INTEGRITY), c)]);
    },

    decrypt(key, usage, ciphertext) {
      checkKey(key);
      if (ciphertext.length < BLOCK + macBytes) throw new KrbCryptoError(`${name} ciphertext too short`, 'BAD_LENGTH');
      const split = ciphertext.length - macBytes;
      const c = ciphertext.subarray(0, split);
      if (!hmacMatches(hash, derived(key, usage, KeyPurpose.INTEGRITY), [ZERO_IV, c], ciphertext.subarray(split))) {
        throw new KrbCryptoError('integrity check failed (wrong key or modified data)', 'INTEGRITY');
      }
      return ctsDecrypt(derived(key, usage, KeyPurpose.ENCRYPTION), c, ZERO_IV, key.transient === true).subarray(BLOCK);
    },

    checksum(key, usage, data) {
      checkKey(key);
      return hmac(hash, derived(key, usage, KeyPurpose.CHECKSUM), [data]).subarray(0, macBytes);
    },

    verifyChecksum(key, usage, data, cksum) {
      checkKey(key);
      // a checksum of another length never matches
      return cksum.length === macBytes && hmacMatches(hash, derived(key, usage, KeyPurpose.CHECKSUM), [data], cksum);
    },

    prf(key, data) {
      checkKey(key);
      return kdfHmacSha2(hash, key.value, PRF_LABEL, data, prfBits);
    },
  };
  return profile;
}

export const aes128CtsHmacSha256 = makeProfile(19, 16, 'sha256', 16, 19, 'aes128-cts-hmac-sha256-128');
export const aes256CtsHmacSha384 = makeProfile(20, 32, 'sha384', 24, 20, 'aes256-cts-hmac-sha384-192');
