/**
 * The LDAP Filter of a SearchRequest (RFC 4511 §4.5.1, docs/ldap.md) in
 * BER, to and from the directory's Filter type, and a Filter back to its
 * RFC 4515 string form for logs.
 *
 * Mapping: and, or, not, equalityMatch, substrings, greaterOrEqual,
 * lessOrEqual and present map one to one. An empty and/or (RFC 4526
 * absolute true/false) maps to an empty 'and'/'or', which the directory's
 * engine evaluates as TRUE/FALSE. approxMatch is decoded as equality: the
 * directory has no approximate rule, and equality is what RFC 4511 lets a
 * server use in its place. extensibleMatch is mapped only in the one form
 * that means plain equality (`attr:=value`: a type, no matching rule, no
 * dnAttributes); every other form is refused with unwillingToPerform, because
 * the Filter type cannot carry a chosen matching rule and silently using
 * another rule would return different entries than the client asked for.
 *
 * Assertion values become text through a hook (the server can make it
 * schema-aware); by default they must be UTF-8, the only values the
 * directory holds, and others are refused with unwillingToPerform (RFC 4511
 * would make such an item Undefined, which the Filter type cannot say).
 * Limits: a nesting depth (default the directory's own MAX_FILTER_DEPTH) and
 * a number of items, both refused with adminLimitExceeded; empty substring
 * components and an attribute description outside RFC 4512's form are
 * protocol errors.
 */
import { MAX_FILTER_DEPTH, type Filter } from '../directory/filter.js';
import { Ber, BerReader, LdapDecodeError, LdapEncodeError, Tag, constructed, context, describeTag, octetString, sequence, utf8, utf8String } from './ber.js';
import { ResultCode } from './codes.js';

/** The Filter CHOICE's context tags (RFC 4511 §4.5.1). */
export const FilterTag = {
  and: 0,
  or: 1,
  not: 2,
  equalityMatch: 3,
  substrings: 4,
  greaterOrEqual: 5,
  lessOrEqual: 6,
  present: 7,
  approxMatch: 8,
  extensibleMatch: 9,
} as const;

const SubstringTag = { initial: 0, any: 1, final: 2 } as const;
const MatchingRuleAssertionTag = { matchingRule: 1, type: 2, matchValue: 3, dnAttributes: 4 } as const;

const ID = {
  and: context(FilterTag.and, true),
  or: context(FilterTag.or, true),
  not: context(FilterTag.not, true),
  equalityMatch: context(FilterTag.equalityMatch, true),
  substrings: context(FilterTag.substrings, true),
  greaterOrEqual: context(FilterTag.greaterOrEqual, true),
  lessOrEqual: context(FilterTag.lessOrEqual, true),
  present: context(FilterTag.present, false),
  approxMatch: context(FilterTag.approxMatch, true),
  extensibleMatch: context(FilterTag.extensibleMatch, true),
  initial: context(SubstringTag.initial, false),
  any: context(SubstringTag.any, false),
  final: context(SubstringTag.final, false),
  matchingRule: context(MatchingRuleAssertionTag.matchingRule, false),
  type: context(MatchingRuleAssertionTag.type, false),
  matchValue: context(MatchingRuleAssertionTag.matchValue, false),
  dnAttributes: context(MatchingRuleAssertionTag.dnAttributes, false),
} as const;

/** The default largest number of items (every and, or, not and assertion counts) in one filter. */
export const MAX_FILTER_ITEMS = 1024;

export interface FilterDecodeOptions {
  /** deepest nesting accepted, the outermost item being at depth 0 (default MAX_FILTER_DEPTH) */
  maxDepth?: number;
  /** most items accepted (default MAX_FILTER_ITEMS) */
  maxItems?: number;
  /**
   * Turns an assertion value into the directory's text form; may throw
   * LdapDecodeError. Default: defaultAssertionValue.
   */
  assertionValue?: (attr: string, value: Buffer) => string;
}

/** RFC 4512 attributedescription: a descriptor or numeric OID, then options. */
const ATTRIBUTE_DESCRIPTION = /^(?:[A-Za-z][A-Za-z0-9-]*|(?:0|[1-9]\d*)(?:\.(?:0|[1-9]\d*))+)(?:;[A-Za-z0-9-]+)*$/;

