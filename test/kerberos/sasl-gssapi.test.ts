/**
 * The server side of SASL GSSAPI (src/kerberos/sasl-gssapi.ts) driven by an
 * initiator built here from the project's own pieces (an AP-REQ for a
 * ticket under a test service key, the GSS checksum, the initiator's
 * context): the exchange with and without mutual authentication, the
 * security-layer octets each way, every layer offer, authorization
 * identities, the SASL-protected frames in both directions for each
 * enctype; and refusals as SaslGssapiError: replayed AP-REQs, tickets for
 * another service, data where an empty response is due, layers not offered,
 * another identity, a reflected challenge, downgraded and tampered frames,
 * steps out of turn, and garbage at every step. Interop with Cyrus SASL
 * (ldapsearch -Y GSSAPI) is tested with the LDAP service.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeApReq, verifyApRep } from '../../src/kerberos/ap-exchange.js';
import { decodeKrb5Token, encodeGssChecksum, encodeKrb5Token, GssFlag, TokId } from '../../src/kerberos/asn1/gss.js';
import { encodeEncTicketPart, encodeTicket, decodeTicket } from '../../src/kerberos/asn1/ticket.js';
import { profile, type EncryptionKey } from '../../src/kerberos/crypto/index.js';
import { initiatorContext, type GssContext } from '../../src/kerberos/gss-context.js';
import { ErrorCode, KeyUsage, NameType } from '../../src/kerberos/iana.js';
import { ReplayCache } from '../../src/kerberos/replay-cache.js';
import { MAX_SASL_BUFFER, SaslGssapiError, SaslGssapiServer, SaslLayer, type SaslGssapiErrorCode, type SaslStep } from '../../src/kerberos/sasl-gssapi.js';
import { prng } from '../support/prng.js';

const REALM = 'EXAMPLE.TEST';
const SERVICE = `ldap/ldap.example.test@${REALM}`;
const ALL = SaslLayer.NONE | SaslLayer.INTEGRITY | SaslLayer.CONFIDENTIALITY;

const saslError = (code?: SaslGssapiErrorCode) => (e: unknown) => e instanceof SaslGssapiError && (code === undefined || e.code === code);

/** A service key and a ticket for alice under it, as a KDC would issue. */
function issue(etype: number, client = 'alice', endsInMs = 3_600_000) {
  const p = profile(etype);
  const serviceKey = p.randomKey();
  const sessionKey = p.randomKey();
  const now = Date.now();
  const enc = encodeEncTicketPart({
    flags: 0,
    key: { etype, value: sessionKey.value },
    crealm: REALM,
    cname: { nameType: NameType.PRINCIPAL, nameString: [client] },
    transited: { type: 1, contents: Buffer.alloc(0) },
    authtime: new Date(now - 60_000),
    endtime: new Date(now + endsInMs),
  });
  const ticket = decodeTicket(encodeTicket({ realm: REALM, sname: { nameType: NameType.SRV_HST, nameString: ['ldap', 'ldap.example.test'] }, encPart: { etype, kvno: 3, cipher: p.encrypt(serviceKey, KeyUsage.TICKET, enc) } }));
  const keyFor = async (server: string, e: number, kvno: number | undefined): Promise<EncryptionKey | null> => (server === SERVICE && e === etype && kvno === 3 ? serviceKey : null);
  return { ticket, sessionKey, keyFor, client: { nameType: NameType.PRINCIPAL, nameString: [client] } };
}

type Issued = ReturnType<typeof issue>;

/** The initiator's side of RFC 4752, done by hand. */
class Client {
  ctx: GssContext | undefined;
  private pending: { ctime: Date; cusec: number; seq: number; key: EncryptionKey } | undefined;
  constructor(
    private readonly t: Issued,
    private readonly mutual = true,
  ) {}

