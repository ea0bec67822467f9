/**
 * The response operations of RFC 4511 (§4.1.9, §4.2.2, §4.5.2, §4.5.3,
 * §4.6 to §4.13, docs/ldap.md): their types, the encoder of each
 * protocolOp (the server's side), a one-pass writer of the whole message
 * for the ones every search sends (entries, bare results), and a decoder
 * (for tests and clients).
 * Every result carries resultCode, matchedDN, diagnosticMessage and, for
 * the referral code, the referral URIs.
 */
import { Ber, BerReader, LdapDecodeError, LdapEncodeError, Tag, application, constructed, context, integer, octetString, optionalOctets, readOid, sequence, writeOid } from './ber.js';
import { MAX_INT, ProtocolOp, type ResultCode } from './codes.js';
import { integerOctets, lengthOctets, writeHeader } from '../asn1/writer.js';

/** The LDAPResult components; decoders yield `number` codes (a peer may send codes we do not know). */
export interface LdapResult<C extends number = ResultCode> {
  resultCode: C;
  matchedDN: string;
  diagnosticMessage: string;
  /** only with the referral result code */
  referral?: string[];
}

/** An LDAPResult with an empty matchedDN. */
export function result(resultCode: ResultCode, diagnosticMessage = '', matchedDN = ''): LdapResult {
  return { resultCode, matchedDN, diagnosticMessage };
}

/** One attribute of a SearchResultEntry; no values is the typesOnly form. */
export interface PartialAttribute {
  type: string;
  /** text is written as UTF-8; decoders always yield Buffers */
  values: readonly (string | Buffer)[];
}

export type BindResponse<C extends number = ResultCode> = { op: 'bindResponse'; serverSaslCreds?: Buffer } & LdapResult<C>;
export interface SearchResultEntry {
  op: 'searchResEntry';
  objectName: string;
  attributes: readonly PartialAttribute[];
}
export interface SearchResultReference {
  op: 'searchResRef';
  uris: string[];
}
/** The responses that are a bare LDAPResult. */
export type PlainResponseOp = 'searchResDone' | 'modifyResponse' | 'addResponse' | 'delResponse' | 'modDNResponse' | 'compareResponse';
export type PlainResponse<C extends number = ResultCode> = { op: PlainResponseOp } & LdapResult<C>;
export type ExtendedResponse<C extends number = ResultCode> = { op: 'extendedResp'; responseName?: string; responseValue?: Buffer } & LdapResult<C>;
export interface IntermediateResponse {
  op: 'intermediateResponse';
  responseName?: string;
  responseValue?: Buffer;
}

export type LdapResponse<C extends number = ResultCode> =
  | BindResponse<C>
  | SearchResultEntry
  | SearchResultReference
  | PlainResponse<C>
  | ExtendedResponse<C>
  | IntermediateResponse;

const ID = {
  bindResponse: application(ProtocolOp.bindResponse, true),
  searchResEntry: application(ProtocolOp.searchResEntry, true),
  searchResDone: application(ProtocolOp.searchResDone, true),
  searchResRef: application(ProtocolOp.searchResRef, true),
  modifyResponse: application(ProtocolOp.modifyResponse, true),
  addResponse: application(ProtocolOp.addResponse, true),
  delResponse: application(ProtocolOp.delResponse, true),
  modDNResponse: application(ProtocolOp.modDNResponse, true),
  compareResponse: application(ProtocolOp.compareResponse, true),
  extendedResp: application(ProtocolOp.extendedResp, true),
  intermediateResponse: application(ProtocolOp.intermediateResponse, true),
} as const;

/** The identifier octet of each response, by name. */
export const RESPONSE_ID: Readonly<Record<LdapResponse['op'], number>> = ID;

