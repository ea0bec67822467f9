/**
 * Sending to the KDCs of krb5.conf when the first does not answer: MIT's
 * client moves on at once when the port is closed (its UDP socket is
 * connected, so it hears the ICMP port-unreachable) and, with several KDCs,
 * sends to the next after a second rather than after its whole schedule for
 * one. dirid's client must not make a user wait 17 s per dead KDC on each
 * exchange (`dirid kinit` takes two), which is what failing over to a
 * second server of the realm (docs/servers.md) looked like.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { once } from 'node:events';
import { KdcUnreachableError, sendToKdc, type KdcAddress } from '../../src/kerberos/transport.js';
import { encodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { ErrorCode } from '../../src/kerberos/iana.js';

function udpEcho(): Promise<{ port: number; close(): void }> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.on('message', (m, r) => s.send(Buffer.from('reply'), r.port, r.address));
    s.bind(0, '127.0.0.1', () => resolve({ port: s.address().port, close: () => s.close() }));
  });
}

function closedUdpPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    s.bind(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

/** A UDP "KDC" that notes when each datagram came and answers with `answer` (nothing when it returns undefined), after `delayMs`. */
function udpKdc(answer: (n: number) => Buffer | undefined, delayMs = 0, port = 0): Promise<{ port: number; arrivals: number[]; close(): void }> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const arrivals: number[] = [];
    s.on('message', (_m, r) => {
      arrivals.push(Date.now());
      const a = answer(arrivals.length);
      if (a) setTimeout(() => s.send(a, r.port, r.address), delayMs);
    });
    s.bind(port, '127.0.0.1', () => resolve({ port: s.address().port, arrivals, close: () => s.close() }));
  });
}

/** A TCP "KDC" that answers each framed request with `answer` after `delayMs`, and counts requests. */
async function tcpKdc(answer: Buffer, delayMs = 0): Promise<{ port: number; requests: () => number; close(): void }> {
  let n = 0;
  const server: Server = createServer((c) => {
    c.on('error', () => {});
    let buf = Buffer.alloc(0);
    c.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 4 || buf.length < 4 + buf.readUInt32BE(0)) return;
      n++;
      const len = Buffer.alloc(4);
      len.writeUInt32BE(answer.length);
      setTimeout(() => c.end(Buffer.concat([len, answer])), delayMs);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return { port, requests: () => n, close: () => server.close() };
}

const at = (port: number): KdcAddress => ({ host: '127.0.0.1', port });
const tooBig = encodeKrbError({ stime: new Date(), susec: 0, errorCode: ErrorCode.KRB_ERR_RESPONSE_TOO_BIG, realm: 'EXAMPLE.TEST', sname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] } });

