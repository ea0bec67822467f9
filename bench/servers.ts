/**
 * Servers benchmark: one realm's throughput on (a) one server with its
 * store in SQLite, (b) one server with its store in PostgreSQL and (c) two
 * servers on one PostgreSQL database with the load split evenly between
 * them (docs/servers.md), under three workloads: RPC reads (`user_show` of
 * one of the bench's users), RPC writes (`user_mod` setting a user's mail)
 * and KDC AS exchanges with a password (PA-ENC-TIMESTAMP, etype 18). RPC
 * calls are JSON-RPC over keep-alive HTTPS with a session cookie, from
 * --concurrency chains each with one call outstanding; AS-REQs come from
 * --kdc-concurrency UDP sockets (test/support/kdc-load.ts, as in
 * bench/kdc.ts). (a) is the reference: the ratios are to it.
 *
 * Each server is a child process (test/support/dirid-server.ts) with a
 * realm of its own ((c)'s second server is prepared from its first), all
 * on core 0; this generator and PostgreSQL share core 1 (taskset, where
 * present), so dirid has one core in every configuration and (c) measures
 * two servers sharing it. PostgreSQL is a throw-away cluster started here
 * (test/support/postgres.ts) with fsync and synchronous commit on, since
 * SQLite commits with synchronous=FULL. Every run is preceded by a 1 s
 * warm-up of the same workload; the configurations alternate within each
 * round and the medians of the rounds are compared. For each run it reads
 * the CPU time of every server and of every PostgreSQL process from /proc
 * and counts the statements each server sent to PostgreSQL, and prints
 * them per request, so the reader can see where the time goes.
 *   node --import tsx bench/servers.ts [--seconds N] [--rounds N] [--concurrency N]
 *                                      [--kdc-concurrency N] [--users N] [--keep]
 * --keep leaves the scratch directory (the servers' logs) in place.
 */
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createDatabase, postgresBin, startPostgres, stopPostgres, type PgCluster } from '../test/support/postgres.js';
import { RpcSession, testHosts } from '../test/support/rpc-client.js';
import { asPasswordMaker, udpLoad, type Maker } from '../test/support/kdc-load.js';
import type { ServerJob, ServerReport } from '../test/support/dirid-server.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '16' },
    'kdc-concurrency': { type: 'string', default: '32' },
    users: { type: 'string', default: '200' },
    keep: { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const ROUNDS = Number(values.rounds);
const CONC = Number(values.concurrency);
const KDC_CONC = Number(values['kdc-concurrency']);
const USERS = Number(values.users);
const WARMUP_SECONDS = 1;
const REALM = 'BENCH.TEST';
const DOMAIN = 'bench.test';
const ADMIN_PASSWORD = 'Admin-pass-42';
const PASSWORD = 'Bench-password-1';
const ETYPE = 18;

const hasTaskset = spawnSync('taskset', ['-p', String(process.pid)]).status === 0;
const pin = (pid: number, core: number) => hasTaskset && spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
const SERVER_CORE = 0;
const LOAD_CORE = 1;
pin(process.pid, LOAD_CORE);

// ---- CPU from /proc ------------------------------------------------------------
const TICK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** The fields of /proc/PID/stat after the command name (state is [0], ppid [1], utime [11], stime [12], cutime [13], cstime [14]). */
function statOf(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
/** utime + stime of a process (all its threads), in ms. */
function cpuOf(pid: number): number {
  const f = statOf(pid);
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / TICK : NaN;
}
/** The postmaster's pid and those of its children (backends, background workers). */
function postgresPids(cluster: PgCluster): { postmaster: number; children: number[] } {
  const postmaster = Number(readFileSync(join(cluster.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => statOf(pid)?.[1] === String(postmaster));
  return { postmaster, children };
}
/** The cluster's CPU so far in ms: the postmaster's own and its reaped children's, plus the live children's. */
function postgresCpu(cluster: PgCluster): number {
  const { postmaster, children } = postgresPids(cluster);
  const f = statOf(postmaster)!;
  const own = ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / TICK;
  return own + children.reduce((sum, pid) => sum + (cpuOf(pid) || 0), 0);
}
/** Busy and total time of each core so far (all processes: other load on the machine shows as busy time none of ours took). */
function coreTimes(): Array<{ busy: number; total: number }> {
  return readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu\d+ /.test(l))
    .map((l) => {
      const f = l.split(/\s+/).slice(1, 9).map(Number);
      const total = f.reduce((a, b) => a + b, 0);
      return { busy: total - f[3]! - f[4]!, total };
    });
}
const generatorCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// ---- servers -------------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'bench-servers-'));
interface Server {
  child: ChildProcess;
  hostname: string;
  httpsPort: number;
  kdcPort: number;
  session: RpcSession;
}
const children: ChildProcess[] = [];

async function startChild(job: ServerJob, ca: () => string): Promise<Server> {
  const child = fork(new URL('../test/support/dirid-server.ts', import.meta.url).pathname, [JSON.stringify(job)], {
    execArgv: process.execArgv,
    stdio: ['ignore', openSync(`${job.dataDir}.log`, 'w'), 'inherit', 'ipc'],
  });
  children.push(child);
  const r = await new Promise<ServerReport>((resolve) => {
    child.once('message', (m) => resolve(m as ServerReport));
    child.once('exit', (code) => resolve({ type: 'error', message: `exited with code ${code} before reporting` }));
  });
  if (r.type !== 'ready') throw new Error(`${job.hostname}: ${r.type === 'error' ? r.message : r.type}`);
  pin(child.pid!, SERVER_CORE);
  testHosts.set(job.hostname, '127.0.0.1');
  const session = new RpcSession(`https://${job.hostname}:${r.httpsPort}`, ca());
  const login = await session.login('admin', ADMIN_PASSWORD);
  if (login.status !== 200) throw new Error(`${job.hostname}: login failed (${login.status}): ${login.body}`);
  return { child, hostname: job.hostname, httpsPort: r.httpsPort, kdcPort: r.kdcPort, session };
}

/** The statements a server has sent to PostgreSQL so far. */
function statementsOf(s: Server): Promise<number> {
  return new Promise((resolve) => {
    const on = (m: ServerReport) => {
      if (m.type !== 'count') return;
      s.child.off('message', on);
      resolve(m.statements);
    };
    s.child.on('message', on);
    s.child.send({ type: 'count' });
  });
}

async function cleanup(): Promise<void> {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    const gone = once(c, 'exit');
    c.kill('SIGTERM');
    await gone;
  }
  stopPostgres();
  testHosts.clear();
  if (!values.keep) rmSync(tmp, { recursive: true, force: true });
}

/** Runs `n` calls of `op`, `conc` at a time. */
async function parallel(n: number, conc: number, op: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: conc }, async () => {
    while (next < n) await op(next++);
  }));
}

