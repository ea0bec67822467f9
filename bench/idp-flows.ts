/**
 * Pending device flows in the KDC: starts N (default 10,000) idp logins for
 * a linked user against a local IdP, then measures the server's resident
 * memory and its password AS-REQ throughput while those flows are being
 * polled, as a ratio to the same load with no flows (same run), and what
 * the polling costs the server: its CPU time (utime + stime from /proc)
 * per token request it sent the IdP, in a phase where only the pending
 * flows' answers run, beside its CPU time per password AS-REQ. The KDC
 * runs on core 0; the password load (a worker thread of its own), the clients answering the flows and
 * the IdP share core 1.
 *
 * The IdP (`--idp`) is by default a lean stand-in for a remote IdP
 * (test/support/remote-idp.ts: a small HTTPS server in a process of its
 * own, answering `authorization_pending` for every code it handed out).
 * In production the IdP is another machine; here it shares core 1 with
 * the load, and oidc-provider (`--idp oidc-provider`, in the bench's
 * process) costs that core more per token request than the KDC pays for
 * it, so the load generator starved and the measured ratio fell far below
 * what the KDC's own CPU allowed. oidc-provider also keeps only its last
 * few hundred device codes, so it answers most polls `invalid_grant` (the
 * KDC reports those as pending, by a dearer path): the flows are not
 * really pending there. The stand-in's flows are.
 *
 * Each answer polls the IdP once: the server's idp_hold_seconds is set to
 * `--hold` (default 1 s, below the 5 s poll interval), so an answer is
 * answered after its token request instead of held for a second one 5 s
 * later (docs/device-flow.md); the answerers go round all the flows, so
 * each flow's code is due whenever its answer comes. The password load is
 * test/support/kdc-load.ts's generator (no promise or timer per request),
 * which should keep the KDC's core near 100% in the idle phase: the line
 * of the throughputs prints both cores' use, and what other processes
 * took of core 0 (/proc/stat): where that is more than a few percent, or
 * the server is far from 100% busy, the throughputs and their ratio say
 * more about the other work than about the KDC. On a machine shared with
 * other work the throughputs move from run to run; the CPU times per
 * request move much less. The IdP counts the TLS connections it accepted
 * and how many resumed a session.
 *   node --import tsx bench/idp-flows.ts [--flows N] [--seconds N] [--answerers N] [--idp stand-in|oidc-provider] [--hold S]
 * BENCH_PASSWORD_CLIENTS: the password load's clients side by side
 * (default 64; at 128 the KDC's socket drops a few requests).
 * BENCH_SERVER_ARGS: Node options for the server (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/prof"; the bench then prints the answers phase's
 * window on the profile's clock); BENCH_SERVER_LOG: a file for its log.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { asReqBody } from '../src/kerberos/client.js';
import { armoredAsReq, processArmored } from '../src/kerberos/fast-client.js';
import { PaType } from '../src/kerberos/iana.js';
import { sendUdp } from '../src/kerberos/transport.js';
import type { PaData } from '../src/kerberos/asn1/primitives.js';
import { startTestIdp } from '../test/support/oidc-idp.js';
import { RpcSession } from '../test/support/rpc-client.js';
import { addFlowUser, flowClient, liftFlowLimits } from '../test/support/flow-user.js';
import { startRemoteIdp } from '../test/support/remote-idp.js';

const { values } = parseArgs({
  options: { flows: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '4' }, answerers: { type: 'string', default: '8' }, idp: { type: 'string', default: 'stand-in' }, hold: { type: 'string', default: '1' }, help: { type: 'boolean', short: 'h' } },
});
if (values.help) {
  console.log(`usage: node --import tsx bench/idp-flows.ts [--flows N] [--seconds N] [--answerers N] [--idp stand-in|oidc-provider] [--hold S]
  --flows N      pending device flows to start (default 10000)
  --seconds N    length of each measured phase (default 4)
  --answerers N  clients answering the pending flows' challenges side by side (default 8)
  --idp KIND     stand-in (default): a lean HTTPS IdP in a process of its own (test/support/remote-idp.ts),
                 standing in for a remote one; oidc-provider: node-oidc-provider in the bench's process
  --hold S       the server's idp_hold_seconds (default 1: below the 5 s poll interval, one token request per answer)
env BENCH_SERVER_ARGS: Node options for the server process; BENCH_SERVER_LOG: file for the server's log`);
  process.exit(0);
}
const FLOWS = Number(values.flows);
const SECONDS = Number(values.seconds);
const ANSWERERS = Number(values.answerers);
if (values.idp !== 'stand-in' && values.idp !== 'oidc-provider') throw new Error(`--idp: stand-in or oidc-provider, not ${values.idp}`);
const IDP_KIND = values.idp;
const HOLD = Number(values.hold);
const REALM = 'FLOWS.TEST';
const root = new URL('..', import.meta.url).pathname;
const pin = (pid: number, core: number) => spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
pin(process.pid, 1);

/** the IdP, either kind: what idp-add names, and what it has served */
const idp =
  IDP_KIND === 'stand-in'
    ? await startRemoteIdp({ deviceCodeTtl: 1800, core: 1 })
    : await startTestIdp({ accounts: ['flow-sub'], deviceCodeTtl: 1800 }).then((t) => ({ ...t, stats: async () => t.stats() }));