/** An AttributeDescription as text, refused (protocolError) when it is not of RFC 4512's form. */
export function attributeDescription(r: BerReader, id: number, what: string): string {
  const s = r.string(id, what);
  if (!ATTRIBUTE_DESCRIPTION.test(s)) throw new LdapDecodeError(`${what}: ${JSON.stringify(s.slice(0, 64))} is not an attribute description`);
  return s;
}

/** The default assertion value conversion: UTF-8 text (as the string form's escapes give), else unwillingToPerform. */
export function defaultAssertionValue(attr: string, value: Buffer): string {
  try {
    return utf8(value, 0, value.length, `assertion value for ${attr}`);
  } catch (e) {
    if (!(e instanceof LdapDecodeError)) throw e;
    throw new LdapDecodeError(`${e.message}; this directory holds text values only`, { resultCode: ResultCode.unwillingToPerform });
  }
}

interface State {
  items: number;
  readonly maxItems: number;
  readonly maxDepth: number;
  readonly value: (attr: string, value: Buffer) => string;
}

/** Reads one Filter element from `r` (the filter field of a SearchRequest). */
export function decodeFilter(r: BerReader, options: FilterDecodeOptions = {}): Filter {
  const state: State = {
    items: 0,
    maxItems: options.maxItems ?? MAX_FILTER_ITEMS,
    maxDepth: options.maxDepth ?? MAX_FILTER_DEPTH,
    value: options.assertionValue ?? defaultAssertionValue,
  };
  return decodeItem(r, state, 0);
}

function decodeItem(r: BerReader, st: State, depth: number): Filter {
  if (depth > st.maxDepth) throw new LdapDecodeError(`filter nested deeper than ${st.maxDepth}`, { resultCode: ResultCode.adminLimitExceeded });
  if (++st.items > st.maxItems) throw new LdapDecodeError(`filter has more than ${st.maxItems} items`, { resultCode: ResultCode.adminLimitExceeded });
  const id = r.next('filter');
  switch (id) {
    case ID.and:
    case ID.or: {
      const c = r.contentReader();
      const items: Filter[] = [];
      while (!c.atEnd) items.push(decodeItem(c, st, depth + 1));
      return { kind: id === ID.and ? 'and' : 'or', items };
    }
    case ID.not: {
      const c = r.contentReader();
      const item = decodeItem(c, st, depth + 1);
      c.finish('filter not');
      return { kind: 'not', item };
    }
    case ID.equalityMatch:
    case ID.approxMatch:
    case ID.greaterOrEqual:
    case ID.lessOrEqual: {
      const c = r.contentReader();
      const attr = attributeDescription(c, Tag.octetString, 'filter attribute');
      const value = st.value(attr, c.octets(Tag.octetString, 'filter assertion value'));
      c.finish('filter assertion');
      return { kind: id === ID.greaterOrEqual ? 'ge' : id === ID.lessOrEqual ? 'le' : 'eq', attr, value };
    }
    case ID.present: {
      // the form is ASCII only, so latin1 text that passes it is also the UTF-8 reading
      const attr = r.content().toString('latin1');
      if (!ATTRIBUTE_DESCRIPTION.test(attr)) throw new LdapDecodeError(`filter present: ${JSON.stringify(attr.slice(0, 64))} is not an attribute description`);
      return { kind: 'present', attr };
    }
    case ID.substrings:
      return decodeSubstrings(r.contentReader(), st);
    case ID.extensibleMatch:
      return decodeExtensible(r.contentReader(), st);
    default:
      throw new LdapDecodeError(`filter: unknown choice ${describeTag(id)}`);
  }
}

function decodeSubstrings(c: BerReader, st: State): Filter {
  const attr = attributeDescription(c, Tag.octetString, 'substring filter attribute');
  const list = c.sequence(Tag.sequence, 'substrings');
  c.finish('substring filter');
  const f: Extract<Filter, { kind: 'sub' }> = { kind: 'sub', attr, any: [] };
  let count = 0;
  let sawFinal = false;
  while (!list.atEnd) {
    const id = list.next('substring');
    if (sawFinal) throw new LdapDecodeError('substrings: nothing may follow final');
    const raw = list.content();
    if (raw.length === 0) throw new LdapDecodeError('substrings: empty substring');
    if (id === ID.initial) {
      if (count > 0) throw new LdapDecodeError('substrings: initial must come first');
      f.initial = st.value(attr, raw);
    } else if (id === ID.any) f.any.push(st.value(attr, raw));
    else if (id === ID.final) {
      f.final = st.value(attr, raw);
      sawFinal = true;
    } else throw new LdapDecodeError(`substrings: unknown choice ${describeTag(id)}`);
    count++;
  }
  if (count === 0) throw new LdapDecodeError('substrings: empty list');
  return f;
}

