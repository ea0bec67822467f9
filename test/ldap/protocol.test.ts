/**
 * LDAP messages: every request and response round trips (encode, decode,
 * equal value, and the decoded value re-encodes to the same bytes); the
 * captured OpenLDAP PDUs decode to the expected values and re-encode
 * byte for byte, also when every length is in 4-octet long form; write
 * requests decode to their operation and DN; decode errors say which
 * message and operation they belong to; the extended operation values,
 * the paged results control and the result code table.
 */
import { describe, it } from 'node:test';
import type { Filter } from '../../src/directory/filter.js';
import assert from 'node:assert/strict';
import { type BerPart, LdapEncodeError, Tag, application, constructed, context, encodeBer, integer, octetString, octets, sequence, boolean, utf8String } from '../../src/ldap/ber.js';
import { ControlOid, ExtendedOid, ProtocolOp, RESPONSE_TO, ResultCode, resultCodeName } from '../../src/ldap/codes.js';
import { decodePagedResultsValue, encodePagedResultsValue } from '../../src/ldap/controls.js';
import {
  checkWhoAmIRequest,
  decodePasswordModifyRequest,
  decodePasswordModifyResponse,
  encodePasswordModifyRequest,
  encodePasswordModifyResponse,
  noticeOfDisconnection,
  whoAmIResponse,
} from '../../src/ldap/extended.js';
import { encodeFilter } from '../../src/ldap/filter.js';
import { decodeRequest, decodeResponse, encodeMessage } from '../../src/ldap/protocol.js';
import { simpleBind } from '../../src/ldap/protocol-requests.js';
import { encodeResponseOp, result, type LdapResponse } from '../../src/ldap/protocol-responses.js';
import { CAPTURED_BIND, CAPTURED_SEARCH, CAPTURED_SEARCH_REQUEST, REQUESTS, RESPONSES, refused, withLongLengths } from './vectors.js';

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');
const message = (id: number, op: BerPart, ...rest: BerPart[]) => encodeBer(sequence(integer(Tag.integer, id), op, ...rest));


describe('round trips', () => {
  for (const m of REQUESTS) {
    it(`request ${m.protocolOp.op} #${m.messageId}`, () => {
      const bytes = encodeMessage(m);
      const back = decodeRequest(bytes);
      assert.deepEqual(back, m);
      assert.deepEqual(encodeMessage(back), bytes);
      assert.deepEqual(decodeRequest(withLongLengths(bytes)), m, 'with 4-octet lengths');
    });
  }
  for (const m of RESPONSES) {
    it(`response ${m.protocolOp.op} #${m.messageId}`, () => {
      const bytes = encodeMessage(m);
      const back = decodeResponse(bytes);
      assert.deepEqual(back, { controls: [], ...m });
      assert.deepEqual(encodeMessage(back), bytes);
      assert.deepEqual(decodeResponse(withLongLengths(bytes)), back, 'with 4-octet lengths');
    });
  }

  it('entries and bare results, written directly, are the octets of the general encoder', () => {
    // protocol-responses.ts writes these messages in one pass; the tree of encodeResponseOp is the reference
    const general = (messageId: number, op: LdapResponse) => encodeBer(sequence(integer(Tag.integer, messageId), encodeResponseOp(op)));
    const long = (n: number) => 'x'.repeat(n);
    const texts = ['', 'a', 'uid=user1,cn=users,cn=accounts,dc=bench,dc=test', 'Ä', 'ü'.repeat(100), '\u{1f600}', '\ud800 lone', long(127), long(128), long(255), long(256), long(70_000), 'é' + long(130)];
    const ids = [1, 127, 128, 255, 256, 32767, 32768, 8_388_607, 8_388_608, 2_147_483_647];
    const ops: LdapResponse[] = [];
    for (const t of texts) {
      ops.push({ op: 'searchResEntry', objectName: t, attributes: [] });
      ops.push({ op: 'searchResEntry', objectName: 'cn=x', attributes: [{ type: 'cn', values: [t, Buffer.from(t)] }, { type: t || 'sn', values: [] }] });
      ops.push({ op: 'searchResDone', resultCode: ResultCode.success, matchedDN: t, diagnosticMessage: t });
    }
    ops.push({ op: 'searchResEntry', objectName: 'cn=many', attributes: Array.from({ length: 300 }, (_, i) => ({ type: `a${i}`, values: Array.from({ length: i % 5 }, (_, j) => `v${j}`.repeat(i)) })) });
    for (const code of [ResultCode.sizeLimitExceeded, 127, 128, 32768, 2_147_483_647] as ResultCode[]) ops.push({ op: 'searchResDone', resultCode: code, matchedDN: '', diagnosticMessage: 'm' });
    for (const op of ['compareResponse', 'modifyResponse', 'addResponse', 'delResponse', 'modDNResponse'] as const) ops.push({ op, resultCode: ResultCode.compareTrue, matchedDN: 'dc=x', diagnosticMessage: '' });
    for (const messageId of ids) for (const op of ops) assert.deepEqual(encodeMessage({ messageId, protocolOp: op }), general(messageId, op), `${op.op} #${messageId}`);
    // what is not written directly still is written: a referral, controls
    const referral: LdapResponse = { op: 'searchResDone', resultCode: ResultCode.referral, matchedDN: '', diagnosticMessage: '', referral: ['ldap://x/'] };
    assert.deepEqual(encodeMessage({ messageId: 3, protocolOp: referral }), general(3, referral));
    assert.throws(() => encodeMessage({ messageId: 3, protocolOp: { op: 'searchResDone', resultCode: -1 as ResultCode, matchedDN: '', diagnosticMessage: '' } }), LdapEncodeError);
  });

  it('string values of an entry are written as UTF-8, read back as bytes', () => {
    const bytes = encodeMessage({ messageId: 4, protocolOp: { op: 'searchResEntry', objectName: 'cn=Ä', attributes: [{ type: 'cn', values: ['Ä', Buffer.from([0xc3, 0x84])] }] } });
    const back = decodeResponse(bytes).protocolOp;
    assert.ok(back.op === 'searchResEntry');
    assert.deepEqual(back.attributes[0]!.values, [Buffer.from('Ä'), Buffer.from('Ä')]);
  });
});

