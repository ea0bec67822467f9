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
import { normalizeDn, parseDn } from '../directory/dn.js';
import { compileFilter } from '../directory/filter.js';
import { containers } from '../directory/layout.js';
import { DirectoryError, type Entry, type Filter } from '../directory/types.js';
import type { PartialAttribute } from '../ldap/protocol-responses.js';
import { hostgroupObject } from '../objects/hostgroup.js';
import type { Selection } from './attributes.js';
import type { ServiceContext } from './context.js';

const NAME = 'memberof';
const NO_SECRETS: ReadonlySet<string> = new Set();

/** The containers whose entries' `member` makes memberOf. */
function holderContainers(baseDn: string): string[] {
  const c = containers(baseDn);
  return [c.groups, `${hostgroupObject.container},${baseDn}`, c.roles, c.privileges];
}

/** Who holds whom, from one state of the holders' subtrees. */
export class MembershipIndex {
  /** per normalised DN: the normalised DNs of the entries whose member names it */
  private readonly heldBy = new Map<string, string[]>();
  /** per holder's normalised DN: its members' DNs as stored */
  private readonly members = new Map<string, string[]>();
  /** holders' DNs as stored, by normalised DN */
  private readonly dnOf = new Map<string, string>();
  private readonly up = new Map<string, string[]>();

  constructor(holders: readonly Entry[]) {
    for (const h of holders) {
      const nh = normalizeDn(h.dn);
      this.dnOf.set(nh, h.dn);
      const list = h.attrs.member ?? [];
      this.members.set(nh, list);
      for (const m of list) {
        const nm = tryNormalize(m);
        if (nm === undefined) continue;
        const l = this.heldBy.get(nm);
        if (l) l.push(nh);
        else this.heldBy.set(nm, [nh]);
      }
    }
  }

  /** The DNs of every holder of `dn`, nested ones included, each once (kept for the index's life). */
  memberOf(dn: string): string[] {
    const n = tryNormalize(dn);
    if (n === undefined) return [];
    let out = this.up.get(n);
    if (out) return out;
    out = [];
    const seen = new Set([n]);
    let frontier = [n];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const d of frontier)
        for (const h of this.heldBy.get(d) ?? []) {
          if (seen.has(h)) continue;
          seen.add(h);
          out.push(this.dnOf.get(h)!);
          next.push(h);
        }
      frontier = next;
    }
    this.up.set(n, out);
    return out;
  }

  /** The DNs (as stored) of every member of the holder at `dn`, nested ones included, each once. */
  membersOf(dn: string): string[] {
    const n = tryNormalize(dn);
    if (n === undefined || !this.members.has(n)) return [];
    const out: string[] = [];
    const seen = new Set([n]);
    let frontier = [n];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const d of frontier)
        for (const m of this.members.get(d) ?? []) {
          const nm = tryNormalize(m);
          if (nm === undefined || seen.has(nm)) continue;
          seen.add(nm);
          out.push(m);
          if (this.members.has(nm)) next.push(nm);
        }
      frontier = next;
    }
    return out;
  }
}

function tryNormalize(dn: string): string | undefined {
  try {
    return normalizeDn(dn);
  } catch {
    return undefined;
  }
}

interface Kept {
  state: string;
  index: Promise<MembershipIndex>;
}
const kept = new WeakMap<object, Kept>();

/** The index as of the directory's current state: the one kept, or one built now (once; concurrent readers share it). */
export function membershipIndex(ctx: ServiceContext): Promise<MembershipIndex> {
  const bases = holderContainers(ctx.dir.baseDn);
  const state = bases.map((dn) => ctx.dir.subtreeGeneration(dn)).join(',');
  const hit = kept.get(ctx.dir);
  if (hit && hit.state === state) return hit.index;
  const index = (async () => {
    const holders: Entry[] = [];
    for (const base of bases) {
      try {
        holders.push(...(await ctx.dir.search({ base, scope: 'one', filter: '(member=*)', attrs: ['member'] })).entries);
      } catch (e) {
        // a realm without the container has no holders there
        if (!(e instanceof DirectoryError && e.code === 'noSuchObject')) throw e;
      }
    }
    return new MembershipIndex(holders);
  })();
  const k: Kept = { state, index };
  kept.set(ctx.dir, k);
  index.catch(() => {
    if (kept.get(ctx.dir) === k) kept.delete(ctx.dir);
  });
  return index;
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
  return (e) => test({ attrs: { ...e.attrs, memberOf: index.memberOf(e.dn) }, secrets: NO_SECRETS });
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
