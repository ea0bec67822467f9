/**
 * Entries on their way into the store (docs/architecture.md, "How the code is built"): raw input is
 * canonicalised (attribute names to schema spelling), modifications are
 * applied to a working copy, and the result is validated against the schema
 * before any backend writes it. Backend-independent.
 */
import { superiors, normalizeValue, validSyntax } from './schema.js';
import { DirectoryError, type Attributes, type Modification, type Schema } from './types.js';

const DEFAULT_MAX_LENGTH = 4096;
const MAX_VALUES = 10_000;

/** A working copy: public attributes and secret plaintexts kept apart. */
export interface Draft {
  attrs: Attributes;
  /** secret attribute -> plaintext values (only those being written) or sealed values (kept) */
  secrets: Map<string, { sealed?: string[]; plain?: string[] }>;
}

export function canonicalName(schema: Schema, name: string): string {
  const at = schema.attribute(name);
  if (!at) throw new DirectoryError('undefinedAttributeType', `unknown attribute "${String(name).slice(0, 64)}"`, { attr: String(name).slice(0, 64) });
  return at.name;
}

/** Values as strings; numbers are accepted and written in decimal, anything else refused. */
function asStrings(attr: string, values: readonly unknown[]): string[] {
  return values.map((v) => {
    if (typeof v === 'string') return v;
    if (typeof v === 'number' && Number.isFinite(v)) return String(v);
    throw new DirectoryError('invalidAttributeSyntax', `values of ${attr} must be strings`, { attr });
  });
}

/** Canonicalises and splits input attributes into public and secret parts. */
export function draftFromInput(schema: Schema, input: Attributes): Draft {
  const d: Draft = { attrs: {}, secrets: new Map() };
  for (const [name, values] of Object.entries(input)) {
    if (!Array.isArray(values)) throw new DirectoryError('invalidAttributeSyntax', `values of ${name} must be a list`, { attr: name });
    const canon = canonicalName(schema, name);
    const at = schema.attribute(canon)!;
    if (at.operational) throw new DirectoryError('constraintViolation', `${canon} is maintained by the directory`, { attr: canon });
    if (values.length === 0) continue;
    if (at.syntax === 'secret') {
      const prev = d.secrets.get(canon)?.plain ?? [];
      d.secrets.set(canon, { plain: [...prev, ...asStrings(canon, values)] });
    } else {
      d.attrs[canon] = [...(d.attrs[canon] ?? []), ...asStrings(canon, values)];
    }
  }
  return d;
}

function sameValue(schema: Schema, attr: string, a: string, b: string): boolean {
  const syntax = schema.attribute(attr)!.syntax;
  try {
    return normalizeValue(syntax, a) === normalizeValue(syntax, b);
  } catch {
    return a === b;
  }
}

/**
 * Applies modifications to a draft in order (RFC 4511 §4.6 semantics). A
 * delete of given values of a secret compares them with the stored
 * plaintexts, which `open` gives (the write path opens the sealed ones):
 * values that are not all there fail as noSuchAttribute, so a write can
 * remove exactly the secret it was checked against (a one-time password)
 * and fails when another write took or replaced it first.
 */
