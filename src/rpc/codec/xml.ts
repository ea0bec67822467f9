/**
 * XML-RPC codec (the XML-RPC specification, http://xmlrpc.com/spec.md, with
 * the common <nil/> and <i8> extensions). A request is a methodCall with two
 * params: an array of arguments and a struct of options (Python's
 * `ServerProxy.ping()` sends none: empty arguments and options). A response
 * carries one struct {result, principal, version}; an error is a fault whose
 * faultCode is the public error number, with the members error_name and
 * error_data (and principal, version) besides faultString.
 *
 * Input is guarded before fast-xml-parser sees it: a linear scan refuses any
 * DOCTYPE, ENTITY or other `<!` declaration (no XXE, no entity expansion),
 * bounds element nesting and count, and refuses characters XML 1.0 forbids.
 * Line ends are normalized as XML 1.0 section 2.11 says; entity references are
 * decoded here, and only the five predefined ones and numeric character
 * references exist. Text inside <string> and bare <value> is kept exactly.
 *
 * Output: strings that hold characters XML 1.0 cannot carry are refused with
 * a CodecError (not replaced, not silently turned into base64: the caller
 * should send binary data as a Buffer); CR is written as &#13; so it survives.
 * Dates are written in the specification's form YYYYMMDDTHH:MM:SS and are UTC.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import {
  badCharIndex,
  checkEncodable,
  checkError,
  checkKey,
  checkString,
  CodecError,
  codePointName,
  decodeBase64,
  defaultLimits,
  describeKey,
  isBinary,
  isPlainObject,
  ItemBudget,
  METHOD_NAME,
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

type Node = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  trimValues: false,
  parseTagValue: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
});

// ---- guard and parse ----------------------------------------------------------------

/** Element levels a value adds (<value><array><data>, <value><struct><member>) and the envelope's. */
const ELEMENTS_PER_LEVEL = 3;
const ENVELOPE_ELEMENTS = 8;

function scan(text: string, limits: CodecLimits): void {
  const bad = badCharIndex(text);
  if (bad >= 0) throw new CodecError('parse', `the body contains ${codePointName(text, bad)} at position ${bad}, which XML does not allow`);
  const maxNesting = limits.maxDepth * ELEMENTS_PER_LEVEL + ENVELOPE_ELEMENTS;
  const maxElements = limits.maxItems * 4 + 16;
  let depth = 0;
  let elements = 0;
  // every <value> is one item of the document's budget: too many are refused here, before the parser builds them all
  let values = 0;
  let i = 0;
  for (;;) {
    const lt = text.indexOf('<', i);
    if (lt < 0) return;
    const skipTo = (closer: string, what: string): number => {
      const end = text.indexOf(closer, lt + 2);
      if (end < 0) throw new CodecError('parse', `invalid XML at position ${lt}: unterminated ${what}`);
      return end + closer.length;
    };
    if (text.startsWith('<!--', lt)) i = skipTo('-->', 'comment');
    else if (text.startsWith('<![CDATA[', lt)) i = skipTo(']]>', 'CDATA section');
    else if (text.startsWith('<?', lt)) {
      i = skipTo('?>', 'processing instruction');
      const decl = /^<\?xml\s[^?]*?encoding\s*=\s*["']([^"']*)["']/.exec(text.slice(lt, i));
      if (decl && !/^utf-?8$/i.test(decl[1]!)) throw new CodecError('parse', 'the body must be UTF-8');
    } else if (text.startsWith('<!', lt)) {
      throw new CodecError('parse', 'DOCTYPE, ENTITY and other declarations are not allowed');
    } else if (text[lt + 1] === '/') {
      depth--;
      i = skipTo('>', 'end tag');
    } else {
      // a start tag: find its '>' outside quoted attribute values
      let j = lt + 1;
      let quote = '';
      for (; j < text.length; j++) {
        const c = text[j];
        if (quote) {
          if (c === quote) quote = '';
        } else if (c === '"' || c === "'") quote = c;
        else if (c === '>') break;
      }
      if (j >= text.length) throw new CodecError('parse', `invalid XML at position ${lt}: unterminated tag`);
      if (++elements > maxElements) throw new CodecError('too-large', `more than ${maxElements} XML elements`);
      if (text.startsWith('value', lt + 1) && /[\s/>]/.test(text[lt + 6] ?? '') && ++values > limits.maxItems) throw new CodecError('too-large', `more than ${limits.maxItems} values in one document`);
      if (text[j - 1] !== '/' && ++depth > maxNesting) throw new CodecError('too-deep', `XML nested deeper than ${limits.maxDepth} values`);
      i = j + 1;
    }
  }
}

