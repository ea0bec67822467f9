/**
 * GSS-API framing for the Kerberos mechanism: the InitialContextToken
 * (RFC 2743 §3.1: [APPLICATION 0] { thisMech OID, innerContextToken }),
 * krb5 token ids (RFC 4121 §4.1) and the authenticator checksum of type
 * 0x8003 (RFC 4121 §4.1.1) with its optional delegation field.
 * The inner token is not DER (krb5 puts a 2-byte TOK_ID first), so only
 * the outer header and the OID are parsed as DER.
 */
import { Asn1Error, oid, parseDer, readOid } from './der.js';

export const Oid = {
  KRB5: '1.2.840.113554.1.2.2',
  /** the mistaken OID that old Windows versions send */
  MS_KRB5: '1.2.840.48018.1.2.2',
  SPNEGO: '1.3.6.1.5.5.2',
} as const;

/** krb5 mechanism token ids (RFC 4121 §4.1). */
export const TokId = { AP_REQ: 0x0100, AP_REP: 0x0200, KRB_ERROR: 0x0300 } as const;

/** RFC 4121 §4.1.1.1 context flags carried in the checksum. */
export const GssFlag = { DELEG: 1, MUTUAL: 2, REPLAY: 4, SEQUENCE: 8, CONF: 16, INTEG: 32 } as const;

const MAX_TOKEN = 1 << 20;

export interface InitialContextToken {
  /** dotted mechanism OID */
  mech: string;
  /** everything after the OID */
  inner: Buffer;
}

export function encodeInitialContextToken(t: InitialContextToken): Buffer {
  const body = Buffer.concat([oid(t.mech), t.inner]);
  const len = body.length;
  const lenBytes = len < 0x80 ? [len] : len < 0x100 ? [0x81, len] : len < 0x10000 ? [0x82, len >> 8, len & 0xff] : [0x83, len >> 16, (len >> 8) & 0xff, len & 0xff];
  if (len >= 0x1000000) throw new Asn1Error('GSS token too large');
  return Buffer.concat([Buffer.from([0x60, ...lenBytes]), body]);
}

export function decodeInitialContextToken(bytes: Uint8Array): InitialContextToken {
  const b = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length > MAX_TOKEN) throw new Asn1Error('GSS token too large');
  if (b.length < 2 || b[0] !== 0x60) throw new Asn1Error('not a GSS-API initial context token');
  let p = 1;
  let len = b[p++]!;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n < 1 || n > 3 || p + n > b.length || b[p] === 0) throw new Asn1Error('invalid GSS token length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[p++]!;
    if (len < 0x80) throw new Asn1Error('invalid GSS token length');
  }
  if (p + len !== b.length) throw new Asn1Error('GSS token length does not match its size');
  if (p + 2 > b.length || b[p] !== 0x06 || b[p + 1]! & 0x80) throw new Asn1Error('GSS token without a mechanism OID');
  const oidEnd = p + 2 + b[p + 1]!;
  if (oidEnd > b.length) throw new Asn1Error('truncated mechanism OID');
  return { mech: readOid(parseDer(b.subarray(p, oidEnd)), 'thisMech'), inner: b.subarray(oidEnd) };
}

/** A krb5 mechanism token: the framing around TOK_ID || message. */
export function encodeKrb5Token(tokId: number, message: Buffer, mech: string = Oid.KRB5): Buffer {
  const id = Buffer.alloc(2);
  id.writeUInt16BE(tokId);
  return encodeInitialContextToken({ mech, inner: Buffer.concat([id, message]) });
}

export function decodeKrb5Token(bytes: Uint8Array): { mech: string; tokId: number; message: Buffer } {
  const t = decodeInitialContextToken(bytes);
  if (t.mech !== Oid.KRB5 && t.mech !== Oid.MS_KRB5) throw new Asn1Error(`GSS token of mechanism ${t.mech}, not Kerberos`);
  if (t.inner.length < 2) throw new Asn1Error('krb5 GSS token without TOK_ID');
  return { mech: t.mech, tokId: t.inner.readUInt16BE(0), message: t.inner.subarray(2) };
}

export interface GssChecksum {
  /** MD5 of the channel bindings, or 16 zero bytes */
  bindings: Buffer;
  flags: number;
  /** KRB-CRED bytes when DELEG is set and a delegation is present */
  delegation?: Buffer;
  /** any bytes after the fields above (RFC 4121 extensions) */
  extensions?: Buffer;
}

/** RFC 4121 §4.1.1: Lgth=16 (LE), Bnd, Flags (LE), [DlgOpt=1, Dlgth, Deleg], [Exts]. */
export function encodeGssChecksum(c: GssChecksum): Buffer {
  if (c.bindings.length !== 16) throw new Asn1Error('GSS channel-binding hash must be 16 bytes');
  const head = Buffer.alloc(24);
  head.writeUInt32LE(16, 0);
  c.bindings.copy(head, 4);
  head.writeUInt32LE(c.flags >>> 0, 20);
  const parts: Buffer[] = [head];
  if (c.delegation) {
    if (c.delegation.length > 0xffff) throw new Asn1Error('GSS delegation too large');
    const d = Buffer.alloc(4);
    d.writeUInt16LE(1, 0);
    d.writeUInt16LE(c.delegation.length, 2);
    parts.push(d, c.delegation);
  }
  if (c.extensions) parts.push(c.extensions);
  return Buffer.concat(parts);
}

export function decodeGssChecksum(bytes: Uint8Array): GssChecksum {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 24) throw new Asn1Error('GSS checksum shorter than 24 bytes');
  if (b.readUInt32LE(0) !== 16) throw new Asn1Error('GSS checksum with a channel-binding length other than 16');
  const out: GssChecksum = { bindings: b.subarray(4, 20), flags: b.readUInt32LE(20) };
  let p = 24;
  if (out.flags & GssFlag.DELEG && b.length >= 28) {
    if (b.readUInt16LE(24) !== 1) throw new Asn1Error('GSS checksum: unknown delegation option');
    const len = b.readUInt16LE(26);
    if (28 + len > b.length) throw new Asn1Error('GSS checksum: truncated delegation');
    out.delegation = b.subarray(28, 28 + len);
    p = 28 + len;
  }
  if (p < b.length) out.extensions = b.subarray(p);
  return out;
}
