/**
 * The one TLV writer (X.690) under both of our ASN.1 encoders: Kerberos DER
 * (kerberos/asn1/der.ts) and LDAP BER (ldap/ber.ts). A value is built bottom
 * up as a tree of Tlv nodes whose encoded sizes are known as they are made,
 * then written once into one allocation: no intermediate Buffers and no
 * concatenation, which matters on the KDC's hot path. Lengths are definite
 * and in their shortest form, which both protocols accept (DER requires it).
 * Each encoder adds its own tag rules and checks on top; the content forms
 * here are the ones they share: constructed parts, raw bytes, latin1 and
 * UTF-8 text, two's-complement integers, GeneralizedTime to the second and a
 * 32-bit BIT STRING flags word. Its length and header rules are exported
 * for the one writer that skips the tree (the LDAP messages every search
 * sends, ldap/protocol-responses.ts), so both write the same octets.
 */

export class TlvWriteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TlvWriteError';
  }
}

/** What a node's content can hold: bytes already encoded, or another node. */
export type TlvPart = Buffer | Tlv;

// how a node's content is written (plain numbers: they stay inside this module)
const PARTS = 0;
const ONE = 1;
const LATIN1 = 2;
const UTF8 = 3;
const INT = 4;
const TIME = 5;
const FLAGS = 6;
type Body = typeof PARTS | typeof ONE | typeof LATIN1 | typeof UTF8 | typeof INT | typeof TIME | typeof FLAGS;

/** Octets of a definite length (up to 4 GiB - 1) in its shortest form. */
export function lengthOctets(len: number): number {
  return len < 0x80 ? 1 : len < 0x100 ? 2 : len < 0x10000 ? 3 : len < 0x1000000 ? 4 : 5;
}

/** Writes an identifier octet and a shortest definite length at `off`; returns the offset after them. */
export function writeHeader(out: Buffer, off: number, id: number, len: number): number {
  out[off++] = id;
  const lb = lengthOctets(len);
  if (lb === 1) {
    out[off++] = len;
    return off;
  }
  out[off++] = 0x80 | (lb - 1);
  for (let i = lb - 2; i >= 0; i--) out[off++] = (len >>> (8 * i)) & 0xff;
  return off;
}

/** Octets of the shortest two's complement of a safe integer `v`. */
export function integerOctets(v: number): number {
  let n = 1;
  for (let lo = -128, hi = 127; v < lo || v > hi; n++, lo *= 256, hi = hi * 256 + 255);
  return n;
}

/** One TLV not yet written out; `size` is its whole encoded length. */
export class Tlv {
  readonly size: number;
  private constructor(
    readonly id: number,
    private readonly body: Body,
    /** the parts (PARTS), the part (ONE), the text (LATIN1, UTF8), or null */
    private readonly payload: readonly (TlvPart | undefined)[] | TlvPart | string | null,
    private readonly num: number,
    readonly clen: number,
  ) {
    if (!Number.isInteger(id) || id < 0 || id > 0xff) throw new TlvWriteError(`identifier ${id} is not one octet`);
    if (clen > 0xffffffff) throw new TlvWriteError('element longer than 4 GiB');
    this.size = 1 + lengthOctets(clen) + clen;
  }

  /** Writes the TLV at `off`; returns the offset after it. */
  write(out: Buffer, off: number): number {
    const len = this.clen;
    off = writeHeader(out, off, this.id, len);
    switch (this.body) {
      case PARTS:
        for (const p of this.payload as readonly (TlvPart | undefined)[]) if (p !== undefined) off = writePart(p, out, off);
        return off;
      case ONE:
        return writePart(this.payload as TlvPart, out, off);
      case LATIN1:
        return off + out.write(this.payload as string, off, len, 'latin1');
      case UTF8:
        return off + out.write(this.payload as string, off, len, 'utf8');
      case INT: {
        let v = this.num;
        for (let i = len - 1; i >= 0; i--) {
          const b = ((v % 256) + 256) % 256;
          out[off + i] = b;
          v = (v - b) / 256;
        }
        return off + len;
      }
      case TIME: {
        const d = new Date(this.num);
        off = digits(out, off, d.getUTCFullYear(), 4);
        off = digits(out, off, d.getUTCMonth() + 1, 2);
        off = digits(out, off, d.getUTCDate(), 2);
        off = digits(out, off, d.getUTCHours(), 2);
        off = digits(out, off, d.getUTCMinutes(), 2);
        off = digits(out, off, d.getUTCSeconds(), 2);
        out[off++] = 0x5a; // 'Z'
        return off;
      }
      case FLAGS:
        out[off] = 0;
        out.writeUInt32BE(this.num >>> 0, off + 1);
        return off + 5;
    }
  }

  /** A constructed element with `id` around the parts present (undefined ones are absent OPTIONAL fields). */
  static constructed(id: number, parts: readonly (TlvPart | undefined)[]): Tlv {
    let clen = 0;
    for (const p of parts) if (p !== undefined) clen += tlvSize(p);
    return new Tlv(id, PARTS, parts, 0, clen);
  }

  /** An element with `id` whose content is one part: raw bytes, or an explicitly tagged inner value. */
  static wrap(id: number, inner: TlvPart): Tlv {
    return new Tlv(id, ONE, inner, 0, tlvSize(inner));
  }

  /** Text as one octet per character (Kerberos' GeneralString as MIT writes it). */
  static latin1(id: number, s: string): Tlv {
    return new Tlv(id, LATIN1, s, 0, s.length);
  }

  /** Text as UTF-8 (LDAP's strings). */
  static utf8(id: number, s: string): Tlv {
    return new Tlv(id, UTF8, s, 0, Buffer.byteLength(s, 'utf8'));
  }

  /** An INTEGER or ENUMERATED (by `id`) in the fewest octets whose two's complement holds `v`. */
  static integer(id: number, v: number): Tlv {
    if (!Number.isSafeInteger(v)) throw new TlvWriteError(`integer ${v} out of range`);
    return new Tlv(id, INT, null, v, integerOctets(v));
  }

  /** A GeneralizedTime YYYYMMDDHHMMSSZ of `ms` (milliseconds dropped). */
  static time(id: number, ms: number): Tlv {
    if (!(ms >= FIRST_MS && ms <= LAST_MS)) throw new TlvWriteError('time out of range');
    return new Tlv(id, TIME, null, ms, 15);
  }

  /** A 32-bit flags word as a BIT STRING with no unused bits. */
  static flags(id: number, v: number): Tlv {
    return new Tlv(id, FLAGS, null, v >>> 0, 5);
  }
}

/** The four-digit years GeneralizedTime can write, as milliseconds (a range check without a Date per value). */
const FIRST_MS = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** `n` as `width` decimal digits. */
function digits(out: Buffer, off: number, n: number, width: number): number {
  for (let i = width - 1; i >= 0; i--) {
    out[off + i] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return off + width;
}

export const tlvSize = (p: TlvPart): number => (p instanceof Tlv ? p.size : p.length);
const writePart = (p: TlvPart, out: Buffer, off: number): number => (p instanceof Tlv ? p.write(out, off) : off + p.copy(out, off));

/** The bytes of a value, in one allocation. */
export function encodeTlv(v: TlvPart): Buffer {
  if (!(v instanceof Tlv)) return v;
  const out = Buffer.allocUnsafe(v.size);
  const end = v.write(out, 0);
  if (end !== v.size) throw new TlvWriteError('internal error: encoded size mismatch');
  return out;
}