describe('fixed vectors', () => {
  it('OpenLDAP ldapsearch: anonymous bind and the paged search, byte for byte both ways', () => {
    const bind = decodeRequest(CAPTURED_BIND);
    assert.deepEqual(bind, { messageId: 1, protocolOp: simpleBind('', ''), controls: [] });
    assert.deepEqual(encodeMessage(bind), CAPTURED_BIND);
    const search = decodeRequest(CAPTURED_SEARCH);
    assert.deepEqual(search.protocolOp, CAPTURED_SEARCH_REQUEST);
    assert.equal(search.controls.length, 1);
    assert.deepEqual(search.controls[0]!.type, ControlOid.pagedResults);
    assert.deepEqual(decodePagedResultsValue(search.controls[0]!.value), { size: 2, cookie: Buffer.alloc(0) });
    assert.deepEqual(encodeMessage(search), CAPTURED_SEARCH);
  });

  it('liblber-style 4-octet lengths, 8-octet lengths and leading zeros are read', () => {
    const long = withLongLengths(CAPTURED_SEARCH);
    assert.deepEqual([long[0], long[1], long.readUInt32BE(2)], [0x30, 0x84, long.length - 6]);
    assert.deepEqual(decodeRequest(long), decodeRequest(CAPTURED_SEARCH));
    // the unbind as 0x88 + eight octets
    assert.deepEqual(decodeRequest(hex('30 88 0000000000000005 020103 4200')).protocolOp, { op: 'unbindRequest' });
  });

  it('hand-written responses: success BindResponse, Notice of Disconnection', () => {
    assert.deepEqual(encodeMessage({ messageId: 1, protocolOp: { op: 'bindResponse', ...result(ResultCode.success) } }), hex('300c 020101 6107 0a0100 0400 0400'));
    const notice = noticeOfDisconnection(ResultCode.protocolError, 'x');
    // messageID 0, [APPLICATION 24] { protocolError, "", "x", [10] "1.3.6.1.4.1.1466.20036" }
    assert.deepEqual(notice, Buffer.concat([hex('3025 020100 7820 0a0102 0400 040178 8a16'), Buffer.from(ExtendedOid.noticeOfDisconnection)]));
    assert.deepEqual(decodeResponse(notice), {
      messageId: 0,
      protocolOp: { op: 'extendedResp', resultCode: ResultCode.protocolError, matchedDN: '', diagnosticMessage: 'x', responseName: ExtendedOid.noticeOfDisconnection },
      controls: [],
    });
  });

  it('BOOLEAN: any non-zero octet is TRUE on input, TRUE is written as 0xFF', () => {
    const search = encodeMessage(REQUESTS.find((m) => m.protocolOp.op === 'searchRequest' && m.protocolOp.typesOnly)!);
    const at = search.indexOf(hex('0101ff'));
    assert.ok(at > 0);
    for (const v of [0x01, 0x80, 0x7f]) {
      const b = Buffer.from(search);
      b[at + 2] = v;
      const op = decodeRequest(b).protocolOp;
      assert.ok(op.op === 'searchRequest' && op.typesOnly === true);
    }
    const b = Buffer.from(search);
    b[at + 2] = 0;
    const op = decodeRequest(b).protocolOp;
    assert.ok(op.op === 'searchRequest' && op.typesOnly === false);
  });
});

