/**
 * The BER layer under the LDAP messages, with the restrictions of RFC 4511
 * §5.1 (docs/ldap.md): definite lengths only, in short or long form, and a
 * long form need not be minimal (some clients, older OpenLDAP releases
 * among them, write every SEQUENCE length as 0x84 plus four octets);
 * BOOLEAN is true for any non-zero octet on input and written as 0xFF;
 * INTEGER and ENUMERATED must fit a safe JavaScript integer; OCTET STRING
 * is primitive only; tag numbers stay below 31 (LDAP uses no others);
 * nesting is bounded and nothing may trail inside a message. Every
 * malformed input raises LdapDecodeError, which carries the messageID and
 * the operation once they were readable, and the result code the server
 * should answer with.
 *
 * The reader is a cursor over the received bytes, not a tree: the typed
 * decoders ask for each field in order, so nothing is allocated for an
 * element beyond the value it yields, and strings and octets are read
 * straight from the buffer. It is hand-written rather than built on asn1js
 * for two reasons: asn1js is a general BER parser that accepts what RFC 4511
 * forbids (indefinite lengths, constructed strings), so every check would be
 * a second pass over its tree anyway; and it is slow for a per-request path:
 * bench/ldap-ber.ts decodes a typical paged SearchRequest (the one
 * ldapsearch sends for `(&(uid=al*)(objectClass=person)(!(cn=x)))`, 141
 * octets) in about 1.8 µs with this reader and 80 to 100 µs with asn1js
 * plus the same field extraction: 45 to 58 times faster over several runs
 * (Node 20, two shared cores). The src/kerberos DER reader cannot serve
 * either: it refuses the non-minimal lengths LDAP peers may send, and ldap/
 * may not import kerberos/ (docs/architecture.md).
 *
 * Writing goes through the TLV writer the Kerberos encoder also uses
 * (asn1/writer.ts): a small tree whose sizes are known as it is made,
 * written into one Buffer, always with minimal lengths.
 */
import { isUtf8 } from 'node:buffer';
import { encodeTlv, Tlv, TlvWriteError, type TlvPart } from '../asn1/writer.js';
import { ResultCode, type ProtocolOpName } from './codes.js';

/** Malformed (or, with another resultCode, refused) input; see docs/ldap.md for how a server answers it. */
export class LdapDecodeError extends Error {
  /** the LDAPMessage's messageID, when it was read before the problem */
  readonly messageId: number | undefined;
  /** the protocolOp whose tag was read, when it was */
  readonly op: ProtocolOpName | undefined;
  /** what to answer: protocolError for malformed input, unwillingToPerform for well-formed input we refuse */
  readonly resultCode: ResultCode;
  constructor(message: string, context: { messageId?: number | undefined; op?: ProtocolOpName | undefined; resultCode?: ResultCode } = {}) {
    super(message);
    this.name = 'LdapDecodeError';
    this.messageId = context.messageId;
    this.op = context.op;
    this.resultCode = context.resultCode ?? ResultCode.protocolError;
  }
}

/** A value our encoders cannot put on the wire (a bug of the caller, not of a peer): the TLV writer's own error. */
export const LdapEncodeError = TlvWriteError;
export type LdapEncodeError = TlvWriteError;

/** Identifier octets of the universal types LDAP uses. */
export const Tag = {
  boolean: 0x01,
  integer: 0x02,
  octetString: 0x04,
  null: 0x05,
  enumerated: 0x0a,
  sequence: 0x30,
  set: 0x31,
} as const;

const CONSTRUCTED = 0x20;
/** The identifier octet of [APPLICATION n]. */
export const application = (n: number, constructed: boolean): number => identifier(0x40, n, constructed);
/** The identifier octet of a context-specific tag [n]. */
export const context = (n: number, constructed: boolean): number => identifier(0x80, n, constructed);

function identifier(cls: number, n: number, constructed: boolean): number {
  if (!Number.isInteger(n) || n < 0 || n > 30) throw new LdapEncodeError(`tag number ${n} is not used by LDAP`);
  return cls | (constructed ? CONSTRUCTED : 0) | n;
}

/** How an identifier octet reads in an error message, e.g. `[APPLICATION 3, constructed]`. */
export function describeTag(id: number): string {
  const cls = ['UNIVERSAL ', 'APPLICATION ', '', 'PRIVATE '][id >> 6]!;
  return `[${cls}${id & 0x1f}${id & CONSTRUCTED ? ', constructed' : ''}]`;
}

/** How deep elements may nest in one message (a filter's own bound is lower, see filter.ts). */
export const MAX_BER_DEPTH = 64;
/** Long-form lengths of up to this many octets are read (leading zero octets allowed). */
const MAX_LENGTH_OCTETS = 8;

/**
 * A cursor over the elements between `pos` and `end` of one buffer. Reading
 * a constructed element yields a new reader over its content, one level
 * deeper; the parent has already moved past it.
 */
