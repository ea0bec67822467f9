/**
 * `dirid ping` end to end, beside Node's own start-up and curl --negotiate
 * doing the same call, all in one run (docs/cli-startup.md):
 *  1. wall time of new processes, run in turn round after round (a paired
 *     design: the machine's speed drifts, the ratio within a round does
 *     not): `node -e 0`; `dirid ping` (cached schema, valid MIT ticket,
 *     cached session cookie); `curl --negotiate` POSTing the JSON-RPC ping
 *     (a full Kerberos handshake); and the floor of any Node client, a bare
 *     node:https POST of the same ping with the same session cookie and no
 *     dirid code. Printed: medians, and the medians of the per-round ratios
 *     dirid/node, dirid/curl and floor/node;
 *  2. RPC ping throughput over one keep-alive HTTPS connection with a
 *     session cookie, vs Negotiate on every request (the same client);
 *     --seconds 0 skips it.
 *   node --import tsx bench/cli-ping.ts [--runs N] [--seconds N]
 */
import { spawnSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'node:https';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '20' }, seconds: { type: 'string', default: '4' }, help: { type: 'boolean', short: 'h' } } });
if (values.help) {
  process.stdout.write(`usage: node --import tsx bench/cli-ping.ts [--runs N] [--seconds N]
  --runs N      rounds of new processes (node -e 0, dirid ping, curl --negotiate, bare node:https), default 20
  --seconds N   length of each throughput loop, default 4; 0 skips the throughput part
`);
  process.exit(0);
}
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
    const m = / service=https url=https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
    if (m && / server started /.test(out)) resolve(Number(m[1]));
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
wall(process.execPath, diridArgs); // fills the schema, session and compile caches
wall('curl', curlArgs);
// the floor of any Node client: the same POST with the cookie dirid cached, nothing else
const sessionDir = join(tmp, 'cache', 'dirid', 'sessions');
const stored = JSON.parse(readFileSync(join(sessionDir, readdirSync(sessionDir).find((f) => f.endsWith('.json'))!), 'utf8')) as { cookie: string };
const floorScript = join(tmp, 'floor.mjs');
writeFileSync(
  floorScript,
  `import { request } from 'node:https';
import { readFileSync } from 'node:fs';
const req = request({ method: 'POST', host: 'localhost', port: ${port}, path: '/dirid/session/json', ca: readFileSync(${JSON.stringify(join(tmp, 'realm', 'ca.crt'))}, 'utf8'),
  headers: { 'Content-Type': 'application/json', Referer: '${url}/dirid/json', Cookie: ${JSON.stringify(stored.cookie)} } }, (res) => {
  res.resume();
  res.on('end', () => process.exit(res.statusCode === 200 ? 0 : 1));
});
req.end(${JSON.stringify(body)});
`,
);
wall(process.execPath, [floorScript]);
const nd: number[] = [];
const d: number[] = [];
const c: number[] = [];
const f: number[] = [];
for (let i = 0; i < RUNS; i++) {
  nd.push(wall(process.execPath, ['-e', '0']));
  d.push(wall(process.execPath, diridArgs));
  c.push(wall('curl', curlArgs));
  f.push(wall(process.execPath, [floorScript]));
}
const ratios = (a: number[], b: number[]) => median(a.map((x, i) => x / b[i]!)).toFixed(2);
const ms = (xs: number[]) => `${median(xs).toFixed(1)} ms`;
console.log(`dirid ping benchmark (${RUNS} rounds of new processes, median wall time; server, tools and other work share this machine: ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)})`);
console.log(`node -e 0 ${ms(nd)} | dirid ping ${ms(d)} | curl --negotiate ${ms(c)} | bare node:https ping ${ms(f)}`);
console.log(`ratios (median of per-round ratios): dirid/node ${ratios(d, nd)} | dirid/curl ${ratios(d, c)} | bare node:https/node ${ratios(f, nd)} | dirid/bare node:https ${ratios(d, f)}`);
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca });
if (SECONDS > 0) await throughput();

async function throughput(): Promise<void> {
  // throughput over one keep-alive connection
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
  console.log(`RPC ping throughput:      session keep-alive ${sessionRps.toFixed(0)} req/s | curl --negotiate loop ${curlRps.toFixed(0)} req/s | ratio ${(sessionRps / curlRps).toFixed(1)}`);
}
agent.destroy();
server.kill('SIGTERM');
rmSync(tmp, { recursive: true, force: true });
process.exit(0);
