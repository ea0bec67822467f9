/**
 * FAST armor is an AP-REQ and is checked like one (RFC 6113 §5.4.1.1, RFC
 * 4120 §3.2.3): an armor authenticator outside the clock skew gets
 * KRB_AP_ERR_SKEW and a repeated one KRB_AP_ERR_REPEAT, the codes of the TGS
 * path, unless the request continues the conversation the KDC started with
 * that very armor (its cookie echoed), as MIT clients do. Requests are built
 * with dirid's own client code and sent to a running realm over UDP.
 */
import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { asReqBody, asWithPassword, type Credentials } from '../../src/kerberos/client.js';
import { armoredAsReq, encryptedChallenge, processArmored, type ArmoredRequest } from '../../src/kerberos/fast-client.js';
import { decodeFastArmoredReq, encodeFastArmoredReq, encodeFastReq, ArmorType } from '../../src/kerberos/asn1/fast.js';
import { decodeKdcReq, encodeKdcReq, encodeKdcReqBody, type KdcReqBody } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';
import { profile, type EncryptionKey } from '../../src/kerberos/crypto/index.js';
import { ErrorCode, KeyUsage, PaType } from '../../src/kerberos/iana.js';
import { sendUdp } from '../../src/kerberos/transport.js';
import { addActiveUser, startTestRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

const REALM = 'EXAMPLE.TEST';
const alice = { nameType: 1, nameString: ['alice'] };
const PASSWORD = 'Alice-pass-1';

describe('FAST armor is checked like any AP-REQ', () => {
  let realm: TestRealm;
  let armorTgt: Credentials;
  let aliceKey: EncryptionKey;
  const send = (m: Buffer) => sendUdp({ host: '127.0.0.1', port: realm.server.kdcPort }, m);

  before(async () => {
    realm = await startTestRealm();
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await addActiveUser(admin, 'alice', PASSWORD, { first: 'Alice', last: 'L' });
    armorTgt = await asWithPassword(send, { nameType: 1, nameString: ['admin'] }, REALM, realm.adminPassword);
    aliceKey = profile(18).stringToKey(PASSWORD, `${REALM}alice`);
  });
  after(async () => realm.stop());

  const body = (): KdcReqBody => asReqBody(alice, REALM, { etypes: [18] });

  /** The code of the KDC's answer: the inner error of an armored one, the outer of a plain one, 0 for a ticket. */
  async function answer(req: ArmoredRequest, b: KdcReqBody): Promise<{ code: number; padata: PaData[] }> {
    const r = processArmored(await send(req.msg), req, b, aliceKey);
    return r.kind === 'rep' ? { code: 0, padata: [] } : { code: r.error.errorCode, padata: r.padata };
  }

  /** Another request armored with the armor AP-REQ of `first` (same authenticator, same armor key). */
  function sameArmor(first: ArmoredRequest, b: KdcReqBody, padata: PaData[]): ArmoredRequest {
    const armor = decodeFastArmoredReq(decodeKdcReq(first.msg).padata.find((p) => p.type === PaType.FX_FAST)!.value).armor!;
    const bodyRaw = encodeKdcReqBody(b);
    const k = first.armorKey;
    const p = profile(k.etype);
    const fast = encodeFastArmoredReq({
      armor: { type: ArmorType.AP_REQUEST, value: armor.value },
      reqChecksum: { type: p.checksumType, value: p.checksum(k, KeyUsage.FAST_REQ_CHKSUM, bodyRaw) },
      encFastReq: { etype: k.etype, cipher: p.encrypt(k, KeyUsage.FAST_ENC, encodeFastReq({ fastOptions: 0, padata, bodyRaw })) },
    });
    return { msg: encodeKdcReq({ msgType: 10, padata: [{ type: PaType.FX_FAST, value: fast }], body: b, bodyRaw }), armorKey: k };
  }

  const cookieOf = (padata: PaData[]) => padata.find((p) => p.type === PaType.FX_COOKIE)!;

  it('an armor authenticator 10 minutes off the KDC clock gets KRB_AP_ERR_SKEW (37)', async () => {
    for (const offset of [600_000, -600_000]) {
      const realNow = Date.now;
      const clock = mock.method(Date, 'now', () => realNow() + offset);
      let req: ArmoredRequest;
      try {
        req = armoredAsReq(armorTgt, body(), []);
      } finally {
        clock.mock.restore();
      }
      const reply = await send(req.msg);
      assert.equal(reply[0], 0x7e, 'a KRB-ERROR');
      assert.equal(decodeKrbError(reply).errorCode, ErrorCode.KRB_AP_ERR_SKEW, `armor ${offset / 60_000} min off`);
    }
    assert.ok(realm.log.some((l) => /kdc as_req transport=udp .*outcome=KRB_AP_ERR_SKEW/.test(l)));
  });

  it('an armor authenticator within the skew starts a conversation, and the same armor continues it with the cookie', async () => {
    const b1 = body();
    const first = armoredAsReq(armorTgt, b1, []);
    const r1 = await answer(first, b1);
    assert.equal(r1.code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    // the answer to PREAUTH_REQUIRED, as MIT kinit -T sends it: the same armor, the cookie echoed
    const b2 = body();
    const second = sameArmor(first, b2, [encryptedChallenge(first.armorKey, aliceKey), cookieOf(r1.padata)]);
    assert.equal((await answer(second, b2)).code, 0, 'a ticket');
  });

  it('the same armor AP-REQ on a new conversation gets KRB_AP_ERR_REPEAT (34)', async () => {
    const b1 = body();
    const first = armoredAsReq(armorTgt, b1, []);
    assert.equal((await answer(first, b1)).code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const b2 = body();
    const replayed = sameArmor(first, b2, [encryptedChallenge(first.armorKey, aliceKey)]);
    const reply = await send(replayed.msg);
    assert.equal(decodeKrbError(reply).errorCode, ErrorCode.KRB_AP_ERR_REPEAT);
    assert.ok(realm.log.some((l) => /kdc as_req transport=udp .*outcome=KRB_AP_ERR_REPEAT/.test(l)));
  });

  it('a cookie from a conversation with another armor does not let an armor repeat', async () => {
    const bA = body();
    const a = armoredAsReq(armorTgt, bA, []);
    assert.equal((await answer(a, bA)).code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const bB = body();
    const b = armoredAsReq(armorTgt, bB, []);
    const rB = await answer(b, bB);
    assert.equal(rB.code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const b2 = body();
    const replayed = sameArmor(a, b2, [encryptedChallenge(a.armorKey, aliceKey), cookieOf(rB.padata)]);
    assert.equal(decodeKrbError(await send(replayed.msg)).errorCode, ErrorCode.KRB_AP_ERR_REPEAT);
  });

  it('a byte-identical retransmission is answered from the lookaside cache, not refused as a replay', async () => {
    const b1 = body();
    const first = armoredAsReq(armorTgt, b1, []);
    const reply = await send(first.msg);
    assert.equal((await answer(first, b1)).code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED, 'the retransmission gets the first answer');
    assert.deepEqual(await send(Buffer.from(first.msg)), reply);
  });
});
