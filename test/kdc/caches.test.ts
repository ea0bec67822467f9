/**
 * The KDC's caches: the lookaside cache answers a retransmission with the
 * very same reply and stays within its byte bound under a flood of distinct
 * requests; the replay cache refuses a second use of an authenticator,
 * forgets entries when they expire, and stays within its size bound; the
 * opened-TGT cache answers only for the very same ciphertext under the
 * very same key, and checks times on every use.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeKdcReq, encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { asReqBody, asWithPassword, randomNonce, tgsRequest } from '../../src/kerberos/client.js';
import { createHash } from 'node:crypto';
import { ReplayCache } from '../../src/kerberos/replay-cache.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { sendUdp } from '../../src/kerberos/transport.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { TgtCache } from '../../src/kdc/state.js';
import { errorName, KdcError } from '../../src/kdc/errors.js';
import type { PrincipalDb } from '../../src/kdc/principals.js';
import { encodeEncTicketPart, encodeTicket, type Ticket } from '../../src/kerberos/asn1/ticket.js';
import { profile } from '../../src/kerberos/crypto/index.js';
import { KeyUsage } from '../../src/kerberos/iana.js';

describe('KDC lookaside cache', () => {
  let realm: TestRealm;
  before(async () => {
    realm = await startTestRealm();
  });
  after(async () => {
    await realm.stop();
  });

  const asReq = (nonce: number) => encodeKdcReq({ msgType: 10, padata: [], body: asReqBody({ nameType: 1, nameString: ['admin'] }, 'EXAMPLE.TEST', { etypes: [18], nonce }) });

  it('a retransmitted request gets the same bytes; distinct requests are answered afresh', async () => {
    const kdc = realm.server.kdc;
    const req = asReq(randomNonce());
    const first = (await kdc.handle(req, 'udp'))!;
    assert.equal(first[0], 0x7e, 'PREAUTH_REQUIRED is a KRB-ERROR');
    // the error carries a fresh cookie each time it is made, so equal bytes mean the cached reply
    assert.deepEqual(await kdc.handle(Buffer.from(req), 'udp'), first);
    assert.notDeepEqual(await kdc.handle(asReq(randomNonce()), 'udp'), first);
  });

  it('stays within its byte bound under a flood of distinct requests, evicting the oldest first', async () => {
    const kdc = realm.server.kdc;
    const oldest = asReq(1);
    const oldestReply = (await kdc.handle(oldest, 'udp'))!;
    let reply = oldestReply;
    // about 300 bytes a reply: 50,000 replies are well past 10 MiB
    for (let i = 0; i < 50_000; i++) reply = (await kdc.handle(asReq(1000 + i), 'udp'))!;
    assert.ok(reply.length > 100);
    const stats = kdc.lookasideStats();
    assert.ok(stats.bytes <= 10 * 1024 * 1024 + 8 * 1024, `${stats.bytes} bytes kept`);
    assert.ok(stats.entries < 50_000 && stats.entries > 10_000, `${stats.entries} entries kept`);
    assert.notDeepEqual(await kdc.handle(oldest, 'udp'), oldestReply, 'the oldest reply was evicted and the request answered afresh');
  });
});

describe('replay cache', () => {
  // an authenticator is told apart by the end of its ciphertext (its MAC)
  const cipher = (name: string) => Buffer.concat([Buffer.from('confounder and encrypted authenticator'), createHash('sha256').update(name).digest().subarray(0, 12)]);
  const KEEP = 600_000;

  it('refuses an authenticator seen before until it expires', () => {
    const c = new ReplayCache(KEEP);
    const t = 1_700_000_000_000;
    assert.equal(c.check(cipher('a'), t), true);
    assert.equal(c.check(cipher('a'), t + 1000), false, 'second use');
    assert.equal(c.check(Buffer.from(cipher('a')), t + 1000), false, 'second use, another Buffer of the same bytes');
    assert.equal(c.check(cipher('b'), t + 1000), true);
    assert.equal(c.check(cipher('a'), t + 601_000), true, 'expired after twice the clock skew');
    assert.equal(c.check(cipher('a'), t + 602_000), false, 'and recorded again');
  });

  it('drops expired entries as it goes and keeps at most its bound', () => {
    const c = new ReplayCache(KEEP, 1000);
    const t = 1_700_000_000_000;
    for (let i = 0; i < 5000; i++) assert.equal(c.check(cipher(`x${i}`), t), true);
    assert.equal(c.size, 1000);
    for (let i = 4000; i < 5000; i++) assert.equal(c.check(cipher(`x${i}`), t), false, `x${i} is among the newest, kept`);
    assert.equal(c.check(cipher('x3999'), t), true, 'an evicted entry is forgotten');
    c.check(cipher('late'), t + 700_000);
    assert.equal(c.size, 1, 'every expired entry went');
  });

  it('is served by the TGS exchange and refuses a replayed TGS request', async () => {
    const realm = await startTestRealm();
    try {
      const port = realm.server.kdcPort;
      const send = (m: Buffer) => sendUdp({ host: '127.0.0.1', port }, m);
      const tgt = await asWithPassword(send, { nameType: 1, nameString: ['admin'] }, 'EXAMPLE.TEST', realm.adminPassword, { etypes: [18] });
      const { msg } = tgsRequest(tgt, { nameType: 2, nameString: ['HTTP', 'localhost'] }, { etypes: [18] });
      assert.equal((await send(msg))[0], 0x6d, 'TGS-REP');
      // the same authenticator and body in a request that differs elsewhere (an extra PA-DATA the KDC ignores), so the lookaside cannot answer it
      const req = decodeKdcReq(msg);
      const again = encodeKdcReq({ msgType: 12, padata: [...req.padata, { type: 1000, value: Buffer.alloc(0) }], body: req.body, bodyRaw: req.bodyRaw });
      assert.ok(again.includes(req.bodyRaw), 'the body is the same bytes');
      const reply = await send(again);
      assert.equal(reply[0], 0x7e, 'a KRB-ERROR');
      assert.equal(decodeKrbError(reply).errorCode, 34, 'KRB_AP_ERR_REPEAT');
    } finally {
      await realm.stop();
    }
  });
});

describe('opened-TGT cache', () => {
  const REALM = 'CACHE.TEST';
  const now = Date.now();
  const krbtgtDb = (key: Buffer) =>
    ({ find: () => ({ dn: 'x', name: `krbtgt/${REALM}@${REALM}`, keys: [{ etype: 18, kvno: 1, key }], disabled: false, authTypes: [], isUser: false }) }) as unknown as PrincipalDb;
  const tgtUnder = (key: Buffer, endtime: Date): Ticket => {
    const p = profile(18);
    const session = p.randomKey();
    const etp = { flags: 0, key: { etype: 18, value: session.value }, crealm: REALM, cname: { nameType: 1, nameString: ['alice'] }, transited: { type: 1, contents: Buffer.alloc(0) }, authtime: new Date(now - 1000), endtime };
    const t = { realm: REALM, sname: { nameType: 2, nameString: ['krbtgt', REALM] }, encPart: { etype: 18, kvno: 1, cipher: p.encrypt({ etype: 18, value: key }, KeyUsage.TICKET, encodeEncTicketPart(etp)) } };
    return { ...t, raw: encodeTicket(t) };
  };
  const refusedWith = (open: () => unknown, code: string) => assert.throws(open, (e: unknown) => e instanceof KdcError && errorName(e.code) === code);

  it('keeps a TGT from its second use on, answers later uses with the same opened ticket, and never a ticket that differs', async () => {
    const key = profile(18).randomKey().value;
    const db = krbtgtDb(key);
    const tgt = tgtUnder(key, new Date(now + 3600_000));
    const copy = () => ({ ...tgt, encPart: { ...tgt.encPart, cipher: Buffer.from(tgt.encPart.cipher) } });
    const tgts = new TgtCache();
    const openTgt = tgts.open.bind(tgts);
    const first = await openTgt(db, REALM, tgt, now);
    assert.equal(first.etp.cname.nameString[0], 'alice');
    const second = await openTgt(db, REALM, copy(), now);
    assert.notEqual(second.session.value, first.session.value, 'a first use is only noted, not kept');
    assert.deepEqual(second.session.value, first.session.value);
    const third = await openTgt(db, REALM, copy(), now);
    assert.equal(third.session.value, second.session.value, 'the same opened ticket, by content of the ciphertext');
    // the same MAC at the end (the cache key), another byte in the middle: decrypted afresh, and refused
    const tampered = Buffer.from(tgt.encPart.cipher);
    tampered[20] ^= 0x01;
    refusedWith(() => openTgt(db, REALM, { ...tgt, encPart: { ...tgt.encPart, cipher: tampered } }, now), 'KRB_AP_ERR_BAD_INTEGRITY');
  });

  it('misses when the krbtgt key is another, and checks the times on every use', async () => {
    const key = profile(18).randomKey().value;
    const tgt = tgtUnder(key, new Date(now + 60_000));
    const tgts = new TgtCache();
    const openTgt = tgts.open.bind(tgts);
    await openTgt(krbtgtDb(key), REALM, tgt, now);
    await openTgt(krbtgtDb(key), REALM, tgt, now); // kept from here on
    refusedWith(() => openTgt(krbtgtDb(profile(18).randomKey().value), REALM, tgt, now), 'KRB_AP_ERR_BAD_INTEGRITY');
    refusedWith(() => openTgt(krbtgtDb(key), REALM, tgt, now + 120_000), 'KRB_AP_ERR_TKT_EXPIRED');
  });

  it('belongs to one KDC: another cache has not seen the ticket', async () => {
    const key = profile(18).randomKey().value;
    const db = krbtgtDb(key);
    const tgt = tgtUnder(key, new Date(now + 3600_000));
    const one = new TgtCache();
    await one.open(db, REALM, tgt, now);
    const kept = await one.open(db, REALM, tgt, now);
    assert.equal((await one.open(db, REALM, tgt, now)).session.value, kept.session.value);
    const other = new TgtCache();
    assert.notEqual((await other.open(db, REALM, tgt, now)).session.value, kept.session.value, 'a second KDC decrypts afresh');
  });
});