const tmp = mkdtempSync(join(tmpdir(), 'bench-flows-'));
writeFileSync(join(tmp, 'pw'), 'Admin-pass-42\n');
writeFileSync(join(tmp, 'idp-ca.pem'), idp.caPem);
spawnSync(process.execPath, [join(root, 'bin/dirid-server.js'), 'init', '--data-dir', join(tmp, 'realm'), '--realm', REALM, '--domain', 'flows.test', '--hostname', 'localhost', '--admin-password-file', join(tmp, 'pw')]);
// the hold of an answer (docs/device-flow.md): below the poll interval, an answer polls once and is answered
const serverConf = join(tmp, 'realm', 'server.conf');
writeFileSync(serverConf, readFileSync(serverConf, 'utf8').replace(/^idp_hold_seconds\s*=.*$/m, `idp_hold_seconds = ${HOLD}`));
if (!readFileSync(serverConf, 'utf8').includes(`idp_hold_seconds = ${HOLD}`)) throw new Error('server.conf has no idp_hold_seconds to set');
liftFlowLimits(serverConf);
const nodeArgs = (process.env.BENCH_SERVER_ARGS ?? '').split(/\s+/).filter(Boolean);
const server = spawn(process.execPath, [...nodeArgs, join(root, 'bin/dirid-server.js'), 'start', '--data-dir', join(tmp, 'realm'), '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0', '--idp-ca-file', join(tmp, 'idp-ca.pem')], { stdio: ['ignore', 'pipe', 'inherit'] });
pin(server.pid!, 0);
let out = '';
const ports = await new Promise<{ kdc: number; https: number }>((resolve) => {
  const started = (d: Buffer) => {
    out += d.toString();
    const k = / service=kdc address=127\.0\.0\.1 port=(\d+) /.exec(out);
    const h = / service=https url=https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (!k || !h) return;
    // the server logs every request from now on: kept, this listener would search an ever longer log on the load's core
    server.stdout!.off('data', started);
    resolve({ kdc: Number(k[1]), https: Number(h[1]) });
  };
  server.stdout!.on('data', started);
});
if (process.env.BENCH_SERVER_LOG) server.stdout!.pipe(createWriteStream(process.env.BENCH_SERVER_LOG));
else server.stdout!.resume();
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
const ticks = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
/** process `pid`'s CPU time so far in seconds (user + system, /proc/PID/stat fields 14 and 15) */
const cpuOf = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / ticks;
};
/** the server's CPU time so far in seconds */
const cpu = (): number => cpuOf(server.pid!);
const rpc = new RpcSession(`https://localhost:${ports.https}`, readFileSync(join(tmp, 'realm', 'ca.crt'), 'utf8'));
await rpc.login('admin', 'Admin-pass-42');
await addFlowUser(rpc, idp);
await rpc.call('user_add', ['bench'], { first: 'B', last: 'E', password: 'Bench-password-1' });

