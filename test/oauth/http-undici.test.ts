/**
 * The IdP HTTPS client (oauth/http.ts) over undici, where it meets its
 * bounds with code of its own: requests waiting for a connection to a busy
 * IdP fail at their deadline and are never sent; a connection reset before
 * answering is tried again only when it was a reused one, and only once;
 * a connection idle for longer than undici's default keep-alive (4 s) is
 * still reused when the IdP keeps it; and an answer's headers read as
 * node:https reads them (repeated ones included).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, get, type Server } from 'node:https';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { OAuthError } from '../../src/oauth/types.js';

describe('IdP HTTPS client over undici', () => {
  let caPem: string;
  let cert: { keyPem: string; certPem: string };
  const servers: Server[] = [];
  /** an IdP answering with `handle`, counting its TLS connections and the requests it saw */
  async function idp(handle: (req: IncomingMessage, res: ServerResponse, nthOnConnection: number) => void, keepAliveTimeout = 60_000) {
    const seen = { connections: 0, requests: 0 };
    const perSocket = new WeakMap<Socket, number>();
    const server = createServer({ key: cert.keyPem, cert: cert.certPem, keepAliveTimeout }, (req, res) => {
      seen.requests++;
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      req.resume();
      req.on('end', () => handle(req, res, n));
    });
    server.on('secureConnection', () => seen.connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.push(server);
    return { seen, base: `https://localhost:${(server.address() as AddressInfo).port}` };
  }
  const json = (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');

  before(async () => {
    const ca = await createCa('undici client test CA');
    caPem = ca.certPem;
    cert = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  });
  after(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise<void>((r) => s.close(() => r()));
    }
  });

  it('requests waiting for a connection fail at their deadline and are never sent', async () => {
    let slow = true;
    const { seen, base } = await idp((_req, res) => (slow ? setTimeout(() => json(res), 1500) : json(res)));
    const { request } = httpsFetch(caPem, 300, 1024 * 1024, 2);
    const t0 = performance.now();
    const results = await Promise.allSettled(Array.from({ length: 6 }, (_, i) => request(`${base}/token`, { method: 'POST', body: `n=${i}` })));
    assert.ok(performance.now() - t0 < 1000, 'the waiting requests outlived their deadline');
    for (const r of results) assert.ok(r.status === 'rejected' && r.reason instanceof OAuthError && r.reason.code === 'idp_unreachable');
    await sleep(1700); // the IdP has answered what it got; the waiting requests had their turn
    assert.equal(seen.requests, 2, 'a request whose caller gave up was sent');
    slow = false;
    const answer = await request(`${base}/token`, { method: 'POST', body: 'n=again' });
    assert.equal(answer.status, 200);
  });

  it('a reset on a new connection is not tried again, a reset on a reused one once', async () => {
    // answers the first request ever, then resets every request
    let answered = 0;
    const { seen, base } = await idp((req, res) => {
      if (answered++ === 0) json(res);
      else req.socket.destroy();
    });
    const { request } = httpsFetch(caPem);
    assert.equal((await request(`${base}/a`)).status, 200);
    seen.requests = 0;
    // the kept connection is reused and reset; the retry, on a new connection, is reset too
    await assert.rejects(request(`${base}/b`, { method: 'POST', body: 'x=1' }));
    assert.equal(seen.requests, 2);
    seen.requests = 0;
    // no connection left to reuse: the new one is reset, and that is the end
    await assert.rejects(request(`${base}/c`, { method: 'POST', body: 'x=2' }));
    assert.equal(seen.requests, 1);
  });

  it('keeps an idle connection past undici\'s default keep-alive when the IdP keeps it', async () => {
    // keepAliveTimeout 0: the IdP closes no idle connection and announces no keep-alive time
    const { seen, base } = await idp((_req, res) => json(res), 0);
    const { request } = httpsFetch(caPem);
    await request(`${base}/token`);
    await sleep(4_500);
    await request(`${base}/token`);
    assert.equal(seen.connections, 1);
  });

  it("reads an answer's headers as node:https does, repeated ones included", async () => {
    const { base } = await idp((_req, res) => {
      res.setHeader('content-type', ['application/json', 'text/plain']);
      res.setHeader('set-cookie', 'a=1');
      res.setHeader('x-many', ['1', '2']);
      res.setHeader('cache-control', 'no-store');
      res.setHeader('www-authenticate', ['Bearer error="x"', 'DPoP']);
      res.end('{}');
    });
    const ours = (await httpsFetch(caPem).request(`${base}/h`)).headers;
    const node = await new Promise<IncomingHttpHeaders>((resolve, reject) =>
      get(`${base}/h`, { ca: caPem, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.headers));
      }).on('error', reject),
    );
    const drop = ({ date: _d, connection: _c, 'keep-alive': _k, ...rest }: IncomingHttpHeaders) => rest;
    assert.deepEqual(drop(ours), drop(node));
    assert.equal(ours['content-type'], 'application/json');
    assert.deepEqual(ours['set-cookie'], ['a=1']);
  });
});
