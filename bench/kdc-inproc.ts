/**
 * The KDC's own cost per request, without sockets: a realm started in this
 * process, then AS-REQs (encrypted timestamp) and TGS-REQs made ahead and
 * handed to the KDC's request handler one after another. Prints microseconds
 * per request; with --cpu-prof on node's command line, the profile shows
 * where they go; the CPU time per request of the cheapest batch is the
 * figure to compare on a busy machine (the client's garbage from making
 * the requests is collected before the clock starts). TGS presents one TGT again and again (the KDC keeps it
 * opened); TGS-unseen presents a TGT the KDC has never seen with each
 * request (TGTs fetched by AS beforehand, each used once). AS-armored is
 * an AS-REQ armored with FAST (the TGT of the TGS runs as armor) without
 * pre-authentication, answered with an armored PREAUTH_REQUIRED: the first
 * step of every `kinit -T` and of each idp mechanism login. With --alloc,
 * the timed requests also run under V8's sampling heap profiler (collected
 * objects included): bytes allocated per request, and the functions that
 * allocate most (the CPU figures are then not to be compared). With
 * --group-policies N, the realm has N group password policies on a chain of
 * nested groups, the innermost holding admin, so the KDC finds admin's
 * policy through all of them (account/password-policy.ts).
 *   node --import tsx bench/kdc-inproc.ts [--requests N] [--batch N] [--exchange AS,TGS,TGS-unseen,AS-armored] [--alloc] [--group-policies N]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { encodeKdcReq } from '../src/kerberos/asn1/kdc-req.js';
import { armoredAsReq } from '../src/kerberos/fast-client.js';
import { asReqBody, asWithPassword, encTimestamp, processKdcRep, randomNonce, tgsRequest, type Credentials } from '../src/kerberos/client.js';
import { KeyUsage } from '../src/kerberos/iana.js';
import { profile } from '../src/kerberos/crypto/index.js';
import { initRealm } from '../src/server/init.js';
import { startServer } from '../src/server/start.js';
import { buildRegistry } from '../src/objects/index.js';
import { dispatch } from '../src/framework/dispatch.js';
import { API_VERSION } from '../src/framework/api.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '20000' }, batch: { type: 'string', default: '2000' }, exchange: { type: 'string', default: 'AS,TGS,TGS-unseen,AS-armored' }, alloc: { type: 'boolean', default: false }, 'group-policies': { type: 'string', default: '0' } } });
const N = Number(values.requests);
/** requests per timed batch: smaller batches give a busy machine's quiet moments a better chance to show */
const BATCH = Number(values.batch);
const REALM = 'BENCH.TEST';
const PASSWORD = 'Admin-pass-42';
const ETYPE = 18;

const tmp = mkdtempSync(join(tmpdir(), 'bench-kdc-inproc-'));
await initRealm({ dataDir: tmp, realm: REALM, domain: 'bench.test', hostname: 'localhost', adminPassword: PASSWORD });
const srv = await startServer({ dataDir: tmp, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {} });
const kdc = srv.kdc;
const groupPolicies = Number(values['group-policies']);
if (groupPolicies > 0) {
  const ctx = {
    dir: srv.dir,
    principal: { name: `admin@${REALM}`, dn: 'uid=admin,cn=users,cn=accounts,dc=bench,dc=test', uid: 'admin' },
    server: { version: 'bench', apiVersion: API_VERSION, realm: REALM, domain: 'bench.test', searchSizeLimit: 100, searchTimeLimit: 2 },
    cache: new Map<string, unknown>(),
    registry: buildRegistry(),
  };
  for (let i = 0; i < groupPolicies; i++) {
    await dispatch(ctx, 'group_add', [`g${i}`], {});
    await dispatch(ctx, 'pwpolicy_add', [`g${i}`], { priority: i + 1 });
    if (i > 0) await dispatch(ctx, 'group_add_member', [`g${i - 1}`], { groups: [`g${i}`] });
  }
  await dispatch(ctx, 'group_add_member', [`g${groupPolicies - 1}`], { users: ['admin'] });
}
const cname = { nameType: 1, nameString: ['admin'] };
const key = profile(ETYPE).stringToKey(PASSWORD, `${REALM}admin`);
const sname = { nameType: 2, nameString: ['HTTP', 'localhost'] };