describe('KDC failover in the client', () => {
  it('a closed first KDC costs well under two seconds', async () => {
    const live = await udpEcho();
    try {
      const dead = await closedUdpPort();
      const t0 = Date.now();
      const reply = await sendToKdc('EXAMPLE.TEST', [{ host: '127.0.0.1', port: dead }, { host: '127.0.0.1', port: live.port }], Buffer.from('request'));
      assert.equal(reply.toString(), 'reply');
      assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
    } finally {
      live.close();
    }
  });

  it('a first KDC that drops requests without a word costs about a second, not its whole schedule', async () => {
    const silent = await udpKdc(() => undefined);
    const live = await udpEcho();
    try {
      const t0 = Date.now();
      const reply = await sendToKdc('EXAMPLE.TEST', [at(silent.port), at(live.port)], Buffer.from('request'));
      const took = Date.now() - t0;
      assert.equal(reply.toString(), 'reply');
      assert.equal(silent.arrivals.length, 1, 'the silent KDC was asked first, once');
      assert.ok(took >= 900 && took < 2500, `took ${took} ms`);
    } finally {
      silent.close();
      live.close();
    }
  });

  it('a slow KDC is still heard after the next one has had its turn', async () => {
    const slow = await udpKdc((n) => (n === 1 ? Buffer.from('slow') : undefined), 1500);
    const silent = await udpKdc(() => undefined);
    try {
      const t0 = Date.now();
      const reply = await sendToKdc('EXAMPLE.TEST', [at(slow.port), at(silent.port)], Buffer.from('request'));
      assert.equal(reply.toString(), 'slow');
      assert.equal(silent.arrivals.length, 1, 'the second KDC had its turn after a second');
      assert.ok(silent.arrivals[0]! - slow.arrivals[0]! >= 900, 'and not before');
      assert.ok(Date.now() - t0 < 2500, `took ${Date.now() - t0} ms`);
    } finally {
      slow.close();
      silent.close();
    }
  });

  it('passes go round all the KDCs: each is resent to once per pass, in krb5.conf order, and then the client gives up', async () => {
    const a = await udpKdc(() => undefined);
    const b = await udpKdc(() => undefined);
    try {
      const schedule = { turnMs: 50, passWaitsMs: [100, 200, 400], tcpMs: 500 };
      const t0 = Date.now();
      await assert.rejects(sendToKdc('EXAMPLE.TEST', [at(a.port), at(b.port)], Buffer.from('request'), schedule), KdcUnreachableError);
      const took = Date.now() - t0;
      assert.equal(a.arrivals.length, 3);
      assert.equal(b.arrivals.length, 3);
      for (let i = 0; i < 3; i++) {
        assert.ok(a.arrivals[i]! < b.arrivals[i]!, `pass ${i + 1}: the first KDC first`);
        if (i < 2) assert.ok(b.arrivals[i]! <= a.arrivals[i + 1]!, `pass ${i + 1} ends before pass ${i + 2} starts`);
      }
      // turns of 50 ms for the two KDCs in each of three passes, and the waits after each pass
      // (the TCP connections of the first pass are refused at once)
      assert.ok(took >= 950, `took ${took} ms`);
    } finally {
      a.close();
      b.close();
    }
  });

  it('every KDC refusing is known at once', async () => {
    const t0 = Date.now();
    await assert.rejects(sendToKdc('EXAMPLE.TEST', [at(await closedUdpPort()), at(await closedUdpPort())], Buffer.from('request')), KdcUnreachableError);
    assert.ok(Date.now() - t0 < 900, `took ${Date.now() - t0} ms`);
  });

  it('a KDC refusing UDP is asked over TCP in the first pass', async () => {
    const tcp = await tcpKdc(Buffer.from('over tcp'));
    try {
      const t0 = Date.now();
      // nothing listens on this UDP port (the TCP port of the same number is the KDC's)
      const reply = await sendToKdc('EXAMPLE.TEST', [at(tcp.port)], Buffer.from('request'));
      assert.equal(reply.toString(), 'over tcp');
      assert.ok(Date.now() - t0 < 900, `took ${Date.now() - t0} ms`);
    } finally {
      tcp.close();
    }
  });

  it('RESPONSE_TOO_BIG over UDP sends the request again over TCP', async () => {
    const tcp = await tcpKdc(Buffer.from('the big reply'));
    const udp = await udpKdc(() => tooBig, 0, tcp.port);
    try {
      const reply = await sendToKdc('EXAMPLE.TEST', [at(tcp.port)], Buffer.from('request'));
      assert.equal(reply.toString(), 'the big reply');
      assert.equal(udp.arrivals.length, 1);
      assert.equal(tcp.requests(), 1);
    } finally {
      tcp.close();
      udp.close();
    }
  });

  it('a large request goes over TCP first, and an established connection is given its time', async () => {
    const tcp = await tcpKdc(Buffer.from('late but there'), 400);
    const udp = await udpKdc(() => Buffer.from('over udp'), 0, tcp.port);
    try {
      // the whole schedule is 250 ms; the connection, once made, is waited for up to 2 s
      const schedule = { turnMs: 50, passWaitsMs: [50, 50, 50], tcpMs: 2000 };
      const reply = await sendToKdc('EXAMPLE.TEST', [at(tcp.port)], Buffer.alloc(2000, 1), schedule);
      assert.equal(reply.toString(), 'late but there');
      assert.equal(tcp.requests(), 1);
      assert.equal(udp.arrivals.length, 0, 'UDP was not tried while the TCP connection had time left');
    } finally {
      tcp.close();
      udp.close();
    }
  });
});