describe('write requests: operation and DN only', () => {
  const dn = 'uid=alice,cn=users,dc=example,dc=test';
  const attr = (t: string, ...vals: string[]) => sequence(octetString(t), constructed(Tag.set, vals.map((v) => octetString(v))));
  const cases = {
    modifyRequest: constructed(application(ProtocolOp.modifyRequest, true), [octetString(dn), sequence(sequence(integer(Tag.enumerated, 2), attr('mail', 'a@b')))]),
    addRequest: constructed(application(ProtocolOp.addRequest, true), [octetString(dn), sequence(attr('objectClass', 'person'), attr('cn', 'A'))]),
    modDNRequest: constructed(application(ProtocolOp.modDNRequest, true), [octetString(dn), octetString('uid=alicia'), boolean(true), utf8String(context(0, false), 'cn=people,dc=example,dc=test')]),
    delRequest: utf8String(application(ProtocolOp.delRequest, false), dn),
  } as const;
  for (const [op, body] of Object.entries(cases)) {
    it(op, () => {
      const m = decodeRequest(message(21, body));
      assert.deepEqual(m, { messageId: 21, protocolOp: { op, entry: dn }, controls: [] });
      assert.ok(RESPONSE_TO[op as keyof typeof RESPONSE_TO]);
      if (op === 'delRequest') assert.deepEqual(encodeMessage(m), message(21, body));
      else assert.throws(() => encodeMessage(m), LdapEncodeError);
    });
  }
  it('the skipped rest must still be well-formed BER', () => {
    const bad = Buffer.concat([hex('6611'), encodeBer(octetString('cn=x')), hex('3009 0a0102 30')]);
    const e = refused(() => decodeRequest(message(22, bad)));
    assert.equal(e.messageId, 22);
    assert.equal(e.op, 'modifyRequest');
  });
});

describe('decode errors say which message they belong to', () => {
  const search = REQUESTS.find((m) => m.protocolOp.op === 'searchRequest')!;

  it('before the messageID: nothing known', () => {
    for (const bytes of [hex('3105 020101 4200'), hex('3005 0201ff 4200'), hex('3005 020100 4200'), hex('3009 02050080000000 4200'), hex('3004 0400 4200'), hex('3084')]) {
      const e = refused(() => decodeRequest(bytes));
      assert.equal(e.messageId, undefined, e.message);
      assert.equal(e.op, undefined);
      assert.equal(e.resultCode, ResultCode.protocolError);
    }
  });

  it('an unknown or non-request operation: the messageID only', () => {
    for (const op of [hex('7400'), hex('6100'), hex('0400'), hex('9f1f00')]) {
      const e = refused(() => decodeRequest(message(9, op)));
      assert.equal(e.messageId, 9);
      assert.equal(e.op, undefined);
    }
    const e = refused(() => decodeRequest(encodeBer(sequence(integer(Tag.integer, 9)))));
    assert.match(e.message, /without a protocolOp/);
  });

  it('inside the operation or its controls: messageID and operation', () => {
    const good = encodeMessage(search);
    // scope 7
    const scopeAt = good.indexOf(hex('0a0102'));
    const badScope = Buffer.from(good);
    badScope[scopeAt + 2] = 7;
    let e = refused(() => decodeRequest(badScope));
    assert.deepEqual([e.messageId, e.op, e.resultCode], [6, 'searchRequest', ResultCode.protocolError]);
    // controls: a type that is not an OID, a two-octet BOOLEAN, a constructed value, a trailing field
    for (const control of [
      sequence(octetString('x.y')),
      sequence(octetString('1.2.3'), octets(Tag.boolean, hex('ffff'))),
      sequence(octetString('1.2.3'), constructed(0x24, [octetString('v')])),
      sequence(octetString('1.2.3'), boolean(true), octetString('v'), octetString('w')),
    ]) {
      e = refused(() => decodeRequest(message(6, hex('4200'), constructed(context(0, true), [control]))));
      assert.deepEqual([e.messageId, e.op], [6, 'unbindRequest'], e.message);
    }
    // trailing element after the controls
    e = refused(() => decodeRequest(message(6, hex('4200'), hex('a000'), hex('0500'))));
    assert.deepEqual([e.messageId, e.op], [6, 'unbindRequest']);
    // octets after the LDAPMessage itself
    e = refused(() => decodeRequest(Buffer.concat([good, hex('00')])));
    assert.equal(e.messageId, 6);
  });

  it('refused, not malformed: the result code to answer with', () => {
    let f: Filter = { kind: 'present', attr: 'cn' };
    for (let i = 0; i < 40; i++) f = { kind: 'not', item: f };
    const bytes = message(7, constructed(application(ProtocolOp.searchRequest, true), [octetString(''), integer(Tag.enumerated, 0), integer(Tag.enumerated, 0), integer(Tag.integer, 0), integer(Tag.integer, 0), boolean(false), encodeFilter(f), sequence()]));
    const e = refused(() => decodeRequest(bytes));
    assert.deepEqual([e.messageId, e.op, e.resultCode], [7, 'searchRequest', ResultCode.adminLimitExceeded]);
  });

  it('bind: version out of 1..127 is malformed; an unknown authentication choice is decoded for authMethodNotSupported', () => {
    let e = refused(() => decodeRequest(hex('300c020101600702018004008000')));
    assert.deepEqual([e.messageId, e.op], [1, 'bindRequest']);
    e = refused(() => decodeRequest(hex('300c020101600702010004008000')));
    assert.equal(e.op, 'bindRequest');
    const other = decodeRequest(hex('300c020101600702010304008100'));
    assert.deepEqual(other.protocolOp, { op: 'bindRequest', version: 3, name: '', authentication: { method: 'other', tag: 1 } });
    assert.throws(() => encodeMessage(other), LdapEncodeError);
  });
});

