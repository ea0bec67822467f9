/**
 * Schema: attribute types and object classes (RFC 4512 §2.4 and §4.1, reduced
 * to what dirid needs), checked and compiled for fast look-ups, plus the
 * per-syntax normalisation, validation, ordering and index keys used by
 * filters, indexes and writes (matching rules after RFC 4517 §4.2).
 */
import { normalizeDn } from './dn.js';
import type { AttributeType, ObjectClass, Schema, SchemaDefinition, Syntax, UniqueRule } from './types.js';

/** What every directory has: object classes, operational attributes, common naming attributes. */
export const coreSchema: SchemaDefinition = {
  attributeTypes: [
    { name: 'objectClass', syntax: 'string', indexed: true },
    { name: 'entryUUID', syntax: 'string', singleValue: true, operational: true, indexed: true },
    { name: 'createTimestamp', syntax: 'time', singleValue: true, operational: true },
    { name: 'modifyTimestamp', syntax: 'time', singleValue: true, operational: true },
    { name: 'cn', aliases: ['commonName'], syntax: 'string', indexed: true },
    { name: 'uid', aliases: ['userid'], syntax: 'string', indexed: true },
    { name: 'dc', aliases: ['domainComponent'], syntax: 'string', singleValue: true },
    { name: 'ou', aliases: ['organizationalUnitName'], syntax: 'string' },
    { name: 'description', syntax: 'string' },
  ],
  objectClasses: [
    { name: 'top', kind: 'abstract', must: ['objectClass'], may: [] },
    { name: 'domain', kind: 'structural', sup: 'top', must: ['dc'], may: ['description'] },
    { name: 'dirContainer', kind: 'structural', sup: 'top', must: ['cn'], may: ['description'] },
  ],
};

/**
 * Merges schema definitions in order. Names must stay unique across them:
 * {@link compileSchema} refuses a name defined twice.
 */
export function mergeSchemas(...defs: SchemaDefinition[]): SchemaDefinition {
  return {
    attributeTypes: defs.flatMap((d) => d.attributeTypes),
    objectClasses: defs.flatMap((d) => d.objectClasses),
    unique: defs.flatMap((d) => d.unique ?? []),
  };
}

const SYNTAXES: ReadonlySet<string> = new Set<Syntax>(['string', 'exact', 'dn', 'integer', 'boolean', 'time', 'binary', 'secret']);
const NAME = /^[A-Za-z][A-Za-z0-9-]{0,63}$/;
const KINDS: ReadonlySet<string> = new Set(['structural', 'auxiliary', 'abstract']);
/** attributes the store itself maintains or needs */
const REQUIRED = ['objectClass', 'entryUUID', 'createTimestamp', 'modifyTimestamp'] as const;

function schemaError(msg: string): never {
  throw new Error(`schema: ${msg}`);
}