interface Config {
  name: string;
  servers: Server[];
  /** the cluster when the store is in PostgreSQL */
  pg?: PgCluster;
}

// ---- load ----------------------------------------------------------------------
interface Run {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  /** CPU ms per answered request: each server's, PostgreSQL's, the generator's */
  serverMs: number[];
  pgMs: number;
  genMs: number;
  /** CPU over the run, percent of one core */
  serverPct: number;
  pgPct: number;
  genPct: number;
  /** how busy each core was over the run, by any process */
  corePct: number[];
  statements: number;
}
interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  firstError?: string;
  /** requests answered, also after the end of the run (the CPU they took is counted) */
  count: number;
}

/** `conc` chains of calls split over the sessions (chain i on sessions[i % n]), each starting its next call when its last is answered. */
async function rpcLoad(sessions: RpcSession[], seconds: number, op: (s: RpcSession, k: number) => Promise<unknown>): Promise<Load> {
  const lat: number[] = [];
  let count = 0;
  let errors = 0;
  let firstError: string | undefined;
  let k = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONC }, async (_, i) => {
      const s = sessions[i % sessions.length]!;
      while (performance.now() < end) {
        const t0 = performance.now();
        try {
          await op(s, k++);
          count++;
          const t = performance.now();
          if (t <= end) lat.push(t - t0);
        } catch (e) {
          errors++;
          firstError ??= (e as Error).message;
        }
      }
    }),
  );
  lat.sort((a, b) => a - b);
  return { rps: lat.length / seconds, p50: lat[Math.floor(lat.length * 0.5)] ?? NaN, p99: lat[Math.floor(lat.length * 0.99)] ?? NaN, errors, ...(firstError ? { firstError } : {}), count };
}

