/**
 * Referential integrity of DN-valued attributes with `references`: new
 * values must name existing entries (the write plugin {@link refint},
 * which the write path runs first of its plugins), a delete is refused
 * while a 'restrict' value names the entry and drops 'remove' values from
 * their referrers, and a rename rewrites every value naming the entry or a
 * descendant (rules as pure functions, which the write path applies around
 * the delete or rename, with the storage's look-ups). Backend-independent.
 */
import { isWithin, normalizeDn, rebaseDn } from './dn.js';
import type { WritePluginFactory } from './plugin.js';
import { wait, type OutgoingReference, type Reference, type Steps, type StorageTx, type StoredEntry } from './storage.js';
import { DirectoryError, type Attributes, type Schema } from './types.js';

/**
 * The write plugin: the values an add, modify or rename gives a
 * referencing attribute (those it did not hold before) name entries that
 * exist; verify finds stored values naming none.
 */
export const refint: WritePluginFactory = (schema) => {
  if (!schema.definition.attributeTypes.some((a) => a.references)) return null;
  return {
    name: 'referential integrity',
    *pre<E extends StoredEntry>(w: { after: Attributes; before: Attributes | undefined }, tx: StorageTx<E>): Steps<void> {
      for (const r of newReferences(schema, w.after, w.before)) {
        if (!(yield* wait(tx.entry(r.target)))) throw targetMissing(r);
      }
    },
    verify(entries) {
      const dns = new Set(entries.map((e) => normalizeDn(e.dn)));
      const out: string[] = [];
      for (const e of entries) {
        for (const r of referencesOf(schema, e.attrs)) if (!dns.has(r.target)) out.push(`${e.dn}: ${r.attr} names ${r.target}, which does not exist`);
      }
      return out;
    },
  };
};

/** The normalised targets of every referencing value of an entry, for the backend's reference table. */
export function referencesOf(schema: Schema, attrs: Attributes): OutgoingReference[] {
  const out: OutgoingReference[] = [];
  for (const name in attrs) {
    if (!schema.attribute(name)?.references) continue;
    for (const v of attrs[name]!) out.push({ attr: name, target: normalizeDn(v) });
  }
  return out;
}

/**
 * The values added to referencing attributes (those not already in
 * `before`), in order: each must name an entry that exists.
 */
export function newReferences(schema: Schema, attrs: Attributes, before: Attributes | undefined): { attr: string; value: string; target: string }[] {
  const out: { attr: string; value: string; target: string }[] = [];
  for (const name in attrs) {
    if (!schema.attribute(name)?.references) continue;
    const old = new Set((before?.[name] ?? []).map((v) => normalizeDn(v)));
    for (const v of attrs[name]!) {
      const n = normalizeDn(v);
      if (!old.has(n)) out.push({ attr: name, value: v, target: n });
    }
  }
  return out;
}

/** The error for a new reference naming no entry. */
export function targetMissing(r: { attr: string; value: string }): DirectoryError {
  return new DirectoryError('referenceTargetMissing', `${r.attr}: no entry ${r.value}`, { attr: r.attr, dn: r.value });
}

/**
 * What deleting the entry `ndn` does to the references naming it: throws
 * 'referenced' when one is 'restrict', else lists per referrer the
 * attributes to drop the value from. Self-references go with the entry.
 */
export function planDelete<Id>(schema: Schema, dn: string, self: Id, refs: readonly Reference<Id>[]): Map<Id, Set<string>> {
  const others = refs.filter((r) => r.entry !== self);
  for (const r of others) {
    if (schema.attribute(r.attr)?.references === 'restrict') {
      throw new DirectoryError('referenced', `${dn} is referenced by ${r.attr}`, { dn, attr: r.attr });
    }
  }
  return byReferrer(others);
}

/** The attributes of each referring entry. */
function byReferrer<Id>(refs: readonly Reference<Id>[]): Map<Id, Set<string>> {
  const out = new Map<Id, Set<string>>();
  for (const r of refs) out.set(r.entry, (out.get(r.entry) ?? new Set()).add(r.attr));
  return out;
}

/** The values of `attr` left when the entry `ndn` is deleted. */
export function withoutTarget(values: readonly string[], ndn: string): string[] {
  return values.filter((v) => normalizeDn(v) !== ndn);
}

/**
 * Rewrites the values of `attrNames` that name the renamed entry (old
 * normalised DN `oldNdn`, `depth` RDNs deep) or a descendant, to name it
 * under its new DN. Returns a new attribute object.
 */
export function rewriteReferences(attrs: Attributes, attrNames: Iterable<string>, oldNdn: string, depth: number, newDn: string): Attributes {
  const out: Attributes = { ...attrs };
  for (const a of attrNames) {
    const values = out[a];
    if (values) out[a] = values.map((v) => (isWithin(normalizeDn(v), oldNdn) ? rebaseDn(v, depth, newDn) : v));
  }
  return out;
}

/** Groups the references naming a renamed subtree by referrer. */
export function referrersWithin<Id>(refs: readonly Reference<Id>[], oldNdn: string): Map<Id, Set<string>> {
  return byReferrer(refs.filter((r) => isWithin(r.target, oldNdn)));
}
