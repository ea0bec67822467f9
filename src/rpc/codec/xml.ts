/**
 * XML-RPC codec (the XML-RPC specification, with the common <nil/> and <i8>
 * extensions). A request is a methodCall with two params: an array of
 * arguments and a struct of options. Responses carry a struct {result,
 * principal, version}; errors are faults whose faultCode is the public error
 * number. Parsing uses fast-xml-parser after two guards: any DOCTYPE or
 * ENTITY declaration is refused (no XXE, no entity expansion) and nesting is
 * bounded by a linear scan. Characters XML 1.0 cannot carry are replaced by
 * U+FFFD on output.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { checkValue, CodecError, defaultLimits, requestFrom, toPlain, toText, type CodecLimits, type RpcRequest, type RpcResponse, type WireValue } from './types.js';

type Node = Record<string, unknown>;

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: true,
  trimValues: false,
  parseTagValue: false,
  processEntities: true,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

function guard(text: string, limits: CodecLimits): void {
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new CodecError('parse', 'DOCTYPE and ENTITY declarations are not allowed');
  let depth = 0;
  const tag = /<(\/?)[A-Za-z][^>]*?(\/?)>/g;
  for (let m = tag.exec(text); m; m = tag.exec(text)) {
    if (m[1]) depth--;
    else if (!m[2] && ++depth > limits.maxDepth * 3 + 8) throw new CodecError('too-deep', `XML nested deeper than ${limits.maxDepth}`);
  }
  const v = XMLValidator.validate(text);
  if (v !== true) throw new CodecError('parse', `invalid XML at line ${v.err.line}: ${v.err.msg}`);
}

function parseXml(body: Buffer | string, limits: CodecLimits): Node[] {
  const text = toText(body, limits);
  guard(text, limits);
  try {
    return parser.parse(text) as Node[];
  } catch {
    throw new CodecError('parse', 'invalid XML');
  }
}

function tagOf(n: Node): string {
  return Object.keys(n).find((k) => k !== ':@') ?? '';
}

/** Element children, skipping whitespace-only text and comments. */
function elements(children: unknown, where: string): Node[] {
  if (!Array.isArray(children)) throw new CodecError('envelope', `malformed <${where}>`);
  const out: Node[] = [];
  for (const c of children as Node[]) {
    const t = tagOf(c);
    if (t === '#text') {
      if (String(c['#text']).trim() !== '') throw new CodecError('envelope', `unexpected text in <${where}>`);
      continue;
    }
    if (t === '#comment') continue;
    out.push(c);
  }
  return out;
}

function textOf(children: unknown): string {
  if (!Array.isArray(children)) return '';
  let s = '';
  for (const c of children as Node[]) {
    const t = tagOf(c);
    if (t === '#text') s += String(c['#text']);
    else if (t !== '#comment') throw new CodecError('envelope', `unexpected <${t}> inside a scalar`);
  }
  return s;
}

function one(children: unknown, tag: string, where: string): Node {
  const els = elements(children, where);
  if (els.length !== 1 || tagOf(els[0]!) !== tag) throw new CodecError('envelope', `<${where}> must contain one <${tag}>`);
  return els[0]!;
}

const INT = /^[+-]?\d{1,19}$/;

