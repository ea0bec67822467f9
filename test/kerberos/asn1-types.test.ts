/**
 * ASN.1 types that the MIT captures do not contain (KRB-CRED, AP-REP,
 * AD containers, SPNEGO responses, GSS delegation, PA-PAC-REQUEST,
 * ETYPE-INFO), principal text, and the IANA tables: encode, decode, and
 * re-encode to the same bytes; DER details checked against RFC 4120.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { der, oid, parseDer, readOid, time, Asn1Error } from '../../src/kerberos/asn1/der.js';
import { decodeEncKrbCredPart, decodeKrbCred, encodeEncKrbCredPart, encodeKrbCred, type EncKrbCredPart } from '../../src/kerberos/asn1/krb-cred.js';
import { decodeAdIfRelevant, decodeAdKdcIssued, encodeAdIfRelevant, encodeAdKdcIssued } from '../../src/kerberos/asn1/ad.js';
import { decodeAdCammac, decodeAuthIndicators, encodeAdCammac, encodeAuthIndicators } from '../../src/kerberos/asn1/cammac.js';
import { decodeApRep, decodeEncApRepPart, encodeApRep, encodeEncApRepPart } from '../../src/kerberos/asn1/ap-req.js';
import { decodeEtypeInfo, decodePaPacRequest, encodeEtypeInfo, encodePaPacRequest } from '../../src/kerberos/asn1/padata.js';
import { decodeGssChecksum, encodeGssChecksum, GssFlag, Oid } from '../../src/kerberos/asn1/gss.js';
import { decodeNegotiationToken, decodeNegTokenResp, encodeNegTokenResp, NegState } from '../../src/kerberos/asn1/spnego.js';
import { decodeTicket } from '../../src/kerberos/asn1/ticket.js';
import { decodeKdcRep } from '../../src/kerberos/asn1/kdc-rep.js';
import { formatPrincipal, parsePrincipalName, PrincipalError } from '../../src/kerberos/principal.js';
import { parsePrincipal, principalToString } from '../../src/kerberos/asn1/primitives.js';
import * as iana from '../../src/kerberos/iana.js';

const mit = (name: string) => readFileSync(new URL(`../data/kerberos/mit/${name}`, import.meta.url));
const when = new Date(Date.UTC(2026, 10, 22, 12, 0, 0));

describe('KRB-CRED', () => {
  it('KRB-CRED with a real ticket and EncKrbCredPart round-trip', () => {
    const ticket = decodeKdcRep(mit('kinit-04-rep.der')).ticket;
    const cred = { tickets: [ticket], encPart: { etype: 18, cipher: Buffer.from('00112233', 'hex') } };
    const bytes = encodeKrbCred(cred);
    assert.equal(bytes[0], 0x76, 'APPLICATION 22');
    const back = decodeKrbCred(bytes);
    assert.deepEqual(back.tickets[0]!.raw, ticket.raw);
    assert.deepEqual(encodeKrbCred(back), bytes);
    const part: EncKrbCredPart = {
      ticketInfo: [
        { key: { etype: 18, value: Buffer.alloc(32, 7) }, prealm: 'EXAMPLE.TEST', pname: { nameType: 1, nameString: ['alice'] }, flags: 0x40e10000, authtime: when, endtime: when, srealm: 'EXAMPLE.TEST', sname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] } },
      ],
      nonce: 0xfedcba98,
      timestamp: when,
      usec: 5,
      sAddress: { type: 2, address: Buffer.from([127, 0, 0, 1]) },
    };
    const pb = encodeEncKrbCredPart(part);
    assert.equal(pb[0], 0x7d, 'APPLICATION 29');
    assert.deepEqual(decodeEncKrbCredPart(pb), part);
    assert.deepEqual(encodeEncKrbCredPart(decodeEncKrbCredPart(pb)), pb);
  });
});

describe('AP-REP, authorization data, pre-auth payloads', () => {
  it('AP-REP and EncAPRepPart', () => {
    const enc = { etype: 18, cipher: Buffer.from('abcdef', 'hex') };
    const rep = encodeApRep(enc);
    assert.equal(rep[0], 0x6f, 'APPLICATION 15');
    assert.deepEqual(decodeApRep(rep), enc);
    const part = { ctime: when, cusec: 999999, subkey: { etype: 18, value: Buffer.alloc(32, 1) }, seqNumber: 0x80000001 };
    const pb = encodeEncApRepPart(part);
    assert.equal(pb[0], 0x7b, 'APPLICATION 27');
    assert.deepEqual(decodeEncApRepPart(pb), part);
  });

  it('AD-IF-RELEVANT and AD-KDCIssued', () => {
    const inner = [{ type: iana.AdType.AUTHENTICATION_INDICATOR, data: Buffer.from('3006040474657374', 'hex') }];
    const ifRel = encodeAdIfRelevant(inner);
    assert.deepEqual(decodeAdIfRelevant(ifRel), inner);
    const issued = { adChecksum: { type: 16, value: Buffer.alloc(12, 2) }, iRealm: 'EXAMPLE.TEST', iSname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] }, elements: inner };
    const b = encodeAdKdcIssued(issued);
    assert.deepEqual(decodeAdKdcIssued(b), issued);
    assert.deepEqual(encodeAdKdcIssued(decodeAdKdcIssued(b)), b);
  });

  it('AD-CAMMAC (RFC 7751 §3) and AD-AUTHENTICATION-INDICATOR (§4)', () => {
    // SEQUENCE OF UTF8String, byte for byte
    const ind = encodeAuthIndicators(['idp', 'hardened', 'é']);
    assert.equal(ind.toString('hex'), '30130c036964700c0868617264656e65640c02c3a9');
    assert.deepEqual(decodeAuthIndicators(ind), ['idp', 'hardened', 'é']);
    assert.throws(() => decodeAuthIndicators(Buffer.from('300504036964', 'hex')), Asn1Error, 'cut short');
    assert.throws(() => decodeAuthIndicators(Buffer.from('30050403696470', 'hex')), /expected a UTF8String/, 'an OCTET STRING is not an indicator');
    assert.throws(() => decodeAuthIndicators(Buffer.from('30030c01ff', 'hex')), /not valid UTF-8/);
    const elements = [{ type: iana.AdType.AUTHENTICATION_INDICATOR, data: ind }];
    const full = {
      elements,
      kdcVerifier: { identifier: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] }, kvno: 0xfffffffe, enctype: 18, mac: { type: 16, value: Buffer.alloc(12, 3) } },
      svcVerifier: { mac: { type: 16, value: Buffer.alloc(12, 4) } },
    };
    const b = encodeAdCammac(full);
    assert.deepEqual(decodeAdCammac(b), full);
    assert.deepEqual(encodeAdCammac(decodeAdCammac(b)), b);
    // a service verifier as MIT writes it, with only its [3] mac: assembled by hand
    const svcOnly = encodeAdCammac({ elements, svcVerifier: full.svcVerifier });
    const elementsHex = 'a022' + '3020' + '301e' + 'a003020161' + 'a1170415' + ind.toString('hex');
    const svcHex = 'a21b' + '3019' + 'a317' + '3015' + 'a003020110' + 'a10e040c' + '04'.repeat(12);
    assert.equal(svcOnly.toString('hex'), '3041' + elementsHex + svcHex);
    // other verifiers are kept as received; an empty list is refused
    const others = Buffer.from('301b3019a3173015a003020110a10e040c' + '05'.repeat(12), 'hex');
    const withOthers = { elements, otherVerifiers: others };
    assert.deepEqual(decodeAdCammac(encodeAdCammac(withOthers)), withOthers);
    assert.throws(() => decodeAdCammac(encodeAdCammac({ elements, otherVerifiers: Buffer.from('3000', 'hex') })), /other-verifiers may not be empty/);
    assert.throws(() => decodeAdCammac(Buffer.from('3000', 'hex')), /missing field \[0\]/);
  });

  it('ETYPE-INFO and PA-PAC-REQUEST', () => {
    const info = [{ etype: 17, salt: Buffer.from('EXAMPLE.TESTalice') }, { etype: 18 }];
    assert.deepEqual(decodeEtypeInfo(encodeEtypeInfo(info)), info);
    assert.deepEqual(encodePaPacRequest({ includePac: true }), Buffer.from('3005a0030101ff', 'hex'));
    assert.deepEqual(decodePaPacRequest(Buffer.from('3005a003010100', 'hex')), { includePac: false });
  });
});

describe('SPNEGO and GSS', () => {
  it('NegTokenResp accept-completed with a response token, as the acceptor sends it', () => {
    const resp = { negState: NegState.ACCEPT_COMPLETED, supportedMech: Oid.KRB5, responseToken: Buffer.from('6f00', 'hex') };
    const b = encodeNegTokenResp(resp);
    assert.equal(b.toString('hex').slice(0, 2), 'a1');
    assert.deepEqual(decodeNegTokenResp(b), resp);
    assert.ok('resp' in decodeNegotiationToken(b));
    assert.throws(() => decodeNegTokenResp(Buffer.from('a1053003a00102', 'hex')), Asn1Error, 'negState must be ENUMERATED');
  });

  it('OIDs encode as X.690 says', () => {
    assert.equal(oid(Oid.KRB5).toString('hex'), '06092a864886f712010202');
    assert.equal(oid(Oid.SPNEGO).toString('hex'), '06062b0601050502');
    assert.equal(oid(Oid.MS_KRB5).toString('hex'), '06092a864882f712010202');
    assert.equal(readOid(parseDer(oid('2.999.3')), 'oid'), '2.999.3');
    assert.throws(() => oid('1.40.1'), Asn1Error);
  });

  it('the 0x8003 checksum with a delegation (RFC 4121 §4.1.1)', () => {
    const krbCred = Buffer.from('7603020100', 'hex');
    const c = { bindings: Buffer.alloc(16, 9), flags: GssFlag.DELEG | GssFlag.MUTUAL, delegation: krbCred };
    const b = encodeGssChecksum(c);
    assert.equal(b.length, 28 + krbCred.length);
    assert.equal(b.readUInt32LE(0), 16);
    assert.equal(b.readUInt16LE(24), 1, 'DlgOpt');
    assert.deepEqual(decodeGssChecksum(b), c);
    assert.throws(() => decodeGssChecksum(b.subarray(0, 30)), Asn1Error);
  });
});

describe('principal names', () => {
  it('parse and format with escapes, realms and name types', () => {
    assert.deepEqual(parsePrincipalName('HTTP/server.example.test@EXAMPLE.TEST', 'X'), { name: { nameType: 1, nameString: ['HTTP', 'server.example.test'] }, realm: 'EXAMPLE.TEST' });
    assert.deepEqual(parsePrincipalName('krbtgt/EXAMPLE.TEST', 'EXAMPLE.TEST').name.nameType, iana.NameType.SRV_INST);
    const odd = { nameType: 1, nameString: ['a/b', 'c@d', 'e\\f', 'tab\there'] };
    const text = formatPrincipal(odd, 'RE@LM');
    assert.equal(text, 'a\\/b/c\\@d/e\\\\f/tab\\there@RE\\@LM');
    assert.deepEqual(parsePrincipalName(text, 'X', 1), { name: odd, realm: 'RE@LM' });
    for (const bad of ['', 'a//b', 'a\\', '/a', 'a@', 'a@B@C']) assert.throws(() => parsePrincipalName(bad, 'R'), PrincipalError, JSON.stringify(bad));
  });

  it('the older names in primitives.ts still behave', () => {
    assert.equal(principalToString({ nameType: 1, nameString: ['alice'] }, 'EXAMPLE.TEST'), 'alice@EXAMPLE.TEST');
    assert.deepEqual(parsePrincipal('krbtgt/R', 'R'), { name: { nameType: 1, nameString: ['krbtgt', 'R'] }, realm: 'R' });
  });
});

describe('IANA tables and DER details', () => {
  it('numbers the KDC relies on', () => {
    assert.equal(iana.PaType.REDHAT_IDP_OAUTH2, 152);
    assert.equal(iana.PaType.AS_FRESHNESS, 150);
    assert.equal(iana.KeyUsage.AS_REQ, 56);
    assert.equal(iana.ErrorCode.KRB_ERR_RESPONSE_TOO_BIG, 52);
    assert.equal(iana.ChecksumType.GSSAPI, 0x8003);
    assert.equal(iana.flagBit(iana.TicketFlag.FORWARDABLE), 0x40000000);
    for (const table of [iana.MsgType, iana.PaType, iana.ErrorCode, iana.KeyUsage, iana.Etype, iana.ChecksumType, iana.AdType]) {
      const values = Object.values(table);
      assert.equal(new Set(values).size, values.length, 'no number appears twice in a table');
    }
  });

  it('KerberosTime is YYYYMMDDHHMMSSZ without fractions; real tickets decode', () => {
    assert.equal(der(time(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).subarray(2).toString(), '20260102030405Z');
    assert.throws(() => time(new Date(NaN)), Asn1Error);
    assert.equal(decodeTicket(decodeKdcRep(mit('kinit-04-rep.der')).ticket.raw).realm, 'EXAMPLE.TEST');
  });
});
