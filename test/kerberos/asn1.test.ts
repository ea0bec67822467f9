/**
 * Kerberos messages against real MIT krb5 bytes (test/data/kerberos/mit,
 * captured by scripts/capture-mit-krb5.ts; index.json lists every message):
 * every message decodes, its key fields are what MIT sent, it re-encodes
 * byte for byte, and its encrypted parts decrypt with the recorded keys and
 * round-trip too (AS, TGS, FAST with encrypted challenge, SPNEGO from curl).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { der } from '../../src/kerberos/asn1/der.js';
import { decodeKdcReq, encodeKdcReq, encodeKdcReqBody, type KdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKdcRep, decodeEncKdcRepPart, encodeEncKdcRepPart, encodeKdcRep, type KdcRep } from '../../src/kerberos/asn1/kdc-rep.js';
import { decodeKrbError, encodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeEtypeInfo2, decodeMethodData, decodePaEncTsEnc, encodeEtypeInfo2, encodeMethodData, encodePaEncTsEnc } from '../../src/kerberos/asn1/padata.js';
import { decodeChecksum, decodeEncryptedData, encodeEncryptedData, type KeyBlock, type PaData } from '../../src/kerberos/asn1/primitives.js';
import { decodeEncTicketPart, decodeTicket, encodeEncTicketPart, encodeTicket, type Ticket } from '../../src/kerberos/asn1/ticket.js';
import { decodeApReq, decodeAuthenticator, encodeApReq, encodeAuthenticator } from '../../src/kerberos/asn1/ap-req.js';
import { decodeFastArmoredRep, decodeFastArmoredReq, decodeFastReq, decodeFastResponse, encodeFastArmoredRep, encodeFastArmoredReq, encodeFastReq, encodeFastResponse } from '../../src/kerberos/asn1/fast.js';
import { decodeGssChecksum, decodeKrb5Token, encodeGssChecksum, encodeKrb5Token, GssFlag, Oid, TokId } from '../../src/kerberos/asn1/gss.js';
import { decodeNegTokenInit, encodeNegTokenInit } from '../../src/kerberos/asn1/spnego.js';
import { readKeytab, type KeytabEntry } from '../../src/kerberos/keytab.js';
import { cf2, profile } from '../../src/kerberos/crypto/index.js';
import { ChecksumType, ErrorCode, hasFlag, KdcOption, KeyUsage, MsgType, PaType, TicketFlag } from '../../src/kerberos/iana.js';

const dataDir = new URL('../data/kerberos/mit/', import.meta.url);
const data = (name: string) => readFileSync(new URL(name, dataDir));
const index = JSON.parse(data('index.json').toString()) as Array<{ file: string; step: string; dir: 'req' | 'rep'; transport: string }>;
const PASSWORD: Record<string, string> = { alice: 'alice-password', bob: 'bob-password' };

const krbtgt = readKeytab(data('krbtgt.keytab'));
const http = readKeytab(data('http.keytab'));
const host = readKeytab(data('host.keytab'));
const keyOf = (entries: KeytabEntry[], etype: number): KeyBlock => {
  const e = entries.find((k) => k.etype === etype);
  assert.ok(e, `no key of etype ${etype}`);
  return { etype, value: e.key };
};
const userKey = (name: string, etype: number): KeyBlock => profile(etype).stringToKey(PASSWORD[name]!, `EXAMPLE.TEST${name}`);
const decrypt = (key: KeyBlock, usage: number, ed: { etype: number; cipher: Buffer }) => {
  assert.equal(ed.etype, key.etype);
  return profile(key.etype).decrypt(key, usage, ed.cipher);
};
const pa = (list: PaData[], type: number): PaData => {
  const p = list.find((x) => x.type === type);
  assert.ok(p, `no PA-DATA of type ${type}`);
  return p;
};
const messages = (step: string) => index.filter((m) => m.step === step).map((m) => data(m.file));

/** Decrypts a ticket with the service's key and checks EncTicketPart round-trips. */
function openTicket(t: Ticket, keys: KeytabEntry[]) {
  assert.deepEqual(encodeTicket(t), t.raw, 'Ticket re-encodes from its fields');
  const plain = decrypt(keyOf(keys, t.encPart.etype), KeyUsage.TICKET, t.encPart);
  const etp = decodeEncTicketPart(plain);
  assert.deepEqual(encodeEncTicketPart(etp), plain, 'EncTicketPart round-trips');
  return etp;
}

