/**
 * JSON-RPC codec (docs/architecture.md envelopes; JSON text per RFC 8259).
 * Request `{"method":"idp_add","params":[[args...],{options}],"id":N}` (the
 * options object may be left out); response
 * `{"result":...,"error":null|{"code","name","message","data"},"id","principal","version"}`.
 * Binary values travel as `{"__base64__":"..."}`, dates as
 * `{"__datetime__":"YYYYMMDDHHMMSSZ"}`.
 *
 * The parser is our own and iterative (an explicit stack, no recursion), so a
 * body of ten thousand `[` costs nothing; it checks every limit while it reads,
 * reports the position of a syntax error, refuses integers that a double
 * cannot hold exactly, and builds objects without touching prototypes.
 */
import {
  checkEncodable,
  checkError,
  checkKey,
  CodecError,
  codePointName,
  badCharIndex,
  decodeBase64,
  defaultLimits,
  describeKey,
  FORBIDDEN_KEYS,
  isBinary,
  isPlainObject,
  ItemBudget,
  MAX_KEY_LENGTH,
  METHOD_NAME,
  RESERVED_KEYS,
  resolveLimits,
  responseLimits,
  toText,
  utcDate,
  utcFields,
  type CodecLimits,
  type RpcError,
  type RpcRequest,
  type RpcResponse,
  type WireValue,
} from './types.js';

// ---- parsing ------------------------------------------------------------------------

type Container = { kind: 'array'; items: WireValue[] } | { kind: 'object'; members: Record<string, WireValue>; key: string };

const WHITESPACE = /[ \t\n\r]*/y;
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9A-Fa-f]{4}$/;
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const DATETIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/;

class JsonReader {
  private i = 0;
  private readonly budget: ItemBudget;

  constructor(
    private readonly text: string,
    private readonly limits: CodecLimits,
    /** nesting the envelope adds above a param's own containers */
    private readonly envelopeDepth: number,
    private readonly nullPrototype: boolean,
  ) {
    this.budget = new ItemBudget(limits.maxItems);
  }

  private fail(what: string, at = this.i): never {
    if (at >= this.text.length) throw new CodecError('parse', `invalid JSON at position ${at}: unexpected end of input, ${what}`);
    throw new CodecError('parse', `invalid JSON at position ${at}: ${what}`);
  }

  private skipWhitespace(): number {
    WHITESPACE.lastIndex = this.i;
    WHITESPACE.exec(this.text);
    this.i = WHITESPACE.lastIndex;
    return this.text.charCodeAt(this.i);
  }

  private newObject(): Record<string, WireValue> {
    return this.nullPrototype ? (Object.create(null) as Record<string, WireValue>) : {};
  }

  private readString(maxLength: number, what: string): string {
    const start = this.i;
    let out = '';
    let j = start + 1;
    for (;;) {
      STRING_RUN.lastIndex = j;
      STRING_RUN.exec(this.text);
      out += this.text.slice(j, STRING_RUN.lastIndex);
      j = STRING_RUN.lastIndex;
      if (out.length > maxLength) throw new CodecError('too-large', `${what} at position ${start} is longer than ${maxLength} characters`);
      const c = this.text.charCodeAt(j);
      if (c === 0x22) break;
      if (c === 0x5c) {
        const e = this.text[j + 1];
        if (e === 'u') {
          const hex = this.text.slice(j + 2, j + 6);
          if (!HEX4.test(hex)) this.fail('invalid \\u escape', j);
          out += String.fromCharCode(parseInt(hex, 16));
          j += 6;
        } else if (e !== undefined && ESCAPES[e] !== undefined) {
          out += ESCAPES[e];
          j += 2;
        } else this.fail('invalid escape in a string', j);
      } else if (Number.isNaN(c)) this.fail('unterminated string', j);
      else this.fail('control character in a string (escape it)', j);
    }
    this.i = j + 1;
    const bad = badCharIndex(out);
    if (bad >= 0) throw new CodecError('value', `${what} at position ${start} contains ${codePointName(out, bad)}, which RPC strings may not hold`);
    return out;
  }

  private readNumber(): number {
    const start = this.i;
    NUMBER.lastIndex = start;
    const m = NUMBER.exec(this.text);
    if (!m) this.fail('expected a value');
    this.i = NUMBER.lastIndex;
    const n = Number(m[0]);
    if (m[1] === undefined && m[2] === undefined && !Number.isSafeInteger(n)) {
      throw new CodecError('value', `the integer at position ${start} is beyond ±(2^53 - 1) and cannot be carried exactly`);
    }
    if (!Number.isFinite(n)) throw new CodecError('value', `the number at position ${start} is out of range`);
    return n;
  }

