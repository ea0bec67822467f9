/**
 * The KDC's two request caches under load: the lookaside cache answers a
 * retransmission with the very same reply and stays within its byte bound
 * under a flood of distinct requests; the TGS replay cache refuses a second
 * use of an authenticator, forgets entries when they expire, and stays
 * within its size bound.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { asReqBody, randomNonce } from '../../src/kerberos/client.js';
import { ReplayCache } from '../../src/kdc/tgs-exchange.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';

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

describe('TGS replay cache', () => {
  it('refuses an authenticator seen before until it expires', () => {
    const c = new ReplayCache();
    const t = 1_700_000_000_000;
    assert.equal(c.check('a', t), true);
    assert.equal(c.check('a', t + 1000), false, 'second use');
    assert.equal(c.check('b', t + 1000), true);
    assert.equal(c.check('a', t + 601_000), true, 'expired after twice the clock skew');
  });

  it('drops expired entries as it goes and keeps at most its bound', () => {
    const c = new ReplayCache(1000);
    const t = 1_700_000_000_000;
    for (let i = 0; i < 5000; i++) c.check(`x${i}`, t);
    assert.equal(c.size, 1000);
    assert.equal(c.check('x4999', t), false, 'the newest are kept');
    c.check('late', t + 700_000);
    assert.equal(c.size, 1, 'every expired entry went');
  });
});
