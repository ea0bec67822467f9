/**
 * The long fuzz run (docs/fuzzing.md): every target of test/fuzz/targets.ts,
 * or the ones named, gets `--inputs` generated and mutated inputs (default
 * 1,000,000) in a worker thread, one target at a time. The worker shows the
 * input it is decoding in shared memory; one that does not finish within
 * `--watchdog-ms` is a hang, the worker is stopped and the input kept. Per
 * target it reports inputs/s, the slowest input, the heap after a GC before
 * and after the run, and the failures, whose inputs are saved under
 * test/data/fuzz/crashes/ (then the short run replays them).
 *
 *   node --import tsx scripts/fuzz.ts [--inputs N] [--target NAME[,NAME]] [--seed S]
 *        [--heap-growth-mb M] [--watchdog-ms MS]
 *   node --import tsx scripts/fuzz.ts --write-corpus [--force]
 *        (writes test/data/fuzz/<target>/seeds.json for targets without one; --force: for all)
 *
 * Exit status 1 when any target crashed, hung, took over 1 s for an input or
 * grew its heap by more than the bound.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { run, type RunReport } from '../test/fuzz/harness.js';
import { corpus, CORPUS, crashes, CRASHES, targetNamed, targets, type FuzzTarget } from '../test/fuzz/targets.js';

const MAX_SHOWN = 1 << 20;
const BATCH = 100_000;
const WARMUP = 5_000;

interface Job {
  target: string;
  inputs: number;
  seed: number;
  shared: SharedArrayBuffer;
}

interface Outcome {
  report: Omit<RunReport, 'failure'> & { failure?: { message: string; kind: 'crash' | 'hang'; input: string } };
  heapBefore: number;
  heapAfter: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

function heapAfterGc(): number {
  gc!();
  gc!();
  return getHeapStatistics().used_heap_size;
}

async function worker(job: Job): Promise<void> {
  const target = targetNamed(job.target)!;
  const seeds = [...corpus(target), ...crashes(target).map((c) => c.input)];
  const counter = new Int32Array(job.shared, 0, 2);
  const shown = new Uint8Array(job.shared, 8);
  const show = (b: Buffer) => {
    const n = Math.min(b.length, MAX_SHOWN);
    shown.set(b.subarray(0, n));
    Atomics.store(counter, 1, n);
    Atomics.add(counter, 0, 1);
  };
  const total = { inputs: 0, seconds: 0, slowestMs: 0 };
  let failure: Outcome['report']['failure'];
  const add = (r: RunReport) => {
    total.inputs += r.inputs;
    total.seconds += r.seconds;
    total.slowestMs = Math.max(total.slowestMs, r.slowestMs);
    if (r.failure) failure = { message: r.failure.message, kind: r.failure.kind, input: r.failure.input.toString('hex') };
  };
  // a warm-up (JIT, lazily built tables) before the heap is measured
  const warm = Math.min(WARMUP, job.inputs);
  add(await run(target, seeds, warm, job.seed, show));
  const heapBefore = heapAfterGc();
  for (let i = 0; !failure && total.inputs < job.inputs; i++) {
    add(await run(target, seeds, Math.min(BATCH, job.inputs - total.inputs), job.seed + 1 + i, show));
  }
  const heapAfter = heapAfterGc();
  const outcome: Outcome = { report: { target: target.name, seed: job.seed, ...total, ...(failure ? { failure } : {}) }, heapBefore, heapAfter };
  parentPort!.postMessage(outcome);
}

function option(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function saveCrash(target: string, hex: string): string {
  mkdirSync(CRASHES, { recursive: true });
  const file = join(CRASHES, `${target}-${createHash('sha256').update(hex).digest('hex').slice(0, 12)}.hex`);
  writeFileSync(file, `${hex}\n`);
  return file;
}

/** Writes the seeds of targets that have no committed corpus yet (all of them with `force`: some seeds hold random confounders). */
function writeCorpus(force: boolean): void {
  for (const t of targets) {
    const dir = join(CORPUS, t.name);
    if (!force && existsSync(join(dir, 'seeds.json'))) continue;
    mkdirSync(dir, { recursive: true });
    const hex = [...new Set(t.seeds().map((b) => b.toString('hex')))];
    writeFileSync(join(dir, 'seeds.json'), `[\n${hex.map((h) => `  ${JSON.stringify(h)}`).join(',\n')}\n]\n`);
    console.log(`${t.name}: ${hex.length} seeds`);
  }
}

