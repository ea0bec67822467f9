/**
 * Test data for the LDAP wire layer: PDUs captured from OpenLDAP 2.5's
 * ldapsearch (hex), one message of every kind built with our encoders, and
 * a rewriter that gives any BER the 4-octet long-form lengths older liblber
 * wrote, so the reader's tolerance of non-minimal lengths is tested on
 * whole messages.
 */
import assert from 'node:assert/strict';
import type { Filter } from '../../src/directory/filter.js';
import { LdapDecodeError } from '../../src/ldap/ber.js';
import { ExtendedOid, ResultCode } from '../../src/ldap/codes.js';
import { pagedResultsControl } from '../../src/ldap/controls.js';
import { encodePasswordModifyRequest, encodePasswordModifyResponse } from '../../src/ldap/extended.js';
import type { LdapMessage, OutgoingMessage } from '../../src/ldap/protocol.js';
import type { LdapRequest } from '../../src/ldap/protocol-requests.js';
import type { LdapResponse } from '../../src/ldap/protocol-responses.js';

/** `ldapsearch -x` (OpenLDAP 2.5.13): the anonymous simple bind. */
export const CAPTURED_BIND = Buffer.from('300c020101600702010304008000', 'hex');
/** `ldapsearch -x -b dc=example,dc=test -E pr=2/noprompt '(&(uid=al*)(objectClass=person)(!(cn=x)))' cn mail` */
export const CAPTURED_SEARCH = Buffer.from(
  '30818a0201026360041264633d6578616d706c652c64633d746573740a01020a0100020100020100010100a02fa40b040375696430048002616ca315040b6f626a656374436c6173730406706572736f6ea209a3070402636e040178300a0402636e04046d61696ca02330210416312e322e3834302e3131333535362e312e342e333139040730050201020400',
  'hex',
);

/** What CAPTURED_SEARCH decodes to (the search ldapsearch sends for that command line). */
export const CAPTURED_SEARCH_REQUEST = {
  op: 'searchRequest',
  baseObject: 'dc=example,dc=test',
  scope: 'wholeSubtree',
  derefAliases: 'neverDerefAliases',
  sizeLimit: 0,
  timeLimit: 0,
  typesOnly: false,
  filter: {
    kind: 'and',
    items: [
      { kind: 'sub', attr: 'uid', initial: 'al', any: [] },
      { kind: 'eq', attr: 'objectClass', value: 'person' },
      { kind: 'not', item: { kind: 'eq', attr: 'cn', value: 'x' } },
    ],
  },
  attributes: ['cn', 'mail'],
} as const;

/** Runs `fn`, which must throw LdapDecodeError; returns it. */
export function refused(fn: () => unknown): LdapDecodeError {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof LdapDecodeError, String(e instanceof Error ? e.stack : e));
    return e;
  }
  assert.fail('expected LdapDecodeError');
}

/** Every length of a BER value rewritten as 0x84 and four octets (the content is walked when constructed). */
export function withLongLengths(ber: Buffer): Buffer {
  const out: Buffer[] = [];
  let p = 0;
  while (p < ber.length) {
    const id = ber[p++]!;
    let len = ber[p++]!;
    if (len & 0x80) {
      const n = len & 0x7f;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + ber[p++]!;
    }
    const content = ber.subarray(p, p + len);
    p += len;
    const inner = id & 0x20 ? withLongLengths(content) : content;
    const head = Buffer.alloc(6);
    head[0] = id;
    head[1] = 0x84;
    head.writeUInt32BE(inner.length, 2);
    out.push(head, inner);
  }
  return Buffer.concat(out);
}

const filter: Filter = {
  kind: 'and',
  items: [
    { kind: 'or', items: [{ kind: 'eq', attr: 'uid', value: 'alice' }, { kind: 'sub', attr: 'cn', initial: 'Al', any: ['i', 'c'], final: 'e' }] },
    { kind: 'not', item: { kind: 'present', attr: 'nsAccountLock' } },
    { kind: 'ge', attr: 'uidNumber', value: '1000' },
    { kind: 'le', attr: 'uidNumber;x-range', value: '60000' },
    { kind: 'and', items: [] },
    { kind: 'or', items: [] },
    { kind: 'eq', attr: '2.5.4.3', value: 'Ünïcödé \\*()' },
  ],
};

const ok = { matchedDN: '', diagnosticMessage: '' };

