/**
 * Malformed input never escapes as anything but LdapDecodeError: every
 * truncation and a trailing octet of every message, indefinite lengths,
 * wrong tags, lengths past the end, integers out of range, depth bombs and
 * 100,000-item filters in whole messages; then a seeded fuzz (a few
 * thousand random mutations of valid messages, through the framer and the
 * decoders, and of the extended and control values), where a mutation that
 * still decodes must re-encode to a message that decodes to the same value.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Filter } from '../../src/directory/filter.js';
import { LdapDecodeError, LdapEncodeError, Tag, application, boolean, constructed, encodeBer, integer, octetString, sequence, type BerPart } from '../../src/ldap/ber.js';
import { ProtocolOp, ResultCode } from '../../src/ldap/codes.js';
import { decodePagedResultsValue } from '../../src/ldap/controls.js';
import { decodePasswordModifyRequest, decodePasswordModifyResponse } from '../../src/ldap/extended.js';
import { encodeFilter } from '../../src/ldap/filter.js';
import { LdapFramer } from '../../src/ldap/framing.js';
import { decodeRequest, decodeResponse, encodeMessage, type OutgoingMessage } from '../../src/ldap/protocol.js';
import { prng } from '../support/prng.js';
import { CAPTURED_BIND, CAPTURED_SEARCH, REQUESTS, RESPONSES, refused, withLongLengths } from './vectors.js';

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');

/** Runs `fn`; returns whether it decoded; any exception but LdapDecodeError fails the test. */
function onlyDecodeError(fn: () => unknown, what: string): boolean {
  try {
    fn();
    return true;
  } catch (e) {
    assert.ok(e instanceof LdapDecodeError, `${what}: ${e instanceof Error ? e.stack : String(e)}`);
    return false;
  }
}

const requests = [CAPTURED_BIND, CAPTURED_SEARCH, ...REQUESTS.map(encodeMessage)];
const responses = RESPONSES.map(encodeMessage);
const all = [...requests.map((b) => ({ b, decode: decodeRequest })), ...responses.map((b) => ({ b, decode: decodeResponse }))];
const withLong = all.map(({ b, decode }) => ({ b: withLongLengths(b), decode }));

