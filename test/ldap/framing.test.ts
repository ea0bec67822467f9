/**
 * Framing (src/ldap/framing.ts): PDUs cut anywhere and run together come
 * out whole and in order; an announced size over the maximum fails from
 * the header alone, before the body is kept; a stream that is not LDAP
 * fails at once and stays failed; and over a real socket.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo } from 'node:net';
import { LdapDecodeError } from '../../src/ldap/ber.js';
import { DEFAULT_MAX_MESSAGE_SIZE, LdapFramer, LdapMessageTooLargeError } from '../../src/ldap/framing.js';
import { decodeRequest, encodeMessage } from '../../src/ldap/protocol.js';
import { prng } from '../support/prng.js';
import { CAPTURED_BIND, CAPTURED_SEARCH, REQUESTS, withLongLengths } from './vectors.js';

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');

function drain(f: LdapFramer): Buffer[] {
  const out: Buffer[] = [];
  for (let pdu = f.next(); pdu; pdu = f.next()) out.push(Buffer.from(pdu));
  return out;
}

const pdus = [CAPTURED_BIND, CAPTURED_SEARCH, withLongLengths(CAPTURED_SEARCH), ...REQUESTS.map(encodeMessage), encodeMessage({ messageId: 99, protocolOp: { op: 'delRequest', entry: 'x'.repeat(70000) } })];
const stream = Buffer.concat(pdus);

describe('LDAP framing', () => {
  it('one chunk holding every PDU', () => {
    const f = new LdapFramer();
    f.push(stream);
    assert.deepEqual(drain(f), pdus);
    assert.equal(f.buffered, 0);
  });

  it('one byte at a time', () => {
    const f = new LdapFramer();
    const out: Buffer[] = [];
    for (let i = 0; i < stream.length; i++) {
      f.push(stream.subarray(i, i + 1));
      out.push(...drain(f));
    }
    assert.deepEqual(out, pdus);
  });

  it('random cuts (fixed seed)', () => {
    const rnd = prng(4511);
    for (let round = 0; round < 50; round++) {
      const f = new LdapFramer();
      const out: Buffer[] = [];
      for (let at = 0; at < stream.length; ) {
        const n = 1 + rnd(round % 2 ? 12 : 3000);
        f.push(stream.subarray(at, at + n));
        at += n;
        out.push(...drain(f));
      }
      assert.deepEqual(out, pdus, `round ${round}`);
      for (const p of out) decodeRequest(p);
    }
  });

  it('a PDU announced over the maximum fails from its header, before the body is kept', () => {
    const f = new LdapFramer({ maxMessageSize: 1000 });
    // one gigabyte promised in four-octet form, then a first slice of the body
    f.push(hex('3084 40000000 0201'));
    assert.throws(() => f.next(), (e) => e instanceof LdapMessageTooLargeError && e.size === 0x40000006 && e.limit === 1000 && e instanceof LdapDecodeError);
    assert.equal(f.buffered, 0);
    f.push(Buffer.alloc(1 << 20));
    assert.equal(f.buffered, 0, 'nothing is kept after failing');
    assert.throws(() => f.next(), LdapMessageTooLargeError, 'stays failed');
  });

  it('the limit counts the whole PDU; exactly the limit passes', () => {
    const pdu = CAPTURED_SEARCH;
    let f = new LdapFramer({ maxMessageSize: pdu.length });
    f.push(pdu);
    assert.deepEqual(drain(f), [pdu]);
    f = new LdapFramer({ maxMessageSize: pdu.length - 1 });
    f.push(pdu.subarray(0, 3));
    assert.throws(() => f.next(), LdapMessageTooLargeError);
    assert.equal(new LdapFramer().maxMessageSize, DEFAULT_MAX_MESSAGE_SIZE);
    assert.throws(() => new LdapFramer({ maxMessageSize: 0 }), RangeError);
  });

  it('the length octets may straddle chunks', () => {
    const f = new LdapFramer({ maxMessageSize: 100 });
    f.push(hex('30'));
    f.push(hex('84'));
    f.push(hex('00'));
    assert.equal(f.next(), undefined);
    f.push(hex('00'));
    f.push(hex('00'));
    assert.equal(f.next(), undefined);
    f.push(hex('ff'));
    assert.throws(() => f.next(), LdapMessageTooLargeError);
  });

  it('a stream that is not LDAP fails on its first octets', () => {
    for (const [h, why] of [
      ['16030100', /must start with a SEQUENCE/], // a TLS ClientHello on the plain port
      ['474554202f', /must start with a SEQUENCE/], // HTTP
      ['3080', /indefinite/],
      ['30ff', /length of 127 octets/],
      ['3089', /length of 9 octets/],
    ] as const) {
      const f = new LdapFramer();
      f.push(hex(h));
      assert.throws(() => f.next(), (e) => e instanceof LdapDecodeError && why.test(e.message) && e.messageId === undefined, h);
    }
  });

  it('PDUs before a bad one are handed out first', () => {
    const f = new LdapFramer();
    f.push(Buffer.concat([CAPTURED_BIND, hex('0400')]));
    assert.deepEqual(f.next(), CAPTURED_BIND);
    assert.throws(() => f.next(), LdapDecodeError);
  });

  it('over a socket', async () => {
    const received: Buffer[] = [];
    const server = createServer((s) => {
      const f = new LdapFramer();
      s.on('data', (chunk) => {
        f.push(chunk);
        received.push(...drain(f));
        if (received.length === pdus.length) s.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = connect((server.address() as AddressInfo).port, '127.0.0.1');
    const rnd = prng(2696);
    for (let at = 0; at < stream.length; ) {
      const n = 1 + rnd(700);
      c.write(stream.subarray(at, at + n));
      at += n;
    }
    await new Promise((r) => c.on('close', r));
    server.close();
    assert.deepEqual(received, pdus);
  });
});
