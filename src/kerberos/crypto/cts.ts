/**
 * AES in CBC mode with ciphertext stealing as RFC 3962 §5 uses it: zero IV
 * by default, and the last two blocks always swapped (also when the input is
 * a multiple of the block size). A single block is plain AES. Node has no
 * CTS mode, so it is built on AES-CBC/ECB without padding.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';

const BLOCK = 16;

function algo(key: Buffer, mode: 'cbc' | 'ecb'): string {
  return `aes-${key.length * 8}-${mode}`;
}

function cbcEncrypt(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const c = createCipheriv(algo(key, 'cbc'), key, iv);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(data), c.final()]);
}

export function ctsEncrypt(key: Buffer, plaintext: Buffer, iv: Buffer = Buffer.alloc(BLOCK)): Buffer {
  const n = plaintext.length;
  if (n < BLOCK) throw new RangeError('CTS needs at least one block');
  if (n === BLOCK) return cbcEncrypt(key, iv, plaintext);
  const padded = Buffer.alloc(Math.ceil(n / BLOCK) * BLOCK);
  plaintext.copy(padded);
  const c = cbcEncrypt(key, iv, padded);
  const blocks = c.length / BLOCK;
  const lastLen = n - (blocks - 1) * BLOCK;
  const head = c.subarray(0, (blocks - 2) * BLOCK);
  const penult = c.subarray((blocks - 2) * BLOCK, (blocks - 1) * BLOCK);
  const last = c.subarray((blocks - 1) * BLOCK);
  return Buffer.concat([head, last, penult.subarray(0, lastLen)]);
}

/**
 * Decrypts with one ECB decipher object (each OpenSSL cipher object costs
 * about as much as the decryption itself) and does the CBC chaining here.
 */
export function ctsDecrypt(key: Buffer, ciphertext: Buffer, iv: Buffer = Buffer.alloc(BLOCK)): Buffer {
  const n = ciphertext.length;
  if (n < BLOCK) throw new RangeError('CTS needs at least one block');
  const d = createDecipheriv(algo(key, 'ecb'), key, null);
  d.setAutoPadding(false);
  if (n === BLOCK) {
    const p = d.update(ciphertext);
    for (let i = 0; i < BLOCK; i++) p[i] = p[i]! ^ iv[i]!;
    return p;
  }
  const blocks = Math.ceil(n / BLOCK);
  const lastLen = n - (blocks - 1) * BLOCK;
  const headLen = (blocks - 2) * BLOCK;
  // D(C_1..C_{n-2}) and D(C_n) (the full block sent before the partial one)
  const first = d.update(ciphertext.subarray(0, headLen + BLOCK));
  const dn = first.subarray(headLen, headLen + BLOCK);
  const partial = ciphertext.subarray(headLen + BLOCK);
  // C_{n-1} = the partial block completed with the tail of D(C_n)
  const cPrev = Buffer.allocUnsafe(BLOCK);
  partial.copy(cPrev, 0);
  dn.copy(cPrev, lastLen, lastLen);
  const dPrev = d.update(cPrev);
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < headLen; i++) out[i] = first[i]! ^ (i < BLOCK ? iv[i]! : ciphertext[i - BLOCK]!);
  for (let j = 0; j < BLOCK; j++) out[headLen + j] = dPrev[j]! ^ (headLen > 0 ? ciphertext[headLen - BLOCK + j]! : iv[j]!);
  for (let j = 0; j < lastLen; j++) out[headLen + BLOCK + j] = dn[j]! ^ partial[j]!;
  return out;
}

/** One AES block (ECB), for key derivation. */
export function aesBlock(key: Buffer, block: Buffer): Buffer {
  const c = createCipheriv(algo(key, 'ecb'), key, null);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(block), c.final()]);
}
