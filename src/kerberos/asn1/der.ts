/**
 * The DER layer under the Kerberos messages (X.690). Decoding is a small,
 * strict TLV reader: definite lengths in minimal
 * form only, no trailing bytes, bounded depth and size; every node keeps its
 * raw bytes so checksums can be computed over exactly what was received.
 * (It replaced asn1js here after profiling: asn1js's object-heavy parse took
 * about 40% of the KDC's CPU per AS request.) Encoding goes through the shared TLV
 * writer (asn1/writer.ts), which gives exact control of tags and of the
 * GeneralizedTime form; the encoders here keep the last few times written
 * and the small INTEGERs ready made, since every reply repeats them.
 */
import { encodeTlv, Tlv, type TlvPart } from '../../asn1/writer.js';

export class Asn1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Asn1Error';
  }
}

export type TagClass = 'universal' | 'application' | 'context' | 'private';

/**
 * One parsed element. `raw` and `content` are views into the received
 * bytes, made on each use: most nodes of a message are never asked for
 * them, and a Buffer view costs more than the rest of the node; the
 * readers below (integers, strings, times, flags) read the received bytes
 * in place and make none. The class and the constructed bit are kept as
 * the identifier octet's bits: a node is a few words, and a TGS request
 * parses about a hundred of them.
 */
export class DerNode {
  constructor(
    /** the identifier octet's class and constructed bits (0xe0) */
    readonly id: number,
    readonly tag: number,
    /** the received bytes (readers in this module read them in place) */
    readonly buf: Buffer,
    private readonly start: number,
    /** offset of the content octets in `buf` */
    readonly contentStart: number,
    /** offset just after the element */
    readonly end: number,
    readonly children: readonly DerNode[],
  ) {}

  get cls(): TagClass {
    return CLASSES[this.id >> 6]!;
  }

  get constructed(): boolean {
    return (this.id & 0x20) !== 0;
  }

  /** the whole TLV as received */
  get raw(): Buffer {
    return this.buf.subarray(this.start, this.end);
  }

  /** content octets */
  get content(): Buffer {
    return this.buf.subarray(this.contentStart, this.end);
  }
}

const CLASSES: readonly TagClass[] = ['universal', 'application', 'context', 'private'];
const NO_CHILDREN: readonly DerNode[] = Object.freeze([]);
const MAX_DEPTH = 24;
const MAX_INPUT = 1 << 20;
const MAX_NODES = 20_000;

/** One parse's count of elements, and its stack of children not yet given to their parent (the parse's own: a stack kept between parses would keep old messages alive). */
interface ParseState {
  nodes: number;
  stack: DerNode[];
  top: number;
}

function parseAt(buf: Buffer, start: number, end: number, depth: number, budget: ParseState): DerNode {
  if (depth > MAX_DEPTH) throw new Asn1Error('ASN.1 nested too deeply');
  if (++budget.nodes > MAX_NODES) throw new Asn1Error('too many ASN.1 elements');
  let p = start;
  if (p >= end) throw new Asn1Error('truncated ASN.1 element');
  const id = buf[p++]!;
  const cls = CLASSES[id >> 6]!;
  const constructed = (id & 0x20) !== 0;
  let tag = id & 0x1f;
  if (tag === 0x1f) {
    tag = 0;
    for (let i = 0; ; i++) {
      if (p >= end || i > 3) throw new Asn1Error('malformed tag');
      const b = buf[p++]!;
      tag = tag * 128 + (b & 0x7f);
      if (!(b & 0x80)) break;
    }
    if (tag < 31) throw new Asn1Error('non-minimal tag');
  }
  // [UNIVERSAL 0] only ends indefinite-length BER (found by the asn1js cross-check)
  if (id === 0) throw new Asn1Error('end-of-contents octets are not DER');
  if (p >= end) throw new Asn1Error('truncated length');
  let len = buf[p++]!;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0) throw new Asn1Error('indefinite lengths are not DER');
    if (n > 4 || p + n > end) throw new Asn1Error('invalid length');
    if (buf[p] === 0) throw new Asn1Error('non-minimal length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p++]!;
    if (len < 0x80) throw new Asn1Error('non-minimal length');
  }
  if (p + len > end) throw new Asn1Error('truncated ASN.1 element');
  // Primitive elements share one empty list; a constructed one's children are gathered on the parse's stack and
  // copied into a list of exactly their number (a list grown by push() reserves 17 slots at its second child).
  let children: readonly DerNode[] = NO_CHILDREN;
  if (constructed) {
    if (cls === 'universal' && tag !== 16 && tag !== 17) throw new Asn1Error('constructed string encodings are not DER');
    let q = p;
    const base = budget.top;
    while (q < p + len) {
      const child = parseAt(buf, q, p + len, depth + 1, budget);
      budget.stack[budget.top++] = child;
      q = child.end;
    }
    // one child (an explicit tag's) is the common case: a literal list, no call
    if (budget.top === base + 1) children = [budget.stack[base]!];
    else if (budget.top > base) children = budget.stack.slice(base, budget.top);
    budget.top = base;
  }
  return new DerNode(id & 0xe0, tag, buf, start, p, p + len, children);
}