const VALIDATOR_FAULTS: Record<string, string> = {
  InvalidTag: 'a tag is malformed, unclosed or does not match its start tag',
  InvalidAttr: 'an attribute is malformed',
  InvalidChar: 'a character is out of place',
  InvalidXml: 'the body is not one well-formed element',
};

function parseXml(body: Buffer | Uint8Array | string, limits: CodecLimits): Node[] {
  const text = toText(body, limits).replace(/\r\n?/g, '\n');
  scan(text, limits);
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    // the validator's own text may quote the body; say what kind of fault it is and where
    const where = typeof valid.err.col === 'number' ? `line ${valid.err.line}, column ${valid.err.col}` : `line ${valid.err.line}`;
    throw new CodecError('parse', `invalid XML at ${where}: ${VALIDATOR_FAULTS[valid.err.code] ?? 'not well-formed'}`);
  }
  try {
    return parser.parse(text) as Node[];
  } catch {
    throw new CodecError('parse', 'invalid XML');
  }
}

// ---- tree helpers -------------------------------------------------------------------

function tagOf(n: Node): string {
  for (const k of Object.keys(n)) if (k !== ':@') return k;
  return '';
}

function describeTag(t: string): string {
  return /^[A-Za-z0-9_.:-]{1,40}$/.test(t) ? `<${t}>` : 'an element';
}

function childrenOf(n: Node): Node[] {
  const c = n[tagOf(n)];
  return Array.isArray(c) ? (c as Node[]) : [];
}

/** Element children; whitespace and comments between them are ignored, other text is an error. */
function elementsOf(n: Node, where: string): Node[] {
  const out: Node[] = [];
  for (const c of childrenOf(n)) {
    const t = tagOf(c);
    if (t === '#comment') continue;
    if (t === '#text') {
      if (/[^ \t\n]/.test(String(c['#text']))) throw new CodecError('envelope', `unexpected text in <${where}>`);
      continue;
    }
    if (t === '#cdata') throw new CodecError('envelope', `unexpected CDATA in <${where}>`);
    out.push(c);
  }
  return out;
}

const REFERENCE = /&(?:#x([0-9A-Fa-f]{1,6})|#([0-9]{1,7})|(lt|gt|amp|quot|apos));/g;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

function decodeReferences(s: string): string {
  if (!s.includes('&')) return s;
  const stray = s.replace(REFERENCE, '').indexOf('&');
  if (stray >= 0) throw new CodecError('parse', 'unknown or malformed entity reference (only &lt; &gt; &amp; &quot; &apos; and &#N; exist)');
  return s.replace(REFERENCE, (_m, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (name) return PREDEFINED[name]!;
    const cp = parseInt(hex ?? dec!, hex ? 16 : 10);
    const ch = cp <= 0x10ffff ? String.fromCodePoint(cp) : '';
    if (!ch || badCharIndex(ch) >= 0) throw new CodecError('parse', 'a character reference names a character XML does not allow');
    return ch;
  });
}

/** Character data of an element that may hold only text, CDATA and comments. */
function textOf(n: Node, where: string): string {
  let s = '';
  for (const c of childrenOf(n)) {
    const t = tagOf(c);
    if (t === '#text') s += decodeReferences(String(c['#text']));
    else if (t === '#cdata') for (const x of c['#cdata'] as Node[]) s += String(x['#text'] ?? '');
    else if (t !== '#comment') throw new CodecError('envelope', `unexpected ${describeTag(t)} inside <${where}>`);
  }
  return s;
}

function only(n: Node, tag: string, where: string): Node {
  const els = elementsOf(n, where);
  if (els.length !== 1 || tagOf(els[0]!) !== tag) throw new CodecError('envelope', `<${where}> must hold exactly one <${tag}>`);
  return els[0]!;
}

// ---- values -------------------------------------------------------------------------

const I4 = /^[+-]?[0-9]{1,10}$/;
const I8 = /^[+-]?[0-9]{1,19}$/;
const DOUBLE = /^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?$/;
const DATETIME = /^(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})(?:Z|[+-]00:?00)?$/;

