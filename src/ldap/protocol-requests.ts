/**
 * The request operations of RFC 4511 (§4.2 to §4.12, docs/ldap.md): their
 * types, the decoder of each protocolOp's content, and encoders for the
 * ones a client of ours (tests, later tools) sends. Bind, unbind, search,
 * compare, abandon and extended requests are decoded in full; modify, add,
 * delete and modify DN only as far as answering them needs (the entry's DN,
 * the rest checked to be well-formed BER and skipped), since this
 * directory refuses writes over LDAP.
 */
import type { Filter } from '../directory/filter.js';
import {
  Ber,
  BerReader,
  LdapDecodeError,
  LdapEncodeError,
  Tag,
  application,
  boolean,
  constructed,
  context,
  integer,
  nul,
  octetString,
  octets,
  optionalOctets,
  readOid,
  sequence,
  utf8String,
  writeOid,
} from './ber.js';
import { DerefAliases, LDAP_VERSION, MAX_INT, ProtocolOp, SearchScope, type DerefAliasesName, type SearchScopeName } from './codes.js';
import { attributeDescription, decodeFilter, encodeFilter, type FilterDecodeOptions } from './filter.js';

export type BindAuthentication =
  | { method: 'simple'; password: Buffer }
  | { method: 'sasl'; mechanism: string; credentials?: Buffer }
  /** a choice this library does not know (the server answers authMethodNotSupported) */
  | { method: 'other'; tag: number };

export interface BindRequest {
  op: 'bindRequest';
  /** 1..127; only 3 is served (others get protocolError, RFC 4511 §4.2) */
  version: number;
  name: string;
  authentication: BindAuthentication;
}

export interface UnbindRequest {
  op: 'unbindRequest';
}

export interface SearchRequest {
  op: 'searchRequest';
  baseObject: string;
  scope: SearchScopeName;
  derefAliases: DerefAliasesName;
  /** 0 = no limit requested */
  sizeLimit: number;
  /** seconds; 0 = no limit requested */
  timeLimit: number;
  typesOnly: boolean;
  filter: Filter;
  /** the attribute selection as sent: descriptions, `*`, `+`, `1.1`... */
  attributes: string[];
}

/** Write requests, decoded only as far as refusing them needs. */
export interface WriteRequest {
  op: 'modifyRequest' | 'addRequest' | 'delRequest' | 'modDNRequest';
  /** the DN of the entry the client wanted to change */
  entry: string;
}

export interface CompareRequest {
  op: 'compareRequest';
  entry: string;
  attributeDesc: string;
  /** raw: the server turns it into the attribute's text form */
  assertionValue: Buffer;
}

export interface AbandonRequest {
  op: 'abandonRequest';
  idToAbandon: number;
}

export interface ExtendedRequest {
  op: 'extendedReq';
  requestName: string;
  requestValue?: Buffer;
}

export type LdapRequest = BindRequest | UnbindRequest | SearchRequest | WriteRequest | CompareRequest | AbandonRequest | ExtendedRequest;

export interface RequestDecodeOptions {
  filter?: FilterDecodeOptions;
}

const ID = {
  bindRequest: application(ProtocolOp.bindRequest, true),
  unbindRequest: application(ProtocolOp.unbindRequest, false),
  searchRequest: application(ProtocolOp.searchRequest, true),
  modifyRequest: application(ProtocolOp.modifyRequest, true),
  addRequest: application(ProtocolOp.addRequest, true),
  delRequest: application(ProtocolOp.delRequest, false),
  modDNRequest: application(ProtocolOp.modDNRequest, true),
  compareRequest: application(ProtocolOp.compareRequest, true),
  abandonRequest: application(ProtocolOp.abandonRequest, false),
  extendedReq: application(ProtocolOp.extendedReq, true),
} as const;

/** The identifier octet of each request, by name. */
export const REQUEST_ID: Readonly<Record<LdapRequest['op'], number>> = ID;

/** AuthenticationChoice tags (RFC 4511 §4.2). */
const AuthTag = { simple: 0, sasl: 3 } as const;
const SIMPLE_ID = context(AuthTag.simple, false);
const SASL_ID = context(AuthTag.sasl, true);
/** ExtendedRequest field tags (RFC 4511 §4.12). */
const ExtendedRequestTag = { requestName: 0, requestValue: 1 } as const;
const REQUEST_NAME_ID = context(ExtendedRequestTag.requestName, false);
const REQUEST_VALUE_ID = context(ExtendedRequestTag.requestValue, false);