/** Parses exactly one DER element filling the whole buffer. */
export function parseDer(bytes: Uint8Array): DerNode {
  if (bytes.length === 0) throw new Asn1Error('empty message');
  if (bytes.length > MAX_INPUT) throw new Asn1Error('message too large');
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const node = parseAt(buf, 0, buf.length, 0, { nodes: 0, stack: [], top: 0 });
  if (node.end !== buf.length) throw new Asn1Error('trailing bytes after the message');
  return node;
}

// ---- reading helpers -----------------------------------------------------------

export function expect(n: DerNode, cls: TagClass, tag: number, what: string): DerNode {
  if (n.cls !== cls || n.tag !== tag) throw new Asn1Error(`${what}: unexpected tag [${n.cls} ${n.tag}]`);
  return n;
}

/** The single child of an APPLICATION-tagged wrapper. */
export function unwrapApp(n: DerNode, tag: number, what: string): DerNode {
  expect(n, 'application', tag, what);
  if (!n.constructed || n.children.length !== 1) throw new Asn1Error(`${what}: malformed application wrapper`);
  return n.children[0]!;
}

/**
 * The fields of a SEQUENCE of explicitly context-tagged fields, by field
 * number (the inner node of each tag). Looked up by scanning the few
 * children: cheaper than building a Map for every SEQUENCE of a message.
 */
export class Fields {
  constructor(private readonly seq: DerNode) {}

  get(tag: number): DerNode | undefined {
    for (const c of this.seq.children) if (c.tag === tag) return c.children[0];
    return undefined;
  }

  has(tag: number): boolean {
    return this.get(tag) !== undefined;
  }
}

/** The fields of a SEQUENCE of explicitly context-tagged fields; tags must be ascending and unique. */
export function fields(n: DerNode, what: string): Fields {
  expect(n, 'universal', 16, what);
  if (!n.constructed) throw new Asn1Error(`${what}: SEQUENCE must be constructed`);
  let last = -1;
  for (const c of n.children) {
    // context class and constructed: the identifier's bits 101
    if (c.id !== 0xa0 || c.children.length !== 1) throw new Asn1Error(`${what}: expected an explicitly tagged field`);
    if (c.tag <= last) throw new Asn1Error(`${what}: fields out of order`);
    last = c.tag;
  }
  return new Fields(n);
}

export function req(f: Fields, tag: number, what: string): DerNode {
  const n = f.get(tag);
  if (!n) throw new Asn1Error(`${what}: missing field [${tag}]`);
  return n;
}

export function readInt(n: DerNode, what: string): number {
  expect(n, 'universal', 2, what);
  if (n.constructed) throw new Asn1Error(`${what}: constructed INTEGER`);
  const b = n.buf;
  const from = n.contentStart;
  const len = n.end - from;
  if (len === 0 || len > 6) throw new Asn1Error(`${what}: integer out of range`);
  let v = 0;
  for (let i = from; i < n.end; i++) v = v * 256 + b[i]!;
  if (b[from]! & 0x80) v -= 2 ** (8 * len);
  return v;
}

/** UInt32 values (nonces, sequence numbers) are sometimes sent as negative Int32 by old peers. */
export function readUInt32(n: DerNode, what: string): number {
  const v = readInt(n, what);
  if (v < -2147483648 || v > 0xffffffff) throw new Asn1Error(`${what}: out of range`);
  return v >>> 0;
}

/** The universal string types read as text (GeneralString 27, UTF8String 12, IA5String 22, PrintableString 19, VisibleString 26), as bits of one word: no list to search per string. */
const STRING_TAGS = (1 << 27) | (1 << 12) | (1 << 22) | (1 << 19) | (1 << 26);

export function readString(n: DerNode, what: string): string {
  // universal class, primitive (identifier bits 000): the tag is one of the string types
  if (n.id !== 0 || n.tag > 30 || ((STRING_TAGS >>> n.tag) & 1) === 0) throw new Asn1Error(`${what}: expected a string`);
  return n.buf.toString(n.tag === 12 ? 'utf8' : 'latin1', n.contentStart, n.end);
}

export function readOctets(n: DerNode, what: string): Buffer {
  expect(n, 'universal', 4, what);
  if (n.constructed) throw new Asn1Error(`${what}: constructed OCTET STRING`);
  return n.content;
}