const kdc = { host: '127.0.0.1', port: ports.kdc };
const send = (m: Buffer) => sendUdp(kdc, m, [2000, 4000]);
const flows = await flowClient(send, REALM, join(tmp, 'realm', 'host.keytab'));
const armor = flows.armor;
const cname = { nameType: 1, nameString: ['bench'] };

/**
 * The password load runs in a worker thread of its own
 * (test/support/password-load-worker.ts), on this process's core: on this thread it
 * shared an event loop with the answering clients, and its replies waited
 * behind their JavaScript while the KDC ran out of requests.
 */
/** password clients side by side: enough that the KDC, not the round trips, bounds the load */
const PASSWORD_CLIENTS = Number(process.env.BENCH_PASSWORD_CLIENTS ?? 64);
const passwordWorker = new Worker(new URL('../test/support/password-load-worker.ts', import.meta.url), {
  workerData: { port: ports.kdc, realm: REALM, user: 'bench', password: 'Bench-password-1', concurrency: PASSWORD_CLIENTS },
});
const fromWorker = <T>(): Promise<T> => new Promise((resolve) => passwordWorker.once('message', resolve));
/** Makes `n` password AS-REQs ahead of a phase in the worker, each with a nonce of its own (so the KDC's lookaside cache never answers one). */
async function preparePasswordRequests(n: number): Promise<void> {
  passwordWorker.postMessage({ prepare: n });
  await fromWorker();
}

/**
 * password AS-REQs answered per second over `seconds`, PASSWORD_CLIENTS
 * clients side by side, from the requests the worker made ahead (made on the fly once they
 * run out): kdc-load.ts's generator, connected sockets each sending its
 * next request from its reply handler, no promise or timer per request.
 */
async function passwordLoad(seconds: number): Promise<number> {
  passwordWorker.postMessage({ run: seconds });
  const r = await fromWorker<{ rps: number; errors: number; ranOut: boolean; made: number }>();
  if (r.ranOut) console.log(`(the ${r.made} requests made ahead ran out: the load made the rest itself)`);
  if (r.errors) console.log(`(${r.errors} password AS-REQs answered with a KRB-ERROR or not within 2 s)`);
  return r.rps;
}
/** requests made ahead for one phase: more than the KDC answers in it (some 30,000 a second idle now; 24,000 ran out) */
const POOL_PER_SECOND = 40_000;

/** One armored AS-REQ of the password user without pre-authentication: the KDC unwraps the FAST armor and answers an armored PREAUTH_REQUIRED, as for a flow's answer but without the IdP. */
async function armoredRequest(): Promise<boolean> {
  const body = asReqBody(cname, REALM, {});
  const req = armoredAsReq(armor, body, []);
  const r = processArmored(await send(req.msg), req, body, req.armorKey);
  return r.kind === 'error';
}

/** armored requests without the IdP, ANSWERERS side by side, for `seconds`: how many, and the server's CPU for them */
async function armoredLoad(seconds: number): Promise<{ requests: number; cpu: number }> {
  let running = true;
  let requests = 0;
  const c0 = cpu();
  const workers = Array.from({ length: ANSWERERS }, async () => {
    while (running) if (await armoredRequest().catch(() => false)) requests++;
  });
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const used = cpu() - c0;
  const done = requests;
  running = false;
  await Promise.all(workers);
  return { requests: done, cpu: used };
}

/** the pending flows' answers, ANSWERERS side by side, until stopped; counts answers and those still pending */
function answerFlows(cookies: PaData[]): { answered(): number; stop(): Promise<{ answers: number; pending: number }> } {
  let polling = true;
  let answers = 0;
  let pending = 0;
  let next = 0;
  const workers = Array.from({ length: ANSWERERS }, async () => {
    while (polling) {
      const c = cookies[next++ % cookies.length]!;
      if (await flows.answer(c).catch(() => false)) pending++;
      answers++;
    }
  });
  return {
    answered: () => answers,
    async stop() {
      polling = false;
      await Promise.all(workers);
      return { answers, pending };
    },
  };
}
const tokenRequests = async () => (await idp.stats()).requests['/token'] ?? 0;

