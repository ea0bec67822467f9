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
import { sendToKdc } from '../../src/kerberos/transport.js';

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
});