async function fuzzOne(t: FuzzTarget, inputs: number, seed: number, watchdogMs: number): Promise<Outcome> {
  const shared = new SharedArrayBuffer(8 + MAX_SHOWN);
  const counter = new Int32Array(shared, 0, 2);
  // a worker does not inherit the TypeScript loader: it registers tsx's before loading this file
  const boot = `import('tsx/esm/api').then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const w = new Worker(boot, { eval: true, workerData: { target: t.name, inputs, seed, shared } satisfies Job });
  return new Promise<Outcome>((resolve, reject) => {
    let last = -1;
    let since = Date.now();
    const timer = setInterval(() => {
      const now = Atomics.load(counter, 0);
      if (now !== last) {
        last = now;
        since = Date.now();
        return;
      }
      if (Date.now() - since < watchdogMs) return;
      clearInterval(timer);
      const n = Atomics.load(counter, 1);
      const input = Buffer.from(new Uint8Array(shared, 8, n)).toString('hex');
      void w.terminate();
      resolve({
        report: { target: t.name, seed, inputs: now, seconds: 0, slowestMs: Date.now() - since, failure: { kind: 'hang', message: `${t.name}: no answer within ${watchdogMs} ms`, input } },
        heapBefore: 0,
        heapAfter: 0,
      });
    }, 100);
    w.once('message', (m: Outcome) => {
      clearInterval(timer);
      resolve(m);
    });
    w.once('error', (e) => {
      clearInterval(timer);
      reject(e);
    });
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--write-corpus')) {
    writeCorpus(args.includes('--force'));
    return 0;
  }
  if (!gc) {
    // heap figures need a collection first: run again with --expose-gc
    const r = spawnSync(process.execPath, ['--expose-gc', ...process.execArgv, fileURLToPath(import.meta.url), ...args], { stdio: 'inherit' });
    return r.status ?? 1;
  }
  const inputs = Number(option(args, '--inputs') ?? 1_000_000);
  const seed = Number(option(args, '--seed') ?? Math.floor(Math.random() * 2 ** 31));
  const growthMb = Number(option(args, '--heap-growth-mb') ?? 16);
  const watchdogMs = Number(option(args, '--watchdog-ms') ?? 10_000);
  const names = option(args, '--target')?.split(',') ?? targets.map((t) => t.name);
  const chosen = names.map((n) => {
    const t = targetNamed(n);
    if (!t) throw new Error(`no target ${n}; targets: ${targets.map((x) => x.name).join(', ')}`);
    return t;
  });
  console.log(`fuzzing ${chosen.length} target(s), ${inputs} inputs each, seed ${seed}`);
  let failed = 0;
  const mb = (n: number) => (n / 1048576).toFixed(1);
  for (const t of chosen) {
    const o = await fuzzOne(t, inputs, seed, watchdogMs);
    const r = o.report;
    const growth = o.heapAfter - o.heapBefore;
    const problems: string[] = [];
    if (r.failure) problems.push(`${r.failure.kind}: ${r.failure.message.slice(0, 300)} (input saved to ${saveCrash(t.name, r.failure.input)})`);
    if (!r.failure && growth > growthMb * 1048576) problems.push(`heap grew by ${mb(growth)} MB after GC (bound ${growthMb} MB)`);
    const rate = r.seconds > 0 ? Math.round(r.inputs / r.seconds) : 0;
    console.log(
      `${t.name.padEnd(16)} inputs ${String(r.inputs).padStart(8)}  ${String(rate).padStart(6)}/s  ${r.seconds.toFixed(1).padStart(6)} s  slowest ${r.slowestMs.toFixed(1)} ms  heap ${mb(o.heapBefore)} -> ${mb(o.heapAfter)} MB  ${problems.length ? 'FAIL' : 'ok'}`,
    );
    for (const p of problems) console.log(`  ${p}`);
    if (problems.length) failed++;
  }
  console.log(failed ? `${failed} target(s) failed (seed ${seed})` : 'no crashes, no hangs, no heap growth');
  return failed ? 1 : 0;
}

if (isMainThread) {
  main().then(
    (code) => process.exit(code),
    (e: unknown) => {
      console.error(e);
      process.exit(2);
    },
  );
} else {
  await worker(workerData as Job);
}
