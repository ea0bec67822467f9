/**
 * The RPC wire model shared by the JSON-RPC and XML-RPC codecs, server and
 * client side (docs/architecture.md, "Contracts"): a request is a method name with
 * two params (positional arguments, named options); a response carries result
 * or error, the id, the authenticated principal and the server version.
 *
 * Rules both encodings share, so that a value decoded from one wire can always
 * be sent on the other:
 * - strings hold only characters XML 1.0 can carry (tab, LF, CR, U+0020..U+D7FF,
 *   U+E000..U+FFFD, U+10000..U+10FFFF); NUL, other C0 controls, U+FFFE/U+FFFF
 *   and unpaired surrogates are refused on decode and on encode (binary data
 *   travels as Buffer instead);
 * - numbers are finite; integers must be exact (|n| <= 2^53 - 1);
 * - dates are UTC with whole seconds (milliseconds are dropped on encode),
 *   years 0000..9999;
 * - object keys are 1..256 characters; `__proto__`, `constructor` and
 *   `prototype` are refused, and so are duplicate keys; `__base64__` and
 *   `__datetime__` are reserved for the JSON forms of binary and date values;
 * - server-side (request) decoders return objects with a null prototype.
 * Every failure is a CodecError whose message never repeats a value.
 */
export type WireValue = null | boolean | number | string | Buffer | Date | WireValue[] | { [k: string]: WireValue };

export interface RpcRequest {
  method: string;
  args: WireValue[];
  options: Record<string, WireValue>;
  /** JSON-RPC only (a number, a string or null); null for XML-RPC */
  id: WireValue;
}

export interface RpcError {
  code: number;
  name: string;
  message: string;
  data?: Record<string, WireValue>;
}

export interface RpcResponse {
  result: WireValue;
  error: RpcError | null;
  id: WireValue;
  principal: string | null;
  version: string;
}

/**
 * too-large: body, string or value count over a limit; too-deep: nesting over
 * maxDepth; parse: not well-formed (not UTF-8, bad syntax, forbidden markup);
 * envelope: well-formed but not a request/response of the expected shape;
 * value: a value that is invalid or cannot be represented exactly.
 */
export type CodecFailure = 'too-large' | 'too-deep' | 'parse' | 'envelope' | 'value';

export class CodecError extends Error {
  constructor(
    readonly reason: CodecFailure,
    message: string,
  ) {
    super(message);
    this.name = 'CodecError';
  }
}

export interface CodecLimits {
  /** body size in bytes, checked before parsing */
  maxBytes: number;
  /** containers nested inside one param: args, options, result and error data are depth 1 */
  maxDepth: number;
  /** characters of one string, or bytes of one binary value */
  maxStringLength: number;
  /** values (scalars, containers and struct members) in one document */
  maxItems: number;
}

/** Server side: what one request may cost. */
export const defaultLimits: Readonly<CodecLimits> = Object.freeze({
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxStringLength: 256 * 1024,
  maxItems: 10_000,
});

/** Client side: answers (a large find) may be much bigger than requests. */
export const responseLimits: Readonly<CodecLimits> = Object.freeze({
  maxBytes: 64 * 1024 * 1024,
  maxDepth: 32,
  maxStringLength: 16 * 1024 * 1024,
  maxItems: 10_000_000,
});

export function resolveLimits(partial: Partial<CodecLimits> | undefined, base: Readonly<CodecLimits>): CodecLimits {
  return { ...base, ...(partial ?? {}) };
}

export const METHOD_NAME = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_KEY_LENGTH = 256;

/** Keys that must never become object properties (prototype pollution). */
export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** Keys that mark binary and date values in JSON; no struct may use them as member names. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set(['__base64__', '__datetime__']);

/** Characters outside the XML 1.0 Char production (unpaired surrogates included). */
const NOT_XML_CHAR = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** Index of the first character no wire may carry, or -1. */
export function badCharIndex(s: string): number {
  const m = NOT_XML_CHAR.exec(s);
  return m ? m.index : -1;
}

export function codePointName(s: string, at: number): string {
  return 'U+' + s.codePointAt(at)!.toString(16).toUpperCase().padStart(4, '0');
}

/** A key rendered for an error message: short, harmless characters only. */
export function describeKey(k: string): string {
  return /^[A-Za-z0-9_.-]{1,40}$/.test(k) ? `"${k}"` : 'a key';
}

export function checkString(s: string, limits: CodecLimits): string {
  if (s.length > limits.maxStringLength) throw new CodecError('too-large', `a string is longer than ${limits.maxStringLength} characters`);
  const bad = badCharIndex(s);
  if (bad >= 0) throw new CodecError('value', `a string contains ${codePointName(s, bad)}, which RPC strings may not hold`);
  return s;
}

export function checkKey(k: string): string {
  if (k.length === 0 || k.length > MAX_KEY_LENGTH) throw new CodecError('value', `keys must be 1 to ${MAX_KEY_LENGTH} characters long`);
  if (FORBIDDEN_KEYS.has(k)) throw new CodecError('value', `the key "${k}" is not allowed`);
  if (RESERVED_KEYS.has(k)) throw new CodecError('value', `the key "${k}" is reserved for JSON binary and date values`);
  const bad = badCharIndex(k);
  if (bad >= 0) throw new CodecError('value', `a key contains ${codePointName(k, bad)}, which RPC strings may not hold`);
  return k;
}

