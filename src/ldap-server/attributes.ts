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
import { filterAttributeType } from '../directory/filter.js';
import { defaultAssertionValue } from '../ldap/filter.js';

export interface Selection {
  allUser: boolean;
  allOperational: boolean;
  /** lower-cased names asked for one by one */
  named: Set<string>;
  /** the same names as the schema spells them (aliases resolved), worked out once per search */
  canonical: Set<string>;
}

export function selection(schema: Schema, requested: readonly string[]): Selection {
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
  for (const [name, values] of Object.entries(attrs)) {
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