/** Two decimal digits at `i`, or -1. */
function twoDigits(c: Buffer, i: number): number {
  const hi = c[i]! - 0x30;
  const lo = c[i + 1]! - 0x30;
  return hi < 0 || hi > 9 || lo < 0 || lo > 9 ? -1 : hi * 10 + lo;
}

export function readTime(n: DerNode, what: string): Date {
  expect(n, 'universal', 24, what);
  if (n.constructed) throw new Asn1Error(`${what}: constructed GeneralizedTime`);
  const c = n.buf;
  const at = n.contentStart;
  if (n.end - at !== 15 || c[at + 14] !== 0x5a) throw new Asn1Error(`${what}: KerberosTime must be YYYYMMDDHHMMSSZ`);
  const cc = twoDigits(c, at);
  const yy = twoDigits(c, at + 2);
  const mo = twoDigits(c, at + 4);
  const day = twoDigits(c, at + 6);
  const h = twoDigits(c, at + 8);
  const mi = twoDigits(c, at + 10);
  const sec = twoDigits(c, at + 12);
  if ((cc | yy | mo | day | h | mi | sec) < 0) throw new Asn1Error(`${what}: KerberosTime must be YYYYMMDDHHMMSSZ`);
  const y = cc * 100 + yy;
  // a field out of range (month 13, 31 February, second 60) is refused, not rolled over
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const monthDays = mo === 2 ? (leap ? 29 : 28) : mo === 4 || mo === 6 || mo === 9 || mo === 11 ? 30 : 31;
  if (mo < 1 || mo > 12 || day < 1 || day > monthDays || h > 23 || mi > 59 || sec > 59) throw new Asn1Error(`${what}: KerberosTime out of range`);
  if (y >= 100) return new Date(Date.UTC(y, mo - 1, day, h, mi, sec));
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, day); // Date.UTC would map years 0-99 to 1900-1999
  date.setUTCHours(h, mi, sec, 0);
  return date;
}

/** A BIT STRING of up to 32 bits as a flags word (bit 0 = most significant). */
export function readFlags(n: DerNode, what: string): number {
  expect(n, 'universal', 3, what);
  const c = n.buf;
  const at = n.contentStart;
  const len = n.end - at;
  if (n.constructed || len < 1 || c[at]! > 7 || (len === 1 && c[at] !== 0)) throw new Asn1Error(`${what}: malformed BIT STRING`);
  let v = 0;
  for (let i = 1; i <= 4; i++) v = (v * 256 + (i < len ? c[at + i]! : 0)) >>> 0;
  return v >>> 0;
}

export function seqOf(n: DerNode, what: string): readonly DerNode[] {
  expect(n, 'universal', 16, what);
  if (!n.constructed) throw new Asn1Error(`${what}: SEQUENCE must be constructed`);
  return n.children;
}

/** Accepts either encoded bytes (one whole DER element) or an already parsed node. */
export function asNode(input: Uint8Array | DerNode): DerNode {
  return input instanceof Uint8Array ? parseDer(input) : input;
}

// ---- writing -------------------------------------------------------------------
//
// Encoders build a small tree of Der values whose sizes are known as they
// are made, and `der()` writes the whole tree into one Buffer. Making a
// Buffer per TLV (and copying each level into its parent) cost more than
// the encryption of the same message.

const CLASS_BITS: Record<TagClass, number> = { universal: 0x00, application: 0x40, context: 0x80, private: 0xc0 };

/** What an encoder part can be: bytes already encoded, or a Der value (asn1/writer.ts). */
export type DerPart = TlvPart;
export type Der = Tlv;

/** The DER bytes of an encoder's result, in one allocation. */
export function der(v: DerPart): Buffer {
  return encodeTlv(v);
}

function identifier(cls: TagClass, constructed: boolean, tag: number): number {
  if (tag >= 31) throw new Asn1Error('high tag numbers are not used by Kerberos');
  return CLASS_BITS[cls] | (constructed ? 0x20 : 0) | tag;
}

const constructedOf = (id: number, parts: readonly (DerPart | undefined)[]): Der => Tlv.constructed(id, parts);
const wrap = (id: number, inner: DerPart): Der => Tlv.wrap(id, inner);

/** One TLV around content given as parts (tags below 31 cover every Kerberos type). */
export function tlv(cls: TagClass, constructed: boolean, tag: number, ...content: DerPart[]): Der {
  return constructedOf(identifier(cls, constructed, tag), content);
}

const SEQ = 0x30;
export const seq = (...items: Array<DerPart | undefined>): Der => constructedOf(SEQ, items);
export const seqOfItems = (items: readonly DerPart[]): Der => constructedOf(SEQ, items);
/** explicit context tag [n] */
export const ctx = (n: number, inner: DerPart | undefined): Der | undefined => (inner === undefined ? undefined : wrap(identifier('context', true, n), inner));
export const app = (n: number, inner: DerPart): Der => wrap(identifier('application', true, n), inner);

