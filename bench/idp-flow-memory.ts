/**
 * What a pending device flow keeps in the server's memory: a realm served
 * in this process (so that a full garbage collection can be forced before
 * each reading), the stand-in IdP of test/support/remote-idp.ts in its
 * own process, and N flows started by armored AS-REQs over UDP (each
 * answered with the `idp` challenge and its cookie, which the client drops).
 * Prints the JavaScript heap, the memory outside it (Buffers, OpenSSL) and
 * the resident set size, each per flow, over two bursts of N flows after a
 * warm-up of 200 (each reading after full collections). The
 * client's side of a flow keeps nothing, so what stays is the server's (an
 * upper bound: anything the client library caches would count too). The
 * resident set also counts what the collector and malloc keep for reuse,
 * which is why bench/idp-flows.ts's RSS figures are so much larger.
 *   node --import tsx bench/idp-flow-memory.ts [--flows N]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sendUdp } from '../src/kerberos/transport.js';
import { initRealm } from '../src/server/init.js';
import { startServer } from '../src/server/start.js';
import { RpcSession } from '../test/support/rpc-client.js';
import { addFlowUser, flowClient, liftFlowLimits } from '../test/support/flow-user.js';
import { startRemoteIdp } from '../test/support/remote-idp.js';

const { values } = parseArgs({ options: { flows: { type: 'string', default: '10000' } } });
const FLOWS = Number(values.flows);
const REALM = 'MEM.TEST';
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const idp = await startRemoteIdp({ deviceCodeTtl: 1800 });
const tmp = mkdtempSync(join(tmpdir(), 'bench-flow-memory-'));
writeFileSync(join(tmp, 'idp-ca.pem'), idp.caPem);
await initRealm({ dataDir: tmp, realm: REALM, domain: 'mem.test', hostname: 'localhost', adminPassword: 'Admin-pass-42' });
liftFlowLimits(join(tmp, 'server.conf'));
const srv = await startServer({ dataDir: tmp, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {}, idpCaFile: join(tmp, 'idp-ca.pem') });
const rpc = new RpcSession(`https://localhost:${srv.httpsPort}`, readFileSync(join(tmp, 'ca.crt'), 'utf8'));
await rpc.login('admin', 'Admin-pass-42');
await addFlowUser(rpc, idp);

const kdc = { host: '127.0.0.1', port: srv.kdcPort };
const send = (m: Buffer) => sendUdp(kdc, m, [2000, 4000]);
const flows = await flowClient(send, REALM, join(tmp, 'host.keytab'));

/** one flow started: true when the KDC answered with the idp challenge */
const startFlow = async (): Promise<boolean> => (await flows.start()) !== null;
async function startFlows(n: number): Promise<number> {
  let started = 0;
  for (let i = 0; i < n; i += 50) started += (await Promise.all(Array.from({ length: Math.min(50, n - i) }, startFlow))).filter(Boolean).length;
  return started;
}
/** KiB of heap, of memory outside it, and resident, after two full collections */
function reading(): { heap: number; external: number; rss: number; committed: number } {
  collectGarbage();
  collectGarbage();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / 1024, external: m.external / 1024, rss: m.rss / 1024, committed: m.heapTotal / 1024 };
}

if ((await startFlows(200)) !== 200) throw new Error('the warm-up flows did not all start');
const MiB = (kib: number) => (kib / 1024).toFixed(1);
let before = reading();
console.log(`after 200 flows: heap ${MiB(before.heap)} MiB, outside ${MiB(before.external)} MiB, resident ${MiB(before.rss)} MiB`);
// twice: the second burst shows whether the resident set keeps growing with the flows or was kept for reuse
for (const burst of ['first', 'second', 'third']) {
  const started = await startFlows(FLOWS);
  const after = reading();
  if (started !== FLOWS) console.log(`(${FLOWS - started} flows did not start)`);
  const per = (k: 'heap' | 'external' | 'rss') => ((after[k] - before[k]) / started).toFixed(2);
  console.log(`${burst} ${started} pending flows, per flow: JavaScript heap ${per('heap')} KiB, outside the heap ${per('external')} KiB, resident ${per('rss')} KiB; totals heap ${MiB(after.heap)} MiB, outside ${MiB(after.external)} MiB, resident ${MiB(after.rss)} MiB (heap committed ${MiB(after.committed)} MiB)`);
  before = after;
}
await srv.stop();
await idp.stop();
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