  firstToken(flags = GssFlag.MUTUAL | GssFlag.SEQUENCE | GssFlag.INTEG | GssFlag.CONF): Buffer {
    const subkey = profile(this.t.sessionKey.etype).randomKey();
    const { apReq, ctime, cusec, seqNumber } = makeApReq({
      ticket: this.t.ticket,
      sessionKey: this.t.sessionKey,
      client: this.t.client,
      crealm: REALM,
      checksum: { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: this.mutual ? flags : flags & ~GssFlag.MUTUAL }) },
      mutual: this.mutual,
      subkey,
    });
    this.pending = { ctime, cusec, seq: seqNumber, key: subkey };
    if (!this.mutual) this.ctx = initiatorContext({ initiatorKey: subkey, authenticatorSeq: seqNumber });
    return encodeKrb5Token(TokId.AP_REQ, apReq);
  }

  /** Checks the AP-REP and sets up the context with the acceptor's subkey and number. */
  apRep(token: Buffer): void {
    const t = decodeKrb5Token(token);
    assert.equal(t.tokId, TokId.AP_REP);
    const part = verifyApRep(t.message, this.t.sessionKey, this.pending!.ctime, this.pending!.cusec);
    assert.ok(part.subkey, 'the acceptor sends a subkey');
    assert.equal(typeof part.seqNumber, 'number');
    this.ctx = initiatorContext({ initiatorKey: this.pending!.key, authenticatorSeq: this.pending!.seq, apRep: part });
  }

  /** The server's four octets, unwrapped. */
  offer(token: Buffer): { layers: number; max: number } {
    const u = this.ctx!.unwrap(token);
    assert.equal(u.conf, false, 'the offer is wrapped for integrity only');
    assert.equal(u.message.length, 4);
    return { layers: u.message[0]!, max: u.message.readUInt32BE(0) & 0xffffff };
  }

  choose(layer: number, max: number, authzid: string | Buffer = ''): Buffer {
    const m = Buffer.alloc(4);
    m.writeUInt32BE(max);
    m[0] = layer;
    return this.ctx!.wrap(Buffer.concat([m, Buffer.from(authzid)]), { conf: false });
  }
}

const serverFor = (t: Issued, layers = ALL, extra: { replay?: ReplayCache; maxBuffer?: number } = {}) =>
  new SaslGssapiServer({ keyFor: t.keyFor, replay: extra.replay ?? new ReplayCache(600_000), layers, ...(extra.maxBuffer ? { maxBuffer: extra.maxBuffer } : {}) });

const challenge = (s: SaslStep): Buffer => {
  assert.equal(s.done, false);
  return (s as { serverToken: Buffer }).serverToken;
};

/** Runs the exchange to the offer; returns server, client and the offer. */
async function toOffer(t: Issued, layers = ALL, o: { mutual?: boolean; maxBuffer?: number } = {}) {
  const server = serverFor(t, layers, o);
  const client = new Client(t, o.mutual ?? true);
  let out = challenge(await server.step(client.firstToken()));
  if (o.mutual ?? true) {
    client.apRep(out);
    assert.equal(server.client, `alice@${REALM}`, 'the principal is known once the context is');
    assert.ok(server.expires instanceof Date);
    out = challenge(await server.step(Buffer.alloc(0)));
  }
  return { server, client, offer: client.offer(out), offerToken: out };
}

/** Splits encode's output into frame bodies. */
function frames(wire: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let off = 0; off < wire.length; ) {
    const len = wire.readUInt32BE(off);
    out.push(wire.subarray(off + 4, off + 4 + len));
    off += 4 + len;
  }
  return out;
}