/** Decrypts an AS/TGS reply's enc-part and checks it against the request. */
function openReply(rep: KdcRep, key: KeyBlock, usage: number, req: KdcReq) {
  const plain = decrypt(key, usage, rep.encPart);
  assert.equal(plain[0], 0x7a, 'MIT encodes EncKDCRepPart as APPLICATION 26 (EncTGSRepPart), also in AS-REPs');
  const part = decodeEncKdcRepPart(plain);
  assert.deepEqual(encodeEncKdcRepPart(part, 26), plain, 'EncKDCRepPart round-trips');
  assert.equal(part.nonce, req.body.nonce);
  assert.deepEqual(part.sname.nameString, req.body.sname?.nameString);
  assert.ok(part.endtime.getTime() <= req.body.till.getTime());
  assert.ok(req.body.etypes.includes(part.key.etype));
  return part;
}

describe('every captured MIT message decodes and re-encodes byte for byte', () => {
  it('the capture covers the exchanges the tests rely on', () => {
    assert.deepEqual([...new Set(index.map((m) => m.step))], ['kinit', 'kvno', 'kinit-sha384', 'kinit-keytab', 'kinit-fast', 'kinit-v3', 'curl']);
  });
  for (const m of index) {
    it(m.file, () => {
      const raw = data(m.file);
      const tag = raw[0]! & 0x1f;
      if (m.dir === 'req') {
        const r = decodeKdcReq(raw);
        assert.equal(r.msgType, tag === MsgType.AS_REQ ? MsgType.AS_REQ : MsgType.TGS_REQ);
        assert.equal(r.body.realm, 'EXAMPLE.TEST');
        assert.deepEqual(encodeKdcReq(r), raw);
        assert.deepEqual(encodeKdcReqBody(r.body), r.bodyRaw, 'KDC-REQ-BODY re-encodes from its fields');
        assert.deepEqual(encodeKdcReq({ msgType: r.msgType, padata: r.padata, body: r.body }), raw);
      } else if (tag === MsgType.KRB_ERROR) {
        const e = decodeKrbError(raw);
        assert.equal(e.realm, 'EXAMPLE.TEST');
        assert.deepEqual(encodeKrbError(e), raw);
      } else {
        const rep = decodeKdcRep(raw);
        assert.equal(rep.crealm, 'EXAMPLE.TEST');
        assert.deepEqual(encodeKdcRep(rep), raw);
        assert.deepEqual(decodeTicket(rep.ticket.raw).sname, rep.ticket.sname);
      }
    });
  }
});

