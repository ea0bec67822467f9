/**
 * The fuzzing harness shared by the short run in the test suite
 * (decoders.test.ts) and the long one (scripts/fuzz.ts): the input
 * generators on top of fast-check (random bytes, and seeds mutated by byte
 * flips, interesting values, truncations, insertions of random bytes or of
 * the target's dictionary tokens, deletions, duplications, length-field
 * tweaks and splices of two seeds; for DER and BER formats, whole elements
 * swapped for elements of any seed, dropped or repeated, lengths kept
 * right) and the verdict on one input: the
 * decoder returns or throws one of its expected error classes, within the
 * time limit. docs/fuzzing.md describes what counts as a failure.
 */
import fc from 'fast-check';
import { performance } from 'node:perf_hooks';
import { parseDer, type DerNode } from '../../src/kerberos/asn1/der.js';
import type { FuzzTarget } from './targets.js';

/** An input that takes longer than this to decode is a hang. */
export const HANG_MS = 1000;

/** What went wrong with one input. */
export class FuzzFailure extends Error {
  constructor(
    message: string,
    readonly target: string,
    readonly input: Buffer,
    readonly kind: 'crash' | 'hang',
    /** how long the input took, for a slow one */
    readonly ms = 0,
  ) {
    super(message);
    this.name = 'FuzzFailure';
  }
}

const INTERESTING = [0x00, 0x01, 0x7f, 0x80, 0x81, 0x82, 0x84, 0x88, 0xfe, 0xff, 0x30, 0xa0, 0x1f, 0x05];

type Mutation =
  | { op: 'flip'; at: number; bit: number }
  | { op: 'set'; at: number; value: number }
  | { op: 'truncate'; at: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'token'; at: number; token: number }
  | { op: 'delete'; at: number; n: number }
  | { op: 'duplicate'; at: number; n: number }
  | { op: 'length'; at: number; delta: number }
  | { op: 'splice'; at: number; other: number; from: number; n: number };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ op: fc.constant('flip' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ op: fc.constant('set' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(...INTERESTING), fc.integer({ min: 0, max: 255 })) }),
  fc.record({ op: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ minLength: 1, maxLength: 8 }) }),
  fc.record({ op: fc.constant('token' as const), at: fc.nat(), token: fc.nat() }),
  fc.record({ op: fc.constant('delete' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 16 }) }),
  fc.record({ op: fc.constant('duplicate' as const), at: fc.nat(), n: fc.integer({ min: 1, max: 32 }) }),
  fc.record({ op: fc.constant('length' as const), at: fc.nat(), delta: fc.constantFrom(-2, -1, 1, 2, 0x7f, 0x80, -0x80) }),
  fc.record({ op: fc.constant('splice' as const), at: fc.nat(), other: fc.nat(), from: fc.nat(), n: fc.integer({ min: 1, max: 64 }) }),
);

function apply(seed: Buffer, muts: readonly Mutation[], seeds: readonly Buffer[], dictionary: readonly Buffer[]): Buffer {
  let b = Buffer.from(seed);
  for (const m of muts) {
    const at = b.length === 0 ? 0 : m.at % (b.length + 1);
    const idx = b.length === 0 ? -1 : m.at % b.length;
    switch (m.op) {
      case 'flip':
        if (idx >= 0) b[idx]! ^= 1 << m.bit;
        break;
      case 'set':
        if (idx >= 0) b[idx] = m.value;
        break;
      case 'truncate':
        b = b.subarray(0, at);
        break;
      case 'insert':
        b = Buffer.concat([b.subarray(0, at), m.bytes, b.subarray(at)]);
        break;
      case 'token':
        if (dictionary.length) b = Buffer.concat([b.subarray(0, at), dictionary[m.token % dictionary.length]!, b.subarray(at)]);
        break;
      case 'delete':
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + m.n)]);
        break;
      case 'duplicate':
        b = Buffer.concat([b.subarray(0, at + m.n), b.subarray(at)]);
        break;
      case 'length':
        // a byte read as a length (or the last byte of one): off by a little, or into the long form
        if (idx >= 0) b[idx] = (b[idx]! + m.delta + 256) % 256;
        break;
      case 'splice': {
        const other = seeds[m.other % seeds.length]!;
        const from = other.length === 0 ? 0 : m.from % other.length;
        b = Buffer.concat([b.subarray(0, at), other.subarray(from, from + m.n), b.subarray(at)]);
        break;
      }
    }
  }
  return b;
}