describe('SASL GSSAPI server: the exchange', () => {
  for (const etype of [18, 17, 20, 19]) {
    it(`${profile(etype).name}: AP-REQ, AP-REP, empty response, offer, choice of confidentiality, then frames both ways`, async () => {
      const t = issue(etype);
      const { server, client, offer } = await toOffer(t, ALL, { maxBuffer: 4096 });
      assert.deepEqual(offer, { layers: 7, max: 4096 });
      const done = await server.step(client.choose(SaslLayer.CONFIDENTIALITY, 100));
      assert.deepEqual(done, { done: true, client: `alice@${REALM}`, layer: SaslLayer.CONFIDENTIALITY });
      assert.equal(server.layer, SaslLayer.CONFIDENTIALITY);
      assert.equal(server.receiveLimit, 4096);

      // towards the client: frames no larger than the 100 bytes it takes, each a sealed Wrap token
      const pdu = Buffer.alloc(1000, 'x');
      const out = frames(server.encode(pdu));
      assert.ok(out.length > 1 && out.every((f) => f.length <= 100));
      const got = Buffer.concat(out.map((f) => client.ctx!.unwrap(f)).map((u) => (assert.equal(u.conf, true), u.message)));
      assert.deepEqual(got, pdu);
      assert.equal(server.sendLimit, 100 - client.ctx!.wrapOverhead(true));

      // from the client
      const req = Buffer.from('an LDAP request');
      assert.deepEqual(server.decode(client.ctx!.wrap(req, { conf: true })), req);
      assert.deepEqual(server.encode(Buffer.alloc(0)), Buffer.alloc(0));
    });
  }

  it('integrity layer: frames are Wrap tokens without encryption, and sealed ones are taken too', async () => {
    const t = issue(18);
    const { server, client } = await toOffer(t);
    const done = await server.step(client.choose(SaslLayer.INTEGRITY, 65536));
    assert.equal(done.done && done.layer, SaslLayer.INTEGRITY);
    const [f] = frames(server.encode(Buffer.from('result')));
    const u = client.ctx!.unwrap(f!);
    assert.deepEqual([u.message.toString(), u.conf], ['result', false]);
    assert.equal(server.decode(client.ctx!.wrap(Buffer.from('a'), { conf: false })).toString(), 'a');
    assert.equal(server.decode(client.ctx!.wrap(Buffer.from('b'), { conf: true })).toString(), 'b');
  });

  it('no layer: the offer over TLS is "none" with size 0; encode and decode are refused', async () => {
    const t = issue(18);
    const { server, client, offer } = await toOffer(t, SaslLayer.NONE);
    assert.deepEqual(offer, { layers: SaslLayer.NONE, max: 0 });
    assert.equal(server.receiveLimit, 0);
    const done = await server.step(client.choose(SaslLayer.NONE, 0));
    assert.deepEqual(done, { done: true, client: `alice@${REALM}`, layer: SaslLayer.NONE });
    assert.throws(() => server.encode(Buffer.from('x')), saslError('STATE'));
    assert.throws(() => server.decode(client.ctx!.wrap(Buffer.from('x'), { conf: true })), saslError('STATE'));
  });

  it('no layer chosen with a non-zero size (as old Cyrus clients send) is accepted', async () => {
    const { server, client } = await toOffer(issue(17));
    const done = await server.step(client.choose(SaslLayer.NONE, 0x0fffff));
    assert.equal(done.done && done.layer, SaslLayer.NONE);
  });

  it('without mutual authentication the offer comes at once, numbered from the initiator\'s sequence number', async () => {
    const t = issue(20);
    const { server, client, offer } = await toOffer(t, ALL, { mutual: false });
    assert.equal(offer.layers, 7);
    const done = await server.step(client.choose(SaslLayer.INTEGRITY, 1000));
    assert.equal(done.done, true);
    const [f] = frames(server.encode(Buffer.from('hi')));
    assert.equal(client.ctx!.unwrap(f!).message.toString(), 'hi');
  });

  it('a ticket that ended within the clock skew still gets through the whole exchange', async () => {
    const t = issue(18, 'alice', -120_000);
    const { server, client } = await toOffer(t);
    assert.ok(server.expires!.getTime() < Date.now());
    assert.equal((await server.step(client.choose(SaslLayer.CONFIDENTIALITY, 1000))).done, true);
    assert.equal(server.decode(client.ctx!.wrap(Buffer.from('late'), { conf: true })).toString(), 'late');
  });

  it('a client that sends no initial response gets one empty challenge', async () => {
    const t = issue(18);
    const server = serverFor(t);
    assert.deepEqual(challenge(await server.step(Buffer.alloc(0))), Buffer.alloc(0));
    const client = new Client(t);
    client.apRep(challenge(await server.step(client.firstToken())));
    client.offer(challenge(await server.step(Buffer.alloc(0))));
    const again = serverFor(t);
    await again.step(Buffer.alloc(0));
    await assert.rejects(again.step(Buffer.alloc(0)), saslError('UNEXPECTED_DATA'));
  });

  it('the authorization identity may be empty or the principal itself, nothing else', async () => {
    const t = issue(18);
    const same = await toOffer(t);
    assert.deepEqual(await same.server.step(same.client.choose(SaslLayer.NONE, 0, `alice@${REALM}`)), { done: true, client: `alice@${REALM}`, authzid: `alice@${REALM}`, layer: 1 });
    for (const other of ['bob@EXAMPLE.TEST', 'alice', 'u:alice', 'dn:uid=alice,cn=users,dc=example,dc=test', `alice@${REALM}\0`, Buffer.from([0xc3, 0x28])]) {
      const x = await toOffer(t);
      await assert.rejects(x.server.step(x.client.choose(SaslLayer.NONE, 0, other)), saslError('AUTHZID'), String(other));
      assert.equal(x.server.layer, 0);
    }
  });
});

