/**
 * Schema: attribute types and object classes (RFC 4512 §4.1, reduced to what
 * dirid needs), compiled for fast look-ups, plus per-syntax normalisation,
 * validation and ordering used by filters, indexes and writes.
 */
import { normalizeDn } from './dn.js';
import type { AttributeType, ObjectClass, Schema, SchemaDefinition, Syntax } from './types.js';

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

/** Merges schema definitions; a later definition may not redefine a name. */
export function mergeSchemas(...defs: SchemaDefinition[]): SchemaDefinition {
  return {
    attributeTypes: defs.flatMap((d) => d.attributeTypes),
    objectClasses: defs.flatMap((d) => d.objectClasses),
  };
}

export function compileSchema(def: SchemaDefinition): Schema {
  const attrs = new Map<string, AttributeType>();
  for (const a of def.attributeTypes) {
    for (const n of [a.name, ...(a.aliases ?? [])]) {
      const k = n.toLowerCase();
      if (attrs.has(k)) throw new Error(`schema: attribute name ${n} defined twice`);
      attrs.set(k, a);
    }
    if (a.references && a.syntax !== 'dn') throw new Error(`schema: ${a.name} references need syntax dn`);
  }
  const classes = new Map<string, ObjectClass>();
  for (const c of def.objectClasses) {
    const k = c.name.toLowerCase();
    if (classes.has(k)) throw new Error(`schema: object class ${c.name} defined twice`);
    classes.set(k, c);
  }
  for (const c of def.objectClasses) {
    if (c.sup && !classes.has(c.sup.toLowerCase())) throw new Error(`schema: ${c.name} has unknown superior ${c.sup}`);
    for (const a of [...c.must, ...c.may]) if (!attrs.has(a.toLowerCase())) throw new Error(`schema: ${c.name} names unknown attribute ${a}`);
  }
  const allowedCache = new Map<string, { must: Set<string>; may: Set<string> }>();
  const schema: Schema = {
    definition: def,
    attribute: (name) => attrs.get(name.toLowerCase()),
    objectClass: (name) => classes.get(name.toLowerCase()),
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

/** The superior chain of a class, itself first. */
export function superiors(schema: Schema, name: string): ObjectClass[] {
  const out: ObjectClass[] = [];
  for (let c = schema.objectClass(name); c && out.length < 32; c = c.sup ? schema.objectClass(c.sup) : undefined) out.push(c);
  return out;
}

/** Normalised value for matching and indexes; throws on values the syntax cannot hold. */
export function normalizeValue(syntax: Syntax, value: string): string {
  switch (syntax) {
    case 'string':
      return value.trim().replace(/\s+/g, ' ').toLowerCase();
    case 'dn':
      return normalizeDn(value);
    case 'integer':
      return String(BigInt(value.trim()));
    case 'boolean':
      return value.trim().toUpperCase();
    default:
      return value;
  }
}

/** Whether a stored value is well-formed for its syntax. */
export function validSyntax(syntax: Syntax, value: string): boolean {
  switch (syntax) {
    case 'integer':
      return /^-?\d{1,30}$/.test(value);
    case 'boolean':
      return value === 'TRUE' || value === 'FALSE';
    case 'time':
      return /^\d{14}Z$/.test(value);
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

/** Ordering for >= and <=: numeric for integers, code-unit order of normalised values otherwise. */
export function compareValues(syntax: Syntax, a: string, b: string): number {
  if (syntax === 'integer') {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** LDAP GeneralizedTime for a Date (seconds precision, UTC). */
export function generalizedTime(d: Date = new Date()): string {
  return d.toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
}