const SCOPE_NAMES = Object.keys(SearchScope) as SearchScopeName[];
const DEREF_NAMES = Object.keys(DerefAliases) as DerefAliasesName[];

/**
 * Decodes the protocolOp element at `r` (its identifier is `id`, already
 * known to be a request's). Throws LdapDecodeError.
 */
export function decodeRequestOp(r: BerReader, id: number, options: RequestDecodeOptions): LdapRequest {
  switch (id) {
    case ID.bindRequest:
      return decodeBind(r.sequence(id, 'BindRequest'));
    case ID.unbindRequest:
      r.null(id, 'UnbindRequest');
      return { op: 'unbindRequest' };
    case ID.searchRequest:
      return decodeSearch(r.sequence(id, 'SearchRequest'), options);
    case ID.modifyRequest:
    case ID.addRequest:
    case ID.modDNRequest: {
      const op = id === ID.modifyRequest ? 'modifyRequest' : id === ID.addRequest ? 'addRequest' : 'modDNRequest';
      const c = r.sequence(id, op);
      const entry = c.string(Tag.octetString, `${op} entry`);
      c.skipRest(op);
      return { op, entry };
    }
    case ID.delRequest:
      return { op: 'delRequest', entry: r.string(id, 'DelRequest') };
    case ID.compareRequest: {
      const c = r.sequence(id, 'CompareRequest');
      const entry = c.string(Tag.octetString, 'CompareRequest entry');
      const ava = c.sequence(Tag.sequence, 'CompareRequest ava');
      c.finish('CompareRequest');
      const attributeDesc = attributeDescription(ava, Tag.octetString, 'CompareRequest attribute');
      const assertionValue = ava.octets(Tag.octetString, 'CompareRequest value');
      ava.finish('CompareRequest ava');
      return { op: 'compareRequest', entry, attributeDesc, assertionValue };
    }
    case ID.abandonRequest:
      return { op: 'abandonRequest', idToAbandon: r.integer(id, 'AbandonRequest', 0, MAX_INT) };
    case ID.extendedReq: {
      const c = r.sequence(id, 'ExtendedRequest');
      const out: ExtendedRequest = { op: 'extendedReq', requestName: readOid(c, REQUEST_NAME_ID, 'ExtendedRequest name') };
      if (!c.atEnd) out.requestValue = c.octets(REQUEST_VALUE_ID, 'ExtendedRequest value');
      c.finish('ExtendedRequest');
      return out;
    }
    default:
      throw new LdapDecodeError(`not a request: ${id}`);
  }
}

function decodeBind(c: BerReader): BindRequest {
  const version = c.integer(Tag.integer, 'BindRequest version', 1, 127);
  const name = c.string(Tag.octetString, 'BindRequest name');
  const id = c.next('BindRequest authentication');
  let authentication: BindAuthentication;
  if (id === SIMPLE_ID) authentication = { method: 'simple', password: c.content() };
  else if (id === SASL_ID) {
    const s = c.contentReader();
    const mechanism = s.string(Tag.octetString, 'SASL mechanism');
    authentication = { method: 'sasl', mechanism };
    if (!s.atEnd) authentication.credentials = s.octets(Tag.octetString, 'SASL credentials');
    s.finish('SaslCredentials');
  } else if (id >> 6 === 2) authentication = { method: 'other', tag: id & 0x1f };
  else throw new LdapDecodeError(`BindRequest authentication: not a context tag (${id})`);
  c.finish('BindRequest');
  return { op: 'bindRequest', version, name, authentication };
}

