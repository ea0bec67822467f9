/**
 * LDAP search filters (RFC 4515 string form): a strict parser to an AST and
 * an evaluator using the schema's matching rules. Supported: and, or, not,
 * equality, presence, substrings, >=, <= and ~= (treated as equality).
 * Extensible matches are refused. Secret attributes only answer presence.
 */
import { compareValues, normalizeValue } from './schema.js';
import { DirectoryError, type Attributes, type Schema, type Syntax } from './types.js';

export type Filter =
  | { kind: 'and'; items: Filter[] }
  | { kind: 'or'; items: Filter[] }
  | { kind: 'not'; item: Filter }
  | { kind: 'eq' | 'ge' | 'le'; attr: string; value: string }
  | { kind: 'present'; attr: string }
  | { kind: 'sub'; attr: string; initial?: string; any: string[]; final?: string };

const MAX_FILTER_LENGTH = 16 * 1024;
const MAX_DEPTH = 32;
const ATTR = /^[A-Za-z][A-Za-z0-9-]*(;[A-Za-z0-9-]+)*$|^\d+(\.\d+)*$/;

function fail(msg: string, pos: number): never {
  throw new DirectoryError('filterError', `invalid filter at position ${pos}: ${msg}`);
}

/** Unescapes an assertion value (`\XX` hex pairs, RFC 4515 §3). */
function unescapeValue(raw: string, pos: number): string {
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (raw[i] === '\\') {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) fail('invalid escape', pos + i);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c < 0x80) bytes.push(c);
    else {
      const b = Buffer.from(raw[i]! + (c >= 0xd800 && c <= 0xdbff ? raw[++i] ?? '' : ''), 'utf8');
      bytes.push(...b);
    }
  }
  const buf = Buffer.from(bytes);
  const s = buf.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(buf)) fail('value is not valid UTF-8', pos);
  return s;
}

export function parseFilter(text: string): Filter {
  if (text.length > MAX_FILTER_LENGTH) fail('filter too long', 0);
  let pos = 0;
  const s = text.trim();
  function parse(depth: number): Filter {
    if (depth > MAX_DEPTH) fail('nested too deeply', pos);
    if (s[pos] !== '(') fail('expected "("', pos);
    pos++;
    let f: Filter;
    const c = s[pos];
    if (c === '&' || c === '|') {
      pos++;
      const items: Filter[] = [];
      while (s[pos] === '(') items.push(parse(depth + 1));
      if (items.length === 0 && c === '|') fail('empty "|"', pos);
      f = { kind: c === '&' ? 'and' : 'or', items };
    } else if (c === '!') {
      pos++;
      f = { kind: 'not', item: parse(depth + 1) };
    } else {
      f = parseItem();
    }
    if (s[pos] !== ')') fail('expected ")"', pos);
    pos++;
    return f;
  }
  function parseItem(): Filter {
    const start = pos;
    let end = pos;
    while (end < s.length && s[end] !== ')' && s[end] !== '(') end++;
    if (s[end] !== ')') fail('unterminated item', start);
    const item = s.slice(start, end);
    pos = end;
    const m = /^([^=<>~:]+)(=|>=|<=|~=|:)(.*)$/s.exec(item);
    if (!m) fail('expected attribute, operator and value', start);
    const attr = m[1]!.trim();
    const op = m[2]!;
    const raw = m[3]!;
    if (op === ':' || attr.includes(':')) fail('extensible match is not supported', start);
    if (!ATTR.test(attr)) fail(`invalid attribute description "${attr}"`, start);
    const valuePos = start + attr.length + op.length;
    if (op === '=' && raw === '*') return { kind: 'present', attr };
    if (op === '=' && raw.includes('*')) {
      const parts = raw.split('*');
      const initial = parts[0] ? unescapeValue(parts[0], valuePos) : undefined;
      const finalPart = parts[parts.length - 1];
      const final = finalPart ? unescapeValue(finalPart, valuePos) : undefined;
      const any = parts.slice(1, -1).map((p, i) => {
        if (p === '') fail('empty substring between "*"', valuePos + i);
        return unescapeValue(p, valuePos);
      });
      return { kind: 'sub', attr, any, ...(initial !== undefined ? { initial } : {}), ...(final !== undefined ? { final } : {}) };
    }
    const value = unescapeValue(raw, valuePos);
    return { kind: op === '>=' ? 'ge' : op === '<=' ? 'le' : 'eq', attr, value };
  }
  const f = parse(0);
  if (pos !== s.length) fail('trailing characters', pos);
  return f;
}

/** Attribute names a filter mentions, canonicalised where the schema knows them. */
export function filterAttributes(f: Filter, out: Set<string> = new Set()): Set<string> {
  if (f.kind === 'and' || f.kind === 'or') f.items.forEach((i) => filterAttributes(i, out));
  else if (f.kind === 'not') filterAttributes(f.item, out);
  else out.add(f.attr);
  return out;
}

export interface EvalEntry {
  attrs: Attributes;
  /** names (canonical) of secret attributes that hold values */
  secrets: ReadonlySet<string>;
}

function normalize(syntax: Syntax, v: string): string | undefined {
  try {
    return normalizeValue(syntax, v);
  } catch {
    return undefined;
  }
}

/** Evaluates a filter; unknown attributes are undefined (false), as in LDAP. */
export function matches(schema: Schema, f: Filter, e: EvalEntry): boolean {
  switch (f.kind) {
    case 'and':
      return f.items.every((i) => matches(schema, i, e));
    case 'or':
      return f.items.some((i) => matches(schema, i, e));
    case 'not':
      return !matches(schema, f.item, e);
    default:
      break;
  }
  const at = schema.attribute(f.attr.split(';')[0]!);
  if (!at) return false;
  if (at.syntax === 'secret') return f.kind === 'present' && e.secrets.has(at.name);
  const values = e.attrs[at.name] ?? [];
  if (f.kind === 'present') return values.length > 0;
  if (f.kind === 'sub') {
    const parts = {
      initial: f.initial === undefined ? undefined : normalize(at.syntax, f.initial),
      any: f.any.map((a) => normalize(at.syntax, a) ?? '\u0000'),
      final: f.final === undefined ? undefined : normalize(at.syntax, f.final),
    };
    return values.some((v) => {
      const n = normalize(at.syntax, v);
      return n !== undefined && substringMatch(n, parts);
    });
  }
  const target = normalize(at.syntax, f.value);
  if (target === undefined) return false;
  return values.some((v) => {
    const n = normalize(at.syntax, v);
    if (n === undefined) return false;
    if (f.kind === 'eq') return n === target;
    const c = compareValues(at.syntax, n, target);
    return f.kind === 'ge' ? c >= 0 : c <= 0;
  });
}

export function substringMatch(value: string, p: { initial?: string | undefined; any: string[]; final?: string | undefined }): boolean {
  let at = 0;
  if (p.initial !== undefined) {
    if (!value.startsWith(p.initial)) return false;
    at = p.initial.length;
  }
  let end = value.length;
  if (p.final !== undefined) {
    if (!value.endsWith(p.final) || value.length - p.final.length < at) return false;
    end = value.length - p.final.length;
  }
  for (const a of p.any) {
    const i = value.indexOf(a, at);
    if (i < 0 || i + a.length > end) return false;
    at = i + a.length;
  }
  return true;
}

/** RFC 4515 §3: escapes a value for use inside a filter assertion. */
export function escapeFilterValue(value: string): string {
  return value.replace(/[\\*()\u0000]/g, (c) => '\\' + c.charCodeAt(0).toString(16).padStart(2, '0'));
}
