/**
 * GSS-API token framing for Kerberos and SPNEGO (RFC 2743 §3.1,
 * RFC 4121 §4.1, RFC 4178 §4.2): the InitialContextToken wrapper
 * (0x60, mechanism OID, inner token), krb5 TOK_IDs, the 0x8003
 * authenticator checksum, and SPNEGO's NegTokenInit / NegTokenResp.
 */
import { Asn1Error, ctx, der, fields, octets, parseDer, readOctets, req, seq, seqOfItems, tlv } from './asn1/der.js';

const oidTlv = (hex: string) => Buffer.from(hex, 'hex');
export const KRB5_OID = oidTlv('06092a864886f712010202');
export const MS_KRB5_OID = oidTlv('06092a864882f712010202');
export const SPNEGO_OID = oidTlv('06062b0601050502');

export const TOK_AP_REQ = Buffer.from([0x01, 0x00]);
export const TOK_AP_REP = Buffer.from([0x02, 0x00]);
export const TOK_ERROR = Buffer.from([0x03, 0x00]);

export function wrapGss(oid: Buffer, inner: Buffer): Buffer {
  return der(tlv('application', true, 0, Buffer.concat([oid, inner])));
}

/** Splits an InitialContextToken into its mechanism OID (as a TLV) and inner bytes. */
export function unwrapGss(b: Buffer): { oid: Buffer; inner: Buffer } {
  if (b.length < 4 || b[0] !== 0x60) throw new Asn1Error('not a GSS-API initial context token');
  let p = 1;
  let len = b[p++]!;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n < 1 || n > 3) throw new Asn1Error('invalid GSS token length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[p++]!;
  }
  if (p + len !== b.length) throw new Asn1Error('GSS token length mismatch');
  if (b[p] !== 0x06) throw new Asn1Error('GSS token without a mechanism OID');
  const oidLen = b[p + 1]!;
  if (oidLen > 32) throw new Asn1Error('mechanism OID too long');
  const oid = b.subarray(p, p + 2 + oidLen);
  return { oid, inner: b.subarray(p + 2 + oidLen) };
}

/** krb5 mechanism token: TOK_ID followed by the message. */
export function krb5Token(tokId: Buffer, message: Buffer): Buffer {
  return wrapGss(KRB5_OID, Buffer.concat([tokId, message]));
}

export const GssFlag = { DELEG: 1, MUTUAL: 2, REPLAY: 4, SEQUENCE: 8, CONF: 16, INTEG: 32 } as const;

/** RFC 4121 §4.1.1 authenticator checksum (type 0x8003). */
export function encodeGssChecksum(flags: number, bindings: Buffer = Buffer.alloc(16)): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(16, 0);
  bindings.copy(b, 4, 0, 16);
  b.writeUInt32LE(flags >>> 0, 20);
  return b;
}

export function decodeGssChecksum(b: Buffer): { bindings: Buffer; flags: number } {
  if (b.length < 24 || b.readUInt32LE(0) !== 16) throw new Asn1Error('invalid GSS checksum');
  return { bindings: b.subarray(4, 20), flags: b.readUInt32LE(20) };
}

export interface NegTokenInit {
  mechTypes: Buffer[];
  mechToken?: Buffer;
}

export function decodeNegTokenInit(inner: Buffer): NegTokenInit {
  const n = parseDer(inner);
  if (n.cls !== 'context' || n.tag !== 0 || n.children.length !== 1) throw new Asn1Error('expected NegTokenInit');
  const f = fields(n.children[0]!, 'NegTokenInit');
  const types = req(f, 0, 'NegTokenInit');
  if (types.cls !== 'universal' || types.tag !== 16) throw new Asn1Error('NegTokenInit: bad mechTypes');
  const out: NegTokenInit = { mechTypes: types.children.map((c) => c.raw) };
  if (f.has(2)) out.mechToken = readOctets(f.get(2)!, 'mechToken');
  return out;
}

export function encodeNegTokenInit(t: NegTokenInit): Buffer {
  return wrapGss(SPNEGO_OID, der(tlv('context', true, 0, seq(ctx(0, seqOfItems(t.mechTypes)), t.mechToken ? ctx(2, octets(t.mechToken)) : undefined))));
}

export const NegState = { ACCEPT_COMPLETED: 0, ACCEPT_INCOMPLETE: 1, REJECT: 2 } as const;

export function encodeNegTokenResp(r: { state: number; mech?: Buffer; responseToken?: Buffer }): Buffer {
  return der(tlv(
    'context',
    true,
    1,
    seq(ctx(0, tlv('universal', false, 10, Buffer.from([r.state]))), r.mech ? ctx(1, r.mech) : undefined, r.responseToken ? ctx(2, octets(r.responseToken)) : undefined),
  ));
}

export function decodeNegTokenResp(b: Buffer): { state?: number; mech?: Buffer; responseToken?: Buffer } {
  const n = parseDer(b);
  if (n.cls !== 'context' || n.tag !== 1 || n.children.length !== 1) throw new Asn1Error('expected NegTokenResp');
  const f = fields(n.children[0]!, 'NegTokenResp');
  const out: { state?: number; mech?: Buffer; responseToken?: Buffer } = {};
  if (f.has(0)) out.state = f.get(0)!.content[0];
  if (f.has(1)) out.mech = f.get(1)!.raw;
  if (f.has(2)) out.responseToken = readOctets(f.get(2)!, 'responseToken');
  return out;
}