function decodeSearch(c: BerReader, options: RequestDecodeOptions): SearchRequest {
  const baseObject = c.string(Tag.octetString, 'SearchRequest baseObject');
  const scope = SCOPE_NAMES[c.integer(Tag.enumerated, 'SearchRequest scope', 0, SCOPE_NAMES.length - 1)]!;
  const derefAliases = DEREF_NAMES[c.integer(Tag.enumerated, 'SearchRequest derefAliases', 0, DEREF_NAMES.length - 1)]!;
  const sizeLimit = c.integer(Tag.integer, 'SearchRequest sizeLimit', 0, MAX_INT);
  const timeLimit = c.integer(Tag.integer, 'SearchRequest timeLimit', 0, MAX_INT);
  const typesOnly = c.boolean(Tag.boolean, 'SearchRequest typesOnly');
  const filter = decodeFilter(c, options.filter);
  const sel = c.sequence(Tag.sequence, 'SearchRequest attributes');
  c.finish('SearchRequest');
  return { op: 'searchRequest', baseObject, scope, derefAliases, sizeLimit, timeLimit, typesOnly, filter, attributes: attributeList(sel) };
}

/**
 * Attribute lists decoded lately, by their octets: a host's SSSD sends the
 * same list of thirty-odd names with every look-up, and the same octets
 * decode to the same names (checked and decoded once; the list is shared,
 * and frozen).
 */
const recentLists: Array<{ octets: Buffer; list: string[] }> = [];
const RECENT_LISTS = 16;
/** lists longer than this are decoded each time (a client's attribute lists are short) */
const RECENT_LIST_OCTETS = 2048;

function attributeList(sel: BerReader): string[] {
  const octets = sel.rest();
  if (octets.length === 0) return [];
  if (octets.length <= RECENT_LIST_OCTETS) for (const r of recentLists) if (r.octets.equals(octets)) return r.list;
  const list: string[] = [];
  while (!sel.atEnd) list.push(sel.string(Tag.octetString, 'SearchRequest attribute'));
  if (octets.length <= RECENT_LIST_OCTETS) {
    if (recentLists.length >= RECENT_LISTS) recentLists.shift();
    // the octets are a view into the receive buffer, which is used again: copied
    recentLists.push({ octets: Buffer.from(octets), list: Object.freeze(list) as string[] });
  }
  return list;
}

// ---- encoding (client side) ---------------------------------------------------------

/** The protocolOp element of a request (modify, add and modify DN carry too little to be encoded). */
export function encodeRequestOp(req: LdapRequest): Ber {
  switch (req.op) {
    case 'bindRequest': {
      const a = req.authentication;
      let auth: Ber;
      if (a.method === 'simple') auth = octets(SIMPLE_ID, a.password);
      else if (a.method === 'sasl') auth = constructed(SASL_ID, [octetString(a.mechanism), a.credentials === undefined ? undefined : octets(Tag.octetString, a.credentials)]);
      else throw new LdapEncodeError(`cannot encode the authentication choice [${a.tag}]`);
      return constructed(ID.bindRequest, [integer(Tag.integer, req.version), octetString(req.name), auth]);
    }
    case 'unbindRequest':
      return nul(ID.unbindRequest);
    case 'searchRequest':
      return constructed(ID.searchRequest, [
        octetString(req.baseObject),
        integer(Tag.enumerated, SearchScope[req.scope]),
        integer(Tag.enumerated, DerefAliases[req.derefAliases]),
        integer(Tag.integer, req.sizeLimit),
        integer(Tag.integer, req.timeLimit),
        boolean(req.typesOnly),
        encodeFilter(req.filter),
        sequence(...req.attributes.map((a) => octetString(a))),
      ]);
    case 'delRequest':
      return utf8String(ID.delRequest, req.entry);
    case 'compareRequest':
      return constructed(ID.compareRequest, [octetString(req.entry), sequence(octetString(req.attributeDesc), octetString(req.assertionValue))]);
    case 'abandonRequest':
      return integer(ID.abandonRequest, req.idToAbandon);
    case 'extendedReq':
      return constructed(ID.extendedReq, [writeOid(REQUEST_NAME_ID, req.requestName), optionalOctets(REQUEST_VALUE_ID, req.requestValue)]);
    default:
      throw new LdapEncodeError(`${req.op} is decoded only in part and cannot be encoded`);
  }
}

/** A simple bind request of protocol version 3 (anonymous when name and password are empty). */
export function simpleBind(name: string, password: string | Buffer): BindRequest {
  return { op: 'bindRequest', version: LDAP_VERSION, name, authentication: { method: 'simple', password: Buffer.from(password) } };
}
