/**
 * n-fold (RFC 3961 §5.1): stretches or folds a byte string to n bits. The
 * input is repeated lcm(n, input length) bits long, each copy rotated 13 bits
 * further right than the one before, and the n-bit chunks are added with
 * one's-complement (end-around carry) addition. Only ever called on short
 * constants, so it works bit by bit for clarity.
 */
import { KrbCryptoError } from './types.js';

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

export function nfold(input: Buffer, outBytes: number): Buffer {
  if (input.length === 0 || !Number.isInteger(outBytes) || outBytes <= 0 || input.length > 1024 || outBytes > 1024) {
    throw new KrbCryptoError('n-fold needs 1..1024 input and output bytes');
  }
  const inBits = input.length * 8;
  const totalBytes = (input.length * outBytes) / gcd(input.length, outBytes);
  // Copy i of the input, rotated right by 13*i bits, fills bytes [i*len, (i+1)*len).
  const stretched = Buffer.alloc(totalBytes);
  for (let bit = 0; bit < totalBytes * 8; bit++) {
    const copy = Math.floor(bit / inBits);
    const from = (((bit % inBits) - 13 * copy) % inBits + inBits) % inBits;
    if (input[from >> 3]! & (0x80 >> (from & 7))) stretched[bit >> 3]! |= 0x80 >> (bit & 7);
  }
  // One's-complement sum of the outBytes-sized chunks, column by column.
  const columns = new Array<number>(outBytes).fill(0);
  for (let off = 0; off < totalBytes; off += outBytes) {
    for (let k = 0; k < outBytes; k++) columns[k]! += stretched[off + k]!;
  }
  const out = Buffer.alloc(outBytes);
  let carry = 0;
  for (let k = outBytes - 1; k >= 0; k--) {
    const v = columns[k]! + carry;
    out[k] = v & 0xff;
    carry = v >>> 8;
  }
  while (carry > 0) {
    for (let k = outBytes - 1; k >= 0 && carry > 0; k--) {
      const v = out[k]! + carry;
      out[k] = v & 0xff;
      carry = v >>> 8;
    }
  }
  return out;
}