describe('extended operation values and the paged results control', () => {
  it('Password Modify: every field optional, absent value = all absent', () => {
    const all = { userIdentity: 'uid=ä,dc=x', oldPasswd: Buffer.from('o'), newPasswd: Buffer.from('n') };
    assert.deepEqual(decodePasswordModifyRequest(encodePasswordModifyRequest(all)), all);
    assert.deepEqual(decodePasswordModifyRequest(encodePasswordModifyRequest({ newPasswd: Buffer.from('n') })), { newPasswd: Buffer.from('n') });
    assert.deepEqual(decodePasswordModifyRequest(encodePasswordModifyRequest({})), {});
    assert.deepEqual(decodePasswordModifyRequest(undefined), {});
    assert.deepEqual(encodePasswordModifyRequest({}), hex('3000'));
    // out of order, unknown field, trailing, not a SEQUENCE, invalid UTF-8 identity
    for (const bad of ['30068201618001 62', '3003830161', '3000 00', '0400', '30038001ff']) refused(() => decodePasswordModifyRequest(hex(bad)));
    assert.equal(encodePasswordModifyResponse(undefined), undefined);
    assert.deepEqual(decodePasswordModifyResponse(encodePasswordModifyResponse(Buffer.from('g'))), { genPasswd: Buffer.from('g') });
    assert.deepEqual(decodePasswordModifyResponse(hex('3000')), {});
  });

  it('Who am I?: no request value; the response value is the bare authzId', () => {
    checkWhoAmIRequest({ op: 'extendedReq', requestName: ExtendedOid.whoAmI });
    refused(() => checkWhoAmIRequest({ op: 'extendedReq', requestName: ExtendedOid.whoAmI, requestValue: Buffer.alloc(0) }));
    refused(() => checkWhoAmIRequest({ op: 'extendedReq', requestName: ExtendedOid.passwordModify }));
    const res = whoAmIResponse('u:alice', ResultCode.success);
    assert.deepEqual(res.responseValue, Buffer.from('u:alice'));
    assert.equal(res.responseName, undefined);
  });

  it('paged results value: size and cookie, both directions', () => {
    const v = { size: 2147483647, cookie: Buffer.from([0, 0xff]) };
    assert.deepEqual(decodePagedResultsValue(encodePagedResultsValue(v)), v);
    assert.deepEqual(encodePagedResultsValue({ size: 2, cookie: Buffer.alloc(0) }), hex('3005 020102 0400'));
    for (const bad of ['3005 0201ff 0400', '3003 020102', '3007 020102 0400 0500', '3005 020102 2400', '3009 02058000000000 0400']) refused(() => decodePagedResultsValue(hex(bad)));
    refused(() => decodePagedResultsValue(undefined));
  });
});