const asMaker: Maker = asPasswordMaker('bench', REALM, PASSWORD, ETYPE);
const kdcRun = udpLoad({ seconds: SECONDS, concurrency: KDC_CONC, prepared: 5_000 * SECONDS });
const kdcWarm = udpLoad({ seconds: WARMUP_SECONDS, concurrency: KDC_CONC, prepared: 5_000 * WARMUP_SECONDS });

interface Workload {
  name: string;
  run(cfg: Config, warmup: boolean): Promise<Load>;
}
const userOf = (k: number) => `u${k % USERS}`;
let writes = 0;
const workloads: Workload[] = [
  { name: 'user_show (RPC read)', run: (cfg, w) => rpcLoad(cfg.servers.map((s) => s.session), w ? WARMUP_SECONDS : SECONDS, (s, k) => s.call('user_show', [userOf(k)])) },
  { name: 'user_mod (RPC write)', run: (cfg, w) => rpcLoad(cfg.servers.map((s) => s.session), w ? WARMUP_SECONDS : SECONDS, (s, k) => s.call('user_mod', [userOf(k)], { email: [`${userOf(k)}.${++writes}@${DOMAIN}`] })) },
  { name: 'AS-REQ (KDC, password)', run: (cfg, w) => (w ? kdcWarm : kdcRun)(cfg.servers.map((s) => s.kdcPort), asMaker) },
];

/** One run of a workload on a configuration, with the CPU and the statements it took. */
async function measure(cfg: Config, wl: Workload): Promise<Run> {
  const count = async () => (cfg.pg ? (await Promise.all(cfg.servers.map(statementsOf))).reduce((a, b) => a + b, 0) : 0);
  const s0 = await count();
  const server0 = cfg.servers.map((s) => cpuOf(s.child.pid!));
  const pg0 = postgresCpu(pgCluster);
  const gen0 = generatorCpu();
  const cores0 = coreTimes();
  const t0 = performance.now();
  const load = await wl.run(cfg, false);
  const wall = performance.now() - t0;
  const gen = generatorCpu() - gen0;
  const corePct = coreTimes().map((c, i) => (100 * (c.busy - cores0[i]!.busy)) / Math.max(1, c.total - cores0[i]!.total));
  const pg = postgresCpu(pgCluster) - pg0;
  const server = cfg.servers.map((s, i) => cpuOf(s.child.pid!) - server0[i]!);
  const statements = (await count()) - s0;
  const n = Math.max(1, load.count);
  return {
    rps: load.rps,
    p50: load.p50,
    p99: load.p99,
    errors: load.errors,
    ...(load.firstError ? { firstError: load.firstError } : {}),
    serverMs: server.map((ms) => ms / n),
    pgMs: pg / n,
    genMs: gen / n,
    serverPct: (100 * server.reduce((a, b) => a + b, 0)) / wall,
    pgPct: (100 * pg) / wall,
    genPct: (100 * gen) / wall,
    corePct,
    statements: statements / n,
  };
}

