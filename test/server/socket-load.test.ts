/**
 * The server through its sockets (docs/load.md): a short run of the socket
 * load (test/support/socket-load.ts, the code of scripts/socket-load.ts with
 * small counts and time-outs of a second or two), and the bounds it relies
 * on, each on its own: a slow client (a byte at a time) is dropped by every
 * TCP listener within its time-out, a length announcing gigabytes is
 * answered or closed at once without the memory growing, connections
 * opened and left silent past a listener's limit do not keep correct
 * clients out.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { ExtendedOid, ResultCode } from '../../src/ldap/codes.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RawLdap } from '../support/ldap-client.js';
import { RpcSession } from '../support/rpc-client.js';
import { residentBytes } from '../support/socket-load-server.js';
import { asOverTcp, DEFAULT_OPTIONS, SHORT_BOUNDS, socketLoad } from '../support/socket-load.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Connects (over TLS when asked, the certificate unchecked) and resolves once the connection is up, or closed first. */
async function open(port: number, tls = false): Promise<Socket> {
  const s: Socket = tls ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : tcpConnect(port, '127.0.0.1');
  s.on('error', () => {});
  s.on('data', () => {});
  await new Promise<void>((resolve) => {
    s.once(tls ? 'secureConnect' : 'connect', () => resolve());
    s.once('close', () => resolve());
  });
  return s;
}

/** Trickles `bytes` one octet every `everyMs`; resolves with the milliseconds until the server closed (Infinity past `giveUpMs`). */
async function trickle(s: Socket, bytes: Buffer, everyMs: number, giveUpMs: number): Promise<number> {
  const t0 = performance.now();
  let i = 0;
  const timer = setInterval(() => {
    if (s.writable) s.write(bytes.subarray(i % bytes.length, (i % bytes.length) + 1));
    i++;
  }, everyMs);
  const ms = await Promise.race([new Promise<number>((r) => s.once('close', () => r(performance.now() - t0))), sleep(giveUpMs).then(() => Infinity)]);
  clearInterval(timer);
  s.destroy();
  return ms;
}

