/**
 * n-fold (RFC 3961 §5.1): stretches or folds a string to n bits by
 * concatenating 13-bit right rotations and adding n-bit chunks with
 * one's-complement (end-around carry) addition.
 */
export function nfold(input: Buffer, outBytes: number): Buffer {
  const inBytes = input.length;
  const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));
  const lcm = (inBytes * outBytes) / gcd(inBytes, outBytes);
  const inBits = BigInt(inBytes * 8);
  const mask = (1n << inBits) - 1n;
  const x = BigInt('0x' + (input.toString('hex') || '0'));
  const rotr = (v: bigint, r: bigint) => {
    const s = r % inBits;
    return ((v >> s) | (v << (inBits - s))) & mask;
  };
  const big = Buffer.alloc(lcm);
  for (let i = 0; i < lcm / inBytes; i++) {
    const rotated = rotr(x, BigInt(13 * i));
    Buffer.from(rotated.toString(16).padStart(inBytes * 2, '0'), 'hex').copy(big, i * inBytes);
  }
  const outBits = BigInt(outBytes * 8);
  const outMask = (1n << outBits) - 1n;
  let sum = 0n;
  for (let off = 0; off < lcm; off += outBytes) sum += BigInt('0x' + big.subarray(off, off + outBytes).toString('hex'));
  while (sum >> outBits) sum = (sum & outMask) + (sum >> outBits);
  return Buffer.from(sum.toString(16).padStart(outBytes * 2, '0'), 'hex');
}