export class BerReader {
  private cStart = 0;
  private cEnd = 0;
  constructor(
    readonly buf: Buffer,
    private pos: number,
    readonly end: number,
    readonly depth: number,
  ) {
    if (depth > MAX_BER_DEPTH) throw new LdapDecodeError(`elements nested deeper than ${MAX_BER_DEPTH}`);
  }

  /** A reader over the whole of `bytes`. */
  static of(bytes: Uint8Array): BerReader {
    const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return new BerReader(buf, 0, buf.length, 0);
  }

  get atEnd(): boolean {
    return this.pos >= this.end;
  }

  /** The octets left to read, without reading them (a view into the buffer). */
  rest(): Buffer {
    return this.buf.subarray(this.pos, this.end);
  }

  /** The identifier octet of the next element, or -1 when none is left. */
  peek(): number {
    return this.pos < this.end ? this.buf[this.pos]! : -1;
  }

  /**
   * Reads the next element's identifier and length, checks the length
   * against what is left, and moves past the element; returns the
   * identifier. Its content is then `cStart..cEnd`.
   */
  next(what: string): number {
    const buf = this.buf;
    const end = this.end;
    let p = this.pos;
    if (p >= end) throw new LdapDecodeError(`${what}: missing`);
    const id = buf[p++]!;
    if ((id & 0x1f) === 0x1f) throw new LdapDecodeError(`${what}: tag numbers above 30 are not used by LDAP`);
    if (p >= end) throw new LdapDecodeError(`${what}: truncated before its length`);
    let len = buf[p++]!;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0) throw new LdapDecodeError(`${what}: indefinite length (not allowed in LDAP)`);
      if (n > MAX_LENGTH_OCTETS) throw new LdapDecodeError(`${what}: length of ${n} octets`);
      if (end - p < n) throw new LdapDecodeError(`${what}: truncated length`);
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + buf[p++]!;
    }
    if (len > end - p) throw new LdapDecodeError(`${what}: length ${len} past the end of its container (${end - p} octets left)`);
    this.cStart = p;
    this.cEnd = p + len;
    this.pos = p + len;
    return id;
  }

  /** Reads the next element, which must have identifier `id`. */
  private expect(id: number, what: string): void {
    const got = this.next(what);
    if (got === id) return;
    if ((got ^ id) === CONSTRUCTED) {
      throw new LdapDecodeError(`${what}: ${got & CONSTRUCTED ? 'constructed' : 'primitive'} encoding where ${id & CONSTRUCTED ? 'constructed' : 'primitive'} is required`);
    }
    throw new LdapDecodeError(`${what}: expected ${describeTag(id)}, got ${describeTag(got)}`);
  }

  /** A constructed element (SEQUENCE, SET or a constructed tag) as a reader over its content. */
  sequence(id: number, what: string): BerReader {
    this.expect(id, what);
    return new BerReader(this.buf, this.cStart, this.cEnd, this.depth + 1);
  }

  /** The content of the element just read by next(), when it was constructed, as a reader. */
  contentReader(): BerReader {
    return new BerReader(this.buf, this.cStart, this.cEnd, this.depth + 1);
  }

  /** A primitive element's content octets (a view into the received bytes). */
  octets(id: number, what: string): Buffer {
    this.expect(id, what);
    return this.buf.subarray(this.cStart, this.cEnd);
  }

  /** The content of the element just read by next(). */
  content(): Buffer {
    return this.buf.subarray(this.cStart, this.cEnd);
  }

  /** A primitive element's content as UTF-8 text (LDAPString); malformed UTF-8 is refused. */
  string(id: number, what: string): string {
    this.expect(id, what);
    return utf8(this.buf, this.cStart, this.cEnd, what);
  }

  /** An INTEGER or ENUMERATED (by `id`) within [min, max]. */
  integer(id: number, what: string, min: number, max: number): number {
    this.expect(id, what);
    const buf = this.buf;
    const e = this.cEnd;
    let i = this.cStart;
    if (i === e) throw new LdapDecodeError(`${what}: empty integer`);
    // redundant sign octets (00 before a positive, FF before a negative) are tolerated
    while (e - i > 1 && ((buf[i] === 0 && buf[i + 1]! < 0x80) || (buf[i] === 0xff && buf[i + 1]! >= 0x80))) i++;
    if (e - i > 7) throw new LdapDecodeError(`${what}: integer out of range`);
    let v = buf[i]! >= 0x80 ? buf[i]! - 256 : buf[i]!;
    for (i++; i < e; i++) v = v * 256 + buf[i]!;
    if (!Number.isSafeInteger(v) || v < min || v > max) throw new LdapDecodeError(`${what}: ${Number.isSafeInteger(v) ? v : 'integer'} out of range [${min}, ${max}]`);
    return v;
  }

  /** A BOOLEAN (or an implicitly tagged one): one octet, any non-zero value is TRUE. */
  boolean(id: number, what: string): boolean {
    this.expect(id, what);
    if (this.cEnd - this.cStart !== 1) throw new LdapDecodeError(`${what}: BOOLEAN must be one octet`);
    return this.buf[this.cStart] !== 0;
  }

  /** A NULL (or an implicitly tagged one): no content. */
  null(id: number, what: string): void {
    this.expect(id, what);
    if (this.cEnd !== this.cStart) throw new LdapDecodeError(`${what}: NULL must be empty`);
  }

  /** Skips the remaining elements, checking only that they are well-formed TLVs at this level. */
  skipRest(what: string): void {
    while (this.pos < this.end) this.next(what);
  }

  /** Nothing may follow the last field read. */
  finish(what: string): void {
    if (this.pos !== this.end) throw new LdapDecodeError(`${what}: ${this.end - this.pos} unexpected octets at the end`);
  }
}