  private readKey(container: { members: Record<string, WireValue>; key: string }): void {
    if (this.skipWhitespace() !== 0x22) this.fail('expected a member name in double quotes');
    const at = this.i;
    const key = this.readString(MAX_KEY_LENGTH, 'a member name');
    if (key.length === 0) throw new CodecError('value', `empty member name at position ${at}`);
    if (FORBIDDEN_KEYS.has(key)) throw new CodecError('value', `the key "${key}" is not allowed (position ${at})`);
    if (Object.hasOwn(container.members, key)) throw new CodecError('value', `duplicate member ${describeKey(key)} at position ${at}`);
    if (this.skipWhitespace() !== 0x3a) this.fail("expected ':' after a member name");
    this.i++;
    container.key = key;
  }

  /** The JSON forms of binary and date values; any other object is checked for reserved keys. */
  private finishObject(members: Record<string, WireValue>, at: number): WireValue {
    const keys = Object.keys(members);
    if (!keys.some((k) => RESERVED_KEYS.has(k))) return members;
    if (keys.length !== 1) throw new CodecError('value', `the object at position ${at} mixes a reserved key with other members`);
    const v = members[keys[0]!];
    if (keys[0] === '__base64__') {
      if (typeof v !== 'string') throw new CodecError('value', `__base64__ at position ${at} must be a string`);
      return decodeBase64(v, this.limits);
    }
    const m = typeof v === 'string' ? DATETIME.exec(v) : null;
    if (!m) throw new CodecError('value', `__datetime__ at position ${at} must look like YYYYMMDDHHMMSSZ`);
    return utcDate(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
  }

  read(): WireValue {
    const stack: Container[] = [];
    const openedAt: number[] = [];
    const maxNesting = this.limits.maxDepth + this.envelopeDepth;
    let value: WireValue;
    for (;;) {
      // one value starts here
      const c = this.skipWhitespace();
      this.budget.take();
      if (c === 0x7b || c === 0x5b) {
        if (stack.length + 1 > maxNesting) throw new CodecError('too-deep', `JSON nested deeper than ${this.limits.maxDepth} inside the envelope (position ${this.i})`);
        const at = this.i++;
        const closer = c === 0x7b ? 0x7d : 0x5d;
        if (this.skipWhitespace() === closer) {
          this.i++;
          value = c === 0x7b ? this.newObject() : [];
        } else {
          if (c === 0x7b) {
            const frame = { kind: 'object' as const, members: this.newObject(), key: '' };
            this.readKey(frame);
            stack.push(frame);
          } else stack.push({ kind: 'array', items: [] });
          openedAt.push(at);
          continue;
        }
      } else if (c === 0x22) value = this.readString(this.limits.maxStringLength, 'a string');
      else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) value = this.readNumber();
      else if (this.text.startsWith('true', this.i)) (value = true), (this.i += 4);
      else if (this.text.startsWith('false', this.i)) (value = false), (this.i += 5);
      else if (this.text.startsWith('null', this.i)) (value = null), (this.i += 4);
      else this.fail('expected a value');

      // the value is complete: hand it to the enclosing containers that it completes
      for (;;) {
        const top = stack[stack.length - 1];
        if (!top) {
          if (!Number.isNaN(this.skipWhitespace())) this.fail('unexpected data after the end of the document');
          return value;
        }
        if (top.kind === 'array') top.items.push(value);
        else top.members[top.key] = value;
        const d = this.skipWhitespace();
        if (d === 0x2c) {
          this.i++;
          if (top.kind === 'object') this.readKey(top);
          break;
        }
        if (d !== (top.kind === 'array' ? 0x5d : 0x7d)) this.fail(top.kind === 'array' ? "expected ',' or ']'" : "expected ',' or '}'");
        this.i++;
        stack.pop();
        const at = openedAt.pop()!;
        value = top.kind === 'array' ? top.items : this.finishObject(top.members, at);
      }
    }
  }
}

function parse(body: Buffer | Uint8Array | string, limits: CodecLimits, envelopeDepth: number, nullPrototype: boolean): WireValue {
  const text = toText(body, limits);
  return new JsonReader(text, limits, envelopeDepth, nullPrototype).read();
}

function isStruct(v: WireValue | undefined): v is Record<string, WireValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) && !(v instanceof Date);
}

function checkMembers(o: Record<string, WireValue>, allowed: readonly string[], what: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw new CodecError('envelope', `unknown member ${describeKey(k)} in the ${what} (expected ${allowed.join(', ')})`);
  }
}

// ---- server side --------------------------------------------------------------------

