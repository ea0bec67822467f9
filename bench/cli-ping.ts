/**
 * `dirid ping` end to end, beside curl --negotiate doing the same call in
 * the same run:
 *  1. wall time of a new `dirid ping` process (cached schema, valid MIT
 *     ticket, cached session cookie) vs a new `curl --negotiate` process
 *     POSTing the JSON-RPC ping (which does a full Kerberos handshake);
 *  2. RPC ping throughput over one keep-alive HTTPS connection with a
 *     session cookie, vs Negotiate on every request (the same client).
 *   node --import tsx bench/cli-ping.ts [--runs N] [--seconds N]
 */
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'node:https';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, seconds: { type: 'string', default: '4' } } });
const RUNS = Number(values.runs);
const SECONDS = Number(values.seconds);
const root = new URL('..', import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'bench-ping-'));
writeFileSync(join(tmp, 'pw'), 'Admin-pass-42\n');
spawnSync(process.execPath, [join(root, 'bin/dirid-server.js'), 'init', '--data-dir', join(tmp, 'realm'), '--realm', 'BENCH.TEST', '--domain', 'bench.test', '--hostname', 'localhost', '--admin-password-file', join(tmp, 'pw')]);
const server = spawn(process.execPath, [join(root, 'bin/dirid-server.js'), 'start', '--data-dir', join(tmp, 'realm'), '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
let out = '';
const port = await new Promise<number>((resolve) => {
  server.stdout!.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /HTTPS API listening on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m && /KDC listening/.test(out)) resolve(Number(m[1]));
  });
});
server.stdout!.resume();
const conf = join(tmp, 'realm', 'default.conf');
writeFileSync(conf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = https://localhost:${port}/dirid/xml`));
const env = { ...process.env, KRB5_CONFIG: join(tmp, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(tmp, 'cc')}`, XDG_CACHE_HOME: join(tmp, 'cache') };
spawnSync('kinit', ['admin'], { env, input: 'Admin-pass-42\n' });
const ca = readFileSync(join(tmp, 'realm', 'ca.crt'), 'utf8');
const body = '{"method":"ping","params":[[],{}],"id":1}';
const url = `https://localhost:${port}`;

function wall(cmd: string, args: string[]): number {
  const t0 = performance.now();
  const r = spawnSync(cmd, args, { env, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  return performance.now() - t0;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const diridArgs = [join(root, 'bin/dirid.js'), '-c', conf, 'ping'];
const curlArgs = ['-s', '-o', '/dev/null', '-f', '--negotiate', '-u', ':', '--cacert', join(tmp, 'realm', 'ca.crt'), '-H', `Referer: ${url}/dirid/`, '-H', 'Content-Type: application/json', '--data-binary', body, `${url}/dirid/json`];
wall(process.execPath, diridArgs); // fills the schema and session caches
wall('curl', curlArgs);
const d: number[] = [];
const c: number[] = [];
for (let i = 0; i < RUNS; i++) {
  d.push(wall(process.execPath, diridArgs));
  c.push(wall('curl', curlArgs));
}

// throughput over one keep-alive connection
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
function post(headers: Record<string, string>): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/dirid/session/json`, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', Referer: `${url}/dirid/`, ...headers } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
const login = await new Promise<string>((resolve, reject) => {
  const req = request(`${url}/dirid/session/login_password`, { method: 'POST', agent, headers: { 'Content-Type': 'application/x-www-form-urlencoded', Referer: `${url}/dirid/` } }, (res) => {
    res.resume();
    const sc = res.headers['set-cookie']?.[0] ?? '';
    resolve(sc.split(';')[0]!);
  });
  req.on('error', reject);
  req.end('user=admin&password=Admin-pass-42');
});
let n = 0;
const t0 = performance.now();
while (performance.now() - t0 < SECONDS * 1000) {
  const r = await post({ Cookie: login });
  if (r.status !== 200) throw new Error(`status ${r.status}`);
  n++;
}
const sessionRps = n / SECONDS;
let m = 0;
const t1 = performance.now();
while (performance.now() - t1 < SECONDS * 1000) {
  spawnSync('curl', curlArgs, { env });
  m++;
}
const curlRps = m / SECONDS;
console.log(`dirid ping benchmark (${RUNS} runs; server and tools on this 2-core machine)`);
console.log(`new process, end to end:  dirid ping median ${median(d).toFixed(1)} ms | curl --negotiate median ${median(c).toFixed(1)} ms | ratio dirid/curl ${(median(d) / median(c)).toFixed(2)}`);
console.log(`RPC ping throughput:      session keep-alive ${sessionRps.toFixed(0)} req/s | curl --negotiate loop ${curlRps.toFixed(0)} req/s | ratio ${(sessionRps / curlRps).toFixed(1)}`);
agent.destroy();
server.kill('SIGTERM');
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
