/**
 * KDC benchmark: dirid's KDC and MIT krb5kdc (Debian krb5-kdc) side by side
 * in one run, same realm name, principal, password and enctype
 * (aes256-cts-hmac-sha1-96), MIT with disable_last_success and
 * disable_lockout (dirid writes nothing per login either). Both KDCs are
 * pinned to core 0 and this load generator to core 1; both log every
 * request to a file, and both are warmed up on both exchanges before the
 * measured rounds. Every request is new (fresh nonce, fresh timestamp or
 * authenticator, fresh subkey), so neither lookaside cache can answer it;
 * TGS requests (TGS) come from as many clients as there are outstanding
 * requests, each presenting a TGT of its own again and again; TGS-unseen
 * presents with each request a TGT the KDC has never been shown (TGTs
 * fetched by AS before the run, each used once), so no cache of opened
 * tickets helps. Requests are made before each run, so
 * the generator only sends and receives while measuring. The runs alternate
 * between the two KDCs for several rounds and the medians are compared, so
 * a noisy neighbour on the shared machine weighs on both sides alike.
 * Besides throughput and latency, each run reads the server process's CPU
 * time (utime + stime, /proc/PID/stat) before and after: CPU microseconds
 * per answered request is the figure that a busy machine disturbs least.
 *   node --import tsx bench/kdc.ts [--seconds N] [--rounds N] [--concurrency N] [--cpu-prof DIR]
 *                                  [--server-flags="--trace-gc ..."] [--keep] [--dirid-only]
 *                                  [--workloads AS,TGS,TGS-unseen]
 * --cpu-prof writes a V8 CPU profile of dirid's server into DIR (MIT is
 * then not run); --server-flags passes Node options to dirid's server;
 * --keep leaves the scratch directory (with dirid's log) in place;
 * --dirid-only leaves MIT out; --workloads runs only those named.
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeKdcReq } from '../src/kerberos/asn1/kdc-req.js';
import { asReqBody, asWithPassword, encTimestamp, processKdcRep, randomNonce, tgsRequest, type Credentials } from '../src/kerberos/client.js';
import { profile } from '../src/kerberos/crypto/index.js';
import { KeyUsage } from '../src/kerberos/iana.js';
import { sendUdp } from '../src/kerberos/transport.js';
import { startMitRealm } from '../test/support/mit-realm.js';
import { RpcSession } from '../test/support/rpc-client.js';
import { asPasswordMaker, cpuMicros, udpExchangeAll, udpLoad, type Maker, type UdpResult } from '../test/support/kdc-load.js';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '32' }, rounds: { type: 'string', default: '3' }, 'cpu-prof': { type: 'string' }, 'server-flags': { type: 'string', default: '' }, keep: { type: 'boolean', default: false }, 'dirid-only': { type: 'boolean', default: false }, workloads: { type: 'string', default: 'AS,TGS,TGS-unseen' } } });
const ROUNDS = Number(values.rounds);
const PROFILE_DIR = values['cpu-prof'];
const SECONDS = Number(values.seconds);
const CONC = Number(values.concurrency);
const REALM = 'BENCH.TEST';
const PASSWORD = 'Bench-password-1';
const ETYPE = 18;

const pin = (pid: number, core: number) => spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
pin(process.pid, 1);

// ---- dirid --------------------------------------------------------------------
const tmp = mkdtempSync(join(tmpdir(), 'bench-kdc-'));
writeFileSync(join(tmp, 'pw'), 'Admin-pass-42\n');
const BIN = new URL('../bin/dirid-server.js', import.meta.url).pathname;
spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(tmp, 'realm'), '--realm', REALM, '--domain', 'bench.test', '--hostname', 'localhost', '--admin-password-file', join(tmp, 'pw')]);
const profFlags = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [];
// the server's log goes to a file, as MIT's does (kdc.log)
const logFd = openSync(join(tmp, 'server.log'), 'w');
const extraFlags = values['server-flags'].split(' ').filter(Boolean);
const ours = spawn(process.execPath, [...profFlags, ...extraFlags, BIN, 'start', '--data-dir', join(tmp, 'realm'), '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'], { stdio: ['ignore', logFd, 'inherit'] });
pin(ours.pid!, 0);
const ports = await (async () => {
  for (let i = 0; i < 600; i++) {
    const out = readFileSync(join(tmp, 'server.log'), 'utf8');
    const k = / service=kdc address=127\.0\.0\.1 port=(\d+) /.exec(out);
    const h = / service=https url=https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (k && h) return { kdc: Number(k[1]), https: Number(h[1]) };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('dirid-server did not start');
})();
const rpc = new RpcSession(`https://localhost:${ports.https}`, readFileSync(join(tmp, 'realm', 'ca.crt'), 'utf8'));
await rpc.login('admin', 'Admin-pass-42');
await rpc.call('user_add', ['bench'], { first: 'B', last: 'Ench', password: PASSWORD });

// ---- MIT ----------------------------------------------------------------------
const mit = PROFILE_DIR || values['dirid-only']
  ? null
  : await startMitRealm({
      realm: REALM,
      principals: [['bench', PASSWORD], ['HTTP/localhost', null]],
      kdcConf: `${REALM} = {\n  disable_last_success = true\n  disable_lockout = true\n }`,
    });
if (mit) pin(mit.kdc.pid!, 0);

// ---- load ---------------------------------------------------------------------
const cname = { nameType: 1, nameString: ['bench'] };
const sname = { nameType: 2, nameString: ['HTTP', 'localhost'] };

// requests made ahead of the first run: 10,000 a second
const load = udpLoad({ seconds: SECONDS, concurrency: CONC, prepared: 10_000 * SECONDS });
/** a run, with the server's CPU time per answered request (µs) */
type Result = UdpResult & { cpuUs: number };
const drive = async (pid: number, port: number, make: Maker, pool?: number): Promise<Result> => {
  const c0 = cpuMicros(pid);
  const r = await load([port], make, pool);
  return { ...r, cpuUs: (cpuMicros(pid) - c0) / Math.max(1, r.count + r.errors) };
};