describe('tables', () => {
  it('result codes carry their RFC 4511 numbers', () => {
    const expected: Record<string, number> = {
      success: 0, operationsError: 1, protocolError: 2, timeLimitExceeded: 3, sizeLimitExceeded: 4, compareFalse: 5, compareTrue: 6,
      authMethodNotSupported: 7, strongerAuthRequired: 8, referral: 10, adminLimitExceeded: 11, unavailableCriticalExtension: 12,
      confidentialityRequired: 13, saslBindInProgress: 14, noSuchAttribute: 16, undefinedAttributeType: 17, inappropriateMatching: 18,
      constraintViolation: 19, attributeOrValueExists: 20, invalidAttributeSyntax: 21, noSuchObject: 32, aliasProblem: 33,
      invalidDNSyntax: 34, aliasDereferencingProblem: 36, inappropriateAuthentication: 48, invalidCredentials: 49,
      insufficientAccessRights: 50, busy: 51, unavailable: 52, unwillingToPerform: 53, loopDetect: 54, namingViolation: 64,
      objectClassViolation: 65, notAllowedOnNonLeaf: 66, notAllowedOnRDN: 67, entryAlreadyExists: 68, objectClassModsProhibited: 69,
      affectsMultipleDSAs: 71, other: 80,
    };
    assert.deepEqual({ ...ResultCode }, expected);
    assert.equal(resultCodeName(53), 'unwillingToPerform');
    assert.equal(resultCodeName(4096), '4096');
  });

  it('encoders refuse what cannot go on the wire', () => {
    assert.throws(() => encodeMessage({ messageId: -1, protocolOp: { op: 'unbindRequest' } }), LdapEncodeError);
    assert.throws(() => encodeMessage({ messageId: 2 ** 31, protocolOp: { op: 'unbindRequest' } }), LdapEncodeError);
    assert.throws(() => encodeMessage({ messageId: 1, protocolOp: { op: 'searchResRef', uris: [] } }), LdapEncodeError);
    assert.throws(() => encodeMessage({ messageId: 1, protocolOp: { op: 'extendedResp', ...result(ResultCode.success), responseName: 'whoami' } }), LdapEncodeError);
    assert.throws(() => encodeMessage({ messageId: 1, protocolOp: { op: 'searchResDone', ...result(ResultCode.referral), referral: [] } }), LdapEncodeError);
    assert.throws(() => encodeBer(octets(context(31, false), Buffer.alloc(0))), LdapEncodeError);
  });
});

describe('attribute lists of searches', () => {
  const search = (attributes: string[]) => encodeMessage({ messageId: 9, protocolOp: { op: 'searchRequest', baseObject: 'dc=example,dc=test', scope: 'wholeSubtree', derefAliases: 'neverDerefAliases', sizeLimit: 0, timeLimit: 0, typesOnly: false, filter: { kind: 'present', attr: 'objectClass' }, attributes } });
  const listOf = (bytes: Buffer) => {
    const op = decodeRequest(bytes).protocolOp;
    assert.ok(op.op === 'searchRequest');
    return op.attributes;
  };

  it('the same octets decode to one shared, frozen list; other octets to their own', () => {
    const sssd = ['objectClass', 'uid', 'uidNumber', 'gidNumber', 'memberOf', 'host', 'authorizedService'];
    const first = listOf(search(sssd));
    const again = listOf(search(sssd));
    assert.deepEqual(first, sssd);
    assert.equal(again, first, 'decoded once, shared');
    assert.ok(Object.isFrozen(again));
    // one character changed, same length: a list of its own
    assert.deepEqual(listOf(search([...sssd.slice(0, -1), 'authorizedServicf'])), [...sssd.slice(0, -1), 'authorizedServicf']);
    assert.deepEqual(listOf(search(sssd.slice(1))), sssd.slice(1));
    assert.deepEqual(listOf(search([])), []);
  });

  it('a malformed list after a good one with the same start is still refused', () => {
    const good = search(['cn', 'uid']);
    listOf(good);
    // the last attribute's length octet claims one more octet than there is
    const bad = Buffer.from(good);
    const at = bad.lastIndexOf(Buffer.from('uid')) - 1;
    bad[at] = 4;
    assert.throws(() => decodeRequest(bad));
  });
});
