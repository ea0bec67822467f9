/**
 * A small deterministic generator (xorshift32) for tests and benchmarks, so
 * that a run can be replayed from its seed: `prng(seed)(n)` is an integer in
 * [0, n).
 */
export function prng(seed: number): (n: number) => number {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}
