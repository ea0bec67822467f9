/**
 * aes128-cts-hmac-sha1-96 (17) and aes256-cts-hmac-sha1-96 (18), RFC 3962 on
 * the simplified profile of RFC 3961 §5.3. string-to-key is
 * DK(PBKDF2-HMAC-SHA1(password, salt, iterations), "kerberos") with 4096
 * iterations by default; encryption is AES-CTS(Ke, confounder | plaintext)
 * followed by HMAC-SHA1(Ki, confounder | plaintext) truncated to 96 bits;
 * the keyed checksums 15 and 16 are HMAC-SHA1-96 under Kc; the PRF is
 * AES(DK(key, "prf"), SHA1(data)[0..16]) (RFC 3962 §4).
 */
import { hash, pbkdf2Sync } from 'node:crypto';
import { aesBlock, ctsDecrypt, ctsEncryptPaddedInto } from './cts.js';
import { DerivedKeyCache, deriveKey, deriveUsageKey, KeyPurpose, RecentDerivedKeys } from './dk.js';
import { randomInto } from './random.js';
import { hmacInto, hmacMatches } from './hmac.js';
import { aesKeyFactory, iterationCount, keyLengthGuard, KrbCryptoError, s2kParams, type EncryptionKey, type EnctypeProfile } from './types.js';

const BLOCK = 16;
const MAC_BYTES = 12;
const DEFAULT_ITERATIONS = 4096;
const KERBEROS = Buffer.from('kerberos');
const PRF_CONSTANT = Buffer.from('prf');
/** Cache slot of the PRF key (usage numbers are 32-bit unsigned, so -1 is free). */
const PRF_SLOT = -1;

const deriveForUsage = (base: Buffer, usage: number, purpose: number): Buffer => deriveUsageKey(base, usage, purpose as KeyPurpose);
const derivePrfKey = (base: Buffer): Buffer => deriveKey(base, PRF_CONSTANT);
// a one-request key's blocks go through aes-once.ts (its schedule in that ring), not an OpenSSL object in cts.ts's WeakMap
const deriveForUsageOnce = (base: Buffer, usage: number, purpose: number): Buffer => deriveUsageKey(base, usage, purpose as KeyPurpose, true);
const derivePrfKeyOnce = (base: Buffer): Buffer => deriveKey(base, PRF_CONSTANT, true);

function makeProfile(etype: 17 | 18, keyBytes: 16 | 32, checksumType: 15 | 16, name: string): EnctypeProfile {
  const cache = new DerivedKeyCache();
  const recent = new RecentDerivedKeys();
  const checkKey = keyLengthGuard(name, keyBytes);
  /** Ke, Ki or Kc for `usage`: from the cache, or for a transient key (used in one request) from the ring of recent ones. */
  const derived = (key: EncryptionKey, usage: number, purpose: KeyPurpose): Buffer =>
    key.transient ? recent.get(key.value, usage, purpose, deriveForUsageOnce) : cache.get(key, usage, purpose, deriveForUsage);
  const mac = (ki: Buffer, data: Buffer): Buffer => {
    const m = Buffer.allocUnsafe(MAC_BYTES);
    hmacInto('sha1', ki, [data], m, 0, MAC_BYTES);
    return m;
  };

  const profile: EnctypeProfile = {
    etype,
    name,
    keyBytes,
    checksumType,
    checksumBytes: MAC_BYTES,
    prfBytes: BLOCK,
    defaultS2kParams: s2kParams(DEFAULT_ITERATIONS),

    stringToKey(password, salt, s2kparams) {
      const iterations = iterationCount(s2kparams, DEFAULT_ITERATIONS);
      const tkey = pbkdf2Sync(Buffer.from(password), Buffer.from(salt), iterations, keyBytes, 'sha1');
      return { etype, value: deriveKey(tkey, KERBEROS) };
    },

    ...aesKeyFactory(etype, name, keyBytes),

    encrypt(key, usage, plaintext, confounder) {
      checkKey(key);
      if (confounder !== undefined && confounder.length !== BLOCK) throw new KrbCryptoError('a confounder has 16 bytes');
      // confounder | plaintext, zero-padded to whole blocks, MACed, then encrypted in place into the output
      const n = BLOCK + plaintext.length;
      const work = Buffer.allocUnsafe(Math.ceil(n / BLOCK) * BLOCK);
      if (confounder) confounder.copy(work, 0);
      else randomInto(work, 0, BLOCK);
      plaintext.copy(work, BLOCK);
      work.fill(0, n);
      const out = Buffer.allocUnsafe(n + MAC_BYTES);
      const once = key.transient === true;
      const ke = derived(key, usage, KeyPurpose.ENCRYPTION);
      const ki = derived(key, usage, KeyPurpose.INTEGRITY);
      hmacInto('sha1', ki, [work.subarray(0, n)], out, n, MAC_BYTES);
      ctsEncryptPaddedInto(ke, work, n, out, 0, undefined, once);
      return out;
    },

    decrypt(key, usage, ciphertext) {
      checkKey(key);
      if (ciphertext.length < BLOCK + MAC_BYTES) throw new KrbCryptoError(`${name} ciphertext too short`, 'BAD_LENGTH');
      const split = ciphertext.length - MAC_BYTES;
      const once = key.transient === true;
      const ke = derived(key, usage, KeyPurpose.ENCRYPTION);
      const ki = derived(key, usage, KeyPurpose.INTEGRITY);
      const data = ctsDecrypt(ke, ciphertext.subarray(0, split), undefined, once);
      if (!hmacMatches('sha1', ki, [data], ciphertext.subarray(split))) {
        throw new KrbCryptoError('integrity check failed (wrong key or modified data)', 'INTEGRITY');
      }
      return data.subarray(BLOCK);
    },

    checksum(key, usage, data) {
      checkKey(key);
      return mac(derived(key, usage, KeyPurpose.CHECKSUM), data);
    },

    verifyChecksum(key, usage, data, cksum) {
      checkKey(key);
      // a checksum of another length never matches, as comparing it with ours did
      return cksum.length === MAC_BYTES && hmacMatches('sha1', derived(key, usage, KeyPurpose.CHECKSUM), [data], cksum);
    },

    prf(key, data) {
      checkKey(key);
      const once = key.transient === true;
      const prfKey = once ? recent.get(key.value, PRF_SLOT, 0, derivePrfKeyOnce) : cache.get(key, PRF_SLOT, 0, derivePrfKey);
      // the digest as a latin1 string into a Buffer of ours (hmac.ts says why)
      const block = Buffer.allocUnsafe(BLOCK);
      block.write(hash('sha1', data, 'binary'), 0, BLOCK, 'latin1');
      return aesBlock(prfKey, block, once);
    },
  };
  return profile;
}

export const aes128CtsHmacSha1 = makeProfile(17, 16, 15, 'aes128-cts-hmac-sha1-96');
export const aes256CtsHmacSha1 = makeProfile(18, 32, 16, 'aes256-cts-hmac-sha1-96');