// ---- setup -----------------------------------------------------------------------
const tStart = performance.now();
const pgCluster = await startPostgres({ durable: true });
const pgVersion = spawnSync(join(postgresBin()!, 'postgres'), ['--version'], { encoding: 'utf8' }).stdout.trim();
let configs: Config[] = [];
try {
  const { postmaster, children: pgChildren } = postgresPids(pgCluster);
  for (const pid of [postmaster, ...pgChildren]) pin(pid, LOAD_CORE); // backends forked later inherit the postmaster's core
  const [dbOne, dbTwo] = [await createDatabase(pgCluster, 'bench_one'), await createDatabase(pgCluster, 'bench_two')];
  const job = (name: string, extra: Partial<ServerJob>): ServerJob => ({ dataDir: join(tmp, name), hostname: `${name}.${DOMAIN}`, realm: REALM, domain: DOMAIN, adminPassword: ADMIN_PASSWORD, ...extra });
  const ca = (name: string) => () => readFileSync(join(tmp, name, 'ca.crt'), 'utf8');
  const [sqlite, pgOne, first] = await Promise.all([startChild(job('sqlite', {}), ca('sqlite')), startChild(job('pg', { database: dbOne }), ca('pg')), startChild(job('one', { database: dbTwo }), ca('one'))]);
  const second = await startChild(job('two', { replicaOf: join(tmp, 'one') }), ca('one'));
  configs = [
    { name: '(a) SQLite, 1 server', servers: [sqlite] },
    { name: '(b) PostgreSQL, 1 server', servers: [pgOne], pg: pgCluster },
    { name: '(c) PostgreSQL, 2 servers', servers: [first, second], pg: pgCluster },
  ];
  // the users, added through the (first) server of each realm, one at a time per realm: concurrent adds contend for the
  // next POSIX ID, which a server takes by compare-and-swap and gives up on after 20 tries
  await Promise.all(configs.map(async (cfg) => {
    const s = cfg.servers[0]!.session;
    await s.call('user_add', ['bench'], { first: 'B', last: 'Ench', password: PASSWORD });
    await parallel(USERS, 1, (i) => s.call('user_add', [`u${i}`], { first: `Given${i}`, last: `Family${i}`, email: [`u${i}@${DOMAIN}`] }));
  }));
} catch (e) {
  await cleanup();
  throw e;
}
const setupSeconds = (performance.now() - tStart) / 1000;

// ---- runs ------------------------------------------------------------------------
const runs = new Map<string, Run[]>();
const key = (wl: Workload, cfg: Config) => `${wl.name}\u0000${cfg.name}`;
try {
  for (const wl of workloads) for (const cfg of configs) await wl.run(cfg, true);
  for (let round = 0; round < ROUNDS; round++) {
    for (const wl of workloads) {
      for (const cfg of configs) {
        const r = await measure(cfg, wl);
        runs.set(key(wl, cfg), [...(runs.get(key(wl, cfg)) ?? []), r]);
      }
    }
  }
} finally {
  await cleanup();
}

// ---- report ----------------------------------------------------------------------
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const med = (rs: Run[], f: (r: Run) => number) => median(rs.map(f));
const fmt = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : '-');

