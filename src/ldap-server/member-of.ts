/**
 * `memberOf` (docs/ldap.md "memberOf"): the DNs of every group, host
 * group, role and privilege whose `member` holds an entry, directly or
 * through nested members, as FreeIPA's memberOf plugin and OpenLDAP's
 * memberof overlay publish it, so `ldap_access_filter = (memberOf=…)` and
 * other LDAP applications work. It is not stored: the LDAP service works it
 * out at read time from a reverse-membership index built once per state of
 * the holders' subtrees (Directory.subtreeGeneration), so a write that
 * changes a membership (referential integrity's rewrites included) is seen
 * by the next search, and a search costs a map look-up per entry. It is
 * operational, as OpenLDAP's: returned when named or with `+`. A filter
 * item on it is answered from the index: the directory is asked for a
 * superset (an equality becomes the RDNs of the group's members, nested
 * ones included; any other item, or one under NOT, drops out), and each
 * entry found is then decided by the whole filter with its memberOf.
 */
import { parseDn } from '../directory/dn.js';
import { compileFilter } from '../directory/filter.js';
import type { Entry, Filter } from '../directory/types.js';
import type { PartialAttribute } from '../ldap/protocol-responses.js';
import { membershipIndex as directoryMembership, type MembershipIndex } from '../objects/membership.js';
import type { Selection } from './attributes.js';
import type { ServiceContext } from './context.js';

const NAME = 'memberof';
const NO_SECRETS: ReadonlySet<string> = new Set();

/** The reverse-membership index of the service's directory as it stands (objects/membership.ts). */
export function membershipIndex(ctx: ServiceContext): Promise<MembershipIndex> {
  return directoryMembership(ctx.dir);
}

const isMemberOf = (attr: string) => {
  const semi = attr.indexOf(';');
  return (semi < 0 ? attr : attr.slice(0, semi)).toLowerCase() === NAME;
};

/** Whether a filter has an item on memberOf. */
export function namesMemberOf(f: Filter): boolean {
  switch (f.kind) {
    case 'and':
    case 'or':
      return f.items.some(namesMemberOf);
    case 'not':
      return namesMemberOf(f.item);
    default:
      return isMemberOf(f.attr);
  }
}

const TRUE: Filter = { kind: 'and', items: [] };
const FALSE: Filter = { kind: 'or', items: [] };

/**
 * A filter for the directory that selects every entry `f` selects once
 * memberOf is known (and maybe more): an equality on memberOf becomes the
 * RDNs of the holder's members; any other memberOf item becomes TRUE, or
 * FALSE under an odd number of NOTs.
 */
export function memberOfSuperset(f: Filter, index: MembershipIndex, positive = true): Filter {
  switch (f.kind) {
    case 'and':
    case 'or':
      return { kind: f.kind, items: f.items.map((i) => memberOfSuperset(i, index, positive)) };
    case 'not':
      return { kind: 'not', item: memberOfSuperset(f.item, index, !positive) };
    default: {
      if (!isMemberOf(f.attr)) return f;
      if (!positive) return FALSE;
      if (f.kind !== 'eq') return TRUE;
      const items: Filter[] = [];
      for (const dn of index.membersOf(f.value)) {
        const rdn = parseDn(dn)[0]!;
        const avas: Filter[] = rdn.map((a) => ({ kind: 'eq', attr: a.type, value: a.value }));
        items.push(avas.length === 1 ? avas[0]! : { kind: 'and', items: avas });
      }
      return { kind: 'or', items };
    }
  }
}

/** The exact test of `f` on an entry with its memberOf (the entry needs every attribute the filter names). */
export function memberOfTest(ctx: ServiceContext, f: Filter, index: MembershipIndex): (e: Entry) => boolean {
  const test = compileFilter(ctx.dir.schema, f);
  return (e) => test({ attrs: { ...e.attrs, memberOf: index.memberOf(e.dn) as string[] }, secrets: NO_SECRETS });
}

/** Whether a selection asks for memberOf (by name or with `+`). */
export function wantsMemberOf(sel: Selection): boolean {
  return sel.allOperational || sel.named.has(NAME);
}

/** The memberOf attribute of an entry, if it has one. */
export function memberOfAttribute(index: MembershipIndex, e: Entry, typesOnly: boolean): PartialAttribute[] {
  const values = index.memberOf(e.dn);
  return values.length === 0 ? [] : [{ type: 'memberOf', values: typesOnly ? [] : values }];
}