/** `buf[start..end]` as text: ASCII directly, anything else only when it is well-formed UTF-8. */
export function utf8(buf: Buffer, start: number, end: number, what: string): string {
  for (let i = start; i < end; i++) {
    if (buf[i]! >= 0x80) {
      if (!isUtf8(buf.subarray(start, end))) throw new LdapDecodeError(`${what}: not valid UTF-8`);
      return buf.toString('utf8', start, end);
    }
  }
  return buf.toString('latin1', start, end);
}

/** RFC 4512 numericoid: numbers without leading zeros, at least two arcs. */
const NUMERIC_OID = /^(?:0|[1-9]\d{0,15})(?:\.(?:0|[1-9]\d{0,15}))+$/;

/** Whether `s` is a dotted numeric OID as LDAPOID requires. */
export const isLdapOid = (s: string): boolean => s.length <= 256 && NUMERIC_OID.test(s);

/** An LDAPOID (RFC 4511 §4.1.2) read from an element with `id`. */
export function readOid(r: BerReader, id: number, what: string): string {
  const s = r.octets(id, what).toString('latin1');
  if (!isLdapOid(s)) throw new LdapDecodeError(`${what}: ${JSON.stringify(s.slice(0, 64))} is not a numeric OID`);
  return s;
}

// ---- writing -------------------------------------------------------------------

/** What an encoder part can be: bytes already encoded, or a Ber value (asn1/writer.ts). */
export type BerPart = TlvPart;
export type Ber = Tlv;

/** The bytes of an encoder's result, in one allocation. */
export const encodeBer = (v: Ber): Buffer => encodeTlv(v);

/** A constructed element with `id` (SEQUENCE, SET, or a constructed tag) around the parts present. */
export function constructed(id: number, parts: readonly (BerPart | undefined)[]): Ber {
  return Tlv.constructed(id, parts);
}

export const sequence = (...parts: (BerPart | undefined)[]): Ber => constructed(Tag.sequence, parts);

/** A primitive element with `id` whose content is `bytes` (OCTET STRING or an implicit tag of one). */
export const octets = (id: number, bytes: Buffer): Ber => Tlv.wrap(id, bytes);

/** A primitive element with `id` whose content is `s` as UTF-8 (LDAPString, LDAPDN, LDAPOID). */
export const utf8String = (id: number, s: string): Ber => Tlv.utf8(id, s);

/** An OCTET STRING given as text or bytes. */
export const octetString = (v: string | Buffer, id: number = Tag.octetString): Ber => (typeof v === 'string' ? utf8String(id, v) : octets(id, v));

/** An INTEGER or ENUMERATED (by `id`) in the fewest octets. */
export const integer = (id: number, v: number): Ber => Tlv.integer(id, v);

/** An LDAPOID field with `id` (the writing twin of readOid); absent when `oid` is. */
export function writeOid(id: number, oid: string | undefined): Ber | undefined {
  if (oid === undefined) return undefined;
  if (!isLdapOid(oid)) throw new LdapEncodeError(`${oid} is not a numeric OID`);
  return utf8String(id, oid);
}

/** An optional OCTET STRING field with `id`. */
export const optionalOctets = (id: number, v: Buffer | undefined): Ber | undefined => (v === undefined ? undefined : octets(id, v));

const TRUE_OCTET = Buffer.from([0xff]);
const FALSE_OCTET = Buffer.from([0x00]);
/** A BOOLEAN (or an implicit tag of one): TRUE is written as 0xFF. */
export const boolean = (v: boolean, id: number = Tag.boolean): Ber => octets(id, v ? TRUE_OCTET : FALSE_OCTET);

const EMPTY = Buffer.alloc(0);
/** A NULL (or an implicit tag of one). */
export const nul = (id: number = Tag.null): Ber => octets(id, EMPTY);