const asMaker = asPasswordMaker('bench', REALM, PASSWORD, ETYPE);
const userKey = profile(ETYPE).stringToKey(PASSWORD, `${REALM}bench`);

/** TGS requests from CONC clients, each with a TGT of its own (each with a fresh subkey, nonce and authenticator). */
async function tgsMaker(port: number): Promise<Maker> {
  const tgts: Credentials[] = [];
  for (let i = 0; i < CONC; i++) tgts.push(await asWithPassword((m) => sendUdp({ host: '127.0.0.1', port }, m), cname, REALM, PASSWORD, { etypes: [ETYPE] }));
  let n = 0;
  return () => tgsRequest(tgts[n++ % tgts.length]!, sname, { etypes: [ETYPE] }).msg;
}

/** `n` new TGTs from the KDC at `port`, by AS exchanges (encrypted timestamp), CONC at a time. */
async function freshTgts(port: number, n: number): Promise<Credentials[]> {
  const bodies = Array.from({ length: n }, () => asReqBody(cname, REALM, { etypes: [ETYPE], nonce: randomNonce() }));
  const replies = await udpExchangeAll(port, bodies.map((body) => encodeKdcReq({ msgType: 10, padata: [encTimestamp(userKey)], body })), CONC);
  const out: Credentials[] = [];
  for (let i = 0; i < n; i++) {
    try {
      out.push(processKdcRep(replies[i]!, bodies[i]!, userKey, KeyUsage.AS_REP_ENC_PART));
    } catch {
      // a late reply to a resent request: that TGT is left out
    }
  }
  return out;
}

/**
 * TGS-unseen: TGTs fetched before the run, one per request, enough for 1.5
 * times the most this KDC has answered in a run so far; should a run
 * outlast them, it goes round again and says so.
 */
const unseenBest = new Map<number, number>();
async function unseenRun(pid: number, port: number): Promise<Result> {
  const stock = await freshTgts(port, Math.max(20_000 * SECONDS, Math.ceil((unseenBest.get(port) ?? 0) * 1.5)));
  let n = 0;
  const r = await drive(pid, port, () => tgsRequest(stock[n++ % stock.length]!, sname, { etypes: [ETYPE] }).msg, stock.length);
  if (n > stock.length) console.log(`note: a TGS-unseen run on port ${port} used ${n - stock.length} TGTs a second time`);
  unseenBest.set(port, Math.max(unseenBest.get(port) ?? 0, r.count + r.errors));
  return r;
}

