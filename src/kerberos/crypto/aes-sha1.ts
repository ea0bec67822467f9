/**
 * aes128-cts-hmac-sha1-96 (17) and aes256-cts-hmac-sha1-96 (18), RFC 3962
 * on the simplified profile of RFC 3961 §5.3: string-to-key is
 * DK(PBKDF2-HMAC-SHA1(password, salt, iterations), "kerberos"); encryption is
 * a 16-byte confounder and the plaintext under AES-CTS with Ke, followed by
 * HMAC-SHA1(Ki, confounder|plaintext) truncated to 96 bits.
 */
import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { randomBytesPooled as randomBytes } from './random.js';
import { aesBlock, ctsDecrypt, ctsEncrypt } from './cts.js';
import { nfold } from './nfold.js';
import { checksumMatches, DerivedKeyCache, KC, KE, KI, keyLengthGuard, KrbCryptoError, usageConstant, type EncryptionKey, type EnctypeProfile } from './types.js';

const BLOCK = 16;
const MAC = 12;

/** DR/DK of RFC 3961 §5.1 with AES as E; random-to-key is the identity for AES. */
export function deriveKeyDk(base: Buffer, constant: Buffer): Buffer {
  let block = nfold(constant, BLOCK);
  const out: Buffer[] = [];
  let len = 0;
  while (len < base.length) {
    block = aesBlock(base, block);
    out.push(block);
    len += block.length;
  }
  return Buffer.concat(out).subarray(0, base.length);
}

function iterations(params: Buffer | undefined, dflt: number): number {
  if (!params || params.length === 0) return dflt;
  if (params.length !== 4) throw new KrbCryptoError('invalid s2kparams');
  const n = params.readUInt32BE(0);
  if (n === 0) throw new KrbCryptoError('invalid s2kparams');
  return n;
}

function makeProfile(etype: 17 | 18, keyBytes: 16 | 32, checksumType: 15 | 16, name: string): EnctypeProfile {
  const cache = new DerivedKeyCache();
  const dk = (key: EncryptionKey, usage: number, purpose: number) => cache.get(key.value, usage, purpose, () => deriveKeyDk(key.value, usageConstant(usage, purpose)));
  const checkKey = keyLengthGuard(name, keyBytes);
  const profile: EnctypeProfile = {
    etype,
    name,
    keyBytes,
    checksumType,
    checksumBytes: MAC,
    prfBytes: 16,
    defaultS2kParams: Buffer.from([0, 0, 0x10, 0]),
    stringToKey(password, salt, s2kparams) {
      const iter = iterations(s2kparams, 4096);
      if (iter > 16_000_000) throw new KrbCryptoError('s2kparams iteration count too large');
      const tkey = pbkdf2Sync(Buffer.from(password), Buffer.from(salt), iter, keyBytes, 'sha1');
      return { etype, value: deriveKeyDk(tkey, Buffer.from('kerberos')) };
    },
    randomKey: () => ({ etype, value: randomBytes(keyBytes) }),
    encrypt(key, usage, plaintext, confounder) {
      checkKey(key);
      const conf = confounder ?? randomBytes(BLOCK);
      const p = Buffer.concat([conf, plaintext]);
      const c = ctsEncrypt(dk(key, usage, KE), p);
      const h = createHmac('sha1', dk(key, usage, KI)).update(p).digest().subarray(0, MAC);
      return Buffer.concat([c, h]);
    },
    decrypt(key, usage, ciphertext) {
      checkKey(key);
      if (ciphertext.length < BLOCK + MAC) throw new KrbCryptoError('ciphertext too short');
      const c = ciphertext.subarray(0, ciphertext.length - MAC);
      const mac = ciphertext.subarray(ciphertext.length - MAC);
      const p = ctsDecrypt(dk(key, usage, KE), c);
      const h = createHmac('sha1', dk(key, usage, KI)).update(p).digest().subarray(0, MAC);
      if (!timingSafeEqual(h, mac)) throw new KrbCryptoError('integrity check failed (wrong key or tampered data)');
      return p.subarray(BLOCK);
    },
    checksum(key, usage, data) {
      checkKey(key);
      return createHmac('sha1', dk(key, usage, KC)).update(data).digest().subarray(0, MAC);
    },
    verifyChecksum: (key, usage, data, cksum) => checksumMatches(profile.checksum(key, usage, data), cksum),
    prf(key, data) {
      checkKey(key);
      const tmp = createHash('sha1').update(data).digest().subarray(0, BLOCK);
      const k = cache.get(key.value, -1, 0, () => deriveKeyDk(key.value, Buffer.from('prf')));
      return aesBlock(k, tmp);
    },
  };
  return profile;
}

export const aes128CtsHmacSha1 = makeProfile(17, 16, 15, 'aes128-cts-hmac-sha1-96');
export const aes256CtsHmacSha1 = makeProfile(18, 32, 16, 'aes256-cts-hmac-sha1-96');