console.log(
  `dirid servers benchmark: ${ROUNDS} rounds of ${SECONDS} s per workload and configuration (after a ${WARMUP_SECONDS} s warm-up each), alternating; ` +
    `RPC: ${CONC} concurrent JSON-RPC calls over keep-alive HTTPS with a session cookie, ${USERS} users; KDC: ${KDC_CONC} outstanding UDP AS-REQs (password, etype ${ETYPE}); setup ${setupSeconds.toFixed(0)} s`,
);
console.log(
  (hasTaskset ? `cores: dirid servers on core ${SERVER_CORE} (both servers of (c) share it), load generator and PostgreSQL on core ${LOAD_CORE}` : 'no taskset: nothing pinned') +
    `; ${pgVersion || 'PostgreSQL'} with fsync and synchronous_commit on, SQLite with WAL and synchronous=FULL`,
);
console.log('workload'.padEnd(24) + 'configuration'.padEnd(28) + 'req/s (median; rounds)'.padEnd(26) + 'p50 ms'.padStart(8) + 'p99 ms'.padStart(8) + '  ratio to (a): req/s, p99' + 'errors'.padStart(8));
for (const wl of workloads) {
  const ref = runs.get(key(wl, configs[0]!))!;
  for (const cfg of configs) {
    const rs = runs.get(key(wl, cfg))!;
    const each = rs.map((r) => r.rps.toFixed(0)).join(' ');
    const ratio = `${fmt(med(rs, (r) => r.rps) / med(ref, (r) => r.rps))}, ${fmt(med(rs, (r) => r.p99) / med(ref, (r) => r.p99))}`;
    const errors = rs.reduce((a, r) => a + r.errors, 0);
    console.log(wl.name.padEnd(24) + cfg.name.padEnd(28) + `${med(rs, (r) => r.rps).toFixed(0)} (${each})`.padEnd(26) + fmt(med(rs, (r) => r.p50)).padStart(8) + fmt(med(rs, (r) => r.p99)).padStart(8) + `  ${ratio}`.padEnd(27) + String(errors).padStart(6));
    const first = rs.find((r) => r.firstError)?.firstError;
    if (first) console.log(`  first error: ${first}`);
  }
}
console.log('');
console.log('CPU per answered request in ms (medians; in brackets: percent of one core over the run) and statements sent to PostgreSQL per request:');
console.log('workload'.padEnd(24) + 'configuration'.padEnd(28) + 'dirid (each server)'.padEnd(30) + 'PostgreSQL'.padEnd(16) + 'generator'.padEnd(16) + 'statements'.padEnd(12) + 'cores busy (any process)');
for (const wl of workloads) {
  for (const cfg of configs) {
    const rs = runs.get(key(wl, cfg))!;
    const each = cfg.servers.map((_, i) => fmt(med(rs, (r) => r.serverMs[i]!), 3)).join(' + ');
    console.log(
      wl.name.padEnd(24) +
        cfg.name.padEnd(28) +
        `${each} (${fmt(med(rs, (r) => r.serverPct), 0)}%)`.padEnd(30) +
        `${fmt(med(rs, (r) => r.pgMs), 3)} (${fmt(med(rs, (r) => r.pgPct), 0)}%)`.padEnd(16) +
        `${fmt(med(rs, (r) => r.genMs), 3)} (${fmt(med(rs, (r) => r.genPct), 0)}%)`.padEnd(16) +
        (cfg.pg ? fmt(med(rs, (r) => r.statements), 1) : '-').padEnd(12) +
        rs[0]!.corePct.map((_, i) => `${i}: ${fmt(med(rs, (r) => r.corePct[i]!), 0)}%`).join(', '),
    );
  }
}
console.log('');
for (const wl of workloads) {
  const [a, b, c] = configs.map((cfg) => runs.get(key(wl, cfg))!) as [Run[], Run[], Run[]];
  const dirid = (rs: Run[]) => fmt(med(rs, (r) => r.serverMs.reduce((x, y) => x + y, 0)), 3);
  const pgSide = (rs: Run[]) => `${fmt(med(rs, (r) => r.statements), 1)} statements (round trips), PostgreSQL ${fmt(med(rs, (r) => r.pgMs), 3)} ms`;
  const core = (rs: Run[], i: number) => `${fmt(med(rs, (r) => r.corePct[i]!), 0)}%`;
  console.log(
    `where time goes, ${wl.name}: dirid CPU per request (a) ${dirid(a)} ms, (b) ${dirid(b)} ms + ${pgSide(b)}, (c) ${dirid(c)} ms in all + ${pgSide(c)}; ` +
      `core ${SERVER_CORE} busy ${core(a, SERVER_CORE)} / ${core(b, SERVER_CORE)} / ${core(c, SERVER_CORE)}, core ${LOAD_CORE} ${core(a, LOAD_CORE)} / ${core(b, LOAD_CORE)} / ${core(c, LOAD_CORE)}`,
  );
}
console.log(`(a run whose busiest core is well below 100% waited rather than computed: for commits on fsync, for PostgreSQL's answers, or for the generator; other processes on the machine count as busy too)`);
if (values.keep) console.log(`kept ${tmp} (the servers' logs: *.log)`);
process.exit(0);
