/**
 * Kerberos messages against real MIT krb5 bytes (test/data/kerberos/mit,
 * captured by scripts/capture-mit-krb5.ts): every message decodes, its key
 * fields are what MIT sent, it re-encodes byte for byte, and its encrypted
 * parts decrypt with the recorded keys and round-trip too. Malformed input
 * only ever raises Asn1Error.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeKdcReq, encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKdcRep, decodeEncKdcRepPart, encodeEncKdcRepPart, encodeKdcRep } from '../../src/kerberos/asn1/kdc-rep.js';
import { decodeKrbError, encodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeEtypeInfo2, decodePaEncTsEnc, encodeEtypeInfo2, encodePaEncTsEnc } from '../../src/kerberos/asn1/padata.js';
import { decodeEncryptedData, decodePaDataList, encodePaDataList } from '../../src/kerberos/asn1/primitives.js';
import { decodeEncTicketPart, encodeEncTicketPart, encodeTicket } from '../../src/kerberos/asn1/ticket.js';
import { decodeApReq, decodeAuthenticator, encodeApReq, encodeAuthenticator } from '../../src/kerberos/asn1/ap-req.js';
import { Asn1Error, parseDer } from '../../src/kerberos/asn1/der.js';
import { readKeytab, writeKeytab } from '../../src/kerberos/keytab.js';
import { profile } from '../../src/kerberos/crypto/index.js';
import { KeyUsage, MsgType, PaType } from '../../src/kerberos/iana.js';

const data = (name: string) => readFileSync(new URL(`../data/kerberos/mit/${name}`, import.meta.url));

describe('Kerberos ASN.1 against MIT captures', () => {
  const krbtgt = readKeytab(data('krbtgt.keytab'));
  const http = readKeytab(data('http.keytab'));
  const keyOf = (entries: typeof krbtgt, etype: number) => {
    const e = entries.find((k) => k.etype === etype);
    assert.ok(e, `no key of etype ${etype}`);
    return { etype, value: e.key };
  };

  it('keytabs parse and re-serialise byte for byte', () => {
    for (const f of ['krbtgt.keytab', 'http.keytab']) {
      const entries = readKeytab(data(f));
      assert.equal(entries.length, 4);
      assert.deepEqual(new Set(entries.map((e) => e.etype)), new Set([17, 18, 19, 20]));
      assert.deepEqual(writeKeytab(entries), data(f));
    }
    assert.deepEqual(krbtgt[0]!.components, ['krbtgt', 'EXAMPLE.TEST']);
  });

  it('AS-REQ without pre-authentication', () => {
    const raw = data('kinit-01-req.der');
    const r = decodeKdcReq(raw);
    assert.equal(r.msgType, MsgType.AS_REQ);
    assert.deepEqual(r.body.cname?.nameString, ['alice']);
    assert.deepEqual(r.body.sname?.nameString, ['krbtgt', 'EXAMPLE.TEST']);
    assert.equal(r.body.realm, 'EXAMPLE.TEST');
    assert.ok(r.body.etypes.includes(18) && r.body.etypes.includes(20));
    assert.ok(r.padata.some((p) => p.type === PaType.REQ_ENC_PA_REP));
    assert.deepEqual(encodeKdcReq(r), raw);
    assert.deepEqual(encodeKdcReq({ msgType: r.msgType, padata: r.padata, body: r.body }), raw, 'the body re-encodes from fields too');
  });

  it('KRB-ERROR PREAUTH_REQUIRED with ETYPE-INFO2', () => {
    const raw = data('kinit-02-rep.der');
    const e = decodeKrbError(raw);
    assert.equal(e.errorCode, 25);
    assert.deepEqual(encodeKrbError(e), raw);
    const md = decodePaDataList(parseDer(e.eData!));
    assert.deepEqual(encodePaDataList(md), e.eData);
    const info = md.find((p) => p.type === PaType.ETYPE_INFO2)!;
    const entries = decodeEtypeInfo2(info.value);
    assert.equal(entries[0]!.etype, 18);
    assert.deepEqual(encodeEtypeInfo2(entries), info.value);
  });

  it('AS-REQ with PA-ENC-TIMESTAMP decrypts with the password key', () => {
    const raw = data('kinit-03-req.der');
    const r = decodeKdcReq(raw);
    assert.deepEqual(encodeKdcReq(r), raw);
    const ts = r.padata.find((p) => p.type === PaType.ENC_TIMESTAMP)!;
    const ed = parseDer(ts.value);
    const enc = decodeEncryptedData(ed);
    const key = profile(enc.etype).stringToKey('alice-password', 'EXAMPLE.TESTalice');
    const plain = profile(enc.etype).decrypt(key, KeyUsage.PA_ENC_TIMESTAMP, enc.cipher);
    const pa = decodePaEncTsEnc(plain);
    assert.ok(Math.abs(pa.patimestamp.getTime() - Date.now()) < 10 * 365 * 86400_000);
    assert.deepEqual(encodePaEncTsEnc(pa), plain);
  });

  it('AS-REP: enc-part and ticket decrypt and round-trip', () => {
    const raw = data('kinit-04-rep.der');
    const rep = decodeKdcRep(raw);
    assert.equal(rep.msgType, MsgType.AS_REP);
    assert.deepEqual(encodeKdcRep(rep), raw);
    assert.deepEqual(encodeTicket(rep.ticket), rep.ticket.raw);
    const key = profile(rep.encPart.etype).stringToKey('alice-password', 'EXAMPLE.TESTalice');
    const encPart = profile(rep.encPart.etype).decrypt(key, KeyUsage.AS_REP_ENC_PART, rep.encPart.cipher);
    const part = decodeEncKdcRepPart(encPart);
    assert.deepEqual(part.sname.nameString, ['krbtgt', 'EXAMPLE.TEST']);
    assert.deepEqual(encodeEncKdcRepPart(part, encPart[0] === 0x7a ? 26 : 25), encPart);
    const tkey = keyOf(krbtgt, rep.ticket.encPart.etype);
    const tplain = profile(tkey.etype).decrypt(tkey, KeyUsage.TICKET, rep.ticket.encPart.cipher);
    const etp = decodeEncTicketPart(tplain);
    assert.deepEqual(etp.cname.nameString, ['alice']);
    assert.deepEqual(etp.key.value, part.key.value, 'ticket and reply carry the same session key');
    assert.deepEqual(encodeEncTicketPart(etp), tplain);
  });

  it('TGS-REQ: AP-REQ in PA-TGS-REQ, authenticator, and the TGS-REP', () => {
    const raw = data('kvno-01-req.der');
    const r = decodeKdcReq(raw);
    assert.equal(r.msgType, MsgType.TGS_REQ);
    assert.deepEqual(encodeKdcReq(r), raw);
    assert.deepEqual(r.body.sname?.nameString, ['HTTP', 'server.example.test']);
    const tgsPa = r.padata.find((p) => p.type === PaType.TGS_REQ)!;
    const ap = decodeApReq(tgsPa.value);
    assert.deepEqual(encodeApReq(ap), tgsPa.value);
    const tkey = keyOf(krbtgt, ap.ticket.encPart.etype);
    const etp = decodeEncTicketPart(profile(tkey.etype).decrypt(tkey, KeyUsage.TICKET, ap.ticket.encPart.cipher));
    const sess = { etype: etp.key.etype, value: etp.key.value };
    const authPlain = profile(sess.etype).decrypt(sess, KeyUsage.TGS_REQ_AUTH, ap.authenticator.cipher);
    const auth = decodeAuthenticator(authPlain);
    assert.deepEqual(encodeAuthenticator(auth), authPlain);
    assert.ok(auth.cksum, 'the TGS authenticator carries a checksum over the raw req-body');
    assert.ok(profile(sess.etype).verifyChecksum(sess, KeyUsage.TGS_REQ_AUTH_CKSUM, r.bodyRaw, auth.cksum!.value));
    const rep = decodeKdcRep(data('kvno-02-rep.der'));
    assert.equal(rep.msgType, MsgType.TGS_REP);
    assert.deepEqual(encodeKdcRep(rep), data('kvno-02-rep.der'));
    const hkey = keyOf(http, rep.ticket.encPart.etype);
    assert.deepEqual(decodeEncTicketPart(profile(hkey.etype).decrypt(hkey, KeyUsage.TICKET, rep.ticket.encPart.cipher)).cname.nameString, ['alice']);
  });

  it('malformed input raises Asn1Error only: every truncation and random corruption', () => {
    const decoders: Array<[string, (b: Buffer) => unknown]> = [
      ['kinit-01-req.der', decodeKdcReq],
      ['kinit-02-rep.der', decodeKrbError],
      ['kinit-04-rep.der', decodeKdcRep],
      ['kvno-01-req.der', decodeKdcReq],
    ];
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
    for (const [file, decode] of decoders) {
      const raw = data(file);
      for (let len = 0; len < raw.length; len++) assert.throws(() => decode(raw.subarray(0, len)), Asn1Error, `${file} cut at ${len}`);
      assert.throws(() => decode(Buffer.concat([raw, Buffer.from([0])])), Asn1Error);
      for (let i = 0; i < 500; i++) {
        const b = Buffer.from(raw);
        b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
        try {
          decode(b);
        } catch (e) {
          assert.ok(e instanceof Asn1Error, `${file} mutation ${i}: ${String(e)}`);
        }
      }
    }
    assert.throws(() => decodeKdcReq(Buffer.from('6a84ffffffff', 'hex')), Asn1Error);
    assert.throws(() => decodeKdcReq(Buffer.from('6a803080', 'hex')), Asn1Error);
  });
});

describe('credential caches', () => {
  it('an MIT-written ccache parses and re-serialises byte for byte', async () => {
    const { readCcache, writeCcache, CONF_REALM } = await import('../../src/kerberos/ccache.js');
    const raw = data('alice.ccache');
    const cc = readCcache(raw);
    assert.deepEqual(cc.principal.components, ['alice']);
    assert.equal(cc.principal.realm, 'EXAMPLE.TEST');
    const real = cc.credentials.filter((c) => c.server.realm !== CONF_REALM);
    assert.deepEqual(real.map((c) => c.server.components.join('/')), ['krbtgt/EXAMPLE.TEST', 'HTTP/server.example.test']);
    assert.ok(cc.credentials.some((c) => c.server.realm === CONF_REALM));
    assert.deepEqual(writeCcache(cc), raw);
  });
});