/** Checks a definition and compiles it into case-insensitive look-ups. Throws on a bad definition. */
export function compileSchema(def: SchemaDefinition): Schema {
  const attrs = new Map<string, AttributeType>();
  for (const a of def.attributeTypes) {
    if (!SYNTAXES.has(a.syntax)) schemaError(`${a.name} has unknown syntax ${String(a.syntax)}`);
    for (const n of [a.name, ...(a.aliases ?? [])]) {
      if (typeof n !== 'string' || !NAME.test(n)) schemaError(`invalid attribute name ${JSON.stringify(n)}`);
      const k = n.toLowerCase();
      if (attrs.has(k)) schemaError(`attribute name ${n} defined twice`);
      attrs.set(k, a);
    }
    if (a.references && a.syntax !== 'dn') schemaError(`${a.name} references need syntax dn`);
    if (a.references && a.references !== 'restrict' && a.references !== 'remove') schemaError(`${a.name} has an unknown references mode`);
    if (a.syntax === 'secret' && (a.indexed || a.operational)) schemaError(`the secret ${a.name} cannot be indexed or operational`);
    if (a.maxLength !== undefined && !(Number.isInteger(a.maxLength) && a.maxLength > 0 && a.maxLength <= 1 << 20)) {
      schemaError(`${a.name} has an invalid maxLength`);
    }
  }
  for (const required of REQUIRED) {
    if (!attrs.has(required.toLowerCase())) schemaError(`the attribute ${required} is missing (merge coreSchema)`);
  }
  const classes = new Map<string, ObjectClass>();
  for (const c of def.objectClasses) {
    if (typeof c.name !== 'string' || !NAME.test(c.name)) schemaError(`invalid object class name ${JSON.stringify(c.name)}`);
    if (!KINDS.has(c.kind)) schemaError(`${c.name} has an unknown kind ${String(c.kind)}`);
    const k = c.name.toLowerCase();
    if (classes.has(k)) schemaError(`object class ${c.name} defined twice`);
    classes.set(k, c);
  }
  for (const c of def.objectClasses) {
    for (const a of [...c.must, ...c.may]) if (!attrs.has(a.toLowerCase())) schemaError(`${c.name} names unknown attribute ${a}`);
    // the superior chain must exist, end, and keep kinds compatible (RFC 4512 §2.4.1-2.4.3)
    const seen = new Set<string>([c.name.toLowerCase()]);
    for (let cur = c; cur.sup; ) {
      const sup = classes.get(cur.sup.toLowerCase());
      if (!sup) schemaError(`${cur.name} has unknown superior ${cur.sup}`);
      if (seen.has(sup.name.toLowerCase())) schemaError(`${c.name} has a cycle of superiors`);
      if (sup.kind !== 'abstract' && sup.kind !== cur.kind) schemaError(`${cur.name} (${cur.kind}) cannot derive from ${sup.name} (${sup.kind})`);
      seen.add(sup.name.toLowerCase());
      cur = sup;
    }
  }
  checkUniqueRules(def.unique ?? [], (n) => attrs.get(n.toLowerCase()), (n) => classes.has(n.toLowerCase()));
  const allowedCache = new Map<string, { must: Set<string>; may: Set<string> }>();
  // the names as the definition spells them, looked up first: most names asked for are spelled so (stored ones always)
  const attrsAsSpelled = new Map<string, AttributeType>();
  for (const a of def.attributeTypes) for (const n of [a.name, ...(a.aliases ?? [])]) attrsAsSpelled.set(n, a);
  const classesAsSpelled = new Map(def.objectClasses.map((c) => [c.name, c]));
  const schema: Schema = {
    definition: def,
    attribute: (name) => attrsAsSpelled.get(name) ?? attrs.get(name.toLowerCase()),
    objectClass: (name) => classesAsSpelled.get(name) ?? classes.get(name.toLowerCase()),
    allowed(ocs) {
      const key = ocs.map((o) => o.toLowerCase()).sort().join(',');
      const hit = allowedCache.get(key);
      if (hit) return hit;
      const must = new Set<string>();
      const may = new Set<string>();
      for (const o of ocs) {
        for (let c = classes.get(o.toLowerCase()); c; c = c.sup ? classes.get(c.sup.toLowerCase()) : undefined) {
          for (const a of c.must) must.add(attrs.get(a.toLowerCase())!.name);
          for (const a of c.may) may.add(attrs.get(a.toLowerCase())!.name);
        }
      }
      const out = { must, may };
      if (allowedCache.size < 1000) allowedCache.set(key, out);
      return out;
    },
  };
  return schema;
}

/**
 * Uniqueness rules name indexed attributes (the write path finds a key's
 * holder through the index), neither secret nor operational; a key of
 * several attributes needs single-valued ones; the sources of one rule
 * agree in number and syntax of attributes, so their keys compare; a
 * refusal names only the source's attributes and the holder.
 */
function checkUniqueRules(rules: readonly UniqueRule[], attribute: (name: string) => AttributeType | undefined, hasClass: (name: string) => boolean): void {
  const names = new Set<string>();
  for (const r of rules) {
    if (typeof r.name !== 'string' || r.name === '') schemaError('a uniqueness rule needs a name');
    if (names.has(r.name)) schemaError(`uniqueness rule ${r.name} defined twice`);
    names.add(r.name);
    if (!(r.keys?.length > 0)) schemaError(`uniqueness rule ${r.name} has no keys`);
    let syntaxes: string[] | undefined;
    for (const k of r.keys) {
      if (!(k.attrs?.length > 0)) schemaError(`uniqueness rule ${r.name} has a key of no attribute`);
      const types = k.attrs.map((a) => {
        const at = attribute(a);
        if (!at) schemaError(`uniqueness rule ${r.name} names unknown attribute ${a}`);
        if (!at.indexed || at.syntax === 'secret' || at.operational) schemaError(`uniqueness rule ${r.name}: ${a} must be indexed, not secret nor operational`);
        if (k.attrs.length > 1 && !at.singleValue) schemaError(`uniqueness rule ${r.name}: ${a} must be single-valued in a key of several attributes`);
        return at;
      });
      if (new Set(types).size !== types.length) schemaError(`uniqueness rule ${r.name} names an attribute twice in one key`);
      const these = types.map((t) => t.syntax);
      if (syntaxes && these.join() !== syntaxes.join()) schemaError(`uniqueness rule ${r.name}: its keys differ in attributes' number or syntax`);
      syntaxes = these;
      if (k.objectClass !== undefined && !hasClass(k.objectClass)) schemaError(`uniqueness rule ${r.name} names unknown object class ${k.objectClass}`);
      if (typeof k.refusal !== 'string') schemaError(`uniqueness rule ${r.name} has a key without refusal words`);
      for (const [, name] of k.refusal.matchAll(/\{(\w+)\}/g)) {
        if (name !== 'holder' && !types.some((t) => t.name === name)) schemaError(`uniqueness rule ${r.name}: its refusal names {${name}}, not an attribute of its key`);
      }
    }
  }
}

