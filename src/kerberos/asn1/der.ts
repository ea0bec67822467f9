/**
 * The DER layer under the Kerberos messages (X.690). Decoding goes through
 * asn1js (fromBER), checked strictly: definite lengths only, no trailing
 * bytes, bounded depth; every node keeps its raw bytes so checksums can be
 * computed over exactly what was received. Encoding is a small DER writer,
 * because Kerberos needs exact control of tags and of GeneralizedTime form.
 */
import * as asn1js from 'asn1js';

export class Asn1Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Asn1Error';
  }
}

export type TagClass = 'universal' | 'application' | 'context' | 'private';

export interface DerNode {
  cls: TagClass;
  tag: number;
  constructed: boolean;
  /** the whole TLV as received */
  raw: Buffer;
  /** content octets (primitive nodes) */
  content: Buffer;
  children: DerNode[];
}

const CLASSES: Record<number, TagClass> = { 1: 'universal', 2: 'application', 3: 'context', 4: 'private' };
const MAX_DEPTH = 24;
const MAX_INPUT = 1 << 20;

function convert(n: asn1js.AsnType, depth: number): DerNode {
  if (depth > MAX_DEPTH) throw new Asn1Error('ASN.1 nested too deeply');
  const b = n as unknown as {
    error?: string;
    idBlock: { tagClass: number; tagNumber: number; isConstructed: boolean };
    lenBlock: { isIndefiniteForm: boolean; length: number };
    valueBlock: { value?: asn1js.AsnType[] };
    valueBeforeDecodeView: Uint8Array;
  };
  if (b.error) throw new Asn1Error(`malformed ASN.1: ${b.error}`);
  if (b.lenBlock.isIndefiniteForm) throw new Asn1Error('indefinite lengths are not DER');
  const cls = CLASSES[b.idBlock.tagClass];
  if (!cls) throw new Asn1Error('invalid tag class');
  const raw = Buffer.from(b.valueBeforeDecodeView);
  const constructed = b.idBlock.isConstructed;
  if (constructed && !Array.isArray(b.valueBlock.value)) throw new Asn1Error('constructed string encodings are not DER');
  const children = constructed ? (b.valueBlock.value as asn1js.AsnType[]).map((c) => convert(c, depth + 1)) : [];
  let content = Buffer.alloc(0);
  if (!constructed) content = raw.subarray(raw.length - b.lenBlock.length);
  return { cls, tag: b.idBlock.tagNumber, constructed, raw, content, children };
}