function decodeValue(valueNode: Node, limits: CodecLimits, depth: number): WireValue {
  if (depth > limits.maxDepth) throw new CodecError('too-deep', `values nested deeper than ${limits.maxDepth}`);
  const children = valueNode.value;
  const els = Array.isArray(children) ? (children as Node[]).filter((c) => !['#text', '#comment'].includes(tagOf(c))) : [];
  if (els.length === 0) return textOf(children);
  const typed = elements(children, 'value');
  if (typed.length !== 1) throw new CodecError('envelope', '<value> must hold one typed value');
  const n = typed[0]!;
  const t = tagOf(n);
  const inner = n[t];
  switch (t) {
    case 'string':
      return textOf(inner);
    case 'int':
    case 'i4':
    case 'i8': {
      const s = textOf(inner).trim();
      if (!INT.test(s)) throw new CodecError('value', `invalid <${t}> value`);
      const v = Number(s);
      if (!Number.isSafeInteger(v)) throw new CodecError('value', `integer out of range`);
      if (t !== 'i8' && (v > 2147483647 || v < -2147483648)) throw new CodecError('value', `<${t}> out of range`);
      return v;
    }
    case 'boolean': {
      const s = textOf(inner).trim();
      if (s !== '0' && s !== '1') throw new CodecError('value', '<boolean> must be 0 or 1');
      return s === '1';
    }
    case 'double': {
      const s = textOf(inner).trim();
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) throw new CodecError('value', 'invalid <double>');
      return Number(s);
    }
    case 'nil':
      if (textOf(inner).trim() !== '') throw new CodecError('value', '<nil/> must be empty');
      return null;
    case 'base64': {
      const s = textOf(inner).replace(/\s+/g, '');
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s)) throw new CodecError('value', 'invalid <base64>');
      return Buffer.from(s, 'base64');
    }
    case 'dateTime.iso8601': {
      const m = /^(\d{4})-?(\d{2})-?(\d{2})T(\d{2}):?(\d{2}):?(\d{2})Z?$/.exec(textOf(inner).trim());
      if (!m) throw new CodecError('value', 'invalid <dateTime.iso8601>');
      return new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
    }
    case 'array': {
      const data = one(inner, 'data', 'array');
      return elements(data.data, 'data').map((v) => {
        if (tagOf(v) !== 'value') throw new CodecError('envelope', '<data> may only contain <value>');
        return decodeValue(v, limits, depth + 1);
      });
    }
    case 'struct': {
      const out = Object.create(null) as Record<string, WireValue>;
      for (const m of elements(inner, 'struct')) {
        if (tagOf(m) !== 'member') throw new CodecError('envelope', '<struct> may only contain <member>');
        const parts = elements(m.member, 'member');
        const nameNode = parts.find((p) => tagOf(p) === 'name');
        const valueNode = parts.find((p) => tagOf(p) === 'value');
        if (!nameNode || !valueNode || parts.length !== 2) throw new CodecError('envelope', '<member> needs one <name> and one <value>');
        out[textOf(nameNode.name)] = decodeValue(valueNode, limits, depth + 1);
      }
      return out;
    }
    default:
      throw new CodecError('value', `unknown value type <${t.slice(0, 32)}>`);
  }
}

function root(nodes: Node[], tag: string): Node {
  const els = elements(nodes, 'document');
  if (els.length !== 1 || tagOf(els[0]!) !== tag) throw new CodecError('envelope', `the document must be one <${tag}>`);
  return els[0]!;
}

function params(node: unknown, limits: CodecLimits): WireValue[] {
  return elements(node, 'params').map((p) => {
    if (tagOf(p) !== 'param') throw new CodecError('envelope', '<params> may only contain <param>');
    return decodeValue(one(p.param, 'value', 'param'), limits, 0);
  });
}

export function decodeXmlRequest(body: Buffer | string, limits: CodecLimits = defaultLimits): RpcRequest {
  const call = root(parseXml(body, limits), 'methodCall');
  const parts = elements(call.methodCall, 'methodCall');
  const nameNode = parts.find((p) => tagOf(p) === 'methodName');
  if (!nameNode) throw new CodecError('envelope', 'missing <methodName>');
  const paramsNode = parts.find((p) => tagOf(p) === 'params');
  const values = paramsNode ? params(paramsNode.params, limits) : [];
  const checked = checkValue(values, limits) as WireValue[];
  return requestFrom(textOf(nameNode.methodName).trim(), checked.length ? checked : [[]], null);
}

// ---- encoding ----------------------------------------------------------------

function escapeText(s: string): string {
  return s
    .replace(/[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\ud800-\udfff]/g, '\ufffd')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\r/g, '&#13;');
}

