/**
 * LDAP search filters (RFC 4515 string form): a strict parser to an AST and
 * an evaluator compiled against the schema's matching rules. Supported: and,
 * or, not, equality, presence, substrings, >=, <= and ~= (treated as
 * equality); `(&)` and `(|)` are absolute true and false (RFC 4526).
 * Extensible matches are refused. Evaluation is three-valued as in RFC 4511
 * §4.5.1.7: an unknown attribute, an assertion the syntax cannot hold, or a
 * rule the syntax lacks makes the item Undefined, and Undefined never
 * selects an entry, even under NOT. Secret attributes only answer presence.
 * An equality on an attribute of many values (a group's members) tests the
 * values' normalised forms, kept per value list while the list lives.
 */
import { compareValues, normalizeValue } from './schema.js';
import { DirectoryError, type AttributeType, type Attributes, type Filter, type Schema } from './types.js';

export type { Filter } from './types.js';

export const MAX_FILTER_LENGTH = 16 * 1024;
export const MAX_FILTER_DEPTH = 32;
const ATTR = /^(?:[A-Za-z][A-Za-z0-9-]*|\d+(?:\.\d+)*)(?:;[A-Za-z0-9-]+)*$/;
const HEX2 = /^[0-9a-fA-F]{2}$/;

function fail(msg: string, pos: number): never {
  throw new DirectoryError('filterError', `invalid filter at position ${pos}: ${msg}`);
}

/** Unescapes an assertion value (`\XX` hex pairs, RFC 4515 §3); `pos` is where `raw` starts. */
function unescapeValue(raw: string, pos: number): string {
  if (!raw.includes('\\')) {
    const nul = raw.indexOf('\u0000');
    if (nul >= 0) fail('NUL in value', pos + nul);
    return raw;
  }
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c === 0x5c) {
      const hex = raw.slice(i + 1, i + 3);
      if (!HEX2.test(hex)) fail('invalid escape, expected \\XX', pos + i);
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (c === 0) fail('NUL in value', pos + i);
    else if (c < 0x80) bytes.push(c);
    else {
      const high = c >= 0xd800 && c <= 0xdbff;
      bytes.push(...Buffer.from(raw.slice(i, high ? i + 2 : i + 1), 'utf8'));
      if (high) i++;
    }
  }
  const buf = Buffer.from(bytes);
  const s = buf.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(buf)) fail('value is not valid UTF-8', pos);
  return s;
}