export function applyModifications(schema: Schema, d: Draft, mods: readonly Modification[], open?: (attr: string, sealed: readonly string[]) => string[]): void {
  for (const m of mods) {
    if (m === null || typeof m !== 'object' || (m.op !== 'add' && m.op !== 'delete' && m.op !== 'replace')) {
      throw new DirectoryError('unwillingToPerform', 'a modification needs op add, delete or replace');
    }
    if (typeof m.attr !== 'string') throw new DirectoryError('undefinedAttributeType', 'a modification needs an attribute name');
    if (m.values !== undefined && !Array.isArray(m.values)) throw new DirectoryError('invalidAttributeSyntax', `values of ${m.attr} must be a list`, { attr: m.attr });
    const attr = canonicalName(schema, m.attr);
    const at = schema.attribute(attr)!;
    if (at.operational) throw new DirectoryError('constraintViolation', `${attr} is maintained by the directory`, { attr });
    const values = asStrings(attr, m.values ?? []);
    if (at.syntax === 'secret') {
      const cur = d.secrets.get(attr);
      const has = cur !== undefined && ((cur.plain?.length ?? 0) > 0 || (cur.sealed?.length ?? 0) > 0);
      if (m.op === 'replace') {
        if (values.length) d.secrets.set(attr, { plain: values });
        else d.secrets.delete(attr);
      } else if (m.op === 'add') {
        if (has && at.singleValue) throw new DirectoryError('constraintViolation', `${attr} is single-valued`, { attr });
        d.secrets.set(attr, { plain: [...(cur?.plain ?? []), ...values], ...(cur?.sealed ? { sealed: cur.sealed } : {}) });
      } else {
        if (!has) throw new DirectoryError('noSuchAttribute', `${attr} has no value`, { attr });
        if (values.length === 0) {
          d.secrets.delete(attr);
          continue;
        }
        if (!open) throw new DirectoryError('unwillingToPerform', `values of the secret ${attr} can only be replaced or deleted as a whole`, { attr });
        let left = [...(cur.plain ?? []), ...open(attr, cur.sealed ?? [])];
        for (const v of values) {
          const i = left.indexOf(v);
          if (i < 0) throw new DirectoryError('noSuchAttribute', `${attr} does not have that value`, { attr });
          left = left.filter((_, j) => j !== i);
        }
        if (left.length) d.secrets.set(attr, { plain: left });
        else d.secrets.delete(attr);
      }
      continue;
    }
    const current = d.attrs[attr] ?? [];
    if (m.op === 'replace') {
      if (values.length) d.attrs[attr] = values;
      else delete d.attrs[attr];
    } else if (m.op === 'add') {
      if (values.length === 0) throw new DirectoryError('invalidAttributeSyntax', `no values to add to ${attr}`, { attr });
      for (const v of values) {
        if (current.some((c) => sameValue(schema, attr, c, v))) {
          throw new DirectoryError('attributeOrValueExists', `${attr} already has the value`, { attr });
        }
      }
      d.attrs[attr] = [...current, ...values];
    } else {
      if (current.length === 0) throw new DirectoryError('noSuchAttribute', `${attr} has no value`, { attr });
      if (values.length === 0) delete d.attrs[attr];
      else {
        let left = [...current];
        for (const v of values) {
          const i = left.findIndex((c) => sameValue(schema, attr, c, v));
          if (i < 0) throw new DirectoryError('noSuchAttribute', `${attr} does not have that value`, { attr });
          left = left.filter((_, j) => j !== i);
        }
        if (left.length) d.attrs[attr] = left;
        else delete d.attrs[attr];
      }
    }
  }
}

function hasSecret(d: Draft, attr: string): boolean {
  const s = d.secrets.get(attr);
  return s !== undefined && ((s.plain?.length ?? 0) > 0 || (s.sealed?.length ?? 0) > 0);
}

/**
 * Validates a complete entry: object classes known with one structural
 * chain, must/may, single-valued, syntax, length, duplicate values, and the
 * RDN's value present.
 */