/** Context tags of the optional response fields. */
const FieldTag = { referral: 3, serverSaslCreds: 7, responseName: 10, responseValue: 11, intermediateName: 0, intermediateValue: 1 } as const;
const REFERRAL_ID = context(FieldTag.referral, true);
const SASL_CREDS_ID = context(FieldTag.serverSaslCreds, false);
const RESPONSE_NAME_ID = context(FieldTag.responseName, false);
const RESPONSE_VALUE_ID = context(FieldTag.responseValue, false);
const INTERMEDIATE_NAME_ID = context(FieldTag.intermediateName, false);
const INTERMEDIATE_VALUE_ID = context(FieldTag.intermediateValue, false);

// ---- encoding (server side) ------------------------------------------------------------

function resultParts(r: LdapResult): (Ber | undefined)[] {
  if (!Number.isSafeInteger(r.resultCode) || r.resultCode < 0 || r.resultCode > MAX_INT) throw new LdapEncodeError(`result code ${r.resultCode} out of range`);
  const referral = r.referral === undefined ? undefined : r.referral.length === 0 ? fail('a referral needs at least one URI') : constructed(REFERRAL_ID, r.referral.map((u) => octetString(u)));
  return [integer(Tag.enumerated, r.resultCode), octetString(r.matchedDN), octetString(r.diagnosticMessage), referral];
}

function fail(message: string): never {
  throw new LdapEncodeError(message);
}


/** The protocolOp element of a response. */
export function encodeResponseOp(res: LdapResponse): Ber {
  switch (res.op) {
    case 'bindResponse':
      return constructed(ID.bindResponse, [...resultParts(res), optionalOctets(SASL_CREDS_ID, res.serverSaslCreds)]);
    case 'searchResEntry':
      return constructed(ID.searchResEntry, [
        octetString(res.objectName),
        sequence(...res.attributes.map((a) => sequence(octetString(a.type), constructed(Tag.set, a.values.map((v) => octetString(v)))))),
      ]);
    case 'searchResRef':
      if (res.uris.length === 0) throw new LdapEncodeError('a SearchResultReference needs at least one URI');
      return constructed(ID.searchResRef, res.uris.map((u) => octetString(u)));
    case 'extendedResp':
      return constructed(ID.extendedResp, [...resultParts(res), writeOid(RESPONSE_NAME_ID, res.responseName), optionalOctets(RESPONSE_VALUE_ID, res.responseValue)]);
    case 'intermediateResponse':
      return constructed(ID.intermediateResponse, [writeOid(INTERMEDIATE_NAME_ID, res.responseName), optionalOctets(INTERMEDIATE_VALUE_ID, res.responseValue)]);
    default:
      return constructed(ID[res.op], resultParts(res));
  }
}

// ---- the common responses written directly ----------------------------------------------

/** A whole TLV around `len` octets of content. */
const wrapped = (len: number): number => 1 + lengthOctets(len) + len;

/** A non-negative INTEGER or ENUMERATED up to maxInt. */
function putInt(out: Buffer, off: number, id: number, v: number): number {
  const n = integerOctets(v);
  out[off++] = id;
  out[off++] = n;
  for (let i = n - 1; i >= 0; i--) out[off++] = (v >>> (8 * i)) & 0xff;
  return off;
}

function putString(out: Buffer, off: number, id: number, v: string | Buffer, len: number): number {
  off = writeHeader(out, off, id, len);
  if (typeof v !== 'string') return off + v.copy(out, off);
  // short ASCII text (names, numbers, most DNs) byte by byte: cheaper than a call into the UTF-8 writer
  if (len === v.length && len <= SHORT) {
    for (let i = 0; i < len; i++) out[off + i] = v.charCodeAt(i);
    return off + len;
  }
  return off + out.write(v, off, len, 'utf8');
}

/** strings up to this length are measured and written in JavaScript when they are ASCII */
const SHORT = 128;

/** UTF-8 octets of a string (short ASCII ones counted here) or of a Buffer. */
function byteLength(v: string | Buffer): number {
  if (typeof v !== 'string') return v.length;
  const n = v.length;
  if (n > SHORT) return Buffer.byteLength(v, 'utf8');
  for (let i = 0; i < n; i++) if (v.charCodeAt(i) >= 0x80) return Buffer.byteLength(v, 'utf8');
  return n;
}