const ALL_KINDS = ['AS', 'TGS', 'TGS-unseen'] as const;
type Kind = (typeof ALL_KINDS)[number];
const KINDS = ALL_KINDS.filter((k) => values.workloads.split(',').includes(k));
const targets: Array<[string, number, number]> = [['dirid', ports.kdc, ours.pid!]];
if (mit) targets.push(['MIT krb5kdc', mit.port, mit.kdc.pid!]);
const runners = new Map<string, Record<Kind, () => Promise<Result>>>();
for (const [name, port, pid] of targets) {
  const tgs = await tgsMaker(port);
  const m = { AS: () => drive(pid, port, asMaker), TGS: () => drive(pid, port, tgs), 'TGS-unseen': () => unseenRun(pid, port) };
  runners.set(name, m);
  // warm-up of every workload (JIT, caches), not counted
  for (const kind of KINDS) await m[kind]();
}
const runs = new Map<string, Result[]>();
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of KINDS) {
    for (const [name] of targets) {
      const r = await runners.get(name)![kind]();
      const k = `${name} ${kind}`;
      runs.set(k, [...(runs.get(k) ?? []), r]);
    }
  }
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const summary = (rs: Result[]): Result => ({ rps: median(rs.map((r) => r.rps)), p50: median(rs.map((r) => r.p50)), p99: median(rs.map((r) => r.p99)), errors: rs.reduce((a, r) => a + r.errors, 0), count: rs.reduce((a, r) => a + r.count, 0), cpuUs: median(rs.map((r) => r.cpuUs)) });

const mitVersion = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'krb5-kdc'], { encoding: 'utf8' }).stdout;
console.log(`KDC benchmark: ${ROUNDS} rounds of ${SECONDS} s per KDC and exchange, alternating; ${CONC} outstanding UDP requests; etype ${ETYPE}; KDCs on core 0, generator on core 1; MIT krb5-kdc ${mitVersion}`);
console.log('run'.padEnd(24) + 'req/s (median, each round)'.padEnd(36) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'CPU µs/req'.padStart(12) + 'errors'.padStart(8));
for (const [k, rs] of runs) {
  const m = summary(rs);
  const each = rs.map((r) => r.rps.toFixed(0)).join(' ');
  console.log(k.padEnd(24) + `${m.rps.toFixed(0)} (${each})`.padEnd(36) + m.p50.toFixed(2).padStart(9) + m.p99.toFixed(2).padStart(9) + m.cpuUs.toFixed(1).padStart(12) + String(m.errors).padStart(8));
}
if (mit) {
  for (const kind of KINDS) {
    const a = runs.get(`dirid ${kind}`)!;
    const b = runs.get(`MIT krb5kdc ${kind}`)!;
    const perRound = a.map((r, i) => (r.rps / b[i]!.rps).toFixed(2)).join(' ');
    // each round's p99 ratio too: the two KDCs of a round ran back to back, so a busy spell of the machine shows in both
    const p99Rounds = a.map((r, i) => (r.p99 / b[i]!.p99).toFixed(2)).join(' ');
    const sa = summary(a);
    const sb = summary(b);
    console.log(
      `ratio dirid/MIT ${kind.padEnd(10)}: throughput ${(sa.rps / sb.rps).toFixed(2)} (rounds: ${perRound}), p99 latency ${(sa.p99 / sb.p99).toFixed(2)} (rounds: ${p99Rounds}), ` +
        `CPU per request ${(sa.cpuUs / sb.cpuUs).toFixed(2)} (MIT's CPU per request / ours: ${(sb.cpuUs / sa.cpuUs).toFixed(2)}x)`,
    );
  }
}
ours.kill('SIGTERM');
await new Promise((r) => ours.once('exit', r));
await mit?.stop();
if (values.keep) console.log(`kept ${tmp} (dirid's log: server.log)`);
else rmSync(tmp, { recursive: true, force: true });
process.exit(0);