await preparePasswordRequests(POOL_PER_SECOND);
await passwordLoad(1);
await preparePasswordRequests(POOL_PER_SECOND * SECONDS);
/** the stand-in IdP's CPU time so far (0 for oidc-provider, which runs in this process) */
const idpCpu = () => ('pid' in idp ? cpuOf(idp.pid) : 0);
/** the CPU time so far of what runs on core 1: this process (the load, the answerers, oidc-provider) and the stand-in IdP's */
const own = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6 + idpCpu();
};
/** each core's busy time so far in seconds, all processes (/proc/stat: all but idle and iowait) */
const coresBusy = (): number[] =>
  readFileSync('/proc/stat', 'utf8')
    .split('\n')
    .filter((l) => /^cpu[01] /.test(l))
    .map((l) => {
      const f = l.split(/\s+/).slice(1).map(Number);
      return (f.reduce((a, b) => a + b, 0) - f[3]! - f[4]!) / ticks;
    });
/** what other work took of core 0 (the KDC's) over `sec`: its busy share less the server's */
const otherOnCore0 = (busy0: number[], serverCpu: number, sec: number) => `${Math.max(0, (100 * (coresBusy()[0]! - busy0[0]! - serverCpu)) / sec).toFixed(0)}%`;
let c0 = cpu();
let o0 = own();
let w0 = performance.now();
let k0 = coresBusy();
const idleRps = await passwordLoad(SECONDS);
const idleCpu = cpu() - c0;
const idleOther = otherOnCore0(k0, idleCpu, (performance.now() - w0) / 1000);
const idleOwn = own() - o0;
const idleSec = (performance.now() - w0) / 1000;
const cpuPerAsReq = idleCpu / (idleRps * SECONDS);
const rssIdle = rss();
const cookies: PaData[] = [];
const t0 = performance.now();
let started = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (started < FLOWS) {
      started++;
      const c = await flows.start().catch(() => null);
      if (c) cookies.push(c);
    }
  }),
);
const startSec = (performance.now() - t0) / 1000;
const rssFlows = rss();

// what the armored exchange costs without the IdP, then the flows' answers alone: what an answer and its token request cost the server
const fast = await armoredLoad(SECONDS);
const before = await idp.stats();
let tok0 = await tokenRequests();
c0 = cpu();
let a0 = performance.now();
const aloneOwn0 = own();
const aloneIdp0 = idpCpu();
const aloneFrom = process.hrtime.bigint() / 1000n;
let answering = answerFlows(cookies);
await new Promise((r) => setTimeout(r, SECONDS * 1000));
const pollCpu = cpu() - c0;
const aloneOwn = own() - aloneOwn0;
const aloneIdp = idpCpu() - aloneIdp0;
const aloneTo = process.hrtime.bigint() / 1000n;
const aloneSec = (performance.now() - a0) / 1000;
const alonePolls = (await tokenRequests()) - tok0;
const aloneAnswered = answering.answered();
const after = await idp.stats();
const alone = await answering.stop();