/**
 * The whole LDAPMessage of a SearchResultEntry or of a bare LDAPResult
 * without referral (searchResDone and the like), without controls, written
 * in one pass from the lengths of its strings: the same octets as the tree
 * the general encoder builds (encodeResponseOp, then the envelope), without
 * a node per field. These are the messages every search sends. Undefined
 * for anything else. `messageId` is already checked.
 */
export function encodeCommonResponse(messageId: number, res: LdapResponse): Buffer | undefined {
  if (res.op === 'searchResEntry') return encodeEntry(messageId, res);
  if (res.op === 'searchResDone' || res.op === 'compareResponse' || res.op === 'modifyResponse' || res.op === 'addResponse' || res.op === 'delResponse' || res.op === 'modDNResponse') {
    if (res.referral !== undefined) return undefined;
    if (!Number.isSafeInteger(res.resultCode) || res.resultCode < 0 || res.resultCode > MAX_INT) throw new LdapEncodeError(`result code ${res.resultCode} out of range`);
    const dnLen = byteLength(res.matchedDN);
    const msgLen = byteLength(res.diagnosticMessage);
    const opLen = 2 + integerOctets(res.resultCode) + wrapped(dnLen) + wrapped(msgLen);
    const envLen = 2 + integerOctets(messageId) + wrapped(opLen);
    const out = Buffer.allocUnsafe(wrapped(envLen));
    let off = writeHeader(out, 0, Tag.sequence, envLen);
    off = putInt(out, off, Tag.integer, messageId);
    off = writeHeader(out, off, ID[res.op], opLen);
    off = putInt(out, off, Tag.enumerated, res.resultCode);
    off = putString(out, off, Tag.octetString, res.matchedDN, dnLen);
    putString(out, off, Tag.octetString, res.diagnosticMessage, msgLen);
    return out;
  }
  return undefined;
}

/** Lengths worked out for one entry and written from: reused, the service encodes one entry at a time. */
let scratch: number[] = [];

function encodeEntry(messageId: number, res: SearchResultEntry): Buffer {
  // scratch: per attribute its type's length, its SET's content length, then each value's length
  const lens = scratch;
  let n = 0;
  let attrsLen = 0;
  for (const a of res.attributes) {
    const typeLen = byteLength(a.type);
    const at = n;
    lens[n++] = typeLen;
    n++;
    let setLen = 0;
    for (const v of a.values) {
      const len = byteLength(v);
      lens[n++] = len;
      setLen += wrapped(len);
    }
    lens[at + 1] = setLen;
    attrsLen += wrapped(wrapped(typeLen) + wrapped(setLen));
  }
  const dnLen = byteLength(res.objectName);
  const opLen = wrapped(dnLen) + wrapped(attrsLen);
  const msgLen = 2 + integerOctets(messageId) + wrapped(opLen);
  const out = Buffer.allocUnsafe(wrapped(msgLen));
  let off = writeHeader(out, 0, Tag.sequence, msgLen);
  off = putInt(out, off, Tag.integer, messageId);
  off = writeHeader(out, off, ID.searchResEntry, opLen);
  off = putString(out, off, Tag.octetString, res.objectName, dnLen);
  off = writeHeader(out, off, Tag.sequence, attrsLen);
  n = 0;
  for (const a of res.attributes) {
    const typeLen = lens[n++]!;
    const setLen = lens[n++]!;
    off = writeHeader(out, off, Tag.sequence, wrapped(typeLen) + wrapped(setLen));
    off = putString(out, off, Tag.octetString, a.type, typeLen);
    off = writeHeader(out, off, Tag.set, setLen);
    for (const v of a.values) off = putString(out, off, Tag.octetString, v, lens[n++]!);
  }
  if (lens.length > 4096) scratch = [];
  return out;
}

// ---- decoding (client side) ------------------------------------------------------------

const PLAIN: ReadonlyMap<number, PlainResponseOp> = new Map(
  (['searchResDone', 'modifyResponse', 'addResponse', 'delResponse', 'modDNResponse', 'compareResponse'] as const).map((op) => [ID[op], op]),
);

