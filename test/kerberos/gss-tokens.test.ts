/**
 * RFC 4121 per-message tokens (src/kerberos/gss-tokens.ts) and the context
 * that counts their sequence numbers (gss-context.ts): the byte layout of
 * MIC and Wrap tokens and the key usage of each direction, round trips for
 * every enctype, both directions, with and without an acceptor subkey, any
 * RRC and EC filler; and refusals, always as GssError: every flipped bit,
 * truncations, garbage, reflected tokens, the wrong key, a token of the other
 * kind, an AcceptorSubkey flag without a subkey, replays, gaps and expiry.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profile, supportedEtypes } from '../../src/kerberos/crypto/index.js';
import { getMic, GssError, unwrap, verifyMic, wrap, wrapOverhead, type GssErrorCode, type TokenKeys } from '../../src/kerberos/gss-tokens.js';
import { GssContext } from '../../src/kerberos/gss-context.js';
import { prng } from '../support/prng.js';

const gssError = (code?: GssErrorCode) => (e: unknown) => e instanceof GssError && (code === undefined || e.code === code);

function pair(etype: number, withAcceptorSubkey: boolean): { initiator: TokenKeys; acceptor: TokenKeys } {
  const p = profile(etype);
  const initiatorKey = p.randomKey();
  const acceptorSubkey = withAcceptorSubkey ? p.randomKey() : undefined;
  const sub = acceptorSubkey ? { acceptorSubkey } : {};
  return { initiator: { role: 'initiator', initiatorKey, ...sub }, acceptor: { role: 'acceptor', initiatorKey, ...sub } };
}

const msg = Buffer.from('the quick brown fox');

describe('RFC 4121 token layout', () => {
  it('MIC: 04 04, flags, five FF, 64-bit sequence number, then the checksum under the SIGN usage of the sender', () => {
    for (const sub of [false, true]) {
      const { initiator, acceptor } = pair(18, sub);
      const key = sub ? acceptor.acceptorSubkey! : acceptor.initiatorKey;
      const t = getMic(acceptor, 0x0102030405, msg);
      assert.equal(t.length, 16 + 12);
      assert.deepEqual([...t.subarray(0, 8)], [0x04, 0x04, 0x01 | (sub ? 0x04 : 0), 0xff, 0xff, 0xff, 0xff, 0xff]);
      assert.equal(t.readBigUInt64BE(8), 0x0102030405n);
      assert.deepEqual(t.subarray(16), profile(18).checksum(key, 23, Buffer.concat([msg, t.subarray(0, 16)])));
      const fromInitiator = getMic(initiator, 7, msg);
      assert.equal(fromInitiator[2], sub ? 0x04 : 0);
      assert.deepEqual(fromInitiator.subarray(16), profile(18).checksum(key, 25, Buffer.concat([msg, fromInitiator.subarray(0, 16)])));
    }
  });

  it('Wrap without confidentiality: EC is the checksum length, the checksum covers message and header with EC and RRC zero, SEAL usage', () => {
    const { initiator } = pair(17, false);
    const t = wrap(initiator, 5, msg, { conf: false });
    assert.deepEqual([...t.subarray(0, 8)], [0x05, 0x04, 0x00, 0xff, 0x00, 12, 0x00, 0x00]);
    assert.equal(t.readBigUInt64BE(8), 5n);
    assert.deepEqual(t.subarray(16, 16 + msg.length), msg, 'the message travels in clear');
    const zeroed = Buffer.from(t.subarray(0, 16));
    zeroed.fill(0, 4, 8);
    assert.deepEqual(t.subarray(16 + msg.length), profile(17).checksum(initiator.initiatorKey, 24, Buffer.concat([msg, zeroed])));
    assert.equal(t.length, msg.length + wrapOverhead(initiator, false));
  });

  it('Wrap with confidentiality: Sealed flag, EC filler, the header copy with RRC zero encrypted after the message', () => {
    const { acceptor } = pair(20, true);
    const t = wrap(acceptor, 9, msg, { conf: true, ec: 3, rrc: 0 });
    assert.deepEqual([...t.subarray(0, 8)], [0x05, 0x04, 0x01 | 0x02 | 0x04, 0xff, 0x00, 3, 0x00, 0x00]);
    const plain = profile(20).decrypt(acceptor.acceptorSubkey!, 22, t.subarray(16));
    assert.deepEqual(plain.subarray(0, msg.length), msg);
    assert.equal(plain.length, msg.length + 3 + 16);
    assert.deepEqual(plain.subarray(plain.length - 16), t.subarray(0, 16));
    const noFiller = wrap(acceptor, 9, msg, { conf: true });
    assert.equal(noFiller.length, msg.length + wrapOverhead(acceptor, true));
  });

  it('RRC: the sender rotates the data right, the header says by how much', () => {
    const { initiator } = pair(18, false);
    const plainT = wrap(initiator, 1, msg, { conf: false });
    const rotated = wrap(initiator, 1, msg, { conf: false, rrc: 5 });
    assert.equal(rotated.readUInt16BE(6), 5);
    const data = plainT.subarray(16);
    assert.deepEqual(rotated.subarray(16), Buffer.concat([data.subarray(data.length - 5), data.subarray(0, data.length - 5)]));
  });
});

describe('RFC 4121 round trips', () => {
  for (const etype of supportedEtypes) {
    it(`${profile(etype).name}: MIC and Wrap both ways, with and without acceptor subkey, sizes 0..70, any RRC and EC`, () => {
      for (const sub of [false, true]) {
        const { initiator, acceptor } = pair(etype, sub);
        for (let n = 0; n <= 70; n += 7) {
          const m = Buffer.alloc(n, n);
          for (const [from, to] of [[initiator, acceptor], [acceptor, initiator]] as const) {
            assert.equal(verifyMic(to, m, getMic(from, n, m)).seq, n);
            for (const conf of [false, true]) {
              for (const rrc of [0, 1, 12, 28, 60, 1000]) {
                const u = unwrap(to, wrap(from, 2 ** 40 + n, m, { conf, rrc, ...(conf ? { ec: rrc % 17 } : {}) }));
                assert.deepEqual(u.message, m);
                assert.equal(u.conf, conf);
                assert.equal(u.seq, 2 ** 40 + n);
              }
            }
          }
        }
      }
    });
  }
});

describe('RFC 4121 refusals', () => {
  const { initiator, acceptor } = pair(18, true);
  const tokens: Array<[string, Buffer, (t: Buffer) => unknown]> = [
    ['MIC', getMic(initiator, 3, msg), (t) => verifyMic(acceptor, msg, t)],
    ['Wrap (integrity)', wrap(initiator, 3, msg, { conf: false }), (t) => unwrap(acceptor, t)],
    ['Wrap (confidentiality)', wrap(initiator, 3, msg, { conf: true }), (t) => unwrap(acceptor, t)],
    ['Wrap (integrity, RRC 28)', wrap(initiator, 3, msg, { conf: false, rrc: 28 }), (t) => unwrap(acceptor, t)],
    ['Wrap (confidentiality, RRC 28, EC 4)', wrap(initiator, 3, msg, { conf: true, rrc: 28, ec: 4 }), (t) => unwrap(acceptor, t)],
  ];

  for (const [name, token, open] of tokens) {
    it(`${name}: every flipped bit, every truncation and an extension are refused with GssError`, () => {
      assert.doesNotThrow(() => open(token));
      for (let i = 0; i < token.length * 8; i++) {
        const t = Buffer.from(token);
        t[i >> 3]! ^= 0x80 >> (i & 7);
        assert.throws(() => open(t), gssError(), `bit ${i}`);
      }
      for (let n = 0; n < token.length; n++) assert.throws(() => open(token.subarray(0, n)), gssError(), `length ${n}`);
      assert.throws(() => open(Buffer.concat([token, Buffer.from([0])])), gssError());
    });
  }

  it('a MIC over another message does not verify', () => {
    assert.throws(() => verifyMic(acceptor, Buffer.from('other'), getMic(initiator, 1, msg)), gssError('BAD_SIG'));
  });

  it('reflected tokens (our own, sent back) are refused', () => {
    assert.throws(() => unwrap(acceptor, wrap(acceptor, 1, msg, { conf: true })), gssError('BAD_DIRECTION'));
    assert.throws(() => unwrap(initiator, wrap(initiator, 1, msg, { conf: false })), gssError('BAD_DIRECTION'));
    assert.throws(() => verifyMic(acceptor, msg, getMic(acceptor, 1, msg)), gssError('BAD_DIRECTION'));
  });

  it('a token under an acceptor subkey when none was sent, and a token under another key, are refused', () => {
    const plain = pair(18, false);
    assert.throws(() => unwrap(plain.acceptor, wrap(initiator, 1, msg, { conf: false })), gssError('DEFECTIVE_TOKEN'));
    const other = pair(18, true);
    assert.throws(() => unwrap(other.acceptor, wrap(initiator, 1, msg, { conf: false })), gssError('BAD_SIG'));
    assert.throws(() => unwrap(other.acceptor, wrap(initiator, 1, msg, { conf: true })), gssError('BAD_SIG'));
    assert.throws(() => verifyMic(other.acceptor, msg, getMic(initiator, 1, msg)), gssError('BAD_SIG'));
  });

  it('a MIC token is not a Wrap token, nor the reverse; old RFC 1964 framing is refused', () => {
    assert.throws(() => unwrap(acceptor, getMic(initiator, 1, msg)), gssError('DEFECTIVE_TOKEN'));
    assert.throws(() => verifyMic(acceptor, msg, wrap(initiator, 1, msg, { conf: false })), gssError('DEFECTIVE_TOKEN'));
    assert.throws(() => unwrap(acceptor, Buffer.concat([Buffer.from([0x60, 0x30, 0x06, 0x09]), Buffer.alloc(44)])), gssError('DEFECTIVE_TOKEN'));
  });

  it('an integrity Wrap whose EC is not the checksum length, or whose encrypted header copy differs, is refused', () => {
    const t = wrap(initiator, 1, msg, { conf: false });
    t.writeUInt16BE(11, 4);
    assert.throws(() => unwrap(acceptor, t), gssError('DEFECTIVE_TOKEN'));
    // a sealed token whose outer EC claims more filler than was sent would cut the message: the copy catches it
    const c = wrap(initiator, 1, msg, { conf: true, ec: 0 });
    c.writeUInt16BE(4, 4);
    assert.throws(() => unwrap(acceptor, c), gssError('BAD_SIG'));
  });

  it('random garbage never escapes as another exception', () => {
    const r = prng(4121);
    for (let i = 0; i < 3000; i++) {
      const t = Buffer.alloc(r(90));
      for (let j = 0; j < t.length; j++) t[j] = r(256);
      if (t.length >= 2 && r(2)) t.writeUInt16BE(r(2) ? 0x0504 : 0x0404, 0);
      if (t.length >= 4 && r(2)) t[3] = 0xff;
      for (const f of [() => unwrap(acceptor, t), () => verifyMic(acceptor, msg, t), () => unwrap(initiator, t)]) {
        try {
          f();
          assert.fail('garbage accepted');
        } catch (e) {
          assert.ok(e instanceof GssError, String(e));
        }
      }
    }
  });

  it('sequence numbers out of range are a caller error', () => {
    assert.throws(() => wrap(initiator, -1, msg, { conf: false }), gssError('BAD_ARGUMENT'));
    assert.throws(() => getMic(initiator, 2 ** 53, msg), gssError('BAD_ARGUMENT'));
  });
});

describe('GssContext sequence numbers', () => {
  const make = (sub: boolean, opts: { expires?: number; now?: () => number } = {}) => {
    const { initiator, acceptor } = pair(19, sub);
    return {
      a: new GssContext({ keys: acceptor, sendSeq: 1000, recvSeq: 77, ...opts }),
      i: new GssContext({ keys: initiator, sendSeq: 77, recvSeq: 1000, ...opts }),
    };
  };

  it('counts up on each side from its initial number, across MIC and Wrap tokens', () => {
    const { a, i } = make(true);
    for (let k = 0; k < 5; k++) {
      const w = i.wrap(Buffer.from(`m${k}`), { conf: k % 2 === 0 });
      assert.equal(a.unwrap(w).message.toString(), `m${k}`);
      a.verifyMic(Buffer.from(`m${k}`), i.getMic(Buffer.from(`m${k}`)));
      i.verifyMic(Buffer.from(`r${k}`), a.getMic(Buffer.from(`r${k}`)));
    }
    assert.deepEqual(a.sequence, { send: 1005, receive: 87 });
    assert.deepEqual(i.sequence, { send: 87, receive: 1005 });
  });

  it('refuses a replayed token and a token after a gap; a refused token does not move the count', () => {
    const { a, i } = make(false);
    const first = i.wrap(msg, { conf: true });
    a.unwrap(first);
    assert.throws(() => a.unwrap(first), gssError('SEQUENCE'));
    i.wrap(msg, { conf: true });
    const third = i.wrap(msg, { conf: true });
    assert.throws(() => a.unwrap(third), gssError('SEQUENCE'));
    const forged = i.wrap(msg, { conf: false });
    forged[forged.length - 1]! ^= 1;
    assert.throws(() => a.unwrap(forged), gssError('BAD_SIG'));
    assert.equal(a.sequence.receive, 78);
  });

  it('refuses every operation once the ticket has expired', () => {
    let now = 1_000;
    const { a, i } = make(false, { expires: 2_000, now: () => now });
    const w = i.wrap(msg, { conf: false });
    now = 2_001;
    assert.throws(() => a.unwrap(w), gssError('CONTEXT_EXPIRED'));
    assert.throws(() => a.wrap(msg, { conf: false }), gssError('CONTEXT_EXPIRED'));
    assert.throws(() => a.getMic(msg), gssError('CONTEXT_EXPIRED'));
  });
});