/** An AS exchange over TCP: whether an AS-REP (application tag 11) came back. */
describe('through the sockets', () => {
  let realm: TestRealm;
  before(async () => {
    realm = await startTestRealm({
      bounds: {
        kdcTcp: { messageMs: 1000, idleMs: 4000, maxConnections: 8 },
        ldap: { pduTimeout: 1, idleTimeout: 4, maxConnections: 8 },
        https: { handshakeMs: 1000, headersMs: 1000, requestMs: 2000, bodyMs: 1500 },
        httpsMaxConnections: 16,
        httpMs: 1000,
      },
    });
  });
  after(async () => realm?.stop());

  it('drops a client sending a byte at a time on every TCP listener, within its time-out', async () => {
    const s = realm.server;
    const cases: Array<[string, number, boolean, Buffer]> = [
      ['kdc', s.kdcPort, false, Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.alloc(256, 0x30)])],
      ['kpasswd', s.kpasswdPort, false, Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.alloc(256, 0x30)])],
      ['ldap', s.ldapPort, false, Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.alloc(256, 0x04)])],
      ['ldaps handshake', s.ldapsPort, false, Buffer.from('160301020001000100', 'hex')],
      ['https handshake', s.httpsPort, false, Buffer.from('160301020001000100', 'hex')],
      ['https headers', s.httpsPort, true, Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}`)],
      ['http headers', s.httpPort, false, Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(200)}`)],
    ];
    // a byte every 200 ms: more often than any idle time-out, so only the bound on the whole message can end it
    const took = await Promise.all(cases.map(async ([name, port, tls, bytes]) => [name, await trickle(await open(port, tls), bytes, 200, 8000)] as const));
    for (const [name, ms] of took) {
      assert.ok(ms >= 800, `${name}: closed after ${ms} ms, before its time-out of 1 s`);
      assert.ok(ms <= 3500, `${name}: not closed within its time-out of 1 s (+2.5 s): ${ms} ms`);
    }
  });

  it('answers or closes at once a length announcing gigabytes, without its memory growing', async () => {
    const s = realm.server;
    const giants: Array<[string, number, boolean, Buffer]> = [
      ['kdc 2 GiB', s.kdcPort, false, Buffer.from('7fffffff30', 'hex')],
      ['kdc 4 GiB', s.kdcPort, false, Buffer.from('ffffffff30', 'hex')],
      ['kpasswd 2 GiB', s.kpasswdPort, false, Buffer.from('7fffffff0001', 'hex')],
      ['ldap 4 GiB', s.ldapPort, false, Buffer.from('3084ffffffff020101', 'hex')],
      ['ldaps 4 GiB', s.ldapsPort, true, Buffer.from('3084ffffffff020101', 'hex')],
      ['https 4 GiB body', s.httpsPort, true, Buffer.from('POST /dirid/session/json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4294967296\r\n\r\n{')],
    ];
    const rss0 = residentBytes();
    for (const [name, port, tls, bytes] of giants) {
      for (let i = 0; i < 25; i++) {
        const c = await open(port, tls);
        const t0 = performance.now();
        const done = new Promise<string>((resolve) => {
          c.once('data', () => resolve('answered'));
          c.once('close', () => resolve('closed'));
        });
        c.write(bytes);
        const how = await Promise.race([done, sleep(2000).then(() => 'nothing')]);
        c.destroy();
        assert.notEqual(how, 'nothing', `${name}: neither answered nor closed within 2 s`);
        assert.ok(performance.now() - t0 < 2000);
      }
    }
    const grown = residentBytes() - rss0;
    assert.ok(grown < 32 * 1024 * 1024, `the process grew by ${(grown / 1048576).toFixed(1)} MiB`);
  });

  it('serves correct clients while silent connections are held past each limit', async () => {
    const s = realm.server;
    const held: Socket[] = [];
    for (const [port, n] of [
      [s.kdcPort, 20],
      [s.kpasswdPort, 20],
      [s.ldapPort, 20],
      [s.ldapsPort, 10],
      [s.httpsPort, 40],
    ] as const)
      for (let i = 0; i < n; i++) held.push(await open(port));
    try {
      assert.ok(await asOverTcp(s.kdcPort, 'EXAMPLE.TEST', 'admin', realm.adminPassword), 'an AS exchange over TCP');
      const ldap = await RawLdap.connect(s.ldapPort);
      ldap.send({ messageId: 1, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.whoAmI } });
      const m = await ldap.next();
      assert.equal(m && 'resultCode' in m.protocolOp ? m.protocolOp.resultCode : undefined, ResultCode.success, 'an LDAP request');
      ldap.close();
      const api = new RpcSession(realm.url, realm.ca);
      assert.equal((await api.login('admin', realm.adminPassword)).status, 200, 'an API login');
      assert.ok(realm.log.some((l) => / kdc tcp_closed_oldest level=warn /.test(l)));
      assert.ok(realm.log.some((l) => / ldap closed_silent level=warn conn=\d+ reason="more than 8 connections, and this one has sent no whole PDU"/.test(l)));
      assert.ok(realm.log.some((l) => / https closed_idle level=warn .* reason="more than 16 connections: /.test(l)));
    } finally {
      for (const h of held) h.destroy();
    }
  });
});

describe('the socket load, short', () => {
  it('keeps answering, returns to its idle memory and keeps its store through 10,000 bad messages of each kind', { timeout: 300_000 }, async () => {
    const lines: string[] = [];
    const report = await socketLoad({
      ...DEFAULT_OPTIONS,
      count: Number(process.env.SOCKET_LOAD_COUNT ?? 10_000),
      measureSeconds: 1.5,
      seed: Number(process.env.SOCKET_LOAD_SEED ?? 7),
      bounds: SHORT_BOUNDS,
      // half-second windows on a machine shared with other work say little about the rate: it is reported, and
      // judged by the long run (docs/load.md); correct requests must still all succeed after the load
      judgeRates: false,
      halfOpenExtra: 16,
      out: (l) => lines.push(l),
    });
    assert.deepEqual(report.failures, [], lines.join('\n'));
    assert.equal(report.figures['store.integrity_check'], 'ok');
    assert.equal(report.figures['store.seeded_entries_changed'], 0);
    for (const k of ['after.kdc_as_req_per_s', 'after.api_user_show_per_s', 'after.ldap_search_per_s']) assert.ok(Number(report.figures[k]) > 0, k);
  });
});