/** Parses an RFC 4515 filter string; errors are 'filterError' with the position. */
export function parseFilter(text: string): Filter {
  if (typeof text !== 'string') fail('not a string', 0);
  if (text.length > MAX_FILTER_LENGTH) fail(`longer than ${MAX_FILTER_LENGTH} characters`, 0);
  const s = text;
  let pos = 0;
  const skipSpace = () => {
    while (s[pos] === ' ') pos++;
  };
  function parse(depth: number): Filter {
    if (depth > MAX_FILTER_DEPTH) fail(`nested deeper than ${MAX_FILTER_DEPTH}`, pos);
    if (s[pos] !== '(') fail('expected "("', pos);
    pos++;
    let f: Filter;
    const c = s[pos];
    if (c === '&' || c === '|') {
      pos++;
      const items: Filter[] = [];
      while (s[pos] === '(') items.push(parse(depth + 1));
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
    if (s[end] !== ')') fail(end < s.length ? 'unescaped "(" in value' : 'unterminated item', end);
    const item = s.slice(start, end);
    pos = end;
    const m = /^([^=<>~:]*)(=|>=|<=|~=|:)/.exec(item);
    if (!m) fail('expected attribute, operator and value', start);
    const attr = m[1]!;
    const op = m[2]!;
    if (op === ':') fail('extensible match is not supported', start + attr.length);
    if (!ATTR.test(attr)) fail(`invalid attribute description "${attr.slice(0, 64)}"`, start);
    const valuePos = start + m[0].length;
    const raw = item.slice(m[0].length);
    if (op === '=' && raw === '*') return { kind: 'present', attr };
    if (op === '=' && raw.includes('*')) {
      const parts = raw.split('*');
      const offsets: number[] = [];
      let at = valuePos;
      for (const p of parts) {
        offsets.push(at);
        at += p.length + 1;
      }
      const last = parts.length - 1;
      const any: string[] = [];
      for (let i = 1; i < last; i++) {
        if (parts[i] === '') fail('empty substring between "*"', offsets[i]!);
        any.push(unescapeValue(parts[i]!, offsets[i]!));
      }
      const f: Filter = { kind: 'sub', attr, any };
      if (parts[0] !== '') f.initial = unescapeValue(parts[0]!, offsets[0]!);
      if (parts[last] !== '') f.final = unescapeValue(parts[last]!, offsets[last]!);
      return f;
    }
    if (op !== '=' && raw.includes('*')) fail('unescaped "*" in value', valuePos + raw.indexOf('*'));
    const value = unescapeValue(raw, valuePos);
    return { kind: op === '>=' ? 'ge' : op === '<=' ? 'le' : 'eq', attr, value };
  }
  skipSpace();
  const f = parse(0);
  skipSpace();
  if (pos !== s.length) fail('trailing characters', pos);
  return f;
}

/** Attribute names a filter mentions, as written. */
export function filterAttributes(f: Filter, out: Set<string> = new Set()): Set<string> {
  if (f.kind === 'and' || f.kind === 'or') f.items.forEach((i) => filterAttributes(i, out));
  else if (f.kind === 'not') filterAttributes(f.item, out);
  else out.add(f.attr);
  return out;
}

/** The attribute type a filter item names (options such as `;lang-en` ignored). */
export function filterAttributeType(schema: Schema, attr: string): AttributeType | undefined {
  const semi = attr.indexOf(';');
  return schema.attribute(semi < 0 ? attr : attr.slice(0, semi));
}

export interface EvalEntry {
  attrs: Attributes;
  /** names (canonical) of secret attributes that hold values */
  secrets: ReadonlySet<string>;
}

/**
 * Attributes of which an entry must hold at least one for the filter to be
 * TRUE; null when there is no such set (or it would exceed `max`), empty
 * when nothing can match. Backends use it to skip entries before parsing
 * them (secrets are not counted: they live apart from the attributes).
 */
export function requiredAttributes(schema: Schema, f: Filter, max = 16): Set<string> | null {
  switch (f.kind) {
    case 'and': {
      let best: Set<string> | null = null;
      for (const item of f.items) {
        const r = requiredAttributes(schema, item, max);
        if (r && (!best || r.size < best.size)) best = r;
      }
      return best;
    }
    case 'or': {
      const out = new Set<string>();
      for (const item of f.items) {
        const r = requiredAttributes(schema, item, max);
        if (!r) return null;
        for (const a of r) out.add(a);
      }
      return out.size > max ? null : out;
    }
    case 'not':
      return null;
    default: {
      const at = filterAttributeType(schema, f.attr);
      if (!at) return new Set();
      return at.syntax === 'secret' ? null : new Set([at.name]);
    }
  }
}

/** Three-valued truth (RFC 4511 §4.5.1.7). */
export const TRUE = 1;
export const FALSE = 0;
export const UNDEFINED = 2;
export type Truth = typeof TRUE | typeof FALSE | typeof UNDEFINED;
type Test = (e: EvalEntry) => Truth;

const always = (t: Truth): Test => () => t;

function tryNormalize(at: AttributeType, v: string): string | undefined {
  try {
    return normalizeValue(at.syntax, v);
  } catch {
    return undefined;
  }
}

/** values of an attribute from which an equality test keeps their normalised forms (see normalizedSet) */
const KEEP_NORMALIZED_FROM = 8;

/** The normalised forms of a list of values under one syntax, and what the list looked like when they were made. */
interface NormalizedValues {
  syntax: AttributeType['syntax'];
  length: number;
  first: string;
  last: string;
  set: ReadonlySet<string>;
}
const normalizedSets = new WeakMap<readonly string[], NormalizedValues>();

/**
 * The normalised forms of `values` as a set, kept per list for as long as
 * the list lives: entries the store keeps parsed are tested again and
 * again, and a group's hundred member DNs would otherwise be normalised
 * anew by every (member=…) test. A list that changed (its length or ends)
 * since is normalised again. Values the syntax cannot hold are left out,
 * as they equal nothing.
 */
function normalizedSet(at: AttributeType, values: readonly string[]): ReadonlySet<string> {
  const kept = normalizedSets.get(values);
  if (kept && kept.syntax === at.syntax && kept.length === values.length && kept.first === values[0] && kept.last === values[values.length - 1]) return kept.set;
  const set = new Set<string>();
  for (const v of values) {
    const n = tryNormalize(at, v);
    if (n !== undefined) set.add(n);
  }
  normalizedSets.set(values, { syntax: at.syntax, length: values.length, first: values[0]!, last: values[values.length - 1]!, set });
  return set;
}

const SUBSTRING_SYNTAXES = new Set(['string', 'exact']);
const ORDERING_SYNTAXES = new Set(['string', 'exact', 'integer', 'time']);

/** Whether the syntax has a substring rule; other syntaxes make substring items Undefined. */
export function hasSubstringRule(at: AttributeType): boolean {
  return SUBSTRING_SYNTAXES.has(at.syntax);
}
/** Whether the syntax has an ordering rule; other syntaxes make >= and <= Undefined. */
export function hasOrderingRule(at: AttributeType): boolean {
  return ORDERING_SYNTAXES.has(at.syntax);
}

/** Refuses filters that test secrets for anything but presence. */
function refuseSecret(at: AttributeType): never {
  throw new DirectoryError('filterError', `the secret attribute ${at.name} can only be tested for presence`, { attr: at.name });
}

function compileItem(schema: Schema, f: Exclude<Filter, { kind: 'and' | 'or' | 'not' }>): Test {
  const at = filterAttributeType(schema, f.attr);
  if (!at) return always(UNDEFINED);
  const name = at.name;
  if (at.syntax === 'secret') {
    if (f.kind !== 'present') refuseSecret(at);
    return (e) => (e.secrets.has(name) ? TRUE : FALSE);
  }
  if (f.kind === 'present') return (e) => ((e.attrs[name]?.length ?? 0) > 0 ? TRUE : FALSE);
  if (f.kind === 'sub') {
    if (!hasSubstringRule(at)) return always(UNDEFINED);
    const norm = (v: string) => normalizeValue(at.syntax, v);
    const pattern = { initial: f.initial === undefined ? undefined : norm(f.initial), any: f.any.map(norm), final: f.final === undefined ? undefined : norm(f.final) };
    return (e) => {
      const values = e.attrs[name];
      if (!values) return FALSE;
      for (const v of values) if (substringMatch(norm(v), pattern)) return TRUE;
      return FALSE;
    };
  }
  if ((f.kind === 'ge' || f.kind === 'le') && !hasOrderingRule(at)) return always(UNDEFINED);
  const target = tryNormalize(at, f.value);
  if (target === undefined) return always(UNDEFINED);
  if (f.kind === 'eq') {
    const asserted = f.value;
    return (e) => {
      const values = e.attrs[name];
      if (!values) return FALSE;
      if (values.length >= KEEP_NORMALIZED_FROM) return normalizedSet(at, values).has(target) ? TRUE : FALSE;
      // a value spelled as the assertion normalises as it does: no normalising for the usual match
      for (const v of values) if (v === asserted) return TRUE;
      for (const v of values) if (tryNormalize(at, v) === target) return TRUE;
      return FALSE;
    };
  }
  const wantGreater = f.kind === 'ge';
  return (e) => {
    const values = e.attrs[name];
    if (!values) return FALSE;
    for (const v of values) {
      const n = tryNormalize(at, v);
      if (n === undefined) continue;
      const c = compareValues(at.syntax, n, target);
      if (wantGreater ? c >= 0 : c <= 0) return TRUE;
    }
    return FALSE;
  };
}

/**
 * AND and OR in three-valued logic (RFC 4511 §4.5.1.7): `absorbing` (FALSE
 * for AND, TRUE for OR) decides at once, else any Undefined makes the
 * result Undefined, else it is `identity` (also for an empty set).
 */
function junction(items: readonly Test[], identity: Truth, absorbing: Truth): Test {
  return (e) => {
    let out = identity;
    for (const t of items) {
      const r = t(e);
      if (r === absorbing) return absorbing;
      if (r === UNDEFINED) out = UNDEFINED;
    }
    return out;
  };
}

function compileNode(schema: Schema, f: Filter): Test {
  switch (f.kind) {
    case 'and':
      return junction(f.items.map((i) => compileNode(schema, i)), TRUE, FALSE);
    case 'or':
      return junction(f.items.map((i) => compileNode(schema, i)), FALSE, TRUE);
    case 'not': {
      const item = compileNode(schema, f.item);
      return (e) => {
        const r = item(e);
        return r === UNDEFINED ? UNDEFINED : r === TRUE ? FALSE : TRUE;
      };
    }
    default:
      return compileItem(schema, f);
  }
}

/**
 * Compiles a filter into a predicate (assertion values normalised once).
 * Throws 'filterError' when a secret is tested for anything but presence.
 */
export function compileFilter(schema: Schema, f: Filter): (e: EvalEntry) => boolean {
  const test = compileNode(schema, f);
  return (e) => test(e) === TRUE;
}

/** The three-valued result of a filter on an entry. */
export function evaluate(schema: Schema, f: Filter, e: EvalEntry): Truth {
  return compileNode(schema, f)(e);
}

/** Whether the filter selects the entry (TRUE; FALSE and Undefined do not). */
export function matches(schema: Schema, f: Filter, e: EvalEntry): boolean {
  return evaluate(schema, f, e) === TRUE;
}

export function substringMatch(value: string, p: { initial?: string | undefined; any: readonly string[]; final?: string | undefined }): boolean {
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