// the password load beside them
await preparePasswordRequests(POOL_PER_SECOND * SECONDS);
tok0 = await tokenRequests();
c0 = cpu();
o0 = own();
a0 = performance.now();
k0 = coresBusy();
const busyFrom = process.hrtime.bigint() / 1000n;
answering = answerFlows(cookies);
const busyRps = await passwordLoad(SECONDS);
const busyCpu = cpu() - c0;
const busyOther = otherOnCore0(k0, busyCpu, (performance.now() - a0) / 1000);
const busyTo = process.hrtime.bigint() / 1000n;
const busyOwn = own() - o0;
const busySec = (performance.now() - a0) / 1000;
const busyPolls = (await tokenRequests()) - tok0;
const busyAnswered = answering.answered();
const busy = await answering.stop();
const rssAfter = rss();
const final = await idp.stats();
const ms = (s: number) => `${(s * 1000).toFixed(3)} ms`;
const idpSaid = IDP_KIND === 'stand-in' ? 'the stand-in IdP (test/support/remote-idp.ts, its own process on core 1)' : 'a local oidc-provider (in the bench process, core 1)';
console.log(`idp device flows: ${cookies.length} of ${FLOWS} flows started in ${startSec.toFixed(1)} s against ${idpSaid}; KDC on core 0, load on core 1`);
console.log(`server RSS: idle ${rssIdle.toFixed(0)} MiB, with ${cookies.length} pending flows ${rssFlows.toFixed(0)} MiB, after polling ${rssAfter.toFixed(0)} MiB (flow state travels in the sealed PA-FX-COOKIE)`);
console.log(`answers alone (${ANSWERERS} answerers, ${aloneSec.toFixed(1)} s): ${alone.answers} answers (${alone.pending} still pending), ${alonePolls} token requests (${(alonePolls / aloneSec).toFixed(0)}/s), server CPU ${pollCpu.toFixed(2)} s (${((100 * pollCpu) / aloneSec).toFixed(0)}% of a core); core 1 ${alonePolls ? `${ms(aloneOwn / alonePolls)} per token request (the IdP ${'pid' in idp ? ms(aloneIdp / alonePolls) : 'in it'})` : 'n/a'}`);
console.log(`IdP TLS connections during them: ${after.connections - before.connections} new (${after.resumed - before.resumed} resumed); in the whole run ${final.connections} (${final.resumed} resumed) for ${Object.values(final.requests).reduce((a, b) => a + b, 0)} requests`);
console.log(`server CPU: ${fast.requests ? ms(fast.cpu / fast.requests) : 'n/a'} per armored AS-REQ answered PREAUTH_REQUIRED (the FAST part of an answer, no IdP; ${fast.requests} in ${SECONDS} s)`);
console.log(`server CPU: ${ms(cpuPerAsReq)} per password AS-REQ; ${alonePolls ? ms(pollCpu / alonePolls) : 'n/a'} per token request (${alonePolls ? (pollCpu / alonePolls / cpuPerAsReq).toFixed(1) : 'n/a'} password AS-REQs), ${aloneAnswered ? ms(pollCpu / aloneAnswered) : 'n/a'} per answer`);
console.log(`password AS-REQ throughput: idle ${idleRps.toFixed(0)}/s (server CPU ${((100 * idleCpu) / idleSec).toFixed(0)}% of a core, other work ${idleOther} of core 0, core 1 (load, answerers, IdP) ${((100 * idleOwn) / idleSec).toFixed(0)}%), while ${busy.answers} answers for pending flows were polled (${busy.pending} still pending, ${busyPolls} token requests, ${(busyPolls / busySec).toFixed(0)}/s; server CPU ${((100 * busyCpu) / busySec).toFixed(0)}% of a core, other work ${busyOther} of core 0, core 1 (load, answerers, IdP) ${((100 * busyOwn) / busySec).toFixed(0)}%) ${busyRps.toFixed(0)}/s, ratio ${(busyRps / idleRps).toFixed(2)}`);
// the KDC's own share: the CPU its answers took at the rate they came in beside the password load, out of one core
const busyAnswerRate = busyAnswered / busySec;
const cpuPerAnswer = aloneAnswered ? pollCpu / aloneAnswered : 0;
console.log(
  `KDC CPU left for password AS-REQs at ${busyAnswerRate.toFixed(0)} answers/s (${(busyAnswerRate * cpuPerAnswer * 100).toFixed(0)}% of a core for answers): ratio ${Math.max(0, 1 - busyAnswerRate * cpuPerAnswer).toFixed(2)} ` +
    `(the measured ratio also counts the load's own core, which the IdP and the answers share: ${((100 * busyOwn) / busySec).toFixed(0)}% busy during it)`,
);
// a CPU profile's timestamps are on the same monotonic clock: the window to sum an answer's cost over
if (nodeArgs.includes('--cpu-prof')) console.log(`answers alone ran from ${aloneFrom} to ${aloneTo} µs, answers and password load from ${busyFrom} to ${busyTo} µs (monotonic clock, as in the server's .cpuprofile)`);
await passwordWorker.terminate();
server.kill('SIGTERM');
await new Promise((r) => server.once('exit', r));
await idp.stop();
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