class ValueReader {
  private readonly budget: ItemBudget;
  constructor(
    private readonly limits: CodecLimits,
    private readonly nullPrototype: boolean,
  ) {
    this.budget = new ItemBudget(limits.maxItems);
  }

  /** `depth` is the level this value has if it is an array or struct. */
  value(valueNode: Node, depth: number): WireValue {
    this.budget.take();
    const typed = elementsOfValue(valueNode);
    if (!typed) return checkString(textOf(valueNode, 'value'), this.limits);
    const t = tagOf(typed);
    const scalar = () => textOf(typed, t).trim();
    switch (t) {
      case 'string':
        return checkString(textOf(typed, t), this.limits);
      case 'int':
      case 'i4':
      case 'i8': {
        const s = scalar();
        if (!(t === 'i8' ? I8 : I4).test(s)) throw new CodecError('value', `invalid <${t}>: expected a decimal integer`);
        const n = Number(s);
        if (!Number.isSafeInteger(n)) throw new CodecError('value', 'an integer beyond ±(2^53 - 1) cannot be carried exactly');
        if (t !== 'i8' && (n > 2147483647 || n < -2147483648)) throw new CodecError('value', `<${t}> out of range: use <i8> beyond 32 bits`);
        return n;
      }
      case 'boolean': {
        const s = scalar();
        if (s !== '0' && s !== '1') throw new CodecError('value', '<boolean> must be 0 or 1');
        return s === '1';
      }
      case 'double': {
        const s = scalar();
        const n = Number(s);
        if (!DOUBLE.test(s) || !Number.isFinite(n)) throw new CodecError('value', 'invalid <double>');
        return n;
      }
      case 'nil':
        if (childrenOf(typed).length !== 0) throw new CodecError('value', '<nil/> must be empty');
        return null;
      case 'base64':
        return decodeBase64(textOf(typed, t).replace(/[ \t\n]+/g, ''), this.limits);
      case 'dateTime.iso8601': {
        const m = DATETIME.exec(scalar());
        if (!m) throw new CodecError('value', 'invalid <dateTime.iso8601>: expected YYYYMMDDTHH:MM:SS');
        return utcDate(+m[1]!, +m[2]!, +m[3]!, +m[4]!, +m[5]!, +m[6]!);
      }
      case 'array': {
        if (depth > this.limits.maxDepth) throw new CodecError('too-deep', `values nested deeper than ${this.limits.maxDepth}`);
        const data = only(typed, 'data', 'array');
        return elementsOf(data, 'data').map((v) => {
          if (tagOf(v) !== 'value') throw new CodecError('envelope', '<data> may only hold <value> elements');
          return this.value(v, depth + 1);
        });
      }
      case 'struct': {
        if (depth > this.limits.maxDepth) throw new CodecError('too-deep', `values nested deeper than ${this.limits.maxDepth}`);
        const out = this.nullPrototype ? (Object.create(null) as Record<string, WireValue>) : {};
        for (const m of elementsOf(typed, 'struct')) {
          if (tagOf(m) !== 'member') throw new CodecError('envelope', '<struct> may only hold <member> elements');
          const [nameNode, valueNode, ...rest] = elementsOf(m, 'member');
          if (!nameNode || !valueNode || rest.length || tagOf(nameNode) !== 'name' || tagOf(valueNode) !== 'value') {
            throw new CodecError('envelope', '<member> must hold one <name> and then one <value>');
          }
          const key = checkKey(textOf(nameNode, 'name'));
          if (Object.hasOwn(out, key)) throw new CodecError('value', `duplicate member ${describeKey(key)} in a <struct>`);
          out[key] = this.value(valueNode, depth + 1);
        }
        return out;
      }
      default:
        throw new CodecError('value', `unknown value type ${describeTag(t)}`);
    }
  }
}

