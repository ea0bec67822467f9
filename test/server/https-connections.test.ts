/**
 * The HTTPS API's connection limit (server/https-connections.ts,
 * docs/load.md): with `api_max_connections` held by clients that never
 * finish a handshake or that keep a connection between requests, a new
 * client still gets its answer (the oldest connection serving no request
 * gives way, and it is logged); when every connection is serving a
 * request, the new one is closed and that is logged; the server then
 * serves again once they are done.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { httpsPost } from '../support/rpc-client.js';

const MAX = 4;

describe('the HTTPS API connection limit', () => {
  let realm: TestRealm;
  let port: number;
  const held: Socket[] = [];

  before(async () => {
    realm = await startTestRealm({ bounds: { httpsMaxConnections: MAX } });
    port = Number(new URL(realm.url).port);
  });
  after(async () => {
    for (const s of held) s.destroy();
    await realm?.stop();
  });

  const ping = () => httpsPost(`${realm.url}/dirid/session/json`, realm.ca, '{"method":"ping","params":[[],{}],"id":1}', { 'Content-Type': 'application/json', Referer: `${realm.url}/dirid/` });
  const closed = (s: Socket) => new Promise<void>((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));
  const silentTcp = () =>
    new Promise<Socket>((resolve, reject) => {
      const s = tcpConnect(port, '127.0.0.1', () => resolve(s));
      s.on('error', reject);
      held.push(s);
    });
  const tls = () =>
    new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port, servername: 'localhost', ca: realm.ca }, () => resolve(s));
      s.on('error', () => {});
      s.once('error', reject);
      held.push(s);
    });

  it('a new client is served while silent connections fill the limit: the oldest gives way, logged', async () => {
    const silent = await Promise.all(Array.from({ length: MAX }, silentTcp));
    const since = realm.log.length;
    const r = await ping();
    // 401: the ping reached the API (no session cookie); what matters is an HTTP answer, not a closed connection
    assert.equal(r.status, 401);
    await closed(silent[0]!);
    assert.ok(realm.log.slice(since).some((l) => / https closed_idle level=warn from=\S+ reason="more than 4 connections: a connection serving no request closed for a new one"/.test(l)), realm.log.slice(since).join('\n'));
    for (const s of silent) s.destroy();
  });

  it('when every connection is serving a request, a new one is closed and logged; once they end, clients are served again', async () => {
    // requests whose bodies never come: each connection is serving a request until the server's body time-out
    const busy = await Promise.all(Array.from({ length: MAX }, tls));
    // Expect: 100-continue makes the server say when it has taken the request (a fixed pause could end before that on a loaded machine)
    const taken = busy.map(
      (s) =>
        new Promise<void>((resolve, reject) => {
          let seen = '';
          s.on('data', (c: Buffer) => {
            seen += c.toString('latin1');
            if (/^HTTP\/1\.1 100 /.test(seen)) resolve();
          });
          s.once('close', () => reject(new Error(`closed before the server took the request: ${JSON.stringify(seen)}`)));
        }),
    );
    for (const s of busy) s.write(`POST /dirid/session/json HTTP/1.1\r\nHost: localhost:${port}\r\nReferer: ${realm.url}/dirid/\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n{`);
    await Promise.all(taken);
    const since = realm.log.length;
    await assert.rejects(ping());
    assert.ok(realm.log.slice(since).some((l) => / https refused level=warn from=\S+ reason="more than 4 connections, every one serving a request"/.test(l)), realm.log.slice(since).join('\n'));
    for (const s of busy) s.destroy();
    await Promise.all(busy.map(closed));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal((await ping()).status, 401);
  });
});