describe('malformed messages', () => {
  it('every truncation, and a trailing octet, of every message', () => {
    for (const { b, decode } of [...all, ...withLong]) {
      decode(b);
      for (let n = 0; n < b.length; n++) assert.throws(() => decode(b.subarray(0, n)), LdapDecodeError, `cut at ${n} of ${b.toString('hex')}`);
      assert.throws(() => decode(Buffer.concat([b, hex('00')])), LdapDecodeError);
    }
  });

  it('indefinite lengths on any constructed element', () => {
    for (const { b, decode } of all) {
      for (let k = 0; ; k++) {
        const m = withIndefinite(b, k);
        if (!m) break;
        assert.throws(() => decode(m), /indefinite length/, `element ${k} of ${b.toString('hex')}`);
      }
    }
    assert.throws(() => decodeRequest(hex('3080 020101 4200 0000')), /indefinite/);
  });

  it('wrong tags: every identifier octet replaced', () => {
    for (const { b, decode } of all.slice(0, 6)) {
      for (let i = 0; i < b.length; i++) {
        for (const id of [0x00, 0x04, 0x24, 0x30, 0x31, 0x1f, 0x60, 0xa0, 0xff]) {
          const m = Buffer.from(b);
          m[i] = id;
          onlyDecodeError(() => decode(m), `${i}=${id}`);
        }
      }
    }
    // a response sent as a request and the other way round
    assert.throws(() => decodeRequest(responses[0]!), /is not a request/);
    assert.throws(() => decodeResponse(requests[0]!), /is not a response/);
  });

  it('lengths past the end', () => {
    for (const { b, decode } of all) {
      for (let i = 1; i < b.length; i++) {
        const m = Buffer.from(b);
        m[i] = (m[i]! + 1) & 0x7f;
        onlyDecodeError(() => decode(m), `${i}`);
      }
    }
    assert.throws(() => decodeRequest(hex('3084ffffffff 020101')), /past the end/);
  });

  it('integers: negative, oversized and out of their ranges', () => {
    const search = (scope: number, deref: number, size: number, time: number) =>
      encodeBer(
        sequence(
          integer(Tag.integer, 5),
          constructed(application(ProtocolOp.searchRequest, true), [octetString(''), integer(Tag.enumerated, scope), integer(Tag.enumerated, deref), integer(Tag.integer, size), integer(Tag.integer, time), boolean(false), encodeFilter({ kind: 'present', attr: 'cn' }), sequence()]),
        ),
      );
    decodeRequest(search(2, 3, 2147483647, 2147483647));
    for (const args of [
      [-1, 0, 0, 0],
      [3, 0, 0, 0],
      [0, 4, 0, 0],
      [0, -1, 0, 0],
      [0, 0, -1, 0],
      [0, 0, 2147483648, 0],
      [0, 0, 0, -5],
      [0, 0, 0, 2 ** 40],
    ] as const) {
      const [scope, deref, size, time] = args;
      const e = refused(() => decodeRequest(search(scope, deref, size, time)));
      assert.deepEqual([e.messageId, e.op], [5, 'searchRequest'], String(args));
    }
    for (const h of [
      '300c0201ff600702010304008000', // messageID -1
      '300e020480000000600702010304008000', // messageID negative in four octets
      '300f02050100000000600702010304008000', // messageID 2^32
      '30130209010000000000000000600702010304008000', // messageID of nine octets
      '30060201015001ff', // abandon -1
      '30090201015004ffffffff', // abandon -1 in four octets
      '300a020101500500ffffffff', // abandon 2^32 - 1
    ]) {
      refused(() => decodeRequest(hex(h)));
    }
  });

  it('depth bombs and 100,000-item filters in whole search requests', () => {
    const searchWith = (filter: BerPart) =>
      encodeBer(
        sequence(
          integer(Tag.integer, 9),
          constructed(application(ProtocolOp.searchRequest, true), [octetString(''), integer(Tag.enumerated, 2), integer(Tag.enumerated, 0), integer(Tag.integer, 0), integer(Tag.integer, 0), boolean(false), filter, sequence(octetString('cn'))]),
        ),
      );
    // 50,000 nested ORs and NOTs around an equality, built from the inside out
    let deep = encodeBer(encodeFilter({ kind: 'eq', attr: 'cn', value: 'x' }));
    const heads: Buffer[] = [];
    for (let i = 0, size = deep.length; i < 50_000; i++, size += 6) {
      const head = Buffer.from([i % 3 ? 0xa2 : 0xa1, 0x84, 0, 0, 0, 0]);
      head.writeUInt32BE(size, 2);
      heads.push(head);
    }
    deep = Buffer.concat([...heads.reverse(), deep]);
    let e = refused(() => decodeRequest(searchWith(deep)));
    assert.deepEqual([e.messageId, e.op, e.resultCode], [9, 'searchRequest', ResultCode.adminLimitExceeded]);
    const wide: Filter = { kind: 'and', items: Array.from({ length: 100_000 }, (_, i) => ({ kind: 'eq', attr: 'uid', value: String(i) })) };
    e = refused(() => decodeRequest(searchWith(encodeFilter(wide))));
    assert.deepEqual([e.messageId, e.op, e.resultCode], [9, 'searchRequest', ResultCode.adminLimitExceeded]);
    // the same message through a framer with the default limit never gets that far
    const f = new LdapFramer();
    f.push(searchWith(encodeFilter(wide)).subarray(0, 16));
    assert.throws(() => f.next(), /over the limit/);
  });
});

/**
 * `ber` with its k-th constructed element (in document order) rewritten in
 * the indefinite form (0x80, content, end-of-contents); null when it has
 * fewer.
 */