// ---- structure-aware mutations for DER and BER targets ----

type TreeMutation = { op: 'replace' | 'drop' | 'repeat'; at: number; donor: number };

const treeMutationArb: fc.Arbitrary<TreeMutation> = fc.record({ op: fc.constantFrom('replace' as const, 'drop' as const, 'repeat' as const), at: fc.nat(), donor: fc.nat() });

function tryParse(b: Buffer): DerNode | undefined {
  try {
    return parseDer(b);
  } catch {
    return undefined;
  }
}

function preorder(n: DerNode, out: DerNode[] = []): DerNode[] {
  out.push(n);
  for (const c of n.children) preorder(c, out);
  return out;
}

/** The identifier octets of an element as received. */
function identifier(raw: Buffer): Buffer {
  let n = 1;
  if ((raw[0]! & 0x1f) === 0x1f) {
    while (n < raw.length && raw[n]! & 0x80) n++;
    n++;
  }
  return raw.subarray(0, n);
}

function lengthOctets(len: number): Buffer {
  if (len < 0x80) return Buffer.from([len]);
  const octets: number[] = [];
  for (let l = len; l > 0; l = Math.floor(l / 256)) octets.unshift(l & 0xff);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** The element re-encoded with `target` replaced by `by` (a list of elements: none drops it, two repeat it); lengths recomputed. */
function rewrite(n: DerNode, target: DerNode, by: Buffer[]): Buffer[] {
  if (n === target) return by;
  if (!n.constructed || n.children.length === 0) return [n.raw];
  const content = Buffer.concat(n.children.flatMap((c) => rewrite(c, target, by)));
  return [Buffer.concat([identifier(n.raw), lengthOctets(content.length), content])];
}

/** Swaps, drops or repeats whole elements of a DER/BER input, taking replacements from every element of every seed. */
function applyTree(seed: Buffer, muts: readonly TreeMutation[], donors: readonly Buffer[]): Buffer {
  let b = seed;
  for (const m of muts) {
    const root = tryParse(b);
    if (!root) break;
    const nodes = preorder(root);
    const target = nodes[m.at % nodes.length]!;
    const by = m.op === 'drop' ? [] : m.op === 'repeat' ? [target.raw, target.raw] : donors.length ? [donors[m.donor % donors.length]!] : [target.raw];
    b = Buffer.concat(rewrite(root, target, by));
  }
  return b;
}

/** Inputs for one target: a few random byte strings, mostly mutated seeds, and the seeds themselves. */
export function inputs(target: FuzzTarget, seeds: readonly Buffer[]): fc.Arbitrary<Buffer> {
  const dictionary = target.dictionary ?? [];
  const random = fc.uint8Array({ maxLength: target.maxRandomLength ?? 256 }).map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength));
  if (seeds.length === 0) return random;
  const arbs: Array<fc.WeightedArbitrary<Buffer>> = [{ arbitrary: random, weight: 2 }, { arbitrary: fc.constantFrom(...seeds), weight: 1 }];
  const mutated = fc
    .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(mutationArb, { minLength: 1, maxLength: 6 }))
    .map(([i, muts]) => apply(seeds[i]!, muts, seeds, dictionary));
  arbs.push({ arbitrary: mutated, weight: 12 });
  if (target.tree) {
    // every element of every seed that parses, as replacements
    const donors = [...new Set(seeds.flatMap((s) => { const r = tryParse(s); return r ? preorder(r).map((n) => n.raw.toString('hex')) : []; }))].map((h) => Buffer.from(h, 'hex'));
    const treeMutated = fc
      .tuple(fc.nat({ max: seeds.length - 1 }), fc.array(treeMutationArb, { minLength: 1, maxLength: 3 }), fc.array(mutationArb, { maxLength: 2 }))
      .map(([i, tree, muts]) => apply(applyTree(seeds[i]!, tree, donors), muts, seeds, dictionary));
    arbs.push({ arbitrary: treeMutated, weight: 10 });
  }
  if (target.generated) arbs.push({ arbitrary: target.generated, weight: 4 });
  return fc.oneof(...arbs);
}

