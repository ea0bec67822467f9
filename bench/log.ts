/**
 * The cost of one KDC log line (docs/logging.md, README "Design
 * decisions"): the line kdc/kdc-server.ts writes per request (client,
 * server, outcome, etype, pre-authentication, duration), made by the
 * project's logger (src/log/logger.ts, text and JSON lines) and by pino
 * (the logger fastify uses) with its asynchronous destination
 * (`pino.destination({ sync: false })`, sonic-boom), each writing to a
 * file. Ours writes through the server's sink: lines gathered and written
 * once per turn of the event loop (server/start.ts). Requests come as a KDC
 * sees them: a few per turn of the event loop (--per-turn). Printed per
 * logger: CPU µs per line (user + system, the cheapest of --rounds runs,
 * everything written out included) and the bytes per line.
 * pino is not a dependency of dirid: install it beside the checkout
 * (`npm install --no-save pino`) to measure it; without it only ours runs.
 *   node --import tsx bench/log.ts [--lines N] [--per-turn N] [--rounds N]
 */
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createLogger, type Fields, type Logger } from '../src/log/logger.js';
import { lineSink } from '../src/log/sink.js';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '200000' }, 'per-turn': { type: 'string', default: '8' }, rounds: { type: 'string', default: '5' } } });
const N = Number(values.lines);
const PER_TURN = Number(values['per-turn']);
const ROUNDS = Number(values.rounds);
const tmp = mkdtempSync(join(tmpdir(), 'bench-log-'));

/** A KDC request's fields, varied a little as real ones are. */
function kdcFields(i: number): Fields {
  return {
    transport: 'udp',
    client: `user${i % 1000}@BENCH.TEST`,
    server: i % 2 ? 'krbtgt/BENCH.TEST@BENCH.TEST' : 'HTTP/www.bench.test@BENCH.TEST',
    outcome: 'ISSUE',
    etype: 18,
    preauth: i % 2 ? 'encrypted-timestamp' : undefined,
    duration_ms: Math.round((0.2 + (i % 97) / 100) * 100) / 100,
  };
}

interface Candidate {
  name: string;
  /** a logger writing to `file`, and how to wait until all is written */
  open(file: string): Promise<{ log: Logger; close(): Promise<void> }>;
}

const turn = () => new Promise<void>((r) => setImmediate(r));

/** A file sink as the server's: one write per turn of the event loop. */
function fileSink(file: string): { write(line: string): void; close(): Promise<void> } {
  const fd = openSync(file, 'w');
  const sink = lineSink((text) => writeSync(fd, text));
  return {
    write: sink.write,
    async close() {
      sink.flush();
      closeSync(fd);
    },
  };
}

const ours = (format: 'text' | 'json'): Candidate => ({
  name: `dirid ${format}`,
  async open(file) {
    const sink = fileSink(file);
    return { log: createLogger({ write: sink.write, format, component: 'server' }).child({ component: 'kdc' }), close: sink.close };
  },
});

/** What this bench uses of pino (not a dependency: typed here, loaded only when installed). */
interface PinoChild {
  child(f: object): PinoChild;
  info(o: object): void;
  warn(o: object): void;
  error(o: object): void;
}
interface PinoDestination {
  once(event: string, f: () => void): void;
  flushSync(): void;
  end(): void;
}
interface Pino {
  (options: object, dest: PinoDestination): PinoChild;
  destination(o: { dest: string; sync: boolean }): PinoDestination;
  stdTimeFunctions: { isoTime: () => string };
}

async function pinoCandidate(): Promise<Candidate | null> {
  let pino: Pino;
  try {
    const name = 'pino';
    pino = ((await import(name)) as { default: Pino }).default;
  } catch {
    return null;
  }
  return {
    name: 'pino (async)',
    async open(file) {
      const dest = pino.destination({ dest: file, sync: false });
      await new Promise<void>((r) => dest.once('ready', r));
      const root = pino({ base: undefined, timestamp: pino.stdTimeFunctions.isoTime, formatters: { level: (label: string) => ({ level: label }) } }, dest);
      // the Logger interface over pino: the event is a field, as in our JSON lines
      const wrap = (p: PinoChild): Logger => ({
        child: (f) => wrap(p.child(f)),
        info: (event, f) => p.info({ event, ...f }),
        warn: (event, f) => p.warn({ event, ...f }),
        error: (event, f) => p.error({ event, ...f }),
      });
      return {
        log: wrap(root.child({ component: 'kdc' })),
        close: () =>
          new Promise<void>((r) => {
            dest.flushSync();
            dest.end();
            dest.once('close', () => r());
          }),
      };
    },
  };
}

async function measure(c: Candidate, writes = true): Promise<{ cpu: number; bytes: number }> {
  let best = Infinity;
  let bytes = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const file = join(tmp, `${c.name.replace(/\W+/g, '-')}-${r}.log`);
    const { log, close } = await c.open(file);
    const fields = Array.from({ length: 1000 }, (_, i) => kdcFields(i));
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) {
      log.info('as_req', fields[i % 1000]);
      if (i % PER_TURN === PER_TURN - 1) await turn();
    }
    await close();
    const u = process.cpuUsage(c0);
    best = Math.min(best, (u.user + u.system) / N);
    if (writes) {
      bytes = statSync(file).size / N;
      rmSync(file);
    }
  }
  return { cpu: best, bytes };
}

const quiet: Logger = { child: () => quiet, info() {}, warn() {}, error() {} };
// the loop alone: what making the fields and the turns of the event loop cost without a logger
const base = await measure({ name: 'no logger', open: async () => ({ log: quiet, close: async () => {} }) }, false);
const candidates = [ours('text'), ours('json'), ...[await pinoCandidate()].filter((c): c is Candidate => c !== null)];
console.log(`${N} lines, ${PER_TURN} per turn of the event loop; CPU per line in the cheapest of ${ROUNDS} runs, less ${base.cpu.toFixed(2)} µs of the loop alone`);
for (const c of candidates) {
  const m = await measure(c);
  console.log(`${c.name.padEnd(14)} ${(m.cpu - base.cpu).toFixed(2).padStart(6)} µs per line, ${m.bytes.toFixed(0)} bytes per line`);
}
if (candidates.length === 2) console.log('pino: not installed (npm install --no-save pino)');
rmSync(tmp, { recursive: true, force: true });
