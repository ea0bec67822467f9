/**
 * aes128-cts-hmac-sha256-128 (19) and aes256-cts-hmac-sha384-192 (20),
 * RFC 8009: KDF-HMAC-SHA2 (SP 800-108 counter mode) for key derivation,
 * string-to-key over PBKDF2-HMAC-SHA2 with salt "etype-name\0salt" and 32768
 * iterations by default, and encrypt-then-MAC over (IV | ciphertext).
 */
import { createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { randomBytesPooled as randomBytes } from './random.js';
import { ctsDecrypt, ctsEncrypt } from './cts.js';
import { checksumMatches, DerivedKeyCache, KC, KE, KI, keyLengthGuard, KrbCryptoError, usageConstant, type EncryptionKey, type EnctypeProfile } from './types.js';

const BLOCK = 16;

/** KDF-HMAC-SHA2(key, label, context, k) of RFC 8009 §3, k in bits. */
export function kdfHmacSha2(hash: 'sha256' | 'sha384', key: Buffer, label: Buffer, context: Buffer, bits: number): Buffer {
  const k = Buffer.alloc(4);
  k.writeUInt32BE(bits);
  const mac = createHmac(hash, key)
    .update(Buffer.from([0, 0, 0, 1]))
    .update(label)
    .update(Buffer.from([0]))
    .update(context)
    .update(k)
    .digest();
  return mac.subarray(0, bits / 8);
}

function makeProfile(etype: 19 | 20, keyBytes: 16 | 32, hash: 'sha256' | 'sha384', macBytes: 16 | 24, checksumType: 19 | 20, name: string): EnctypeProfile {
  const cache = new DerivedKeyCache();
  const kiBits = macBytes * 8;
  const derive = (key: EncryptionKey, usage: number, purpose: number) =>
    cache.get(key.value, usage, purpose, () => kdfHmacSha2(hash, key.value, usageConstant(usage, purpose), Buffer.alloc(0), purpose === KE ? keyBytes * 8 : kiBits));
  const checkKey = keyLengthGuard(name, keyBytes);
  const profile: EnctypeProfile = {
    etype,
    name,
    keyBytes,
    checksumType,
    checksumBytes: macBytes,
    prfBytes: hash === 'sha256' ? 32 : 48,
    defaultS2kParams: Buffer.from([0, 0, 0x80, 0]),
    stringToKey(password, salt, s2kparams) {
      let iter = 32768;
      if (s2kparams && s2kparams.length > 0) {
        if (s2kparams.length !== 4 || s2kparams.readUInt32BE(0) === 0) throw new KrbCryptoError('invalid s2kparams');
        iter = s2kparams.readUInt32BE(0);
      }
      if (iter > 16_000_000) throw new KrbCryptoError('s2kparams iteration count too large');
      const saltp = Buffer.concat([Buffer.from(name), Buffer.from([0]), Buffer.from(salt)]);
      const tkey = pbkdf2Sync(Buffer.from(password), saltp, iter, keyBytes, hash);
      return { etype, value: kdfHmacSha2(hash, tkey, Buffer.from('kerberos'), Buffer.alloc(0), keyBytes * 8) };
    },
    randomKey: () => ({ etype, value: randomBytes(keyBytes) }),
    encrypt(key, usage, plaintext, confounder) {
      checkKey(key);
      const n = confounder ?? randomBytes(BLOCK);
      const c = ctsEncrypt(derive(key, usage, KE), Buffer.concat([n, plaintext]));
      const h = createHmac(hash, derive(key, usage, KI)).update(Buffer.alloc(BLOCK)).update(c).digest().subarray(0, macBytes);
      return Buffer.concat([c, h]);
    },
    decrypt(key, usage, ciphertext) {
      checkKey(key);
      if (ciphertext.length < BLOCK + macBytes) throw new KrbCryptoError('ciphertext too short');
      const c = ciphertext.subarray(0, ciphertext.length - macBytes);
      const mac = ciphertext.subarray(ciphertext.length - macBytes);
      const h = createHmac(hash, derive(key, usage, KI)).update(Buffer.alloc(BLOCK)).update(c).digest().subarray(0, macBytes);
      if (!timingSafeEqual(h, mac)) throw new KrbCryptoError('integrity check failed (wrong key or tampered data)');
      return ctsDecrypt(derive(key, usage, KE), c).subarray(BLOCK);
    },
    checksum(key, usage, data) {
      checkKey(key);
      return createHmac(hash, derive(key, usage, KC)).update(data).digest().subarray(0, macBytes);
    },
    verifyChecksum: (key, usage, data, cksum) => checksumMatches(profile.checksum(key, usage, data), cksum),
    prf(key, data) {
      checkKey(key);
      return kdfHmacSha2(hash, key.value, Buffer.from('prf'), data, hash === 'sha256' ? 256 : 384);
    },
  };
  return profile;
}

export const aes128CtsHmacSha256 = makeProfile(19, 16, 'sha256', 16, 19, 'aes128-cts-hmac-sha256-128');
export const aes256CtsHmacSha384 = makeProfile(20, 32, 'sha384', 24, 20, 'aes256-cts-hmac-sha384-192');