/** The superior chain of a class, itself first. */
export function superiors(schema: Schema, name: string): ObjectClass[] {
  const out: ObjectClass[] = [];
  for (let c = schema.objectClass(name); c && out.length < 32; c = c.sup ? schema.objectClass(c.sup) : undefined) out.push(c);
  return out;
}

const INTEGER = /^-?\d{1,30}$/;
const GENERALIZED_TIME = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})?(?:[.,](\d{1,9}))?(Z|[+-]\d{4})$/;

/**
 * A GeneralizedTime (RFC 4517 §3.3.13) as UTC `YYYYMMDDHHMMSSZ` (fractions
 * dropped); undefined when the value is not one.
 */
export function canonicalTime(value: string): string | undefined {
  const m = GENERALIZED_TIME.exec(value);
  if (!m) return undefined;
  const [y, mo, d, h, mi, sec] = m.slice(1, 7).map((x) => Number(x ?? '0')) as [number, number, number, number, number, number];
  const zone = m[8]!;
  if (mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59) return undefined;
  let t = Date.UTC(y, mo - 1, d, h, mi, sec);
  if (new Date(t).getUTCDate() !== d) return undefined;
  if (zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const oh = Number(zone.slice(1, 3));
    const om = Number(zone.slice(3, 5));
    if (oh > 23 || om > 59) return undefined;
    t -= sign * (oh * 60 + om) * 60_000;
  }
  const out = new Date(t);
  if (out.getUTCFullYear() < 1 || out.getUTCFullYear() > 9999) return undefined;
  return generalizedTime(out);
}

/** White space that trimming or folding would change: at either end, two in a row, or any but a plain space. */
const SPACE_WORK = /^\s|\s$|\s\s|[^\S ]/;

/** Normalised value for matching and indexes; throws on values the syntax cannot hold. */
export function normalizeValue(syntax: Syntax, value: string): string {
  switch (syntax) {
    case 'string':
      // most values have no space to trim or fold (a name, an object class, single spaces between words): only their case
      return SPACE_WORK.test(value) ? value.trim().replace(/\s+/g, ' ').toLowerCase() : value.toLowerCase();
    case 'dn':
      return normalizeDn(value);
    case 'integer': {
      const v = value.trim();
      if (!INTEGER.test(v)) throw new Error('not an integer');
      return String(BigInt(v));
    }
    case 'boolean':
      return value.trim().toUpperCase();
    case 'time': {
      const t = canonicalTime(value.trim());
      if (t === undefined) throw new Error('not a GeneralizedTime');
      return t;
    }
    default:
      return value;
  }
}

/**
 * The key stored in and looked up from indexes: the normalised value, except
 * integers, which get an order-preserving encoding so that SQL range queries
 * order them numerically (sign, digit count, digits; for negatives the count
 * and digits complemented).
 */
export function indexKey(syntax: Syntax, normalized: string): string {
  if (syntax !== 'integer') return normalized;
  if (normalized.startsWith('-')) {
    const digits = normalized.slice(1);
    return 'n' + String(99 - digits.length).padStart(2, '0') + digits.replace(/\d/g, (d) => String(9 - Number(d)));
  }
  return 'p' + String(normalized.length).padStart(2, '0') + normalized;
}

/** Whether a stored value is well-formed for its syntax. */
export function validSyntax(syntax: Syntax, value: string): boolean {
  switch (syntax) {
    case 'integer':
      return INTEGER.test(value);
    case 'boolean':
      return value === 'TRUE' || value === 'FALSE';
    case 'time':
      return /^\d{14}Z$/.test(value) && canonicalTime(value) === value;
    case 'binary':
      return /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0;
    case 'dn':
      try {
        normalizeDn(value);
        return value.trim() !== '';
      } catch {
        return false;
      }
    default:
      return value.length > 0 && !value.includes('\u0000');
  }
}

/**
 * Ordering for >= and <= on normalised values: numeric for integers, Unicode
 * code point order otherwise (the order SQLite's BINARY collation gives UTF-8
 * text, so index ranges and the evaluator agree).
 */
export function compareValues(syntax: Syntax, a: string, b: string): number {
  if (syntax === 'integer') {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return compareCodePoints(a, b);
}

export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // surrogates encode code points above U+FFFF: they sort after U+E000-U+FFFF
    if (x >= 0xd800 && x <= 0xdfff) x += 0x10000;
    if (y >= 0xd800 && y <= 0xdfff) y += 0x10000;
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** LDAP GeneralizedTime for a Date (seconds precision, UTC). */
export function generalizedTime(d: Date = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
}
