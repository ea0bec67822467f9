/**
 * The RPC wire model shared by the JSON-RPC and XML-RPC codecs, server and
 * client side. Envelopes as in ARCHITECTURE.md: a request is a method name
 * with two params (positional arguments, named options); a response carries
 * result or error, the id, the authenticated principal and the server version.
 */
export type WireValue = null | boolean | number | string | Buffer | Date | WireValue[] | { [k: string]: WireValue };

export interface RpcRequest {
  method: string;
  args: WireValue[];
  options: Record<string, WireValue>;
  /** JSON-RPC only; null for XML-RPC */
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

export type CodecFailure = 'parse' | 'envelope' | 'too-large' | 'too-deep' | 'value';

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
  maxBytes: number;
  maxDepth: number;
  maxStringLength: number;
  maxItems: number;
}

export const defaultLimits: CodecLimits = {
  maxBytes: 1024 * 1024,
  maxDepth: 32,
  maxStringLength: 256 * 1024,
  maxItems: 10_000,
};

export const METHOD_NAME = /^[a-z][a-z0-9_]{0,63}$/;

/** Keys that must never become object properties (prototype pollution). */
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

export function toText(body: Buffer | string, limits: CodecLimits): string {
  const size = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  if (size > limits.maxBytes) throw new CodecError('too-large', `request body larger than ${limits.maxBytes} bytes`);
  if (typeof body === 'string') return body;
  const text = body.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(body)) throw new CodecError('parse', 'request body is not valid UTF-8');
  return text;
}

/** Counts values, checks sizes, and returns a copy with null-prototype objects. */
export function checkValue(v: unknown, limits: CodecLimits, depth = 0, budget = { items: 0 }): WireValue {
  if (depth > limits.maxDepth) throw new CodecError('too-deep', `values nested deeper than ${limits.maxDepth}`);
  if (++budget.items > limits.maxItems) throw new CodecError('too-large', `more than ${limits.maxItems} values`);
  if (v === null || typeof v === 'boolean') return v;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new CodecError('value', 'numbers must be finite');
    return v;
  }
  if (typeof v === 'string') {
    if (v.length > limits.maxStringLength) throw new CodecError('too-large', `a string is longer than ${limits.maxStringLength}`);
    return v;
  }
  if (Buffer.isBuffer(v) || v instanceof Date) return v;
  if (Array.isArray(v)) return v.map((x) => checkValue(x, limits, depth + 1, budget));
  if (typeof v === 'object') {
    const out = Object.create(null) as Record<string, WireValue>;
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (FORBIDDEN_KEYS.has(k)) throw new CodecError('value', `the key "${k}" is not allowed`);
      if (k.length > 256) throw new CodecError('value', 'a key is longer than 256 characters');
      out[k] = checkValue(x, limits, depth + 1, budget);
    }
    return out;
  }
  throw new CodecError('value', `unsupported value of type ${typeof v}`);
}

/** Validates the [args, options] pair of a request. */
export function requestFrom(method: unknown, params: unknown, id: WireValue): RpcRequest {
  if (typeof method !== 'string' || !METHOD_NAME.test(method)) throw new CodecError('envelope', 'method must be a command name such as "idp_add"');
  if (!Array.isArray(params) || params.length < 1 || params.length > 2) throw new CodecError('envelope', 'params must be [args, options]');
  const [args, options] = params as [unknown, unknown];
  if (!Array.isArray(args)) throw new CodecError('envelope', 'params[0] (arguments) must be an array');
  if (options !== undefined && (options === null || typeof options !== 'object' || Array.isArray(options) || Buffer.isBuffer(options) || options instanceof Date)) {
    throw new CodecError('envelope', 'params[1] (options) must be an object');
  }
  return { method, args: args as WireValue[], options: (options ?? Object.create(null)) as Record<string, WireValue>, id };
}

/** Copies null-prototype objects into ordinary ones (for client-side results). */
export function toPlain(v: WireValue): WireValue {
  if (Array.isArray(v)) return v.map(toPlain);
  if (v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Date)) {
    const out: Record<string, WireValue> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toPlain(x);
    return out;
  }
  return v;
}