describe('AS exchange with encrypted timestamp (kinit alice)', () => {
  const [req1, err, req2, rep] = messages('kinit') as [Buffer, Buffer, Buffer, Buffer];

  it('first AS-REQ: no pre-authentication, MIT etype list, PA-AS-FRESHNESS and PA-REQ-ENC-PA-REP', () => {
    const r = decodeKdcReq(req1);
    assert.equal(r.msgType, MsgType.AS_REQ);
    assert.deepEqual(r.body.cname, { nameType: 1, nameString: ['alice'] });
    assert.deepEqual(r.body.sname, { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] });
    assert.deepEqual(r.body.etypes, [18, 17, 20, 19, 16, 23, 25, 26]);
    assert.deepEqual(r.padata.map((p) => p.type).sort((a, b) => a - b), [PaType.REQ_ENC_PA_REP, PaType.AS_FRESHNESS]);
    assert.ok(r.padata.every((p) => p.value.length === 0));
    assert.ok(!hasFlag(r.body.kdcOptions, KdcOption.FORWARDABLE), 'kinit without -f does not ask for forwardable');
  });

  it('PREAUTH_REQUIRED carries METHOD-DATA with ETYPE-INFO2, ENC-TIMESTAMP, FX-FAST and a cookie', () => {
    const e = decodeKrbError(err);
    assert.equal(e.errorCode, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    assert.deepEqual(e.sname.nameString, ['krbtgt', 'EXAMPLE.TEST']);
    const md = decodeMethodData(e.eData!);
    assert.deepEqual(encodeMethodData(md), e.eData);
    const types = md.map((p) => p.type);
    for (const t of [PaType.ETYPE_INFO2, PaType.ENC_TIMESTAMP, PaType.FX_FAST, PaType.FX_COOKIE]) assert.ok(types.includes(t), `METHOD-DATA lacks ${t}`);
    const info = decodeEtypeInfo2(pa(md, PaType.ETYPE_INFO2).value);
    assert.deepEqual(info.map((i) => i.etype), [18]);
    assert.equal(info[0]!.salt, 'EXAMPLE.TESTalice');
    assert.deepEqual(encodeEtypeInfo2(info), pa(md, PaType.ETYPE_INFO2).value);
  });

  it('second AS-REQ: PA-ENC-TIMESTAMP decrypts with the password key (usage 1)', () => {
    const r = decodeKdcReq(req2);
    const enc = decodeEncryptedData(pa(r.padata, PaType.ENC_TIMESTAMP).value);
    assert.deepEqual(der(encodeEncryptedData(enc)), pa(r.padata, PaType.ENC_TIMESTAMP).value);
    const plain = decrypt(userKey('alice', enc.etype), KeyUsage.PA_ENC_TIMESTAMP, enc);
    const ts = decodePaEncTsEnc(plain);
    assert.equal(typeof ts.pausec, 'number');
    assert.deepEqual(encodePaEncTsEnc(ts), plain);
    assert.ok(Math.abs(ts.patimestamp.getTime() - decodeKrbError(err).stime.getTime()) < 60_000, 'client and KDC clocks agree');
  });

  it('AS-REP: enc-part (usage 3), RFC 6806 encrypted-pa-data and the TGT', () => {
    const r = decodeKdcReq(req2);
    const reply = decodeKdcRep(rep);
    assert.equal(reply.msgType, MsgType.AS_REP);
    assert.deepEqual(reply.cname.nameString, ['alice']);
    const part = openReply(reply, userKey('alice', reply.encPart.etype), KeyUsage.AS_REP_ENC_PART, r);
    assert.ok(hasFlag(part.flags, TicketFlag.INITIAL) && hasFlag(part.flags, TicketFlag.PRE_AUTHENT) && hasFlag(part.flags, TicketFlag.ENC_PA_REP));
    const ck = decodeChecksum(pa(part.encryptedPaData ?? [], PaType.REQ_ENC_PA_REP).value);
    const replyKey = userKey('alice', reply.encPart.etype);
    assert.ok(profile(replyKey.etype).verifyChecksum(replyKey, KeyUsage.AS_REQ, req2, ck.value), 'checksum over the AS-REQ as sent (usage 56)');
    assert.equal(pa(part.encryptedPaData!, PaType.FX_FAST).value.length, 0);
    const etp = openTicket(reply.ticket, krbtgt);
    assert.deepEqual(etp.cname.nameString, ['alice']);
    assert.deepEqual(etp.key, part.key, 'ticket and reply carry the same session key');
  });
});

describe('forced etype 20 (aes256-cts-hmac-sha384-192)', () => {
  it('bob asks only for etype 20 and everything decrypts with the SHA-2 string-to-key', () => {
    const [req1, err, req2, rep] = messages('kinit-sha384') as [Buffer, Buffer, Buffer, Buffer];
    assert.deepEqual(decodeKdcReq(req1).body.etypes, [20]);
    const info = decodeEtypeInfo2(pa(decodeMethodData(decodeKrbError(err).eData!), PaType.ETYPE_INFO2).value);
    assert.equal(info[0]!.etype, 20);
    assert.equal(info[0]!.salt, 'EXAMPLE.TESTbob', 'SHA-2 enctypes send the salt explicitly');
    const r = decodeKdcReq(req2);
    const ts = decodeEncryptedData(pa(r.padata, PaType.ENC_TIMESTAMP).value);
    assert.ok(decodePaEncTsEnc(decrypt(userKey('bob', 20), KeyUsage.PA_ENC_TIMESTAMP, ts)).patimestamp instanceof Date);
    const reply = decodeKdcRep(rep);
    const part = openReply(reply, userKey('bob', 20), KeyUsage.AS_REP_ENC_PART, r);
    assert.equal(part.key.etype, 20);
    assert.deepEqual(openTicket(reply.ticket, krbtgt).cname.nameString, ['bob']);
  });
});