const asReq = () => encodeKdcReq({ msgType: 10, padata: [encTimestamp(key)], body: asReqBody(cname, REALM, { etypes: [ETYPE], nonce: randomNonce() }) });
const tgt = await asWithPassword(async (m) => (await kdc.handle(m, 'udp'))!, cname, REALM, PASSWORD, { etypes: [ETYPE] });
const tgsReq = () => tgsRequest(tgt, sname, { etypes: [ETYPE] }).msg;

/** `n` TGTs of their own, by AS exchanges with the KDC. */
async function freshTgts(n: number): Promise<Credentials[]> {
  const out: Credentials[] = [];
  for (let i = 0; i < n; i++) {
    const body = asReqBody(cname, REALM, { etypes: [ETYPE], nonce: randomNonce() });
    const reply = await kdc.handle(encodeKdcReq({ msgType: 10, padata: [encTimestamp(key)], body }), 'udp');
    out.push(processKdcRep(reply!, body, key, KeyUsage.AS_REP_ENC_PART));
  }
  return out;
}

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/**
 * Times `N` requests in batches of up to BATCH: wall time over all, and the
 * process's CPU time (user + system) per request in the cheapest batch,
 * which time spent waiting for a busy machine's cores does not inflate.
 */
async function run(name: string, make: () => Buffer, expectError = false): Promise<void> {
  for (let i = 0; i < 2000; i++) await kdc.handle(make(), 'udp'); // warm-up
  const reqs = Array.from({ length: N }, make);
  // the client's garbage from making the requests (its one-off keys and their ciphers too) is collected now, not in the KDC's time
  collectGarbage();
  const sampler = values.alloc ? await startAllocationSampling() : undefined;
  const t0 = performance.now();
  let errors = 0;
  let bestCpu = Infinity;
  for (let b = 0; b < N; b += BATCH) {
    const batch = reqs.slice(b, b + BATCH);
    const c0 = process.cpuUsage();
    for (const r of batch) {
      const reply = await kdc.handle(r, 'udp');
      if (!reply || (reply[0] === 0x7e) !== expectError) errors++;
    }
    const c = process.cpuUsage(c0);
    bestCpu = Math.min(bestCpu, (c.user + c.system) / batch.length);
  }
  const us = ((performance.now() - t0) * 1000) / N;
  if (sampler) await reportAllocations(sampler, name);
  console.log(`${name.padEnd(10)} ${us.toFixed(1).padStart(7)} µs per request (${(1e6 / us).toFixed(0)} per second of one core), CPU ${bestCpu.toFixed(1)} µs in the cheapest batch, ${errors} ${expectError ? "replies not a KRB-ERROR" : "errors"}`);
}

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

/** V8's sampling heap profiler, keeping the samples of objects already collected too: what the requests allocate, not what they keep. */
async function startAllocationSampling(): Promise<Session> {
  const s = new Session();
  s.connect();
  await s.post('HeapProfiler.enable');
  await s.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  return s;
}

async function reportAllocations(s: Session, name: string): Promise<void> {
  const { profile: p } = (await s.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SampleNode } };
  s.disconnect();
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (n: SampleNode): void => {
    const where = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*\/(src|node_modules)\//, '$1/')}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + n.selfSize);
    total += n.selfSize;
    for (const c of n.children) walk(c);
  };
  walk(p.head);
  console.log(`${name}: ${(total / N).toFixed(0)} bytes allocated per request; most by`);
  for (const [where, bytes] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${(bytes / N).toFixed(0).padStart(7)} ${where}`);
}

const wanted = new Set(values.exchange!.split(','));
if (wanted.has('AS')) await run('AS', asReq);
if (wanted.has('TGS')) await run('TGS', tgsReq);
if (wanted.has('TGS-unseen')) {
  const tgts = await freshTgts(N + 2000);
  let next = 0;
  await run('TGS-unseen', () => tgsRequest(tgts[next++]!, sname, { etypes: [ETYPE] }).msg);
}
// a KRB-ERROR (PREAUTH_REQUIRED) is the expected answer here
if (wanted.has('AS-armored')) await run('AS-armored', () => armoredAsReq(tgt, asReqBody(cname, REALM, { etypes: [ETYPE], nonce: randomNonce() }), []).msg, true);
await srv.stop();
rmSync(tmp, { recursive: true, force: true });