export function encodeValue(v: WireValue): string {
  if (v === null) return '<value><nil/></value>';
  if (typeof v === 'boolean') return `<value><boolean>${v ? 1 : 0}</boolean></value>`;
  if (typeof v === 'number') {
    if (Number.isInteger(v)) {
      if (!Number.isSafeInteger(v)) throw new CodecError('value', 'integer out of range');
      return v > 2147483647 || v < -2147483648 ? `<value><i8>${v}</i8></value>` : `<value><int>${v}</int></value>`;
    }
    if (!Number.isFinite(v)) throw new CodecError('value', 'numbers must be finite');
    return `<value><double>${v}</double></value>`;
  }
  if (typeof v === 'string') return `<value><string>${escapeText(v)}</string></value>`;
  if (Buffer.isBuffer(v)) return `<value><base64>${v.toString('base64')}</base64></value>`;
  if (v instanceof Date) return `<value><dateTime.iso8601>${v.toISOString().replace(/[-]/g, '').slice(0, 17)}Z</dateTime.iso8601></value>`;
  if (Array.isArray(v)) return `<value><array><data>${v.map(encodeValue).join('')}</data></array></value>`;
  return `<value><struct>${Object.entries(v)
    .map(([k, x]) => `<member><name>${escapeText(k)}</name>${encodeValue(x)}</member>`)
    .join('')}</struct></value>`;
}

const HEADER = "<?xml version='1.0' encoding='UTF-8'?>\n";

export function encodeXmlResponse(res: RpcResponse): string {
  if (res.error) {
    const fault: Record<string, WireValue> = {
      faultCode: res.error.code,
      faultString: res.error.message,
      error_name: res.error.name,
      error_data: res.error.data ?? {},
    };
    return `${HEADER}<methodResponse><fault>${encodeValue(fault)}</fault></methodResponse>\n`;
  }
  const payload: Record<string, WireValue> = { result: res.result, principal: res.principal, version: res.version };
  return `${HEADER}<methodResponse><params><param>${encodeValue(payload)}</param></params></methodResponse>\n`;
}

export function encodeXmlRequest(req: RpcRequest): string {
  return `${HEADER}<methodCall><methodName>${escapeText(req.method)}</methodName><params><param>${encodeValue(req.args)}</param><param>${encodeValue(req.options)}</param></params></methodCall>\n`;
}

export function decodeXmlResponse(body: Buffer | string, limits: CodecLimits = { ...defaultLimits, maxBytes: 64 * 1024 * 1024, maxItems: 10_000_000 }): RpcResponse {
  const resp = root(parseXml(body, limits), 'methodResponse');
  const parts = elements(resp.methodResponse, 'methodResponse');
  if (parts.length !== 1) throw new CodecError('envelope', '<methodResponse> must hold <params> or <fault>');
  const p = parts[0]!;
  if (tagOf(p) === 'fault') {
    const f = toPlain(decodeValue(one(p.fault, 'value', 'fault'), limits, 0)) as Record<string, WireValue>;
    if (typeof f.faultCode !== 'number' || typeof f.faultString !== 'string') throw new CodecError('envelope', 'malformed fault');
    return {
      result: null,
      error: { code: f.faultCode, name: typeof f.error_name === 'string' ? f.error_name : 'Fault', message: f.faultString, data: (f.error_data as Record<string, WireValue>) ?? {} },
      id: null,
      principal: null,
      version: '',
    };
  }
  if (tagOf(p) !== 'params') throw new CodecError('envelope', '<methodResponse> must hold <params> or <fault>');
  const [payload] = params(p.params, limits);
  const v = toPlain(payload ?? null) as Record<string, WireValue> | null;
  if (!v || typeof v !== 'object') throw new CodecError('envelope', 'the response must be a struct');
  return { result: v.result ?? null, error: null, id: null, principal: typeof v.principal === 'string' ? v.principal : null, version: typeof v.version === 'string' ? v.version : '' };
}
