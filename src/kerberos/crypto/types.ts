/** Shared types of the Kerberos crypto profiles (RFC 3961 §3). */
import { timingSafeEqual } from 'node:crypto';
export interface EncryptionKey {
  etype: number;
  value: Buffer;
}

export class KrbCryptoError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KrbCryptoError';
  }
}

export interface EnctypeProfile {
  readonly etype: number;
  readonly name: string;
  readonly keyBytes: number;
  readonly checksumType: number;
  readonly checksumBytes: number;
  readonly defaultS2kParams: Buffer;
  stringToKey(password: string | Buffer, salt: string | Buffer, s2kparams?: Buffer): EncryptionKey;
  randomKey(): EncryptionKey;
  /** `confounder` is for test vectors only */
  encrypt(key: EncryptionKey, usage: number, plaintext: Buffer, confounder?: Buffer): Buffer;
  /** throws KrbCryptoError on a bad length or integrity failure */
  decrypt(key: EncryptionKey, usage: number, ciphertext: Buffer): Buffer;
  checksum(key: EncryptionKey, usage: number, data: Buffer): Buffer;
  verifyChecksum(key: EncryptionKey, usage: number, data: Buffer, cksum: Buffer): boolean;
  prf(key: EncryptionKey, data: Buffer): Buffer;
  /** PRF output length in bytes */
  readonly prfBytes: number;
}

/** A small bounded cache of derived keys per (base key, usage, purpose). */
export class DerivedKeyCache {
  private readonly map = new Map<string, Buffer>();
  constructor(private readonly max = 8192) {}
  get(base: Buffer, usage: number, purpose: number, derive: () => Buffer): Buffer {
    const k = `${base.toString('latin1')}\u0000${usage}\u0000${purpose}`;
    let v = this.map.get(k);
    if (!v) {
      if (this.map.size >= this.max) this.map.clear();
      v = derive();
      this.map.set(k, v);
    }
    return v;
  }
}

export function usageConstant(usage: number, purpose: number): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(usage >>> 0, 0);
  b[4] = purpose;
  return b;
}

export const KC = 0x99;
export const KE = 0xaa;
export const KI = 0x55;

/** Rejects keys of the wrong length for an enctype. */
export function keyLengthGuard(name: string, keyBytes: number): (key: EncryptionKey) => void {
  return (key) => {
    if (key.value.length !== keyBytes) throw new KrbCryptoError(`a ${name} key has ${keyBytes} bytes`);
  };
}

/** Constant-time comparison of a received checksum with a computed one. */
export function checksumMatches(mine: Buffer, received: Buffer): boolean {
  return received.length === mine.length && timingSafeEqual(mine, received);
}