describe('SASL GSSAPI server: refusals', () => {
  it('a replayed AP-REQ and a ticket for another service are refused with the Kerberos reason', async () => {
    const t = issue(18);
    const replay = new ReplayCache(600_000);
    const token = new Client(t).firstToken();
    await serverFor(t, ALL, { replay }).step(token);
    await assert.rejects(serverFor(t, ALL, { replay }).step(token), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'REJECTED' && (e as SaslGssapiError).krbCode === ErrorCode.KRB_AP_ERR_REPEAT);
    const elsewhere = new SaslGssapiServer({ keyFor: async () => null, replay: new ReplayCache(600_000), layers: ALL });
    await assert.rejects(elsewhere.step(new Client(t).firstToken()), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).krbCode === ErrorCode.KRB_AP_ERR_NOT_US);
  });

  it('an authenticator without the GSS checksum, and a token of another mechanism, are refused', async () => {
    const t = issue(18);
    const { apReq } = makeApReq({ ticket: t.ticket, sessionKey: t.sessionKey, client: t.client, crealm: REALM, mutual: true });
    await assert.rejects(serverFor(t).step(encodeKrb5Token(TokId.AP_REQ, apReq)), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'DEFECTIVE_TOKEN');
    const spnego = encodeKrb5Token(TokId.AP_REQ, apReq, '1.3.6.1.5.5.2');
    await assert.rejects(serverFor(t).step(spnego), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'BAD_MECH');
  });

  it('data where the empty response is due is refused', async () => {
    const t = issue(18);
    const server = serverFor(t);
    const client = new Client(t);
    client.apRep(challenge(await server.step(client.firstToken())));
    await assert.rejects(server.step(Buffer.from([0])), saslError('UNEXPECTED_DATA'));
  });

  it('a layer not offered, several layers, a short message, or a layer with no room are refused', async () => {
    const t = issue(18);
    const cases: Array<[number, (c: Client) => Buffer]> = [
      [SaslLayer.NONE, (c) => c.choose(SaslLayer.INTEGRITY, 1000)],
      [SaslLayer.NONE, (c) => c.choose(SaslLayer.CONFIDENTIALITY, 1000)],
      [SaslLayer.INTEGRITY | SaslLayer.CONFIDENTIALITY, (c) => c.choose(SaslLayer.NONE, 0)],
      [ALL, (c) => c.choose(SaslLayer.INTEGRITY | SaslLayer.CONFIDENTIALITY, 1000)],
      [ALL, (c) => c.choose(8, 1000)],
      [ALL, (c) => c.choose(0, 1000)],
      [ALL, (c) => c.choose(SaslLayer.INTEGRITY, 0)],
      [ALL, (c) => c.ctx!.wrap(Buffer.from([4, 0, 1]), { conf: false })],
    ];
    for (const [layers, answer] of cases) {
      const x = await toOffer(t, layers);
      await assert.rejects(x.server.step(answer(x.client)), saslError('BAD_LAYER'));
    }
  });

  it('the server\'s own offer sent back, a MIC token, and a tampered answer are refused as bad tokens', async () => {
    const t = issue(19);
    const reflected = await toOffer(t);
    await assert.rejects(reflected.server.step(reflected.offerToken), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'BAD_DIRECTION');
    const mic = await toOffer(t);
    await assert.rejects(mic.server.step(mic.client.ctx!.getMic(Buffer.from([1, 0, 0, 0]))), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'DEFECTIVE_TOKEN');
    const tampered = await toOffer(t);
    const answer = tampered.client.choose(SaslLayer.CONFIDENTIALITY, 1000);
    answer[16]! ^= SaslLayer.CONFIDENTIALITY ^ SaslLayer.NONE;
    await assert.rejects(tampered.server.step(answer), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'BAD_SIG');
  });

  it('steps after the end or after a failure are refused', async () => {
    const t = issue(18);
    const x = await toOffer(t);
    await x.server.step(x.client.choose(SaslLayer.NONE, 0));
    await assert.rejects(x.server.step(Buffer.alloc(0)), saslError('STATE'));
    const y = await toOffer(t);
    await assert.rejects(y.server.step(Buffer.from('junk')), saslError('BAD_TOKEN'));
    await assert.rejects(y.server.step(y.client.choose(SaslLayer.NONE, 0)), saslError('STATE'), 'no second try after a failure');
  });

  it('frames: a downgrade to integrity under confidentiality, a replay, a tampered or oversized frame are refused', async () => {
    const t = issue(18);
    const { server, client } = await toOffer(t, ALL, { maxBuffer: 200 });
    await server.step(client.choose(SaslLayer.CONFIDENTIALITY, 1000));
    assert.throws(() => server.decode(client.ctx!.wrap(Buffer.from('weak'), { conf: false })), saslError('BAD_LAYER'));
    const good = client.ctx!.wrap(Buffer.from('ok'), { conf: true });
    assert.equal(server.decode(good).toString(), 'ok');
    assert.throws(() => server.decode(good), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'SEQUENCE');
    const bad = client.ctx!.wrap(Buffer.from('altered'), { conf: true });
    bad[bad.length - 1]! ^= 1;
    assert.throws(() => server.decode(bad), (e) => saslError('BAD_TOKEN')(e) && (e as SaslGssapiError).gssCode === 'BAD_SIG');
    assert.throws(() => server.decode(client.ctx!.wrap(Buffer.alloc(300), { conf: true })), saslError('TOO_LARGE'));
  });

  it('garbage at every step ends in SaslGssapiError, never another exception', async () => {
    const r = prng(4752);
    const t = issue(18);
    const mangle = (b: Buffer): Buffer => {
      const m = Buffer.from(b.subarray(0, r(b.length + 1)));
      for (let k = 1 + r(4); k > 0 && m.length; k--) m[r(m.length)] ^= 1 + r(255);
      return m;
    };
    // a few changes are harmless (an AP-REQ's unprotected ap-options, an RRC that rotates by a multiple of the length)
    let accepted = 0;
    const refused = async (f: () => unknown) => {
      try {
        await f();
        accepted++;
      } catch (e) {
        assert.ok(e instanceof SaslGssapiError, String(e));
      }
    };
    for (let i = 0; i < 300; i++) {
      const stage = r(3);
      if (stage === 0) {
        await refused(() => serverFor(t).step(mangle(new Client(t).firstToken())));
        continue;
      }
      const x = await toOffer(t);
      const answer = x.client.choose(SaslLayer.INTEGRITY, 1000);
      if (stage === 1) {
        await refused(() => x.server.step(mangle(answer)));
        continue;
      }
      await x.server.step(answer);
      await refused(() => x.server.decode(mangle(x.client.ctx!.wrap(Buffer.from('some request'), { conf: r(2) === 1 }))));
    }
    assert.ok(accepted < 10, `${accepted} mangled tokens accepted`);
  });

  it('mangled AP-REQ tokens end in SaslGssapiError or a harmless success, never another exception', async () => {
    const r = prng(1964);
    const t = issue(20);
    const good = new Client(t).firstToken();
    for (let i = 0; i < 2000; i++) {
      const m = Buffer.from(good.subarray(0, r(good.length + 1)));
      for (let k = 1 + r(6); k > 0 && m.length; k--) m[r(m.length)] ^= 1 + r(255);
      try {
        await serverFor(t).step(m);
      } catch (e) {
        assert.ok(e instanceof SaslGssapiError, String(e));
      }
    }
  });

  it('the options are checked when the server is made', () => {
    const t = issue(18);
    const base = { keyFor: t.keyFor, replay: new ReplayCache(1000) };
    assert.throws(() => new SaslGssapiServer({ ...base, layers: 0 }), RangeError);
    assert.throws(() => new SaslGssapiServer({ ...base, layers: 8 }), RangeError);
    assert.throws(() => new SaslGssapiServer({ ...base, layers: ALL, maxBuffer: MAX_SASL_BUFFER + 1 }), RangeError);
    assert.equal(new SaslGssapiServer({ ...base, layers: ALL, maxBuffer: MAX_SASL_BUFFER }).receiveLimit, 0xffffff);
  });
});