export function checkNumber(n: number): number {
  if (!Number.isFinite(n)) throw new CodecError('value', 'numbers must be finite');
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) throw new CodecError('value', 'an integer beyond ±(2^53 - 1) cannot be carried exactly');
  return n;
}

/** Counts values against maxItems while one document is decoded. */
export class ItemBudget {
  private used = 0;
  constructor(private readonly limit: number) {}
  take(): void {
    if (++this.used > this.limit) throw new CodecError('too-large', `more than ${this.limit} values in one document`);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** Size check before anything else, then strict UTF-8 (a leading BOM is dropped). */
export function toText(body: Buffer | Uint8Array | string, limits: CodecLimits): string {
  if (typeof body === 'string') {
    if (body.length > limits.maxBytes || Buffer.byteLength(body) > limits.maxBytes) throw new CodecError('too-large', `body larger than ${limits.maxBytes} bytes`);
    return body.charCodeAt(0) === 0xfeff ? body.slice(1) : body;
  }
  if (!(body instanceof Uint8Array)) throw new CodecError('parse', 'body must be bytes or text');
  if (body.length > limits.maxBytes) throw new CodecError('too-large', `body larger than ${limits.maxBytes} bytes`);
  try {
    return utf8.decode(body);
  } catch {
    throw new CodecError('parse', 'body is not valid UTF-8');
  }
}

// ---- dates and binary -------------------------------------------------------------

/** Builds a UTC date, refusing out-of-range fields (no silent roll-over). */
export function utcDate(y: number, mo: number, d: number, h: number, mi: number, s: number): Date {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) throw new CodecError('value', 'a date-time field is out of range');
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  if (date.getUTCDate() !== d) throw new CodecError('value', 'a date-time names a day that does not exist');
  return date;
}

/** The fields of a date for the wire, zero-padded: year, month, day, hour, minute, second. */
export function utcFields(v: Date): [string, string, string, string, string, string] {
  if (!Number.isFinite(v.getTime())) throw new CodecError('value', 'an invalid Date cannot be sent');
  const y = v.getUTCFullYear();
  if (y < 0 || y > 9999) throw new CodecError('value', 'dates must fall in the years 0000 to 9999');
  const two = (n: number) => String(n).padStart(2, '0');
  return [String(y).padStart(4, '0'), two(v.getUTCMonth() + 1), two(v.getUTCDate()), two(v.getUTCHours()), two(v.getUTCMinutes()), two(v.getUTCSeconds())];
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Canonical padded base64 (RFC 4648 section 4); the caller strips whitespace. */
export function decodeBase64(s: string, limits: CodecLimits): Buffer {
  if (s.length % 4 !== 0 || !BASE64.test(s)) throw new CodecError('value', 'invalid base64 data');
  if ((s.length / 4) * 3 > limits.maxStringLength + 2) throw new CodecError('too-large', `a binary value is longer than ${limits.maxStringLength} bytes`);
  return Buffer.from(s, 'base64');
}

export function isBinary(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array;
}

/** Plain objects only: a literal, or one with a null prototype. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object') return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/** Copies null-prototype objects into ordinary ones (for display and comparisons). */
export function toPlain(v: WireValue): WireValue {
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Date)) {
    const out: Record<string, WireValue> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}

/**
 * Walks a value that is about to be encoded and checks it is a WireValue that
 * both wires can carry. Depth 0 is the param itself (args, options, result);
 * nesting is bounded, so a cycle ends in a CodecError.
 */
export function checkEncodable(v: unknown, depth: number, maxDepth: number): void {
  if (v === null || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    checkNumber(v);
    return;
  }
  if (typeof v === 'string') {
    const bad = badCharIndex(v);
    if (bad >= 0) throw new CodecError('value', `a string contains ${codePointName(v, bad)}, which RPC strings may not hold`);
    return;
  }
  if (isBinary(v)) return;
  if (v instanceof Date) {
    utcFields(v);
    return;
  }
  if (depth >= maxDepth) throw new CodecError('too-deep', `values nested deeper than ${maxDepth}`);
  if (Array.isArray(v)) {
    for (const x of v) checkEncodable(x, depth + 1, maxDepth);
    return;
  }
  if (isPlainObject(v)) {
    for (const k of Object.keys(v)) {
      checkKey(k);
      checkEncodable(v[k], depth + 1, maxDepth);
    }
    return;
  }
  throw new CodecError('value', `a value of type ${v === undefined ? 'undefined' : typeof v === 'object' ? ((v as { constructor?: { name?: string } }).constructor?.name ?? 'object') : typeof v} cannot be sent`);
}

/** An error about to be encoded: integer code, text name and message, and a data object. */
export function checkError(e: RpcError, maxDepth: number): Record<string, WireValue> {
  if (!Number.isSafeInteger(e.code)) throw new CodecError('value', 'an error code must be an integer');
  checkEncodable(e.name, 0, maxDepth);
  checkEncodable(e.message, 0, maxDepth);
  const data = e.data ?? {};
  if (!isPlainObject(data)) throw new CodecError('value', 'error data must be an object');
  checkEncodable(data, 0, maxDepth);
  return data;
}
