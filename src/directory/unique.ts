/**
 * Uniqueness (slapd's unique overlay, kanidm's attrunique): the write
 * plugin that enforces the schema's {@link UniqueRule}s. A write that gives
 * an entry a key it did not hold before is refused with a
 * {@link UniquenessViolation} naming the entry that holds it; keys the
 * entry held already are not looked up again, so a write that leaves them
 * alone costs no look-up. The holder is found through the index
 * (`StorageTx.holding`) inside the write's transaction, which sees the
 * transaction's own writes (an earlier operation of the same batch) and
 * everything committed before it: writers take turns (one synchronous
 * SQLite transaction; on PostgreSQL the write lock every write
 * transaction takes first, docs/postgresql.md), so no other write can
 * take the key between the look-up and the commit. Backend-independent.
 */
import { parseDn } from './dn.js';
import { hasObjectClass, sameValues } from './entry.js';
import type { WritePluginFactory } from './plugin.js';
import { indexKey, normalizeValue } from './schema.js';
import { wait, type Steps, type StorageTx, type StoredEntry } from './storage.js';
import { UniquenessViolation, type AttributeType, type Attributes, type Entry, type Schema } from './types.js';

interface Source {
  attrs: readonly AttributeType[];
  objectClass: string | undefined;
  refusal: string;
}

interface Rule {
  name: string;
  sources: readonly Source[];
}

/** One key an entry holds: its identity within the rule (the index keys of its values), and the values as stored. */
interface Key {
  id: string;
  parts: string[];
  values: string[];
}

/** The keys of one source in an entry's attributes; none when it lacks the object class or an attribute of a compound key. */
function keysOf(s: Source, attrs: Attributes): Key[] {
  if (s.objectClass !== undefined && !hasObjectClass(attrs.objectClass, s.objectClass)) return [];
  const out: Key[] = [];
  if (s.attrs.length === 1) {
    const at = s.attrs[0]!;
    for (const v of attrs[at.name] ?? []) {
      const part = partOf(at, v);
      if (part !== undefined) out.push({ id: part, parts: [part], values: [v] });
    }
    return out;
  }
  const parts: string[] = [];
  const values: string[] = [];
  for (const at of s.attrs) {
    const vs = attrs[at.name];
    if (vs?.length !== 1) return [];
    const part = partOf(at, vs[0]!);
    if (part === undefined) return [];
    parts.push(part);
    values.push(vs[0]!);
  }
  return [{ id: parts.join('\u0000'), parts, values }];
}

/** A value's index key; undefined for one its syntax cannot hold (the schema refuses those before). */
function partOf(at: AttributeType, value: string): string | undefined {
  try {
    return indexKey(at.syntax, normalizeValue(at.syntax, value));
  } catch {
    return undefined;
  }
}

/** The ids of every key an entry holds under a rule. */
function keyIds(rule: Rule, attrs: Attributes | undefined): Set<string> {
  const out = new Set<string>();
  if (attrs) for (const s of rule.sources) for (const k of keysOf(s, attrs)) out.add(k.id);
  return out;
}

/** Whether a write leaves a source's attributes (and object class) as they were: then it gives no new key of it. */
function untouched(s: Source, before: Attributes, after: Attributes): boolean {
  if (s.objectClass !== undefined && !sameValues(before.objectClass, after.objectClass)) return false;
  return s.attrs.every((at) => sameValues(before[at.name], after[at.name]));
}

/** How a refusal shows a value: as stored, a DN as its first RDN's value (an IdP reference's name). */
function shown(at: AttributeType, value: string): string {
  if (at.syntax !== 'dn') return value;
  try {
    return parseDn(value)[0]?.[0]?.value ?? value;
  } catch {
    return value;
  }
}

/** An entry other than `self` holding `key` of `rule`, or undefined. */
function* holderOf<E extends StoredEntry>(rule: Rule, key: Key, tx: StorageTx<E>, self: E['id'] | undefined): Steps<E | undefined> {
  for (const s of rule.sources) {
    for (const id of yield* wait(tx.holding(s.attrs[0]!.name, key.parts[0]!))) {
      if (id === self) continue;
      const e = yield* wait(tx.entryById(id));
      if (!e) continue;
      // the first attribute's value is the key's; the others and the object class are checked on the entry
      if ((s.attrs.length > 1 || s.objectClass !== undefined) && !keysOf(s, yield* wait(tx.attrs(e))).some((k) => k.id === key.id)) continue;
      return e;
    }
  }
  return undefined;
}

function compile(schema: Schema): Rule[] {
  return (schema.definition.unique ?? []).map((r) => ({
    name: r.name,
    sources: r.keys.map((k) => ({ attrs: k.attrs.map((a) => schema.attribute(a)!), objectClass: k.objectClass, refusal: k.refusal })),
  }));
}

/** The write plugin for a schema's uniqueness rules; null without any. */
export const unique: WritePluginFactory = (schema) => {
  const rules = compile(schema);
  if (rules.length === 0) return null;
  return {
    name: 'uniqueness',
    *pre(w, tx) {
      for (const rule of rules) {
        let held: Set<string> | undefined;
        for (const s of rule.sources) {
          if (w.before && untouched(s, w.before, w.after)) continue;
          for (const key of keysOf(s, w.after)) {
            held ??= keyIds(rule, w.before);
            if (held.has(key.id)) continue;
            const holder = yield* holderOf(rule, key, tx, w.entry?.id);
            if (!holder) continue;
            const values = Object.fromEntries(s.attrs.map((at, i) => [at.name, shown(at, key.values[i]!)]));
            throw new UniquenessViolation(rule.name, s.refusal, values, { attr: s.attrs[0]!.name, dn: w.dn, holder: holder.dn });
          }
        }
      }
    },
    verify(entries: readonly Entry[]) {
      const out: string[] = [];
      for (const rule of rules) {
        const holders = new Map<string, string>();
        for (const e of entries) {
          for (const s of rule.sources) {
            for (const key of keysOf(s, e.attrs)) {
              const first = holders.get(key.id);
              if (first === undefined) holders.set(key.id, e.dn);
              else if (first !== e.dn) out.push(`${rule.name} ${key.values.join(', ')}: held by ${first} and by ${e.dn}`);
            }
          }
        }
      }
      return out;
    },
  };
};
