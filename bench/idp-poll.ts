/**
 * What one device-flow token request costs the IdP client, alone: the CPU
 * time of pollToken (the token request and its answer's reading in
 * src/oauth/device-flow.ts, the HTTPS client of src/oauth/http.ts with an
 * extra CA bundle configured, as the server runs with --idp-ca-file) against a local HTTPS IdP in a child process that answers
 * every request `authorization_pending` (or the error `--answer` names,
 * e.g. invalid_grant, which the KDC also reports as pending). Steadier than
 * bench/idp-flows.ts on a busy machine: no Kerberos, no UDP, one process
 * measured.
 *   node --import tsx bench/idp-poll.ts [--requests N] [--parallel N] [--answer ERROR]
 */
import { fork } from 'node:child_process';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { IdpClient } from '../src/oauth/client.js';
import { pollToken } from '../src/oauth/device-flow.js';
import { httpsFetch } from '../src/oauth/http.js';
import type { IdpConfig } from '../src/oauth/types.js';
import { createCa, issueServerCert } from '../src/server/pki.js';

if (process.argv[2] === '--serve') {
  // the child: the IdP
  const tls = JSON.parse(process.argv[3]!) as { keyPem: string; certPem: string };
  const body = JSON.stringify({ error: process.argv[4] });
  const server = createServer({ key: tls.keyPem, cert: tls.certPem, keepAliveTimeout: 60_000 }, (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(body);
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('disconnect', () => process.exit(0));
} else {
  const { values } = parseArgs({ options: { requests: { type: 'string', default: '4000' }, parallel: { type: 'string', default: '4' }, answer: { type: 'string', default: 'authorization_pending' } } });
  const REQUESTS = Number(values.requests);
  const PARALLEL = Number(values.parallel);
  const ca = await createCa('idp-poll bench CA');
  const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const child = fork(new URL(import.meta.url).pathname, ['--serve', JSON.stringify(tls), values.answer], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const base = `https://localhost:${port}`;
  const cfg: IdpConfig = { name: 'bench', clientId: 'dirid-kdc', clientSecret: 'secret', issuerUrl: base, devAuthUri: `${base}/device/auth`, tokenUri: `${base}/token`, keysUri: `${base}/jwks`, userinfoUri: `${base}/me`, scope: 'openid' };
  const idp = new IdpClient(httpsFetch(ca.certPem));
  let n = 0;
  // an error answer other than pending or slow_down is thrown, as the KDC gets it
  const poll = () => pollToken(cfg, `device-code-${n++}`, idp, { interval: 5, expiresAt: Date.now() + 600_000 }).catch((e: unknown) => e);
  const round = () => Promise.all(Array.from({ length: PARALLEL }, poll));
  for (let i = 0; i < 300; i++) await round(); // warm up: connections, JIT
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < REQUESTS / PARALLEL; i++) await round();
  const u = process.cpuUsage(u0);
  const sec = (performance.now() - t0) / 1000;
  console.log(`token requests answered ${values.answer}: ${REQUESTS} (${PARALLEL} at a time) in ${sec.toFixed(1)} s; IdP client CPU ${((u.user + u.system) / REQUESTS).toFixed(0)} µs per request`);
  child.disconnect();
  process.exit(0);
}
