/**
 * The IdP HTTPS client (oauth/http.ts) keeps connections alive; an IdP
 * that closes one just as the client reuses it resets the request before
 * answering ("socket hang up"). The client then sends it again, once, on a new connection
 * (the IdP never saw it), instead of failing the login poll or the
 * idp-check probe. The test IdP answers the first request of each connection and
 * resets the connection at the second.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { httpsFetch } from '../../src/oauth/http.js';

describe('IdP HTTPS client: a kept-alive connection reset as it is reused', () => {
  let server: Server;
  let base: string;
  let caPem: string;
  let resetsLeft = Infinity;
  let resets = 0;
  before(async () => {
    const ca = await createCa('reset test CA');
    caPem = ca.certPem;
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const served = new WeakMap<Socket, number>();
    server = createServer({ key: tls.keyPem, cert: tls.certPem, keepAliveTimeout: 60_000 }, (req, res) => {
      const socket = req.socket;
      const n = (served.get(socket) ?? 0) + 1;
      served.set(socket, n);
      if (n > 1 && resetsLeft > 0) {
        resetsLeft--;
        resets++;
        socket.destroy();
        return;
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ n }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('sends the request again on a new connection, once', async () => {
    const fetch = httpsFetch(caPem);
    resets = 0;
    resetsLeft = Infinity;
    assert.deepEqual(await (await fetch(`${base}/a`)).json(), { n: 1 });
    // the kept-alive connection is reused and reset; the retry opens a new one, whose first request is answered
    const second = await fetch(`${base}/b`, { method: 'POST', body: 'x=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal(second.status, 200);
    assert.deepEqual(await second.json(), { n: 1 });
    assert.equal(resets, 1);
  });
});
