/**
 * What one device-flow token request costs the IdP client, alone: the CPU
 * time of pollToken (the token request and its answer's reading in
 * src/oauth/device-flow.ts, the HTTPS client of src/oauth/http.ts with an
 * extra CA bundle configured, as the server runs with --idp-ca-file) against a local HTTPS IdP in a child process that answers
 * every request `authorization_pending` (or the error `--answer` names,
 * e.g. invalid_grant, which the KDC also reports as pending). Steadier than
 * bench/idp-flows.ts on a busy machine: no Kerberos, no UDP, one process
 * measured. `--client` picks the HTTPS client under the token request:
 * `undici` (src/oauth/http.ts's, over undici), `node` (the client it
 * replaced, over node:https, kept here: a keep-alive agent per host, the
 * same TLS context, deadline, retry and size cap), or `both` (the
 * default), which alternates the two, `--runs` times each, in one process,
 * each run with a client of its own, and prints the medians.
 *   node --import tsx bench/idp-poll.ts [--requests N] [--parallel N] [--answer ERROR] [--client node|undici|both] [--runs N]
 */
import { fork } from 'node:child_process';
import type { ClientRequest } from 'node:http';
import { Agent, createServer, request as httpsRequest, type RequestOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import { parseArgs } from 'node:util';
import { IdpClient } from '../src/oauth/client.js';
import { pollToken } from '../src/oauth/device-flow.js';
import { httpsFetch, MAX_CONNECTIONS_PER_IDP, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT_MS, type HttpAnswer, type HttpsFetch, type HttpsRequest } from '../src/oauth/http.js';
import { OAuthError, type IdpConfig } from '../src/oauth/types.js';
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
  const { values } = parseArgs({
    options: {
      requests: { type: 'string', default: '4000' },
      parallel: { type: 'string', default: '4' },
      answer: { type: 'string', default: 'authorization_pending' },
      client: { type: 'string', default: 'both' },
      runs: { type: 'string', default: '5' },
    },
  });
  const REQUESTS = Number(values.requests);
  const PARALLEL = Number(values.parallel);
  const clients = values.client === 'both' ? ['node', 'undici'] : [values.client!];
  if (!clients.every((c) => c === 'node' || c === 'undici')) throw new Error('--client is node, undici or both');
  const RUNS = values.client === 'both' ? Number(values.runs) : 1;
  const ca = await createCa('idp-poll bench CA');
  const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const child = fork(new URL(import.meta.url).pathname, ['--serve', JSON.stringify(tls), values.answer], { execArgv: ['--import', 'tsx'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m: { port: number }) => resolve(m.port)));
  const base = `https://localhost:${port}`;
  const cfg: IdpConfig = { name: 'bench', clientId: 'dirid-kdc', clientSecret: 'secret', issuerUrl: base, devAuthUri: `${base}/device/auth`, tokenUri: `${base}/token`, keysUri: `${base}/jwks`, userinfoUri: `${base}/me`, scope: 'openid' };
  /** CPU µs per token request of one run, with a client of its own */
  const run = async (client: string): Promise<number> => {
    const idp = new IdpClient(client === 'undici' ? httpsFetch(ca.certPem) : nodeFetch(ca.certPem));
    let n = 0;
    // an error answer other than pending or slow_down is thrown, as the KDC gets it
    const poll = () => pollToken(cfg, `device-code-${n++}`, idp, { interval: 5, expiresAt: Date.now() + 600_000 }).catch((e: unknown) => e);
    const round = () => Promise.all(Array.from({ length: PARALLEL }, poll));
    const first = await poll();
    if (first instanceof Error && values.answer === 'authorization_pending') throw first;
    for (let i = 0; i < 300; i++) await round(); // warm up: connections, JIT
    const u0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < REQUESTS / PARALLEL; i++) await round();
    const u = process.cpuUsage(u0);
    const sec = (performance.now() - t0) / 1000;
    const us = (u.user + u.system) / REQUESTS;
    console.log(`${client}: token requests answered ${values.answer}: ${REQUESTS} (${PARALLEL} at a time) in ${sec.toFixed(1)} s; IdP client CPU ${us.toFixed(0)} µs per request`);
    return us;
  };
  const figures = new Map<string, number[]>(clients.map((c) => [c, []]));
  for (let r = 0; r < RUNS; r++) for (const c of r % 2 ? [...clients].reverse() : clients) figures.get(c)!.push(await run(c));
  if (RUNS > 1) {
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    for (const [c, xs] of figures) console.log(`${c}: median ${median(xs).toFixed(0)} µs per request (runs: ${xs.map((x) => x.toFixed(0)).join(', ')})`);
  }
  child.disconnect();
  process.exit(0);
}

/**
 * The IdP client's request function as it was over node:https: one TLS
 * context of Node's roots and the extra CA, a keep-alive agent per host (at
 * most MAX_CONNECTIONS_PER_IDP sockets, the last used first), each URL
 * parsed once, a deadline, the size cap, one retry when a reused socket is
 * reset before answering. Only `request` is there: the token poll uses
 * nothing else.
 */
function nodeFetch(extraCaPem: string, timeoutMs = DEFAULT_TIMEOUT_MS, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES): HttpsFetch {
  const secureContext = createSecureContext({ ca: [...rootCertificates, extraCaPem] });
  const agents = new Map<string, Agent>();
  const targets = new Map<string, { url: URL; options: RequestOptions }>();
  const request: HttpsRequest = (input, init = {}) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const key = String(input);
      let target = targets.get(key);
      if (!target) {
        const url = new URL(key);
        targets.set(key, (target = { url, options: urlToHttpOptions(url) }));
      }
      let agent = agents.get(target.url.host);
      if (!agent) agents.set(target.url.host, (agent = new Agent({ keepAlive: true, maxSockets: MAX_CONNECTIONS_PER_IDP, maxFreeSockets: MAX_CONNECTIONS_PER_IDP, scheduling: 'lifo' })));
      const headers: Record<string, string> = { ...init.headers };
      headers['user-agent'] ??= 'dirid-idp-client';
      const body = init.body;
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      let settled = false;
      let req: ClientRequest;
      const fail = (err: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        req.destroy();
        reject(err);
      };
      const send = (retried: boolean): void => {
        let answered = false;
        req = httpsRequest({ ...target.options, method: init.method ?? 'GET', headers, agent, ...{ secureContext } }, (res) => {
          answered = true;
          if (Number(res.headers['content-length'] ?? 0) > maxResponseBytes) {
            fail(new OAuthError('idp_bad_response', 'IdP response too large'));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxResponseBytes) fail(new OAuthError('idp_bad_response', 'IdP response too large'));
            else chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(deadline);
            resolve({ status: res.statusCode ?? 500, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
          });
          res.on('error', (e) => fail(e));
        });
        const sent = req;
        sent.on('error', (e) => {
          if (!retried && !answered && !settled && sent.reusedSocket && (e as NodeJS.ErrnoException).code === 'ECONNRESET') send(true);
          else fail(e);
        });
        sent.end(body);
      };
      const deadline = setTimeout(() => fail(new OAuthError('idp_unreachable', 'IdP request timed out')), timeoutMs);
      send(false);
    });
  const fetch = (() => Promise.reject(new Error('the bench polls through request only'))) as unknown as HttpsFetch;
  return Object.assign(fetch, { request });
}