describe('AS exchange from a keytab (kinit -k host/server.example.test)', () => {
  it('a principal without requires_preauth gets its AS-REP at once', () => {
    const [req, rep] = messages('kinit-keytab') as [Buffer, Buffer];
    const r = decodeKdcReq(req);
    assert.deepEqual(r.body.cname?.nameString, ['host', 'server.example.test']);
    const reply = decodeKdcRep(rep);
    openReply(reply, keyOf(host, reply.encPart.etype), KeyUsage.AS_REP_ENC_PART, r);
    assert.deepEqual(openTicket(reply.ticket, krbtgt).cname.nameString, ['host', 'server.example.test']);
  });
});

/** Opens a TGS-REQ: the TGT in PA-TGS-REQ, its authenticator (usage 7) and the body checksum (usage 6). */
function openTgsReq(raw: Buffer) {
  const r = decodeKdcReq(raw);
  assert.equal(r.msgType, MsgType.TGS_REQ);
  const apBytes = pa(r.padata, PaType.TGS_REQ).value;
  const ap = decodeApReq(apBytes);
  assert.deepEqual(encodeApReq(ap), apBytes);
  const etp = openTicket(ap.ticket, krbtgt);
  const authPlain = decrypt(etp.key, KeyUsage.TGS_REQ_AUTH, ap.authenticator);
  const auth = decodeAuthenticator(authPlain);
  assert.deepEqual(encodeAuthenticator(auth), authPlain);
  assert.ok(auth.subkey, 'MIT puts a subkey in the TGS authenticator');
  return { r, etp, auth };
}

/** The FAST armor of a request: AP-REQ armor -> armor key, checksum over the outer body (usage 50), KrbFastReq (usage 51). */
function openFastRequest(r: KdcReq, armorKeyOf: (ap: ReturnType<typeof decodeApReq>) => KeyBlock) {
  const value = pa(r.padata, PaType.FX_FAST).value;
  const armored = decodeFastArmoredReq(value);
  assert.deepEqual(encodeFastArmoredReq(armored), value);
  let armorKey: KeyBlock;
  if (armored.armor) {
    assert.equal(armored.armor.type, 1);
    const ap = decodeApReq(armored.armor.value);
    assert.deepEqual(encodeApReq(ap), armored.armor.value);
    armorKey = armorKeyOf(ap);
  } else armorKey = armorKeyOf(decodeApReq(pa(r.padata, PaType.TGS_REQ).value));
  // RFC 6113 §5.4.2: over the outer req-body of an AS-REQ, over the PA-TGS-REQ AP-REQ of a TGS-REQ
  const checked = r.msgType === MsgType.AS_REQ ? r.bodyRaw : pa(r.padata, PaType.TGS_REQ).value;
  assert.ok(profile(armorKey.etype).verifyChecksum(armorKey, KeyUsage.FAST_REQ_CHKSUM, checked, armored.reqChecksum.value), 'req-checksum (usage 50)');
  const plain = decrypt(armorKey, KeyUsage.FAST_ENC, armored.encFastReq);
  const fastReq = decodeFastReq(plain);
  assert.deepEqual(encodeFastReq(fastReq), plain, 'KrbFastReq round-trips');
  assert.deepEqual(encodeKdcReqBody(fastReq.body), fastReq.bodyRaw);
  return { armorKey, fastReq };
}

/** Explicit armor (kinit -T): the armor TGT's session key and the authenticator subkey, combined by KRB-FX-CF2. */
function explicitArmorKey(ap: ReturnType<typeof decodeApReq>): KeyBlock {
  const etp = openTicket(ap.ticket, krbtgt);
  assert.deepEqual(etp.cname.nameString, ['host', 'server.example.test']);
  const authPlain = decrypt(etp.key, KeyUsage.AP_REQ_AUTH, ap.authenticator);
  const auth = decodeAuthenticator(authPlain);
  assert.deepEqual(encodeAuthenticator(auth), authPlain);
  return cf2(auth.subkey!, 'subkeyarmor', etp.key, 'ticketarmor');
}