/** The typed child of a <value>, or null when the value is bare text (a string). */
function elementsOfValue(valueNode: Node): Node | null {
  const children = childrenOf(valueNode);
  if (!children.some((c) => !['#text', '#cdata', '#comment'].includes(tagOf(c)))) return null;
  const els = elementsOf(valueNode, 'value');
  if (els.length !== 1) throw new CodecError('envelope', '<value> must hold one typed value');
  return els[0]!;
}

function isStruct(v: WireValue | undefined): v is Record<string, WireValue> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !Buffer.isBuffer(v) && !(v instanceof Date);
}

function documentRoot(nodes: Node[], tag: string): Node {
  const els = elementsOf({ '#document': nodes }, 'document');
  if (els.length !== 1 || tagOf(els[0]!) !== tag) throw new CodecError('envelope', `the document must be one <${tag}> element`);
  return els[0]!;
}

function paramValues(paramsNode: Node, reader: ValueReader, depth: number): WireValue[] {
  return elementsOf(paramsNode, 'params').map((p) => {
    if (tagOf(p) !== 'param') throw new CodecError('envelope', '<params> may only hold <param> elements');
    return reader.value(only(p, 'value', 'param'), depth);
  });
}

// ---- server side --------------------------------------------------------------------

/** Decodes a methodCall; objects come back with a null prototype; id is null. */
export function decodeXmlRequest(body: Buffer | Uint8Array | string, limits?: Partial<CodecLimits>): RpcRequest {
  const lim = resolveLimits(limits, defaultLimits);
  const call = documentRoot(parseXml(body, lim), 'methodCall');
  const parts = elementsOf(call, 'methodCall');
  const [nameNode, paramsNode, ...rest] = parts;
  if (!nameNode || tagOf(nameNode) !== 'methodName') throw new CodecError('envelope', '<methodCall> must start with <methodName>');
  if (!paramsNode || tagOf(paramsNode) !== 'params' || rest.length) throw new CodecError('envelope', '<methodCall> must hold <methodName> and then <params>');
  const method = textOf(nameNode, 'methodName').trim();
  if (!METHOD_NAME.test(method)) throw new CodecError('envelope', 'methodName must be a command name such as "idp_add"');
  const values = paramValues(paramsNode, new ValueReader(lim, true), 1);
  if (values.length > 2) throw new CodecError('envelope', 'params must be [args, options]: at most two <param>');
  const [args = [], options = Object.create(null) as Record<string, WireValue>] = values;
  if (!Array.isArray(args)) throw new CodecError('envelope', 'the first <param> (the arguments) must be an <array>');
  if (!isStruct(options)) throw new CodecError('envelope', 'the second <param> (the options) must be a <struct>');
  return { method, args, options, id: null };
}

export function encodeXmlResponse(res: RpcResponse, limits?: Partial<CodecLimits>): string {
  const { maxDepth } = resolveLimits(limits, defaultLimits);
  if (res.error) {
    const data = checkError(res.error, maxDepth);
    const fault: Record<string, WireValue> = {
      faultCode: res.error.code,
      faultString: res.error.message,
      error_name: res.error.name,
      error_data: data,
      principal: res.principal,
      version: res.version,
    };
    checkEncodable(fault, -1, maxDepth);
    return `${HEADER}<methodResponse><fault>${encodeValue(fault)}</fault></methodResponse>\n`;
  }
  const payload: Record<string, WireValue> = { result: res.result, principal: res.principal, version: res.version };
  checkEncodable(payload, -1, maxDepth);
  return `${HEADER}<methodResponse><params><param>${encodeValue(payload)}</param></params></methodResponse>\n`;
}

// ---- client side --------------------------------------------------------------------

export function encodeXmlRequest(req: RpcRequest, limits?: Partial<CodecLimits>): string {
  const { maxDepth } = resolveLimits(limits, defaultLimits);
  if (!METHOD_NAME.test(req.method)) throw new CodecError('envelope', 'method must be a command name such as "idp_add"');
  if (!Array.isArray(req.args)) throw new CodecError('envelope', 'the arguments must be an array');
  if (!isPlainObject(req.options)) throw new CodecError('envelope', 'the options must be an object');
  checkEncodable(req.args, 0, maxDepth);
  checkEncodable(req.options, 0, maxDepth);
  return `${HEADER}<methodCall><methodName>${req.method}</methodName><params><param>${encodeValue(req.args)}</param><param>${encodeValue(req.options)}</param></params></methodCall>\n`;
}

