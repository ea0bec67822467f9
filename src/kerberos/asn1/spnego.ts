/**
 * SPNEGO (RFC 4178 §4.2): NegotiationToken = NegTokenInit [0] or
 * NegTokenResp [1]. The first token of a context is wrapped in the GSS
 * InitialContextToken with the SPNEGO OID (RFC 2743 §3.1); later tokens are
 * bare. mechToken / responseToken carry the mechanism's own tokens.
 */
import { der, Asn1Error, ctx, fields, flags, octets, oid, parseDer, readFlags, readOctets, readOid, req, seq, seqOf, seqOfItems, tlv, type DerNode } from './der.js';
import { decodeInitialContextToken, encodeInitialContextToken, Oid } from './gss.js';

export const NegState = { ACCEPT_COMPLETED: 0, ACCEPT_INCOMPLETE: 1, REJECT: 2, REQUEST_MIC: 3 } as const;

export interface NegTokenInit {
  /** dotted OIDs, most preferred first */
  mechTypes: string[];
  /** ContextFlags as a flags word (bit 0 = most significant) */
  reqFlags?: number;
  mechToken?: Buffer;
  mechListMIC?: Buffer;
  /** DER of the MechTypeList as received: the mechListMIC is computed over it */
  mechTypesRaw: Buffer;
}

export interface NegTokenResp {
  negState?: number;
  supportedMech?: string;
  responseToken?: Buffer;
  mechListMIC?: Buffer;
}

const MAX_MECHS = 32;

function decodeInitNode(n: DerNode): NegTokenInit {
  const f = fields(n, 'NegTokenInit');
  const list = req(f, 0, 'NegTokenInit');
  const mechs = seqOf(list, 'MechTypeList');
  if (mechs.length > MAX_MECHS) throw new Asn1Error('NegTokenInit: too many mechanisms');
  const out: NegTokenInit = { mechTypes: mechs.map((m) => readOid(m, 'MechType')), mechTypesRaw: list.raw };
  if (f.has(1)) out.reqFlags = readFlags(f.get(1)!, 'reqFlags');
  if (f.has(2)) out.mechToken = readOctets(f.get(2)!, 'mechToken');
  if (f.has(3)) out.mechListMIC = readOctets(f.get(3)!, 'mechListMIC');
  return out;
}

function decodeRespNode(n: DerNode): NegTokenResp {
  const f = fields(n, 'NegTokenResp');
  const out: NegTokenResp = {};
  if (f.has(0)) {
    const s = f.get(0)!;
    if (s.cls !== 'universal' || s.tag !== 10 || s.content.length !== 1) throw new Asn1Error('NegTokenResp: negState must be a one-byte ENUMERATED');
    out.negState = s.content[0]!;
  }
  if (f.has(1)) out.supportedMech = readOid(f.get(1)!, 'supportedMech');
  if (f.has(2)) out.responseToken = readOctets(f.get(2)!, 'responseToken');
  if (f.has(3)) out.mechListMIC = readOctets(f.get(3)!, 'mechListMIC');
  return out;
}

export type NegotiationToken = { init: NegTokenInit } | { resp: NegTokenResp };

/** Decodes a NegotiationToken, framed (first token) or bare. */
export function decodeNegotiationToken(bytes: Uint8Array): NegotiationToken {
  let inner: Uint8Array = bytes;
  if (bytes[0] === 0x60) {
    const t = decodeInitialContextToken(bytes);
    if (t.mech !== Oid.SPNEGO) throw new Asn1Error(`initial token of mechanism ${t.mech}, not SPNEGO`);
    inner = t.inner;
  }
  const n = parseDer(inner);
  if (n.cls !== 'context' || !n.constructed || n.children.length !== 1 || (n.tag !== 0 && n.tag !== 1)) throw new Asn1Error('not a SPNEGO NegotiationToken');
  return n.tag === 0 ? { init: decodeInitNode(n.children[0]!) } : { resp: decodeRespNode(n.children[0]!) };
}

export function decodeNegTokenInit(bytes: Uint8Array): NegTokenInit {
  const t = decodeNegotiationToken(bytes);
  if (!('init' in t)) throw new Asn1Error('expected a NegTokenInit');
  return t.init;
}

export function decodeNegTokenResp(bytes: Uint8Array): NegTokenResp {
  const t = decodeNegotiationToken(bytes);
  if (!('resp' in t)) throw new Asn1Error('expected a NegTokenResp');
  return t.resp;
}

/** Encodes a NegTokenInit; `framed` (default) adds the GSS InitialContextToken wrapper. */
export function encodeNegTokenInit(t: Omit<NegTokenInit, 'mechTypesRaw'>, framed = true): Buffer {
  const body = der(
    tlv(
      'context',
      true,
      0,
      seq(
        ctx(0, seqOfItems(t.mechTypes.map(oid))),
        t.reqFlags !== undefined ? ctx(1, flags(t.reqFlags)) : undefined,
        t.mechToken ? ctx(2, octets(t.mechToken)) : undefined,
        t.mechListMIC ? ctx(3, octets(t.mechListMIC)) : undefined,
      ),
    ),
  );
  return framed ? encodeInitialContextToken({ mech: Oid.SPNEGO, inner: body }) : body;
}

export function encodeNegTokenResp(r: NegTokenResp): Buffer {
  return der(tlv(
    'context',
    true,
    1,
    seq(
      r.negState !== undefined ? ctx(0, tlv('universal', false, 10, Buffer.from([r.negState]))) : undefined,
      r.supportedMech ? ctx(1, oid(r.supportedMech)) : undefined,
      r.responseToken ? ctx(2, octets(r.responseToken)) : undefined,
      r.mechListMIC ? ctx(3, octets(r.mechListMIC)) : undefined,
    ),
  ));
}
