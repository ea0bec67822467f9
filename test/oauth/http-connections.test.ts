/**
 * The IdP HTTPS client (oauth/http.ts) and its connections to one IdP: the
 * token requests of many device flows share a few kept-alive connections
 * (at most MAX_CONNECTIONS_PER_IDP in flight, the rest waiting for one), a
 * connection opened after the IdP closed the idle ones resumes the TLS
 * session of an earlier one instead of a full handshake, and each IdP host
 * has connections of its own. The trusted CAs (Node's roots and the
 * configured bundle) make one TLS context when the client is made, not one
 * per connection. The test IdP counts the TLS connections it accepts, the
 * resumed ones, and the most requests it had in progress.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import tls from 'node:tls';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { httpsFetch, MAX_CONNECTIONS_PER_IDP } from '../../src/oauth/http.js';

interface Counting {
  server: Server;
  base: string;
  connections: number;
  resumed: number;
  inProgress: number;
  mostInProgress: number;
}

describe('IdP HTTPS client: connections to an IdP', () => {
  let caPem: string;
  let cert: { keyPem: string; certPem: string };
  const idps: Counting[] = [];
  /** an IdP answering every request after `delayMs`, and closing connections idle for `idleMs` */
  async function countingIdp(delayMs: number, idleMs: number): Promise<Counting> {
    const c: Counting = { server: undefined as unknown as Server, base: '', connections: 0, resumed: 0, inProgress: 0, mostInProgress: 0 };
    c.server = createServer({ key: cert.keyPem, cert: cert.certPem, keepAliveTimeout: idleMs }, (req, res) => {
      c.inProgress++;
      c.mostInProgress = Math.max(c.mostInProgress, c.inProgress);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          c.inProgress--;
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ error: 'authorization_pending' }));
        }, delayMs),
      );
    });
    c.server.on('secureConnection', (s) => {
      c.connections++;
      if (s.isSessionReused()) c.resumed++;
    });
    await new Promise<void>((r) => c.server.listen(0, '127.0.0.1', () => r()));
    c.base = `https://localhost:${(c.server.address() as AddressInfo).port}`;
    idps.push(c);
    return c;
  }
  const poll = (fetch: ReturnType<typeof httpsFetch>, idp: Counting, flow: number) =>
    fetch(`${idp.base}/token`, { method: 'POST', body: `device_code=flow-${flow}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } }).then((r) => r.json());

  before(async () => {
    const ca = await createCa('connections test CA');
    caPem = ca.certPem;
    cert = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  });
  after(async () => {
    for (const c of idps) {
      c.server.closeAllConnections();
      await new Promise<void>((r) => c.server.close(() => r()));
    }
  });

  it('polls of many flows at once share at most MAX_CONNECTIONS_PER_IDP connections, kept for the next polls', async () => {
    const idp = await countingIdp(50, 60_000);
    const fetch = httpsFetch(caPem);
    const flows = 3 * MAX_CONNECTIONS_PER_IDP;
    const first = await Promise.all(Array.from({ length: flows }, (_, i) => poll(fetch, idp, i)));
    assert.ok(first.every((b) => (b as { error: string }).error === 'authorization_pending'));
    assert.ok(idp.connections <= MAX_CONNECTIONS_PER_IDP, `${idp.connections} connections for ${flows} polls at once`);
    assert.ok(idp.mostInProgress <= MAX_CONNECTIONS_PER_IDP, `${idp.mostInProgress} polls in progress at once`);
    const opened = idp.connections;
    await Promise.all(Array.from({ length: flows }, (_, i) => poll(fetch, idp, i)));
    assert.equal(idp.connections, opened, 'the second round of polls opened connections of its own');
  });

  it('a connection opened after the IdP closed the idle ones resumes an earlier TLS session', async () => {
    const idp = await countingIdp(0, 100);
    const fetch = httpsFetch(caPem);
    await poll(fetch, idp, 1);
    for (let round = 0; round < 3; round++) {
      await sleep(300); // the IdP closes the idle connection
      await poll(fetch, idp, 2 + round);
    }
    assert.equal(idp.connections, 4);
    assert.equal(idp.resumed, 3, `${idp.resumed} of the 3 later connections resumed the TLS session`);
  });

  it('builds the TLS context of the trusted CAs once, not for each connection', async () => {
    const idp = await countingIdp(0, 50);
    const made = tls.createSecureContext;
    let contexts = 0;
    tls.createSecureContext = (...args) => {
      contexts++;
      return made(...args);
    };
    try {
      const fetch = httpsFetch(caPem);
      const atStart = contexts;
      for (let i = 0; i < 4; i++) {
        await poll(fetch, idp, i);
        await sleep(150); // the IdP closes the idle connection: the next poll opens another
      }
      assert.equal(idp.connections, 4);
      assert.equal(contexts - atStart, 0, `${contexts - atStart} TLS contexts built for 4 connections`);
    } finally {
      tls.createSecureContext = made;
    }
  });

  it('a slow IdP does not hold up the polls of another', async () => {
    const slow = await countingIdp(1500, 60_000);
    const fast = await countingIdp(0, 60_000);
    const fetch = httpsFetch(caPem);
    const stuck = Promise.all(Array.from({ length: 2 * MAX_CONNECTIONS_PER_IDP }, (_, i) => poll(fetch, slow, i)));
    await sleep(100);
    const t0 = performance.now();
    await poll(fetch, fast, 1);
    assert.ok(performance.now() - t0 < 1000, 'the fast IdP waited for a connection to the slow one');
    await stuck;
  });
});