/** Decodes a methodResponse: the {result, principal, version} struct, or a fault as RpcError. */
export function decodeXmlResponse(body: Buffer | Uint8Array | string, limits?: Partial<CodecLimits>): RpcResponse {
  const lim = resolveLimits(limits, responseLimits);
  const response = documentRoot(parseXml(body, lim), 'methodResponse');
  const parts = elementsOf(response, 'methodResponse');
  const reader = new ValueReader(lim, false);
  if (parts.length === 1 && tagOf(parts[0]!) === 'fault') {
    const f = reader.value(only(parts[0]!, 'value', 'fault'), 0);
    if (!isStruct(f)) throw new CodecError('envelope', 'a fault must hold a <struct>');
    const { faultCode, faultString, error_name, error_data, principal, version } = f;
    if (typeof faultCode !== 'number' || !Number.isSafeInteger(faultCode)) throw new CodecError('envelope', 'faultCode must be an integer');
    if (typeof faultString !== 'string') throw new CodecError('envelope', 'faultString must be a string');
    if (error_name !== undefined && typeof error_name !== 'string') throw new CodecError('envelope', 'error_name must be a string');
    if (error_data !== undefined && !isStruct(error_data)) throw new CodecError('envelope', 'error_data must be a struct');
    const error: RpcError = { code: faultCode, name: error_name ?? 'Fault', message: faultString, data: error_data ?? {} };
    return { result: null, error, id: null, principal: typeof principal === 'string' ? principal : null, version: typeof version === 'string' ? version : '' };
  }
  if (parts.length !== 1 || tagOf(parts[0]!) !== 'params') throw new CodecError('envelope', '<methodResponse> must hold one <params> or one <fault>');
  const values = paramValues(parts[0]!, reader, 0);
  if (values.length !== 1) throw new CodecError('envelope', 'a response must hold exactly one <param>');
  const payload = values[0];
  if (!isStruct(payload)) throw new CodecError('envelope', 'the response <param> must be a <struct>');
  for (const k of ['result', 'principal', 'version']) {
    if (!Object.hasOwn(payload, k)) throw new CodecError('envelope', `the response has no "${k}" member`);
  }
  const { result, principal, version } = payload;
  if (principal !== null && typeof principal !== 'string') throw new CodecError('envelope', 'principal must be a string or nil');
  if (typeof version !== 'string') throw new CodecError('envelope', 'version must be a string');
  return { result: result!, error: null, id: null, principal: principal!, version };
}

// ---- writing ------------------------------------------------------------------------

const HEADER = "<?xml version='1.0' encoding='UTF-8'?>\n";

function escapeText(s: string): string {
  return s.replace(/[&<>\r]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&#13;'));
}

/** Writes a value already accepted by checkEncodable. */
function encodeValue(v: WireValue | Uint8Array): string {
  if (v === null) return '<value><nil/></value>';
  if (typeof v === 'boolean') return `<value><boolean>${v ? 1 : 0}</boolean></value>`;
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) return `<value><double>${v}</double></value>`;
    return v > 2147483647 || v < -2147483648 ? `<value><i8>${v}</i8></value>` : `<value><int>${v}</int></value>`;
  }
  if (typeof v === 'string') return `<value><string>${escapeText(v)}</string></value>`;
  if (isBinary(v)) return `<value><base64>${Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64')}</base64></value>`;
  if (v instanceof Date) {
    const [y, mo, d, h, mi, s] = utcFields(v);
    return `<value><dateTime.iso8601>${y}${mo}${d}T${h}:${mi}:${s}</dateTime.iso8601></value>`;
  }
  if (Array.isArray(v)) return `<value><array><data>${v.map(encodeValue).join('')}</data></array></value>`;
  return `<value><struct>${Object.keys(v)
    .map((k) => `<member><name>${escapeText(k)}</name>${encodeValue(v[k]!)}</member>`)
    .join('')}</struct></value>`;
}
