/**
 * Shared types of the Kerberos crypto profiles (RFC 3961 §3): keys, the
 * profile interface every enctype implements, and the typed error (a
 * received MAC is compared in hmac.ts, hmacMatches).
 */
import { randomBytesPooled } from './random.js';

export interface EncryptionKey {
  etype: number;
  value: Buffer;
  /** used for one message only (a TGS request's subkey): keys derived from it are not cached */
  transient?: boolean;
}

/** Why a crypto operation failed; stable strings so callers can `switch`. */
export type KrbCryptoErrorCode =
  | 'UNSUPPORTED_ETYPE'
  | 'UNSUPPORTED_CHECKSUM'
  | 'BAD_KEY'
  | 'BAD_LENGTH'
  | 'INTEGRITY'
  | 'BAD_S2K_PARAMS'
  | 'BAD_ARGUMENT';

/** Errors never carry key material or plaintext. */
export class KrbCryptoError extends Error {
  readonly code: KrbCryptoErrorCode;
  constructor(message: string, code: KrbCryptoErrorCode = 'BAD_ARGUMENT') {
    super(message);
    this.name = 'KrbCryptoError';
    this.code = code;
  }
}

export interface EnctypeProfile {
  readonly etype: number;
  /** MIT's name, e.g. 'aes256-cts-hmac-sha1-96' */
  readonly name: string;
  readonly keyBytes: number;
  readonly checksumType: number;
  readonly checksumBytes: number;
  readonly defaultS2kParams: Buffer;
  /** PRF output length in bytes */
  readonly prfBytes: number;
  stringToKey(password: string | Buffer, salt: string | Buffer, s2kparams?: Buffer): EncryptionKey;
  /** random-to-key (RFC 3961 §3): the identity for AES, after a length check */
  randomToKey(random: Buffer): EncryptionKey;
  randomKey(): EncryptionKey;
  /** `confounder` is for test vectors only */
  encrypt(key: EncryptionKey, usage: number, plaintext: Buffer, confounder?: Buffer): Buffer;
  /** throws KrbCryptoError on a bad length or integrity failure */
  decrypt(key: EncryptionKey, usage: number, ciphertext: Buffer): Buffer;
  checksum(key: EncryptionKey, usage: number, data: Buffer): Buffer;
  verifyChecksum(key: EncryptionKey, usage: number, data: Buffer, cksum: Buffer): boolean;
  prf(key: EncryptionKey, data: Buffer): Buffer;
}

/** Rejects keys of the wrong length (or of another enctype's family) before any cipher sees them. */
export function keyLengthGuard(name: string, keyBytes: number): (key: EncryptionKey) => void {
  return (key) => {
    if (!Buffer.isBuffer(key.value) || key.value.length !== keyBytes) throw new KrbCryptoError(`a ${name} key has ${keyBytes} bytes`, 'BAD_KEY');
  };
}

/** s2kparams of the AES profiles: a 4-byte big-endian iteration count (RFC 3962 §4, RFC 8009 §4). */
export function iterationCount(params: Buffer | undefined, dflt: number): number {
  if (!params || params.length === 0) return dflt;
  if (params.length !== 4) throw new KrbCryptoError('s2kparams must be 4 bytes', 'BAD_S2K_PARAMS');
  const n = params.readUInt32BE(0);
  // MIT rejects counts of 2^24 and above (KRB5_ERR_BAD_S2K_PARAMS); the bound also caps CPU time.
  if (n === 0 || n >= MAX_ITERATIONS) throw new KrbCryptoError(`s2kparams iteration count ${n} out of range`, 'BAD_S2K_PARAMS');
  return n;
}

export const MAX_ITERATIONS = 0x1000000;

export function s2kParams(iterations: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(iterations);
  return b;
}

/** AES keys: random-to-key is the identity (RFC 3962 §6, RFC 8009 §5); fresh keys come from the pool. */
export function aesKeyFactory(etype: number, name: string, keyBytes: number): Pick<EnctypeProfile, 'randomToKey' | 'randomKey'> {
  return {
    randomToKey(random) {
      if (random.length !== keyBytes) throw new KrbCryptoError(`${name} random-to-key takes ${keyBytes} bytes`, 'BAD_KEY');
      return { etype, value: Buffer.from(random) };
    },
    randomKey: () => ({ etype, value: randomBytesPooled(keyBytes) }),
  };
}