/** Decodes `{"method", "params": [args, options?], "id"}`; objects come back with a null prototype. */
export function decodeJsonRequest(body: Buffer | Uint8Array | string, limits?: Partial<CodecLimits>): RpcRequest {
  const raw = parse(body, resolveLimits(limits, defaultLimits), 2, true);
  if (!isStruct(raw)) throw new CodecError('envelope', 'the request must be a JSON object');
  checkMembers(raw, ['method', 'params', 'id'], 'request');
  const { method, params } = raw;
  const id = raw.id ?? null;
  if (typeof method !== 'string' || !METHOD_NAME.test(method)) throw new CodecError('envelope', 'method must be a command name such as "idp_add"');
  if (!Array.isArray(params) || params.length < 1 || params.length > 2) throw new CodecError('envelope', 'params must be [args, options]');
  const [args, options] = params;
  if (!Array.isArray(args)) throw new CodecError('envelope', 'params[0] (the arguments) must be an array');
  if (options !== undefined && !isStruct(options)) throw new CodecError('envelope', 'params[1] (the options) must be an object');
  if (id !== null && typeof id !== 'number' && typeof id !== 'string') throw new CodecError('envelope', 'id must be a number, a string or null');
  for (const k of Object.keys(options ?? {})) checkKey(k);
  return { method, args, options: options ?? (Object.create(null) as Record<string, WireValue>), id };
}

export function encodeJsonResponse(res: RpcResponse, limits?: Partial<CodecLimits>): string {
  const { maxDepth } = resolveLimits(limits, defaultLimits);
  checkEncodable(res.result, 0, maxDepth);
  checkEncodable(res.id, 0, maxDepth);
  let error = 'null';
  if (res.error) {
    const data = checkError(res.error, maxDepth);
    error = `{"code":${res.error.code},"name":${JSON.stringify(res.error.name)},"message":${JSON.stringify(res.error.message)},"data":${write(data)}}`;
  }
  if (res.principal !== null) checkEncodable(res.principal, 0, maxDepth);
  checkEncodable(res.version, 0, maxDepth);
  return `{"result":${write(res.result)},"error":${error},"id":${write(res.id)},"principal":${res.principal === null ? 'null' : JSON.stringify(res.principal)},"version":${JSON.stringify(res.version)}}`;
}

// ---- client side --------------------------------------------------------------------

export function encodeJsonRequest(req: RpcRequest, limits?: Partial<CodecLimits>): string {
  const { maxDepth } = resolveLimits(limits, defaultLimits);
  if (!METHOD_NAME.test(req.method)) throw new CodecError('envelope', 'method must be a command name such as "idp_add"');
  if (!Array.isArray(req.args)) throw new CodecError('envelope', 'the arguments must be an array');
  if (!isPlainObject(req.options)) throw new CodecError('envelope', 'the options must be an object');
  if (req.id !== null && typeof req.id !== 'number' && typeof req.id !== 'string') throw new CodecError('envelope', 'id must be a number, a string or null');
  checkEncodable(req.args, 0, maxDepth);
  checkEncodable(req.options, 0, maxDepth);
  checkEncodable(req.id, 0, maxDepth);
  return `{"method":${JSON.stringify(req.method)},"params":[${write(req.args)},${write(req.options)}],"id":${write(req.id)}}`;
}

/** Decodes a server's answer; every envelope member must be present and well typed. */
export function decodeJsonResponse(body: Buffer | Uint8Array | string, limits?: Partial<CodecLimits>): RpcResponse {
  const raw = parse(body, resolveLimits(limits, responseLimits), 2, false);
  if (!isStruct(raw)) throw new CodecError('envelope', 'the response must be a JSON object');
  for (const k of ['result', 'error', 'id', 'principal', 'version']) {
    if (!Object.hasOwn(raw, k)) throw new CodecError('envelope', `the response has no "${k}" member`);
  }
  const { result, error: e, id, principal, version } = raw as Record<string, WireValue>;
  if (principal !== null && typeof principal !== 'string') throw new CodecError('envelope', 'principal must be a string or null');
  if (typeof version !== 'string') throw new CodecError('envelope', 'version must be a string');
  let error: RpcError | null = null;
  if (e !== null) {
    if (!isStruct(e)) throw new CodecError('envelope', 'error must be an object or null');
    const { code, name, message, data } = e;
    if (typeof code !== 'number' || !Number.isSafeInteger(code)) throw new CodecError('envelope', 'error.code must be an integer');
    if (typeof name !== 'string' || typeof message !== 'string') throw new CodecError('envelope', 'error.name and error.message must be strings');
    if (data !== undefined && data !== null && !isStruct(data)) throw new CodecError('envelope', 'error.data must be an object');
    error = { code, name, message, data: data ?? {} };
  }
  return { result: result!, error, id: id!, principal: principal!, version };
}

// ---- writing ------------------------------------------------------------------------

/** Serializes a value already accepted by checkEncodable. */
function write(v: WireValue | Uint8Array): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (isBinary(v)) return `{"__base64__":"${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}"}`;
  if (v instanceof Date) return `{"__datetime__":"${utcFields(v).join('')}Z"}`;
  if (Array.isArray(v)) return `[${v.map(write).join(',')}]`;
  return `{${Object.keys(v)
    .map((k) => `${JSON.stringify(k)}:${write(v[k]!)}`)
    .join(',')}}`;
}
