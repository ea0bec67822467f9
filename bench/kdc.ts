/**
 * KDC benchmark: dirid's KDC and MIT krb5kdc (Debian krb5-kdc) side by side
 * in one run, same realm name, principal, password and enctype
 * (aes256-cts-hmac-sha1-96), MIT with disable_last_success and
 * disable_lockout (dirid writes nothing per login either). Both KDCs are
 * pinned to core 0 and this load generator to core 1. Every request is new
 * (fresh nonce, fresh timestamp or authenticator), so neither lookaside
 * cache can answer it.
 *   node --import tsx bench/kdc.ts [--seconds N] [--concurrency N]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeKdcReq } from '../src/kerberos/asn1/kdc-req.js';
import { asReqBody, asWithPassword, encTimestamp, randomNonce, tgsRequest } from '../src/kerberos/client.js';
import { profile } from '../src/kerberos/crypto/index.js';
import { sendUdp } from '../src/kerberos/transport.js';
import { startMitRealm } from '../test/support/mit-realm.js';
import { RpcSession } from '../test/support/rpc-client.js';
import { readFileSync } from 'node:fs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '32' } } });
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
const ours = spawn(process.execPath, [BIN, 'start', '--data-dir', join(tmp, 'realm'), '--listen', '127.0.0.1', '--https-port', '0', '--kdc-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
pin(ours.pid!, 0);
let out = '';
const ports = await new Promise<{ kdc: number; https: number }>((resolve) => {
  ours.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const k = /KDC listening on 127\.0\.0\.1:(\d+)/.exec(out);
    const h = /HTTPS API listening on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (k && h) resolve({ kdc: Number(k[1]), https: Number(h[1]) });
  });
});
ours.stdout!.resume();
const rpc = new RpcSession(`https://localhost:${ports.https}`, readFileSync(join(tmp, 'realm', 'ca.crt'), 'utf8'));
await rpc.login('admin', 'Admin-pass-42');
await rpc.call('user_add', ['bench'], { first: 'B', last: 'Ench', password: PASSWORD });

// ---- MIT ----------------------------------------------------------------------
const mit = await startMitRealm({
  realm: REALM,
  principals: [['bench', PASSWORD], ['HTTP/localhost', null]],
  kdcConf: `${REALM} = {\n  disable_last_success = true\n  disable_lockout = true\n }`,
});
pin(mit.kdc.pid!, 0);

// ---- load ---------------------------------------------------------------------
const cname = { nameType: 1, nameString: ['bench'] };
const key = profile(ETYPE).stringToKey(PASSWORD, `${REALM}bench`);
const sname = { nameType: 2, nameString: ['HTTP', 'localhost'] };

type Maker = () => Buffer;

async function drive(port: number, make: Maker): Promise<{ rps: number; p50: number; p99: number; errors: number }> {
  const lat: number[] = [];
  let errors = 0;
  let running = true;
  const sockets: Socket[] = [];
  const worker = async () => {
    const s = createSocket('udp4');
    sockets.push(s);
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    while (running) {
      const msg = make();
      const t0 = performance.now();
      const reply = await new Promise<Buffer | null>((resolve) => {
        const t = setTimeout(() => {
          s.removeAllListeners('message');
          resolve(null);
        }, 2000);
        s.once('message', (m) => {
          clearTimeout(t);
          resolve(m);
        });
        s.send(msg, port, '127.0.0.1');
      });
      if (!reply || reply[0] === 0x7e) errors++;
      else lat.push(performance.now() - t0);
    }
    s.close();
  };
  const workers = Array.from({ length: CONC }, worker);
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  running = false;
  await Promise.all(workers);
  lat.sort((a, b) => a - b);
  return { rps: lat.length / SECONDS, p50: lat[Math.floor(lat.length * 0.5)] ?? NaN, p99: lat[Math.floor(lat.length * 0.99)] ?? NaN, errors };
}

const asMaker: Maker = () => {
  const body = asReqBody(cname, REALM, { etypes: [ETYPE], nonce: randomNonce() });
  return encodeKdcReq({ msgType: 10, padata: [encTimestamp(key)], body });
};

async function tgsMaker(port: number): Promise<Maker> {
  const tgt = await asWithPassword((m) => sendUdp({ host: '127.0.0.1', port }, m), cname, REALM, PASSWORD, { etypes: [ETYPE] });
  return () => tgsRequest(tgt, sname, { etypes: [ETYPE] }).msg;
}

const results: Record<string, Awaited<ReturnType<typeof drive>>> = {};
for (const [name, port] of [
  ['dirid', ports.kdc],
  ['MIT krb5kdc', mit.port],
] as const) {
  await drive(port, asMaker); // warm-up
  results[`${name} AS`] = await drive(port, asMaker);
  results[`${name} TGS`] = await drive(port, await tgsMaker(port));
}
const mitVersion = spawnSync('dpkg-query', ['-W', '-f=${Version}', 'krb5-kdc'], { encoding: 'utf8' }).stdout;
console.log(`KDC benchmark: ${SECONDS} s per run, ${CONC} outstanding UDP requests, etype ${ETYPE}, KDCs on core 0, generator on core 1, MIT krb5-kdc ${mitVersion}`);
console.log('run'.padEnd(20) + 'req/s'.padStart(10) + 'p50 ms'.padStart(9) + 'p99 ms'.padStart(9) + 'errors'.padStart(8));
for (const [k, r] of Object.entries(results)) console.log(k.padEnd(20) + r.rps.toFixed(0).padStart(10) + r.p50.toFixed(2).padStart(9) + r.p99.toFixed(2).padStart(9) + String(r.errors).padStart(8));
for (const kind of ['AS', 'TGS']) {
  const a = results[`dirid ${kind}`]!;
  const b = results[`MIT krb5kdc ${kind}`]!;
  console.log(`ratio dirid/MIT ${kind}: throughput ${(a.rps / b.rps).toFixed(2)}, p99 latency ${(a.p99 / b.p99).toFixed(2)}`);
}
ours.kill('SIGTERM');
await mit.stop();
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