export function validateDraft(schema: Schema, d: Draft, rdn: { type: string; value: string }[]): void {
  const ocs = d.attrs.objectClass ?? [];
  if (ocs.length === 0) throw new DirectoryError('objectClassViolation', 'an entry needs object classes', { attr: 'objectClass' });
  const structural: string[] = [];
  for (const oc of ocs) {
    const c = schema.objectClass(oc);
    if (!c) throw new DirectoryError('objectClassViolation', `unknown object class ${oc}`, { attr: 'objectClass' });
    if (c.kind === 'structural') structural.push(c.name);
  }
  if (structural.length === 0) throw new DirectoryError('objectClassViolation', 'an entry needs a structural object class', { attr: 'objectClass' });
  const chains = structural.map((s) => new Set(superiors(schema, s).map((c) => c.name)));
  const mostSpecific = chains.find((ch) => structural.every((s) => ch.has(s)));
  if (!mostSpecific) throw new DirectoryError('objectClassViolation', `structural classes ${structural.join(', ')} are unrelated`, { attr: 'objectClass' });
  const { must, may } = schema.allowed(ocs);
  for (const a of must) {
    if (!(d.attrs[a]?.length || hasSecret(d, a))) throw new DirectoryError('objectClassViolation', `missing required attribute ${a}`, { attr: a });
  }
  const names = [...Object.keys(d.attrs), ...[...d.secrets.keys()].filter((k) => hasSecret(d, k))];
  for (const a of names) {
    const at = schema.attribute(a)!;
    if (a !== 'objectClass' && !at.operational && !must.has(a) && !may.has(a)) {
      throw new DirectoryError('objectClassViolation', `attribute ${a} is not allowed by the entry's object classes`, { attr: a });
    }
    const values = at.syntax === 'secret' ? [...(d.secrets.get(a)?.plain ?? []), ...(d.secrets.get(a)?.sealed ?? [])] : (d.attrs[a] ?? []);
    if (values.length > MAX_VALUES) throw new DirectoryError('constraintViolation', `${a} has too many values`, { attr: a });
    if (at.singleValue && values.length > 1) throw new DirectoryError('constraintViolation', `${a} is single-valued`, { attr: a });
    const max = at.maxLength ?? DEFAULT_MAX_LENGTH;
    const seen = new Set<string>();
    for (const v of at.syntax === 'secret' ? (d.secrets.get(a)?.plain ?? []) : values) {
      if (v.length > max) throw new DirectoryError('constraintViolation', `a value of ${a} is longer than ${max}`, { attr: a });
      if (!validSyntax(at.syntax, v)) throw new DirectoryError('invalidAttributeSyntax', `invalid value for ${a}`, { attr: a });
      if (at.syntax !== 'secret') {
        const n = normalizeValue(at.syntax, v);
        if (seen.has(n)) throw new DirectoryError('attributeOrValueExists', `duplicate value of ${a}`, { attr: a });
        seen.add(n);
      }
    }
  }
  for (const ava of rdn) {
    const at = schema.attribute(ava.type);
    if (!at) throw new DirectoryError('undefinedAttributeType', `unknown RDN attribute ${ava.type}`, { attr: ava.type });
    const values = d.attrs[at.name] ?? [];
    if (!values.some((v) => sameValue(schema, at.name, v, ava.value))) {
      throw new DirectoryError('constraintViolation', `the RDN value of ${at.name} must stay in the entry`, { attr: at.name });
    }
  }
}

/**
 * A draft from stored attributes and sealed secrets: operational attributes
 * are set aside (the store maintains them), the rest copied for editing.
 */
export function draftFromStored(schema: Schema, attrs: Attributes, sealed: Record<string, string[]>): { draft: Draft; operational: Attributes } {
  const publicAttrs: Attributes = {};
  const operational: Attributes = {};
  for (const k in attrs) {
    if (schema.attribute(k)?.operational) operational[k] = attrs[k]!;
    else publicAttrs[k] = attrs[k]!.slice();
  }
  const secrets: Draft['secrets'] = new Map(Object.entries(sealed).map(([k, v]) => [k, { sealed: v }]));
  return { draft: { attrs: publicAttrs, secrets }, operational };
}

/** Adds the values of an RDN to the entry when missing (RFC 4511 §4.7 and §4.9). */
export function addRdnValues(schema: Schema, d: Draft, rdn: readonly { type: string; value: string }[]): void {
  for (const ava of rdn) {
    const at = schema.attribute(ava.type);
    if (!at) throw new DirectoryError('undefinedAttributeType', `unknown RDN attribute ${ava.type}`, { attr: ava.type });
    if (at.syntax === 'secret' || at.operational) throw new DirectoryError('unwillingToPerform', `${at.name} cannot name an entry`, { attr: at.name });
    const cur = d.attrs[at.name] ?? [];
    if (!cur.some((v) => sameValue(schema, at.name, v, ava.value))) d.attrs[at.name] = [...cur, ava.value];
  }
}

/** Removes the values of the old RDN from the entry (deleteoldrdn, RFC 4511 §4.9). */
export function removeRdnValues(schema: Schema, d: Draft, rdn: readonly { type: string; value: string }[]): void {
  for (const ava of rdn) {
    const at = schema.attribute(ava.type);
    if (!at) continue;
    const left = (d.attrs[at.name] ?? []).filter((v) => !sameValue(schema, at.name, v, ava.value));
    if (left.length) d.attrs[at.name] = left;
    else delete d.attrs[at.name];
  }
}

/** Whether an entry's objectClass values name `name` (object class names compare without case). */
export function hasObjectClass(classes: readonly string[] | undefined, name: string): boolean {
  const wanted = name.toLowerCase();
  return (classes ?? []).some((c) => c.toLowerCase() === wanted);
}

/** Whether two lists of values are the same, value for value and in order (both absent counts as the same). */
export function sameValues(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
