/**
 * Pending device flows in the KDC: starts N (default 10,000) idp logins for
 * a linked user against a local oidc-provider, then measures the server's
 * resident memory and its password AS-REQ throughput while those flows are
 * being polled, as a ratio to the same load with no flows (same run).
 *   node --import tsx bench/idp-flows.ts [--flows N] [--seconds N]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeKdcReq } from '../src/kerberos/asn1/kdc-req.js';
import { asReqBody, asWithKeys, encTimestamp, randomNonce, type Credentials } from '../src/kerberos/client.js';
import { profile } from '../src/kerberos/crypto/index.js';
import { armoredAsReq, processArmored } from '../src/kerberos/fast-client.js';
import { PaType } from '../src/kerberos/iana.js';
import { readKeytab } from '../src/kerberos/keytab.js';
import { sendUdp } from '../src/kerberos/transport.js';
import type { PaData } from '../src/kerberos/asn1/primitives.js';
import { startTestIdp } from '../test/support/oidc-idp.js';
import { RpcSession } from '../test/support/rpc-client.js';

const { values } = parseArgs({ options: { flows: { type: 'string', default: '10000' }, seconds: { type: 'string', default: '4' } } });
const FLOWS = Number(values.flows);
const SECONDS = Number(values.seconds);
const REALM = 'FLOWS.TEST';
const root = new URL('..', import.meta.url).pathname;
const pin = (pid: number, core: number) => spawnSync('taskset', ['-a', '-p', '-c', String(core), String(pid)]);
pin(process.pid, 1);

const idp = await startTestIdp({ accounts: ['flow-sub'], deviceCodeTtl: 1800 });
const tmp = mkdtempSync(join(tmpdir(), 'bench-flows-'));
writeFileSync(join(tmp, 'pw'), 'Admin-pass-42\n');
writeFileSync(join(tmp, 'idp-ca.pem'), idp.caPem);
spawnSync(process.execPath, [join(root, 'bin/dirid-server.js'), 'init', '--data-dir', join(tmp, 'realm'), '--realm', REALM, '--domain', 'flows.test', '--hostname', 'localhost', '--admin-password-file', join(tmp, 'pw')]);
const server = spawn(process.execPath, [join(root, 'bin/dirid-server.js'), 'start', '--data-dir', join(tmp, 'realm'), '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0', '--idp-ca-file', join(tmp, 'idp-ca.pem')], { stdio: ['ignore', 'pipe', 'inherit'] });
pin(server.pid!, 0);
let out = '';
const ports = await new Promise<{ kdc: number; https: number }>((resolve) => {
  server.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const k = /KDC listening on 127\.0\.0\.1:(\d+)/.exec(out);
    const h = /HTTPS API listening on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (k && h) resolve({ kdc: Number(k[1]), https: Number(h[1]) });
  });
});
server.stdout!.resume();
const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;
const rpc = new RpcSession(`https://localhost:${ports.https}`, readFileSync(join(tmp, 'realm', 'ca.crt'), 'utf8'));
await rpc.login('admin', 'Admin-pass-42');
await rpc.call('idp_add', ['local'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid' });
await rpc.call('user_add', ['flow'], { first: 'F', last: 'L' });
await rpc.call('user_mod', ['flow'], { user_auth_type: ['idp'], idp: 'local', idp_user_id: 'flow-sub' });
await rpc.call('user_add', ['bench'], { first: 'B', last: 'E', password: 'Bench-password-1' });

const kdc = { host: '127.0.0.1', port: ports.kdc };
const send = (m: Buffer) => sendUdp(kdc, m, [2000, 4000]);
const hostKeys = readKeytab(readFileSync(join(tmp, 'realm', 'host.keytab'))).map((k) => ({ etype: k.etype, value: k.key }));
const armor: Credentials = await asWithKeys(send, { nameType: 3, nameString: ['host', 'localhost'] }, REALM, hostKeys);
const key = profile(18).stringToKey('Bench-password-1', `${REALM}bench`);
const cname = { nameType: 1, nameString: ['bench'] };

async function passwordLoad(seconds: number): Promise<number> {
  let n = 0;
  let running = true;
  const worker = async () => {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    while (running) {
      const msg = encodeKdcReq({ msgType: 10, padata: [encTimestamp(key)], body: asReqBody(cname, REALM, { etypes: [18], nonce: randomNonce() }) });
      const ok = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), 2000);
        s.once('message', (m) => {
          clearTimeout(t);
          resolve(m[0] !== 0x7e);
        });
        s.send(msg, kdc.port, kdc.host);
      });
      if (ok) n++;
    }
    s.close();
  };
  const ws = Array.from({ length: 16 }, worker);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  running = false;
  await Promise.all(ws);
  return n / seconds;
}

const flowName = { nameType: 1, nameString: ['flow'] };
async function startFlow(): Promise<PaData | null> {
  const body = asReqBody(flowName, REALM, {});
  const req = armoredAsReq(armor, body, []);
  const r = processArmored(await send(req.msg), req, body, req.armorKey);
  if (r.kind !== 'error' || !r.padata.some((p) => p.type === PaType.REDHAT_IDP_OAUTH2)) return null;
  return r.padata.find((p) => p.type === PaType.FX_COOKIE) ?? null;
}
async function pollFlow(cookie: PaData): Promise<boolean> {
  const body = asReqBody(flowName, REALM, {});
  const req = armoredAsReq(armor, body, [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie]);
  const r = processArmored(await send(req.msg), req, body, req.armorKey);
  return r.kind === 'error' && r.padata.some((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
}

await passwordLoad(1);
const idleRps = await passwordLoad(SECONDS);
const rssIdle = rss();
const cookies: PaData[] = [];
const t0 = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: 32 }, async () => {
    while (next < FLOWS) {
      next++;
      const c = await startFlow().catch(() => null);
      if (c) cookies.push(c);
    }
  }),
);
const startSec = (performance.now() - t0) / 1000;
const rssFlows = rss();
// keep the flows pending: answers for them (each makes the KDC poll the IdP once its interval has passed) while the password load runs
let polling = true;
let polls = 0;
let stillPending = 0;
const poller = Promise.all(
  Array.from({ length: 8 }, async (_, w) => {
    for (let i = w; polling; i = (i + 8) % cookies.length) {
      if (await pollFlow(cookies[i]!).catch(() => false)) stillPending++;
      polls++;
    }
  }),
);
const busyRps = await passwordLoad(SECONDS);
polling = false;
await poller;
const rssAfter = rss();
console.log(`idp device flows: ${cookies.length} of ${FLOWS} flows started in ${startSec.toFixed(1)} s against a local oidc-provider; KDC on core 0, load on core 1`);
console.log(`server RSS: idle ${rssIdle.toFixed(0)} MiB, with ${cookies.length} pending flows ${rssFlows.toFixed(0)} MiB, after polling ${rssAfter.toFixed(0)} MiB (flow state travels in the sealed PA-FX-COOKIE)`);
console.log(`password AS-REQ throughput: idle ${idleRps.toFixed(0)}/s, while ${polls} answers for pending flows were polled (${stillPending} still pending) ${busyRps.toFixed(0)}/s, ratio ${(busyRps / idleRps).toFixed(2)}`);
server.kill('SIGTERM');
await idp.stop();
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
