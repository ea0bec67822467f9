/**
 * Which attributes of an entry a search returns (RFC 4511 §4.5.1.8,
 * RFC 3673, docs/ldap.md "Search"): none listed or `*` means every user
 * attribute, `+` every operational one, names pick single attributes (in
 * any spelling the schema knows, returned under its canonical name), and
 * `1.1` alone means none. typesOnly keeps the names without values.
 * Secrets are never here: the directory does not return them, and a secret
 * named anyway is skipped, so not even its name goes out. Values of the
 * binary syntax are stored as base64 and go out as their bytes.
 */
import type { Attributes, Schema } from '../directory/types.js';
import type { PartialAttribute } from '../ldap/protocol-responses.js';
import { sameValues } from '../directory/entry.js';
import { filterAttributeType } from '../directory/filter.js';
import { defaultAssertionValue } from '../ldap/filter.js';

export interface Selection {
  readonly allUser: boolean;
  readonly allOperational: boolean;
  /** lower-cased names asked for one by one */
  readonly named: ReadonlySet<string>;
  /** the same names as the schema spells them (aliases resolved) */
  readonly canonical: ReadonlySet<string>;
}

/**
 * Selections already worked out, per schema, with the lists they were made
 * from: a host's SSSD sends the same few lists all day, so the last few
 * are kept and a list is compared with them name by name (cheaper than
 * looking its names up in the schema again).
 */
const selections = new WeakMap<Schema, Array<{ requested: readonly string[]; sel: Selection }>>();
const SELECTIONS_KEPT = 16;

/** The selection a search's attribute list makes (shared: not to be changed). */
export function selection(schema: Schema, requested: readonly string[]): Selection {
  let known = selections.get(schema);
  if (!known) selections.set(schema, (known = []));
  for (const k of known) if (sameValues(k.requested, requested)) return k.sel;
  const sel = select(schema, requested);
  if (known.length >= SELECTIONS_KEPT) known.shift();
  // a frozen list (the decoder shares one per list of octets) is kept as it is, and found by identity next time
  known.push({ requested: Object.isFrozen(requested) ? requested : [...requested], sel });
  return sel;
}

function select(schema: Schema, requested: readonly string[]): Selection {
  const named = new Set<string>();
  const canonical = new Set<string>();
  let allUser = requested.length === 0;
  let allOperational = false;
  for (const r of requested) {
    if (r === '*') allUser = true;
    else if (r === '+') allOperational = true;
    else if (r !== '1.1') {
      named.add((r.includes(';') ? r.slice(0, r.indexOf(';')) : r).toLowerCase());
      const at = filterAttributeType(schema, r);
      if (at) canonical.add(at.name);
    }
  }
  return { allUser, allOperational, named, canonical };
}

/** An assertion value (filter, compare) as the directory compares it: binary values as base64 text, others as text. */
export function assertionValue(schema: Schema, attr: string, value: Buffer): string {
  return filterAttributeType(schema, attr)?.syntax === 'binary' ? value.toString('base64') : defaultAssertionValue(attr, value);
}

/** The attributes of a directory entry the selection keeps, canonical names, values as they go on the wire. */
export function selectFromEntry(schema: Schema, attrs: Attributes, sel: Selection, typesOnly: boolean): PartialAttribute[] {
  const names = sel.canonical;
  const out: PartialAttribute[] = [];
  for (const name in attrs) {
    const values = attrs[name]!;
    const at = schema.attribute(name);
    if (!at || at.syntax === 'secret' || values.length === 0) continue;
    const wanted = names.has(at.name) || (at.operational ? sel.allOperational : sel.allUser);
    if (!wanted) continue;
    out.push({ type: at.name, values: typesOnly ? [] : at.syntax === 'binary' ? values.map((v) => Buffer.from(v, 'base64')) : values });
  }
  return out;
}

/** The attributes of an entry the service makes up (root DSE, subschema): `operational` says which are. */
export function selectFromSynthetic(attrs: Attributes, operational: ReadonlySet<string>, sel: Selection, typesOnly: boolean): PartialAttribute[] {
  const out: PartialAttribute[] = [];
  for (const [name, values] of Object.entries(attrs)) {
    const op = operational.has(name.toLowerCase());
    if (!(sel.named.has(name.toLowerCase()) || (op ? sel.allOperational : sel.allUser))) continue;
    out.push({ type: name, values: typesOnly ? [] : values });
  }
  return out;
}
