/**
 * Who holds whom: the reverse of `member` over every entry that holds
 * members (groups, host groups, roles, privileges), nested holdings
 * included, built in memory once per state of the holders' subtrees
 * (Directory.subtreeGeneration), so a write that changes a membership
 * (referential integrity's rewrites included) is seen by the next reader.
 * The LDAP service publishes `memberOf` from it (ldap-server/member-of.ts)
 * and the evaluation of host-based access reads a user's groups from it
 * (hbac-eval.ts): one index, so the groups a host is told a user is in and
 * the groups the access rules see are the same, and an access check costs
 * map look-ups, not a search.
 */
import { normalizeDn } from '../directory/dn.js';
import { sameValues } from '../directory/entry.js';
import { derived, type Derivation } from '../directory/derived.js';
import { containers } from '../directory/layout.js';
import { DirectoryError, type Directory, type Entry } from '../directory/types.js';
import { containerDn } from '../framework/place.js';
import { hostgroupObject } from './hostgroup.js';

/** The containers whose entries' `member` makes a holding. */
export function holderContainers(baseDn: string): string[] {
  const c = containers(baseDn);
  return [c.groups, containerDn(hostgroupObject, baseDn), c.roles, c.privileges];
}

function tryNormalize(dn: string): string | undefined {
  try {
    return normalizeDn(dn);
  } catch {
    return undefined;
  }
}

const NONE = { normal: [] as readonly string[], stored: [] as readonly string[] };

/** How many entries' nested holders an index keeps worked out (the oldest go first). */
const KEPT = 200_000;

/** Who holds whom, from one state of the holders' subtrees. */
export class MembershipIndex {
  /** per normalised DN: the normalised DNs of the entries whose member names it */
  private readonly heldBy = new Map<string, string[]>();
  /** per holder's normalised DN: its members' DNs as stored */
  private readonly members = new Map<string, string[]>();
  /** holders' DNs as stored, by normalised DN */
  private readonly dnOf = new Map<string, string>();
  /** per normalised DN: its nested holders, normalised and as stored */
  private readonly up = new Map<string, { normal: readonly string[]; stored: readonly string[] }>();

  /** per holder's normalised DN: its members' DNs normalised (undefined where one does not parse), kept for the next index */
  private readonly normalMembers = new Map<string, readonly (string | undefined)[]>();

  /**
   * `previous`, an index of an earlier state, lends the normal forms of the
   * members of each holder whose member list is unchanged (compared value by
   * value), so a change to one group does not normalise every member of
   * every other one again.
   */
  constructor(holders: readonly Entry[], previous?: MembershipIndex) {
    for (const h of holders) {
      const list = h.attrs.member;
      if (!list || list.length === 0) continue;
      const nh = normalizeDn(h.dn);
      this.dnOf.set(nh, h.dn);
      this.members.set(nh, list);
      const before = previous?.members.get(nh);
      const normal = before && sameValues(before, list) ? previous!.normalMembers.get(nh)! : list.map(tryNormalize);
      this.normalMembers.set(nh, normal);
      for (const nm of normal) {
        if (nm === undefined) continue;
        const l = this.heldBy.get(nm);
        if (l) l.push(nh);
        else this.heldBy.set(nm, [nh]);
      }
    }
  }

  private holders(n: string): { normal: readonly string[]; stored: readonly string[] } {
    const out = this.up.get(n);
    if (out) return out;
    const direct = this.heldBy.get(n);
    // most entries are held by nothing, or by one holder held by nothing
    if (!direct) return NONE;
    if (direct.length === 1 && !this.heldBy.has(direct[0]!)) return this.remember(n, { normal: direct, stored: [this.dnOf.get(direct[0]!)!] });
    const normal: string[] = [];
    const seen = new Set([n]);
    let frontier = [n];
    while (frontier.length > 0) {
      const next: string[] = [];
      for (const d of frontier)
        for (const h of this.heldBy.get(d) ?? []) {
          if (seen.has(h)) continue;
          seen.add(h);
          normal.push(h);
          next.push(h);
        }
      frontier = next;
    }
    return this.remember(n, { normal, stored: normal.map((h) => this.dnOf.get(h)!) });
  }

  private remember(n: string, holders: { normal: readonly string[]; stored: readonly string[] }) {
    if (this.up.size >= KEPT) this.up.delete(this.up.keys().next().value!);
    this.up.set(n, holders);
    return holders;
  }

  /** The DNs (as stored) of every holder of `dn`, nested ones included, each once. */
  memberOf(dn: string): readonly string[] {
    const n = tryNormalize(dn);
    return n === undefined ? [] : this.holders(n).stored;
  }

  /** The normalised DNs of every holder of the entry whose normalised DN is `ndn`, nested ones included, each once. */
  holdersOf(ndn: string): readonly string[] {
    return this.holders(ndn).normal;
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

const membership: Derivation<MembershipIndex> = {
  subtrees: (dir) => holderContainers(dir.baseDn),
  async build(dir, previous) {
    const holders: Entry[] = [];
    for (const base of holderContainers(dir.baseDn)) {
      try {
        // every child, not (member=*): an index look-up of every member value costs more than reading the few holders without one
        holders.push(...(await dir.search({ base, scope: 'one', filter: '(objectClass=*)', attrs: ['member'], keep: true })).entries);
      } catch (e) {
        // a realm without the container has no holders there
        if (!(e instanceof DirectoryError && e.code === 'noSuchObject')) throw e;
      }
    }
    return new MembershipIndex(holders, previous);
  },
};

/** The index as of the directory's current state: the one kept, or one built now (once; concurrent readers share it). */
export function membershipIndex(dir: Directory): Promise<MembershipIndex> {
  return derived(dir, membership);
}