function decodeResult(c: BerReader, what: string): LdapResult<number> {
  const out: LdapResult<number> = {
    resultCode: c.integer(Tag.enumerated, `${what} resultCode`, 0, MAX_INT),
    matchedDN: c.string(Tag.octetString, `${what} matchedDN`),
    diagnosticMessage: c.string(Tag.octetString, `${what} diagnosticMessage`),
  };
  if (c.peek() === REFERRAL_ID) {
    const r = c.sequence(REFERRAL_ID, `${what} referral`);
    out.referral = [];
    while (!r.atEnd) out.referral.push(r.string(Tag.octetString, `${what} referral URI`));
    if (out.referral.length === 0) throw new LdapDecodeError(`${what}: empty referral`);
  }
  return out;
}

/** Decodes the response protocolOp element at `r` (identifier `id`). */
export function decodeResponseOp(r: BerReader, id: number): LdapResponse<number> {
  const plain = PLAIN.get(id);
  if (plain) {
    const c = r.sequence(id, plain);
    const res = decodeResult(c, plain);
    c.finish(plain);
    return { op: plain, ...res };
  }
  switch (id) {
    case ID.bindResponse: {
      const c = r.sequence(id, 'BindResponse');
      const out: BindResponse<number> = { op: 'bindResponse', ...decodeResult(c, 'BindResponse') };
      if (!c.atEnd) out.serverSaslCreds = c.octets(SASL_CREDS_ID, 'serverSaslCreds');
      c.finish('BindResponse');
      return out;
    }
    case ID.searchResEntry: {
      const c = r.sequence(id, 'SearchResultEntry');
      const objectName = c.string(Tag.octetString, 'SearchResultEntry objectName');
      const list = c.sequence(Tag.sequence, 'SearchResultEntry attributes');
      c.finish('SearchResultEntry');
      const attributes: PartialAttribute[] = [];
      while (!list.atEnd) {
        const a = list.sequence(Tag.sequence, 'PartialAttribute');
        const type = a.string(Tag.octetString, 'PartialAttribute type');
        const set = a.sequence(Tag.set, 'PartialAttribute vals');
        a.finish('PartialAttribute');
        const values: Buffer[] = [];
        while (!set.atEnd) values.push(set.octets(Tag.octetString, 'PartialAttribute value'));
        attributes.push({ type, values });
      }
      return { op: 'searchResEntry', objectName, attributes };
    }
    case ID.searchResRef: {
      const c = r.sequence(id, 'SearchResultReference');
      const uris: string[] = [];
      while (!c.atEnd) uris.push(c.string(Tag.octetString, 'SearchResultReference URI'));
      if (uris.length === 0) throw new LdapDecodeError('SearchResultReference without URIs');
      return { op: 'searchResRef', uris };
    }
    case ID.extendedResp: {
      const c = r.sequence(id, 'ExtendedResponse');
      const out: ExtendedResponse<number> = { op: 'extendedResp', ...decodeResult(c, 'ExtendedResponse') };
      if (c.peek() === RESPONSE_NAME_ID) out.responseName = readOid(c, RESPONSE_NAME_ID, 'ExtendedResponse responseName');
      if (!c.atEnd) out.responseValue = c.octets(RESPONSE_VALUE_ID, 'ExtendedResponse responseValue');
      c.finish('ExtendedResponse');
      return out;
    }
    case ID.intermediateResponse: {
      const c = r.sequence(id, 'IntermediateResponse');
      const out: IntermediateResponse = { op: 'intermediateResponse' };
      if (c.peek() === INTERMEDIATE_NAME_ID) out.responseName = readOid(c, INTERMEDIATE_NAME_ID, 'IntermediateResponse responseName');
      if (!c.atEnd) out.responseValue = c.octets(INTERMEDIATE_VALUE_ID, 'IntermediateResponse responseValue');
      c.finish('IntermediateResponse');
      return out;
    }
    default:
      throw new LdapDecodeError(`not a response: ${id}`);
  }
}