describe('FAST (kinit -T armor.ccache alice)', () => {
  const [req1, err, req2, rep] = messages('kinit-fast') as [Buffer, Buffer, Buffer, Buffer];
  const outer1 = decodeKdcReq(req1);
  const first = openFastRequest(outer1, explicitArmorKey);

  it('the armored request hides the real padata in KrbFastReq', () => {
    assert.deepEqual(first.fastReq.body.cname?.nameString, ['alice']);
    assert.deepEqual(outer1.padata.map((p) => p.type), [PaType.FX_FAST]);
  });

  it('the armored error: KrbFastArmoredRep (usage 52) with PA-FX-ERROR, ENCRYPTED-CHALLENGE offer and a cookie', () => {
    const e = decodeKrbError(err);
    const md = decodeMethodData(e.eData!);
    assert.deepEqual(md.map((p) => p.type), [PaType.FX_FAST]);
    const armoredRep = pa(md, PaType.FX_FAST).value;
    const enc = decodeFastArmoredRep(armoredRep);
    assert.deepEqual(encodeFastArmoredRep(enc), armoredRep);
    const plain = decrypt(first.armorKey, KeyUsage.FAST_REP, enc);
    const resp = decodeFastResponse(plain);
    assert.deepEqual(encodeFastResponse(resp), plain, 'KrbFastResponse round-trips');
    assert.equal(resp.nonce, first.fastReq.body.nonce);
    const types = resp.padata.map((p) => p.type);
    for (const t of [PaType.FX_ERROR, PaType.ENCRYPTED_CHALLENGE, PaType.FX_COOKIE, PaType.ETYPE_INFO2]) assert.ok(types.includes(t), `FAST error padata lacks ${t}`);
    assert.ok(!types.includes(PaType.ENC_TIMESTAMP), 'no encrypted timestamp under FAST');
    const inner = pa(resp.padata, PaType.FX_ERROR).value;
    const innerErr = decodeKrbError(inner);
    assert.equal(innerErr.errorCode, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    assert.deepEqual(encodeKrbError(innerErr), inner);
  });

  it('the second request answers with ENCRYPTED-CHALLENGE (usage 54) and the echoed cookie; the AS-REP is strengthened', () => {
    const outer2 = decodeKdcReq(req2);
    const second = openFastRequest(outer2, explicitArmorKey);
    const types = second.fastReq.padata.map((p) => p.type);
    assert.ok(types.includes(PaType.FX_COOKIE));
    const challenge = decodeEncryptedData(pa(second.fastReq.padata, PaType.ENCRYPTED_CHALLENGE).value);
    const longTerm = userKey('alice', challenge.etype);
    const clientKey = cf2(second.armorKey, 'clientchallengearmor', longTerm, 'challengelongterm');
    const tsPlain = decrypt(clientKey, KeyUsage.ENC_CHALLENGE_CLIENT, challenge);
    assert.deepEqual(encodePaEncTsEnc(decodePaEncTsEnc(tsPlain)), tsPlain);

    const reply = decodeKdcRep(rep);
    const armoredRep = pa(reply.padata, PaType.FX_FAST).value;
    const resp = decodeFastResponse(decrypt(second.armorKey, KeyUsage.FAST_REP, decodeFastArmoredRep(armoredRep)));
    assert.ok(resp.strengthenKey && resp.finished);
    assert.equal(resp.nonce, second.fastReq.body.nonce);
    assert.deepEqual(resp.finished.cname.nameString, ['alice']);
    assert.ok(profile(second.armorKey.etype).verifyChecksum(second.armorKey, KeyUsage.FAST_FINISHED, reply.ticket.raw, resp.finished.ticketChecksum.value), 'ticket-checksum over the DER Ticket (usage 53)');
    const kdcChallenge = decodeEncryptedData(pa(resp.padata, PaType.ENCRYPTED_CHALLENGE).value);
    const kdcKey = cf2(second.armorKey, 'kdcchallengearmor', longTerm, 'challengelongterm');
    assert.ok(decodePaEncTsEnc(decrypt(kdcKey, KeyUsage.ENC_CHALLENGE_KDC, kdcChallenge)).patimestamp instanceof Date);
    const replyKey = cf2(resp.strengthenKey, 'strengthenkey', longTerm, 'replykey');
    const part = openReply(reply, replyKey, KeyUsage.AS_REP_ENC_PART, { ...second.fastReq, msgType: 10 } as KdcReq);
    assert.deepEqual(openTicket(reply.ticket, krbtgt).key, part.key);
  });
});

/** A TGS-REQ/TGS-REP pair: under FAST the reply key is the subkey strengthened by KrbFastResponse (RFC 6113 §5.4.3). */
function checkTgsExchange(req: Buffer, rep: Buffer, service: string[]) {
  const { r, etp, auth } = openTgsReq(req);
  assert.deepEqual(r.body.sname?.nameString, service);
  assert.ok(auth.cksum && profile(etp.key.etype).verifyChecksum(etp.key, KeyUsage.TGS_REQ_AUTH_CKSUM, r.bodyRaw, auth.cksum.value), 'authenticator checksum over the raw req-body (usage 6)');
  const reply = decodeKdcRep(rep);
  assert.equal(reply.msgType, MsgType.TGS_REP);
  let replyKey = auth.subkey!;
  let inner = r;
  if (r.padata.some((p) => p.type === PaType.FX_FAST)) {
    const fast = openFastRequest(r, () => cf2(auth.subkey!, 'subkeyarmor', etp.key, 'ticketarmor'));
    inner = { ...r, body: fast.fastReq.body, bodyRaw: fast.fastReq.bodyRaw };
    const resp = decodeFastResponse(decrypt(fast.armorKey, KeyUsage.FAST_REP, decodeFastArmoredRep(pa(reply.padata, PaType.FX_FAST).value)));
    assert.equal(resp.nonce, fast.fastReq.body.nonce);
    assert.ok(resp.strengthenKey, 'MIT strengthens FAST TGS replies');
    replyKey = cf2(resp.strengthenKey, 'strengthenkey', auth.subkey!, 'replykey');
  }
  const part = openReply(reply, replyKey, KeyUsage.TGS_REP_ENC_PART_SUBKEY, inner);
  assert.deepEqual(openTicket(reply.ticket, http).key, part.key);
  return r;
}

describe('TGS exchanges', () => {
  it('kvno: TGS-REQ (PA-TGS-REQ, FAST with implicit armor) and the TGS-REP under the subkey (usage 9)', () => {
    const [req, rep] = messages('kvno') as [Buffer, Buffer];
    const r = checkTgsExchange(req, rep, ['HTTP', 'server.example.test']);
    assert.ok(r.padata.some((p) => p.type === PaType.FX_FAST), 'MIT 1.20 FAST-wraps the TGS-REQ once the KDC showed FAST support');
  });

  it('curl: its TGS exchange for HTTP/server.example.test', () => {
    const [req, rep] = messages('curl') as [Buffer, Buffer];
    checkTgsExchange(req, rep, ['HTTP', 'server.example.test']);
  });
});

describe('SPNEGO from curl --negotiate', () => {
  const token = Buffer.from(data('curl-negotiate.b64').toString().trim(), 'base64');

  it('NegTokenInit with the krb5 mechanism and an AP-REQ mechToken; round-trips', () => {
    const init = decodeNegTokenInit(token);
    assert.deepEqual(init.mechTypes.slice(0, 1), [Oid.KRB5]);
    assert.ok(init.mechToken);
    assert.deepEqual(encodeNegTokenInit({ mechTypes: init.mechTypes, ...(init.reqFlags !== undefined ? { reqFlags: init.reqFlags } : {}), mechToken: init.mechToken }), token);
    const krb = decodeKrb5Token(init.mechToken);
    assert.equal(krb.tokId, TokId.AP_REQ);
    assert.deepEqual(encodeKrb5Token(krb.tokId, krb.message), init.mechToken);
  });

  it('the AP-REQ opens with the HTTP key; the authenticator (usage 11) carries the 0x8003 checksum', () => {
    const krb = decodeKrb5Token(decodeNegTokenInit(token).mechToken!);
    const ap = decodeApReq(krb.message);
    assert.deepEqual(encodeApReq(ap), krb.message);
    const etp = openTicket(ap.ticket, http);
    assert.deepEqual(etp.cname.nameString, ['alice']);
    const plain = decrypt(etp.key, KeyUsage.AP_REQ_AUTH, ap.authenticator);
    const auth = decodeAuthenticator(plain);
    assert.deepEqual(encodeAuthenticator(auth), plain);
    assert.equal(auth.cksum?.type, ChecksumType.GSSAPI);
    const g = decodeGssChecksum(auth.cksum!.value);
    assert.deepEqual(g.bindings, Buffer.alloc(16));
    assert.ok(g.flags & GssFlag.MUTUAL);
    assert.equal(g.flags & GssFlag.DELEG, 0);
    assert.deepEqual(encodeGssChecksum(g), auth.cksum!.value);
  });
});