/** INTEGERs of the small values most fields hold (versions, message types, enctypes, name types, key versions), made once: a Tlv is never changed. */
const SMALL_INTS = 256;
const smallInts: (Der | undefined)[] = new Array<Der | undefined>(SMALL_INTS).fill(undefined);

export function int(v: number): Der {
  if (v >= 0 && v < SMALL_INTS && Number.isInteger(v)) return (smallInts[v] ??= Tlv.integer(0x02, v));
  if (!Number.isSafeInteger(v)) throw new Asn1Error('integer out of range');
  return Tlv.integer(0x02, v);
}

const latin1 = (tag: number, s: string): Der => Tlv.latin1(tag, s);

/** KerberosString (GeneralString): one byte per character, as readString reads it back. */
export const gstr = (s: string): Der => latin1(27, s);
export const octets = (b: Buffer): Der => wrap(0x04, b);

/**
 * The last few KerberosTimes written, by whole second, as their whole DER
 * bytes: a message repeats its times (a ticket's authtime is also its
 * reply's last-request time; its starttime is the current second, as is
 * every other reply's of that second; a TGT's times recur in each ticket
 * issued with it), and writing the digits (a Date and six calendar fields)
 * cost more than copying them. The Buffers are only ever copied into
 * messages, never handed out to be changed.
 */
const TIME_SLOTS = 16;
const timeSeconds = new Float64Array(TIME_SLOTS).fill(NaN);
const timeBytes: (Buffer | undefined)[] = new Array<Buffer | undefined>(TIME_SLOTS).fill(undefined);
let timeNext = 0;

export function time(d: Date): DerPart {
  const ms = d.getTime();
  // milliseconds are not written: the second is the whole value
  const second = Math.floor(ms / 1000);
  for (let i = 0; i < TIME_SLOTS; i++) if (timeSeconds[i] === second) return timeBytes[i]!;
  const y = d.getUTCFullYear();
  if (!(y >= 0 && y <= 9999)) throw new Asn1Error('KerberosTime out of range');
  // memory of its own, not a view into Node's pool: the entry outlives the message
  const bytes = Buffer.allocUnsafeSlow(17);
  Tlv.time(24, ms).write(bytes, 0);
  timeSeconds[timeNext] = second;
  timeBytes[timeNext] = bytes;
  timeNext = (timeNext + 1) % TIME_SLOTS;
  return bytes;
}

/** A 32-bit flags word as BIT STRING (as MIT encodes KDCOptions/TicketFlags). */
export function flags(v: number): Der {
  return Tlv.flags(0x03, v);
}

// ---- object identifiers (X.690 §8.19) ------------------------------------------------

/** DER of an OBJECT IDENTIFIER given as dotted text, e.g. `1.2.840.113554.1.2.2`. */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => (/^\d{1,15}$/.test(a) ? Number(a) : NaN));
  if (arcs.length < 2 || arcs.some((a) => !Number.isSafeInteger(a)) || arcs[0]! > 2 || (arcs[0]! < 2 && arcs[1]! > 39)) throw new Asn1Error(`invalid OID ${dotted}`);
  const bytes: number[] = [];
  const push = (v: number) => {
    const groups = [v % 128];
    for (v = Math.floor(v / 128); v > 0; v = Math.floor(v / 128)) groups.unshift((v % 128) | 0x80);
    bytes.push(...groups);
  };
  push(arcs[0]! * 40 + arcs[1]!);
  for (const a of arcs.slice(2)) push(a);
  return der(tlv('universal', false, 6, Buffer.from(bytes)));
}

/** Dotted text of a decoded OBJECT IDENTIFIER. */
export function readOid(n: DerNode, what: string): string {
  expect(n, 'universal', 6, what);
  const c = n.content;
  if (n.constructed || c.length === 0 || c.length > 64 || c[c.length - 1]! & 0x80) throw new Asn1Error(`${what}: malformed OBJECT IDENTIFIER`);
  const arcs: number[] = [];
  let v = 0;
  for (let i = 0; i < c.length; i++) {
    if (v === 0 && c[i] === 0x80) throw new Asn1Error(`${what}: non-minimal OBJECT IDENTIFIER`);
    v = v * 128 + (c[i]! & 0x7f);
    if (!Number.isSafeInteger(v)) throw new Asn1Error(`${what}: OBJECT IDENTIFIER arc too large`);
    if (!(c[i]! & 0x80)) {
      if (arcs.length === 0) arcs.push(v < 80 ? Math.floor(v / 40) : 2, v < 80 ? v % 40 : v - 80);
      else arcs.push(v);
      v = 0;
    }
  }
  return arcs.join('.');
}
