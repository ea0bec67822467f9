/**
 * AES in CBC mode with ciphertext stealing as RFC 3962 §5 uses it (CBC-CS3):
 * zero IV unless given, and the last two ciphertext blocks always swapped,
 * also when the input is a whole number of blocks. Exactly one block is plain
 * CBC. Node has no CTS mode, so it is built on AES-CBC/ECB without padding.
 */
import { createCipheriv, createDecipheriv } from 'node:crypto';
import { KrbCryptoError } from './types.js';

const BLOCK = 16;
const ZERO_IV = Buffer.alloc(BLOCK);

function checkKey(key: Buffer): void {
  if (key.length !== 16 && key.length !== 32) throw new KrbCryptoError('AES keys have 16 or 32 bytes', 'BAD_KEY');
}

function checkLength(n: number): void {
  if (n < BLOCK) throw new KrbCryptoError('AES-CTS needs at least one block', 'BAD_LENGTH');
}

/** Encrypts and returns the cipher state for a following message (the last full CBC block). */
export function ctsEncryptChained(key: Buffer, plaintext: Buffer, iv: Buffer = ZERO_IV): { ciphertext: Buffer; nextIv: Buffer } {
  checkKey(key);
  const n = plaintext.length;
  checkLength(n);
  const blocks = Math.ceil(n / BLOCK);
  const padded = Buffer.alloc(blocks * BLOCK);
  plaintext.copy(padded);
  const c = createCipheriv(`aes-${key.length * 8}-cbc`, key, iv);
  c.setAutoPadding(false);
  const cbc = c.update(padded);
  if (blocks === 1) return { ciphertext: cbc, nextIv: Buffer.from(cbc) };
  const lastLen = n - (blocks - 1) * BLOCK;
  const penultimate = cbc.subarray((blocks - 2) * BLOCK, (blocks - 1) * BLOCK);
  const last = cbc.subarray((blocks - 1) * BLOCK);
  const out = Buffer.allocUnsafe(n);
  cbc.copy(out, 0, 0, (blocks - 2) * BLOCK);
  last.copy(out, (blocks - 2) * BLOCK);
  penultimate.copy(out, (blocks - 1) * BLOCK, 0, lastLen);
  return { ciphertext: out, nextIv: Buffer.from(last) };
}

export function ctsEncrypt(key: Buffer, plaintext: Buffer, iv: Buffer = ZERO_IV): Buffer {
  return ctsEncryptChained(key, plaintext, iv).ciphertext;
}

/**
 * Decrypts with one ECB decipher object (creating an OpenSSL cipher costs
 * about as much as decrypting a short message) and chains CBC here.
 */
export function ctsDecrypt(key: Buffer, ciphertext: Buffer, iv: Buffer = ZERO_IV): Buffer {
  checkKey(key);
  const n = ciphertext.length;
  checkLength(n);
  const d = createDecipheriv(`aes-${key.length * 8}-ecb`, key, null);
  d.setAutoPadding(false);
  if (n === BLOCK) {
    const p = d.update(ciphertext);
    for (let i = 0; i < BLOCK; i++) p[i]! ^= iv[i]!;
    return p;
  }
  const blocks = Math.ceil(n / BLOCK);
  const lastLen = n - (blocks - 1) * BLOCK;
  const headLen = (blocks - 2) * BLOCK;
  // Decrypt C_1..C_{m-2} and the full block sent in position m-1 (CBC's C_m).
  const decrypted = d.update(ciphertext.subarray(0, headLen + BLOCK));
  const dLast = decrypted.subarray(headLen, headLen + BLOCK);
  const partial = ciphertext.subarray(headLen + BLOCK);
  // CBC's C_{m-1} = the stolen partial block completed with the tail of D(C_m).
  const cPenultimate = Buffer.allocUnsafe(BLOCK);
  partial.copy(cPenultimate, 0);
  dLast.copy(cPenultimate, lastLen, lastLen);
  const dPenultimate = d.update(cPenultimate);
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < headLen; i++) out[i] = decrypted[i]! ^ (i < BLOCK ? iv[i]! : ciphertext[i - BLOCK]!);
  for (let j = 0; j < BLOCK; j++) out[headLen + j] = dPenultimate[j]! ^ (headLen > 0 ? ciphertext[headLen - BLOCK + j]! : iv[j]!);
  for (let j = 0; j < lastLen; j++) out[headLen + BLOCK + j] = dLast[j]! ^ partial[j]!;
  return out;
}

/** One AES block (ECB), the E of the PRF in RFC 3962 §4. */
export function aesBlock(key: Buffer, block: Buffer): Buffer {
  checkKey(key);
  const c = createCipheriv(`aes-${key.length * 8}-ecb`, key, null);
  c.setAutoPadding(false);
  return c.update(block);
}