/** Parses exactly one DER element filling the whole buffer. */
export function parseDer(bytes: Uint8Array): DerNode {
  if (bytes.length === 0) throw new Asn1Error('empty message');
  if (bytes.length > MAX_INPUT) throw new Asn1Error('message too large');
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let r: ReturnType<typeof asn1js.fromBER>;
  try {
    r = asn1js.fromBER(new Uint8Array(buf));
  } catch (e) {
    throw new Asn1Error(`malformed ASN.1: ${e instanceof Error ? e.message : 'parse error'}`);
  }
  if (r.offset === -1 || (r.result as { error?: string }).error) throw new Asn1Error(`malformed ASN.1: ${(r.result as { error?: string }).error || 'parse error'}`);
  if (r.offset !== buf.length) throw new Asn1Error('trailing bytes after the message');
  try {
    return convert(r.result, 0);
  } catch (e) {
    if (e instanceof Asn1Error) throw e;
    throw new Asn1Error('malformed ASN.1');
  }
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
 * A SEQUENCE of explicitly context-tagged fields: returns field number ->
 * inner node. Tags must be ascending and unique.
 */
export function fields(n: DerNode, what: string): Map<number, DerNode> {
  expect(n, 'universal', 16, what);
  if (!n.constructed) throw new Asn1Error(`${what}: SEQUENCE must be constructed`);
  const out = new Map<number, DerNode>();
  let last = -1;
  for (const c of n.children) {
    if (c.cls !== 'context' || !c.constructed || c.children.length !== 1) throw new Asn1Error(`${what}: expected an explicitly tagged field`);
    if (c.tag <= last) throw new Asn1Error(`${what}: fields out of order`);
    last = c.tag;
    out.set(c.tag, c.children[0]!);
  }
  return out;
}

export function req(f: Map<number, DerNode>, tag: number, what: string): DerNode {
  const n = f.get(tag);
  if (!n) throw new Asn1Error(`${what}: missing field [${tag}]`);
  return n;
}

export function readInt(n: DerNode, what: string): number {
  expect(n, 'universal', 2, what);
  const c = n.content;
  if (c.length === 0 || c.length > 6) throw new Asn1Error(`${what}: integer out of range`);
  let v = 0;
  for (const byte of c) v = v * 256 + byte;
  if (c[0]! & 0x80) v -= 2 ** (8 * c.length);
  return v;
}

/** UInt32 values (nonces, sequence numbers) are sometimes sent as negative Int32 by old peers. */
export function readUInt32(n: DerNode, what: string): number {
  const v = readInt(n, what);
  if (v < -2147483648 || v > 0xffffffff) throw new Asn1Error(`${what}: out of range`);
  return v >>> 0;
}

export function readString(n: DerNode, what: string): string {
  if (n.cls !== 'universal' || ![27, 12, 22, 19, 26].includes(n.tag) || n.constructed) throw new Asn1Error(`${what}: expected a string`);
  return n.tag === 12 ? n.content.toString('utf8') : n.content.toString('latin1');
}

export function readOctets(n: DerNode, what: string): Buffer {
  expect(n, 'universal', 4, what);
  if (n.constructed) throw new Asn1Error(`${what}: constructed OCTET STRING`);
  return n.content;
}

export function readTime(n: DerNode, what: string): Date {
  expect(n, 'universal', 24, what);
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(n.content.toString('latin1'));
  if (!m) throw new Asn1Error(`${what}: KerberosTime must be YYYYMMDDHHMMSSZ`);
  return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
}

/** A BIT STRING of up to 32 bits as a flags word (bit 0 = most significant). */
export function readFlags(n: DerNode, what: string): number {
  expect(n, 'universal', 3, what);
  const c = n.content;
  if (c.length < 1 || c[0]! > 7) throw new Asn1Error(`${what}: malformed BIT STRING`);
  let v = 0;
  for (let i = 0; i < 4; i++) v = (v * 256 + (c[1 + i] ?? 0)) >>> 0;
  return v >>> 0;
}

export function seqOf(n: DerNode, what: string): DerNode[] {
  expect(n, 'universal', 16, what);
  return n.children;
}

// ---- writing -------------------------------------------------------------------

function lengthBytes(len: number): Buffer {
  if (len < 0x80) return Buffer.from([len]);
  const bytes: number[] = [];
  for (let v = len; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function identifier(cls: TagClass, constructed: boolean, tag: number): Buffer {
  const c = { universal: 0x00, application: 0x40, context: 0x80, private: 0xc0 }[cls] | (constructed ? 0x20 : 0);
  if (tag < 31) return Buffer.from([c | tag]);
  const bytes: number[] = [tag & 0x7f];
  for (let v = tag >> 7; v > 0; v >>= 7) bytes.unshift(0x80 | (v & 0x7f));
  return Buffer.from([c | 0x1f, ...bytes]);
}

export function tlv(cls: TagClass, constructed: boolean, tag: number, content: Buffer): Buffer {
  return Buffer.concat([identifier(cls, constructed, tag), lengthBytes(content.length), content]);
}

export const seq = (...items: Array<Buffer | undefined>): Buffer => tlv('universal', true, 16, Buffer.concat(items.filter((x): x is Buffer => x !== undefined)));
export const seqOfItems = (items: Buffer[]): Buffer => tlv('universal', true, 16, Buffer.concat(items));
/** explicit context tag [n] */
export const ctx = (n: number, inner: Buffer | undefined): Buffer | undefined => (inner === undefined ? undefined : tlv('context', true, n, inner));
export const app = (n: number, inner: Buffer): Buffer => tlv('application', true, n, inner);

export function int(v: number): Buffer {
  if (!Number.isSafeInteger(v)) throw new Asn1Error('integer out of range');
  const bytes: number[] = [];
  let x = BigInt(v);
  do {
    bytes.unshift(Number(x & 0xffn));
    x >>= 8n;
  } while (!((x === 0n && (bytes[0]! & 0x80) === 0) || (x === -1n && (bytes[0]! & 0x80) !== 0)));
  return tlv('universal', false, 2, Buffer.from(bytes));
}

export const gstr = (s: string): Buffer => tlv('universal', false, 27, Buffer.from(s, 'latin1'));
export const octets = (b: Buffer): Buffer => tlv('universal', false, 4, b);

export function time(d: Date): Buffer {
  const s = d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
  return tlv('universal', false, 24, Buffer.from(s, 'latin1'));
}

/** A 32-bit flags word as BIT STRING (as MIT encodes KDCOptions/TicketFlags). */
export function flags(v: number): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(v >>> 0, 1);
  return tlv('universal', false, 3, b);
}