/** Whether `e` is one of the errors the target is allowed to throw. */
export function expectedError(target: FuzzTarget, e: unknown): boolean {
  return target.expected.some((cls) => e instanceof cls);
}

/** The time one input took (ms); throws FuzzFailure on a crash or a hang. */
export async function check(target: FuzzTarget, input: Buffer): Promise<number> {
  const t0 = performance.now();
  try {
    const r = target.decode(input);
    if (target.async) await r;
  } catch (e) {
    refuseUnexpected(target, input, e);
  }
  return timed(target, input, t0);
}

/** The synchronous form of check, for targets that are not async (no promise per input). */
export function checkSync(target: FuzzTarget, input: Buffer): number {
  const t0 = performance.now();
  try {
    target.decode(input);
  } catch (e) {
    refuseUnexpected(target, input, e);
  }
  return timed(target, input, t0);
}

/** A crash unless `e` is one of the errors the target may throw. */
function refuseUnexpected(target: FuzzTarget, input: Buffer, e: unknown): void {
  if (expectedError(target, e)) return;
  const what = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  throw new FuzzFailure(`${target.name}: unexpected ${what} for ${input.toString('hex').slice(0, 400)}`, target.name, input, 'crash');
}

/** The milliseconds since `t0`; a hang past HANG_MS. */
function timed(target: FuzzTarget, input: Buffer, t0: number): number {
  const ms = performance.now() - t0;
  if (ms > HANG_MS) throw new FuzzFailure(`${target.name}: ${ms.toFixed(0)} ms for one input of ${input.length} bytes`, target.name, input, 'hang', ms);
  return ms;
}

export interface RunReport {
  target: string;
  inputs: number;
  seconds: number;
  slowestMs: number;
  failure?: FuzzFailure;
  seed: number;
}

/**
 * Runs `numRuns` inputs through one target with fast-check (shrinking a
 * failing input to a small one: for a slow input each step runs it again,
 * so that takes a while); `onInput` sees each input before it is
 * decoded (the long run's watchdog keeps it).
 */
export async function run(target: FuzzTarget, seeds: readonly Buffer[], numRuns: number, seed: number, onInput?: (b: Buffer) => void): Promise<RunReport> {
  let slowest = 0;
  let count = 0;
  const t0 = performance.now();
  const arb = inputs(target, seeds);
  const details = target.async
    ? await fc.check(
        fc.asyncProperty(arb, async (b) => {
          count++;
          onInput?.(b);
          slowest = Math.max(slowest, await check(target, b));
        }),
        { numRuns, seed },
      )
    : fc.check(
        fc.property(arb, (b) => {
          count++;
          onInput?.(b);
          slowest = Math.max(slowest, checkSync(target, b));
        }),
        { numRuns, seed },
      );
  const seconds = (performance.now() - t0) / 1000;
  const report: RunReport = { target: target.name, inputs: Math.min(count, numRuns), seconds, slowestMs: slowest, seed };
  if (details.failed) {
    const err = details.errorInstance;
    const input = details.counterexample?.[0] as Buffer | undefined;
    report.failure =
      err instanceof FuzzFailure ? err : new FuzzFailure(`${target.name}: ${String(err)}`, target.name, input ?? Buffer.alloc(0), 'crash');
    report.slowestMs = Math.max(report.slowestMs, report.failure.ms);
  }
  return report;
}
