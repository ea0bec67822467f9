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

function ecbDecrypt(key: Buffer, block: Buffer): Buffer {
  const d = createDecipheriv(algo(key, 'ecb'), key, null);
  d.setAutoPadding(false);
  return Buffer.concat([d.update(block), d.final()]);
}

function cbcDecrypt(key: Buffer, iv: Buffer, data: Buffer): Buffer {
  const d = createDecipheriv(algo(key, 'cbc'), key, iv);
  d.setAutoPadding(false);
  return Buffer.concat([d.update(data), d.final()]);
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

export function ctsDecrypt(key: Buffer, ciphertext: Buffer, iv: Buffer = Buffer.alloc(BLOCK)): Buffer {
  const n = ciphertext.length;
  if (n < BLOCK) throw new RangeError('CTS needs at least one block');
  if (n === BLOCK) return cbcDecrypt(key, iv, ciphertext);
  const blocks = Math.ceil(n / BLOCK);
  const lastLen = n - (blocks - 1) * BLOCK;
  const headLen = (blocks - 2) * BLOCK;
  const head = ciphertext.subarray(0, headLen);
  const swappedFull = ciphertext.subarray(headLen, headLen + BLOCK); // C_n of the CBC run
  const partial = ciphertext.subarray(headLen + BLOCK); // first lastLen bytes of C_{n-1}
  const dn = ecbDecrypt(key, swappedFull); // P_n (zero-padded) XOR C_{n-1}
  const cPrev = Buffer.concat([partial, dn.subarray(lastLen)]);
  const pn = Buffer.alloc(lastLen);
  for (let i = 0; i < lastLen; i++) pn[i] = dn[i]! ^ partial[i]!;
  const prevIv = headLen > 0 ? head.subarray(headLen - BLOCK) : iv;
  const pPrev = cbcDecrypt(key, prevIv, cPrev);
  const pHead = headLen > 0 ? cbcDecrypt(key, iv, head) : Buffer.alloc(0);
  return Buffer.concat([pHead, pPrev, pn]);
}

/** One AES block (ECB), for key derivation. */
export function aesBlock(key: Buffer, block: Buffer): Buffer {
  const c = createCipheriv(algo(key, 'ecb'), key, null);
  c.setAutoPadding(false);
  return Buffer.concat([c.update(block), c.final()]);
}