function decodeExtensible(c: BerReader, st: State): Filter {
  let rule: string | undefined;
  let type: string | undefined;
  if (c.peek() === ID.matchingRule) rule = c.string(ID.matchingRule, 'extensible match rule');
  if (c.peek() === ID.type) type = attributeDescription(c, ID.type, 'extensible match type');
  const raw = c.octets(ID.matchValue, 'extensible match value');
  let dnAttributes = false;
  if (c.peek() === ID.dnAttributes) dnAttributes = c.boolean(ID.dnAttributes, 'extensible match dnAttributes');
  c.finish('extensible match');
  if (rule === undefined && type === undefined) throw new LdapDecodeError('extensible match: neither a matching rule nor a type');
  if (rule !== undefined || dnAttributes || type === undefined) {
    throw new LdapDecodeError(`extensible match (${type ?? ''}${dnAttributes ? ':dn' : ''}${rule === undefined ? '' : ':' + rule}:=) is not supported: only attr:=value is`, { resultCode: ResultCode.unwillingToPerform });
  }
  return { kind: 'eq', attr: type, value: st.value(type, raw) };
}

// ---- encoding --------------------------------------------------------------------

/** The BER of a Filter (for clients and tests; the server only decodes filters). */
export function encodeFilter(f: Filter): Ber {
  switch (f.kind) {
    case 'and':
      return constructed(ID.and, f.items.map(encodeFilter));
    case 'or':
      return constructed(ID.or, f.items.map(encodeFilter));
    case 'not':
      return constructed(ID.not, [encodeFilter(f.item)]);
    case 'eq':
    case 'ge':
    case 'le':
      return constructed(f.kind === 'eq' ? ID.equalityMatch : f.kind === 'ge' ? ID.greaterOrEqual : ID.lessOrEqual, [octetString(f.attr), octetString(f.value)]);
    case 'present':
      return utf8String(ID.present, f.attr);
    case 'sub': {
      const parts: Ber[] = [];
      if (f.initial !== undefined) parts.push(utf8String(ID.initial, f.initial));
      for (const a of f.any) parts.push(utf8String(ID.any, a));
      if (f.final !== undefined) parts.push(utf8String(ID.final, f.final));
      if (parts.length === 0) throw new LdapEncodeError(`substring filter on ${f.attr} without substrings`);
      return constructed(ID.substrings, [octetString(f.attr), sequence(...parts)]);
    }
  }
}

// ---- the RFC 4515 string form -----------------------------------------------------

/** A value escaped for a filter string: the four specials, NUL and control characters as \XX. */
function escapeValue(v: string): string {
  return v.replace(/[\\*()\u0000-\u001f\u007f]/g, (ch) => '\\' + ch.charCodeAt(0).toString(16).padStart(2, '0'));
}

/** The RFC 4515 text of a filter (for logs); the directory's parseFilter reads it back to the same Filter. */
export function formatFilter(f: Filter): string {
  switch (f.kind) {
    case 'and':
      return `(&${f.items.map(formatFilter).join('')})`;
    case 'or':
      return `(|${f.items.map(formatFilter).join('')})`;
    case 'not':
      return `(!${formatFilter(f.item)})`;
    case 'eq':
      return `(${f.attr}=${escapeValue(f.value)})`;
    case 'ge':
      return `(${f.attr}>=${escapeValue(f.value)})`;
    case 'le':
      return `(${f.attr}<=${escapeValue(f.value)})`;
    case 'present':
      return `(${f.attr}=*)`;
    case 'sub':
      return `(${f.attr}=${f.initial === undefined ? '' : escapeValue(f.initial)}*${f.any.map((a) => escapeValue(a) + '*').join('')}${f.final === undefined ? '' : escapeValue(f.final)})`;
  }
}