function withIndefinite(ber: Buffer, k: number): Buffer | null {
  let seen = 0;
  let done = false;
  const walk = (b: Buffer): Buffer => {
    const out: Buffer[] = [];
    let p = 0;
    while (p < b.length) {
      const start = p;
      const id = b[p++]!;
      let len = b[p++]!;
      if (len & 0x80) {
        const n = len & 0x7f;
        len = 0;
        for (let i = 0; i < n; i++) len = len * 256 + b[p++]!;
      }
      const content = b.subarray(p, p + len);
      p += len;
      if (id & 0x20 && !done && seen++ === k) {
        done = true;
        out.push(Buffer.from([id, 0x80]), content, Buffer.from([0, 0]));
      } else if (id & 0x20 && !done) {
        const inner = walk(content);
        out.push(inner === content ? b.subarray(start, p) : Buffer.concat([Buffer.from([id]), lengthOf(inner.length), inner]));
      } else out.push(b.subarray(start, p));
    }
    return done ? Buffer.concat(out) : b;
  };
  const r = walk(ber);
  return done ? r : null;
}

const lengthOf = (n: number): Buffer => {
  const b = Buffer.from([0x84, 0, 0, 0, 0]);
  b.writeUInt32BE(n, 1);
  return b;
};


/** One random change: overwrite, insert, delete or flip a bit, 1 to 3 times. */
function mutate(b: Buffer, rnd: (n: number) => number): Buffer {
  let m = Buffer.from(b);
  for (let k = 1 + rnd(3); k > 0; k--) {
    const at = rnd(m.length);
    switch (rnd(4)) {
      case 0:
        m[at] = rnd(256);
        break;
      case 1:
        m = Buffer.concat([m.subarray(0, at), Buffer.from([rnd(256)]), m.subarray(at)]);
        break;
      case 2:
        if (m.length > 1) m = Buffer.concat([m.subarray(0, at), m.subarray(at + 1)]);
        break;
      default:
        m[at] = m[at]! ^ (1 << rnd(8));
    }
  }
  return m;
}

describe('fuzz (fixed seed)', () => {
  it('mutated messages: LdapDecodeError or a value that survives re-encoding', () => {
    const rnd = prng(20260511);
    const sources = [...all, ...withLong];
    let decoded = 0;
    for (let i = 0; i < 6000; i++) {
      const { b, decode } = sources[rnd(sources.length)]!;
      const m = mutate(b, rnd);
      let value: ReturnType<typeof decode> | undefined;
      if (!onlyDecodeError(() => (value = decode(m)), `mutation ${i}: ${m.toString('hex')}`)) continue;
      decoded++;
      let again: Buffer;
      try {
        again = encodeMessage(value as OutgoingMessage);
      } catch (e) {
        // write requests and unknown bind choices are decoded only in part
        assert.ok(e instanceof LdapEncodeError, String(e));
        continue;
      }
      assert.deepEqual(decode(again), value, `mutation ${i}: ${m.toString('hex')}`);
    }
    assert.ok(decoded > 100, `only ${decoded} mutations decoded: the fuzz is not reaching past the envelope`);
  });

  it('mutated streams through the framer', () => {
    const rnd = prng(4511);
    const stream = Buffer.concat(requests);
    for (let i = 0; i < 1500; i++) {
      const m = mutate(stream, rnd);
      const f = new LdapFramer({ maxMessageSize: 4096 });
      for (let at = 0; at < m.length; ) {
        const n = 1 + rnd(64);
        f.push(m.subarray(at, at + n));
        at += n;
        const ok = onlyDecodeError(() => {
          for (let pdu = f.next(); pdu; pdu = f.next()) onlyDecodeError(() => decodeRequest(pdu), `pdu of mutation ${i}`);
        }, `stream mutation ${i}`);
        if (!ok) break;
      }
    }
  });

  it('random and mutated control and extended values', () => {
    const rnd = prng(3062);
    const seeds = [hex('3005020102 0400'), hex('300c 8003616263 8101 61 820162'), hex('3003 800167'), hex('3000')];
    for (let i = 0; i < 3000; i++) {
      const m = rnd(4) === 0 ? Buffer.from(Array.from({ length: rnd(12) }, () => rnd(256))) : mutate(seeds[rnd(seeds.length)]!, rnd);
      onlyDecodeError(() => decodePagedResultsValue(m), `paged ${m.toString('hex')}`);
      onlyDecodeError(() => decodePasswordModifyRequest(m), `passwd ${m.toString('hex')}`);
      onlyDecodeError(() => decodePasswordModifyResponse(m), `passwd response ${m.toString('hex')}`);
    }
  });
});
