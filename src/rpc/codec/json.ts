/**
 * JSON-RPC codec (ARCHITECTURE.md envelopes). Binary values travel as
 * {"__base64__": "..."} and times as {"__datetime__": "YYYYMMDDHHMMSSZ"}.
 * Nesting depth is checked by a linear scan before JSON.parse so a deeply
 * nested body cannot exhaust the stack.
 */
import { checkValue, CodecError, defaultLimits, requestFrom, toPlain, toText, type CodecLimits, type RpcRequest, type RpcResponse, type WireValue } from './types.js';

function checkDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth + 3) throw new CodecError('too-deep', `JSON nested deeper than ${maxDepth}`);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

function parseJson(body: Buffer | string, limits: CodecLimits): unknown {
  const text = toText(body, limits);
  checkDepth(text, limits.maxDepth);
  try {
    return JSON.parse(text);
  } catch (e) {
    const m = /position (\d+)/.exec(e instanceof Error ? e.message : '');
    throw new CodecError('parse', m ? `invalid JSON at position ${m[1]}` : 'invalid JSON');
  }
}

/** Turns the JSON special objects back into Buffers and Dates. */
function revive(v: WireValue): WireValue {
  if (Array.isArray(v)) return v.map(revive);
  if (v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Date)) {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === '__base64__') {
      const s = v.__base64__;
      if (typeof s !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new CodecError('value', 'invalid __base64__ value');
      return Buffer.from(s, 'base64');
    }
    if (keys.length === 1 && keys[0] === '__datetime__') {
      const s = v.__datetime__;
      const m = typeof s === 'string' ? /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s) : null;
      if (!m) throw new CodecError('value', 'invalid __datetime__ value');
      return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
    }
    const out = Object.create(null) as Record<string, WireValue>;
    for (const k of keys) out[k] = revive((v as Record<string, WireValue>)[k]!);
    return out;
  }
  return v;
}

function toJsonable(v: WireValue): unknown {
  if (Buffer.isBuffer(v)) return { __base64__: v.toString('base64') };
  if (v instanceof Date) return { __datetime__: v.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z' };
  if (Array.isArray(v)) return v.map(toJsonable);
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = toJsonable(x);
    return out;
  }
  return v;
}

export function decodeJsonRequest(body: Buffer | string, limits: CodecLimits = defaultLimits): RpcRequest {
  const raw = parseJson(body, limits);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new CodecError('envelope', 'the request must be a JSON object');
  const checked = checkValue(raw, limits) as Record<string, WireValue>;
  const id = checked.id ?? null;
  const req = requestFrom(checked.method, checked.params, id);
  return { ...req, args: req.args.map(revive), options: revive(req.options) as Record<string, WireValue> };
}

export function encodeJsonResponse(res: RpcResponse): string {
  return JSON.stringify({
    result: toJsonable(res.result),
    error: res.error ? { code: res.error.code, name: res.error.name, message: res.error.message, data: toJsonable(res.error.data ?? {}) } : null,
    id: toJsonable(res.id),
    principal: res.principal,
    version: res.version,
  });
}

export function encodeJsonRequest(req: RpcRequest): string {
  return JSON.stringify({ method: req.method, params: [toJsonable(req.args), toJsonable(req.options)], id: toJsonable(req.id) });
}

export function decodeJsonResponse(body: Buffer | string, limits: CodecLimits = { ...defaultLimits, maxBytes: 64 * 1024 * 1024, maxItems: 10_000_000 }): RpcResponse {
  const raw = parseJson(body, limits);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new CodecError('envelope', 'the response must be a JSON object');
  const v = checkValue(raw, limits) as Record<string, WireValue>;
  const e = v.error as Record<string, WireValue> | null | undefined;
  let error: RpcResponse['error'] = null;
  if (e) {
    if (typeof e.code !== 'number' || typeof e.message !== 'string') throw new CodecError('envelope', 'malformed error object');
    error = { code: e.code, name: typeof e.name === 'string' ? e.name : 'Error', message: e.message, data: toPlain(revive(e.data ?? {})) as Record<string, WireValue> };
  }
  return {
    result: toPlain(revive(v.result ?? null)),
    error,
    id: v.id ?? null,
    principal: typeof v.principal === 'string' ? v.principal : null,
    version: typeof v.version === 'string' ? v.version : '',
  };
}