/** One request of every kind our encoder writes (with and without optional parts). */
export const REQUESTS: Array<LdapMessage<LdapRequest>> = [
  { messageId: 1, protocolOp: { op: 'bindRequest', version: 3, name: '', authentication: { method: 'simple', password: Buffer.alloc(0) } }, controls: [] },
  { messageId: 2, protocolOp: { op: 'bindRequest', version: 3, name: 'uid=alice,cn=users,dc=example,dc=test', authentication: { method: 'simple', password: Buffer.from('pässword') } }, controls: [] },
  { messageId: 3, protocolOp: { op: 'bindRequest', version: 3, name: '', authentication: { method: 'sasl', mechanism: 'GSSAPI', credentials: Buffer.from([0x60, 0x82, 0x02, 0x00]) } }, controls: [] },
  { messageId: 4, protocolOp: { op: 'bindRequest', version: 2, name: '', authentication: { method: 'sasl', mechanism: 'EXTERNAL' } }, controls: [] },
  { messageId: 5, protocolOp: { op: 'unbindRequest' }, controls: [] },
  {
    messageId: 6,
    protocolOp: { op: 'searchRequest', baseObject: 'dc=example,dc=test', scope: 'wholeSubtree', derefAliases: 'derefInSearching', sizeLimit: 500, timeLimit: 30, typesOnly: false, filter, attributes: ['cn', 'mail', '+', '*'] },
    controls: [pagedResultsControl({ size: 100, cookie: Buffer.from([0, 1, 2, 0xff]) }, true), { type: '1.3.6.1.4.1.4203.1.10.1', criticality: false }],
  },
  { messageId: 7, protocolOp: { op: 'searchRequest', baseObject: '', scope: 'baseObject', derefAliases: 'neverDerefAliases', sizeLimit: 0, timeLimit: 0, typesOnly: true, filter: { kind: 'present', attr: 'objectClass' }, attributes: [] }, controls: [] },
  { messageId: 8, protocolOp: { op: 'compareRequest', entry: 'uid=alice,cn=users,dc=example,dc=test', attributeDesc: 'mail', assertionValue: Buffer.from('alice@example.test') }, controls: [] },
  { messageId: 9, protocolOp: { op: 'abandonRequest', idToAbandon: 6 }, controls: [] },
  { messageId: 10, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.whoAmI }, controls: [] },
  { messageId: 11, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.passwordModify, requestValue: encodePasswordModifyRequest({ userIdentity: 'u:alice', oldPasswd: Buffer.from('a'), newPasswd: Buffer.from('b') }) }, controls: [] },
  { messageId: 12, protocolOp: { op: 'delRequest', entry: 'uid=bob,cn=users,dc=example,dc=test' }, controls: [] },
  { messageId: 2147483647, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.startTls }, controls: [] },
];

/** One response of every kind (with and without optional parts). */
export const RESPONSES: Array<OutgoingMessage & { protocolOp: LdapResponse }> = [
  { messageId: 1, protocolOp: { op: 'bindResponse', resultCode: ResultCode.success, ...ok } },
  { messageId: 3, protocolOp: { op: 'bindResponse', resultCode: ResultCode.saslBindInProgress, ...ok, serverSaslCreds: Buffer.from([0x6f, 0x81, 0x90]) } },
  { messageId: 2, protocolOp: { op: 'bindResponse', resultCode: ResultCode.invalidCredentials, matchedDN: '', diagnosticMessage: 'invalid credentials' } },
  {
    messageId: 6,
    protocolOp: {
      op: 'searchResEntry',
      objectName: 'uid=alice,cn=users,dc=example,dc=test',
      attributes: [
        { type: 'cn', values: [Buffer.from('Alice'), Buffer.from('Älice')] },
        { type: 'objectClass', values: [Buffer.from('top'), Buffer.from('person')] },
        { type: 'jpegPhoto', values: [Buffer.from([0xff, 0xd8, 0x00])] },
      ],
    },
  },
  { messageId: 6, protocolOp: { op: 'searchResEntry', objectName: 'uid=bob,cn=users,dc=example,dc=test', attributes: [{ type: 'cn', values: [] }, { type: 'mail', values: [] }] } },
  { messageId: 6, protocolOp: { op: 'searchResEntry', objectName: 'cn=empty', attributes: [] } },
  { messageId: 6, protocolOp: { op: 'searchResRef', uris: ['ldap://a.example.test/dc=a', 'ldap://b.example.test/dc=a'] } },
  { messageId: 6, protocolOp: { op: 'searchResDone', resultCode: ResultCode.success, ...ok }, controls: [pagedResultsControl({ size: 0, cookie: Buffer.alloc(0) })] },
  { messageId: 6, protocolOp: { op: 'searchResDone', resultCode: ResultCode.referral, matchedDN: 'dc=example,dc=test', diagnosticMessage: '', referral: ['ldap://c.example.test/'] } },
  { messageId: 6, protocolOp: { op: 'searchResDone', resultCode: ResultCode.sizeLimitExceeded, ...ok } },
  { messageId: 8, protocolOp: { op: 'compareResponse', resultCode: ResultCode.compareTrue, ...ok } },
  { messageId: 13, protocolOp: { op: 'modifyResponse', resultCode: ResultCode.unwillingToPerform, matchedDN: '', diagnosticMessage: 'use the API' } },
  { messageId: 14, protocolOp: { op: 'addResponse', resultCode: ResultCode.unwillingToPerform, ...ok } },
  { messageId: 12, protocolOp: { op: 'delResponse', resultCode: ResultCode.unwillingToPerform, ...ok } },
  { messageId: 15, protocolOp: { op: 'modDNResponse', resultCode: ResultCode.unwillingToPerform, ...ok } },
  { messageId: 10, protocolOp: { op: 'extendedResp', resultCode: ResultCode.success, ...ok, responseValue: Buffer.from('dn:uid=alice,cn=users,dc=example,dc=test') } },
  { messageId: 11, protocolOp: { op: 'extendedResp', resultCode: ResultCode.success, ...ok, responseName: ExtendedOid.passwordModify, responseValue: encodePasswordModifyResponse(Buffer.from('gen')) } },
  { messageId: 0, protocolOp: { op: 'extendedResp', resultCode: ResultCode.unavailable, matchedDN: '', diagnosticMessage: 'bye', responseName: ExtendedOid.noticeOfDisconnection } },
  { messageId: 6, protocolOp: { op: 'intermediateResponse', responseName: '1.3.6.1.4.1.4203.1.9.1.4', responseValue: Buffer.from([1, 2]) } },
  { messageId: 6, protocolOp: { op: 'intermediateResponse' } },
];
