/**
 * The one evaluation of host-based access (docs/hbac.md), which hbactest
 * and the LDAP service (the virtual `host` and `authorizedService` values
 * a host's SSSD checks at every login) both run, so they cannot disagree.
 * Access is granted when at least one enabled rule matches the user
 * (directly, through a group it is in, nested, or userCategory=all), the
 * host (directly, through a host group it is in, nested, or
 * hostCategory=all) and the PAM service (an HBAC service of that name,
 * directly or through a service group, or serviceCategory=all), as in
 * FreeIPA (SSSD's ipa_hbac). A service no HBAC service names is granted
 * only by a rule for all services; anything a rule names that does not
 * exist any more was dropped from it by the directory, so a rule only ever
 * grants less.
 *
 * The rules, host groups, services and service groups are read once into
 * an index per directory, kept while the subtrees it is read from stand
 * (a write within them, or another server's commit on a shared backend,
 * moves their generation, so a change is seen by the next evaluation). A
 * user's groups, nested, come from the reverse-membership index the LDAP
 * service publishes memberOf from (membership.ts), which stands as long as
 * the groups do. Per host, the enabled rules that apply there are folded
 * once per index into what they grant to everyone (user category all) and
 * to each user or group they name, so a check is one look-up per group of
 * the user, whatever the number of rules.
 */
import { normalizeDn } from '../directory/dn.js';
import { derived, type Derivation } from '../directory/derived.js';
import type { Directory, Entry } from '../directory/types.js';
import type { ObjectDef } from '../framework/object.js';
import { containerDn } from '../framework/place.js';
import { hbacruleObject } from './hbacrule.js';
import { hbacsvcObject } from './hbacsvc.js';
import { hbacsvcgroupObject } from './hbacsvcgroup.js';
import { hostgroupObject } from './hostgroup.js';
import { membershipIndex, type MembershipIndex } from './membership.js';

/** One rule as the evaluation sees it: its members as normalised DNs. */
export interface HbacRule {
  readonly name: string;
  readonly enabled: boolean;
  readonly userAll: boolean;
  readonly hostAll: boolean;
  readonly serviceAll: boolean;
  readonly users: ReadonlySet<string>;
  readonly hosts: ReadonlySet<string>;
  readonly services: ReadonlySet<string>;
}

/** What hbactest answers: whether access is granted, and which of the rules tested matched and which did not (by name). */
export interface HbacAnswer {
  granted: boolean;
  matched: string[];
  notMatched: string[];
}

/** The PAM services the rules grant a user on a host: every one (`all`), or those named. */
export interface GrantedServices {
  all: boolean;
  services: string[];
}

/** How many hosts' rules and grants an index keeps (the least recently added go first). */
const KEPT = 10_000;

const isTrue = (v: readonly string[] | undefined) => v?.[0]?.toUpperCase() === 'TRUE';
const isAll = (v: readonly string[] | undefined) => (v ?? []).some((x) => x.toLowerCase() === 'all');
const dnSet = (v: readonly string[] | undefined) => new Set((v ?? []).map(normalizeDn));

/** Adds `value` under `key` of a map of lists. */
function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Keeps at most KEPT entries in a map, dropping the oldest. */
function keep<V>(map: Map<string, V>, key: string, value: V): V {
  if (map.size >= KEPT) map.delete(map.keys().next().value!);
  map.set(key, value);
  return value;
}

/** What the rules that apply on one host grant: every service, or these (by name). */
interface Grant {
  all: boolean;
  readonly services: Set<string>;
}

/** The enabled rules of one host folded by whom they grant: everyone (user category all), and each user or group a rule names (normalised DN). */
interface HostGrants {
  readonly everyone: Grant;
  readonly byMember: ReadonlyMap<string, Grant>;
}

/** The rules and what they name, as read at one state of the subtrees they come from (hbacIndex). */
export class HbacIndex {
  /** every rule, by name */
  readonly rules: readonly HbacRule[];
  private readonly byName = new Map<string, HbacRule>();
  /** host or host group → the host groups that hold it */
  private readonly hostParents = new Map<string, string[]>();
  /** HBAC service → the service groups that hold it */
  private readonly serviceParents = new Map<string, string[]>();
  /** HBAC service name (lower case) → its DN, and back */
  private readonly serviceByName = new Map<string, string>();
  private readonly serviceName = new Map<string, string>();
  /** service group → its services' DNs */
  private readonly groupServices = new Map<string, string[]>();
  private readonly hostRules = new Map<string, HbacRule[]>();
  private readonly grantsByHost = new Map<string, HostGrants>();

  constructor(
    parts: { rules: readonly Entry[]; hostgroups: readonly Entry[]; services: readonly Entry[]; serviceGroups: readonly Entry[] },
  ) {
    const rules = parts.rules.map(
      (e): HbacRule => ({
        name: e.attrs.cn?.[0] ?? e.dn,
        enabled: isTrue(e.attrs.ipaEnabledFlag),
        userAll: isAll(e.attrs.userCategory),
        hostAll: isAll(e.attrs.hostCategory),
        serviceAll: isAll(e.attrs.serviceCategory),
        users: dnSet(e.attrs.memberUser),
        hosts: dnSet(e.attrs.memberHost),
        services: dnSet(e.attrs.memberService),
      }),
    );
    rules.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.rules = rules;
    for (const r of rules) this.byName.set(r.name.toLowerCase(), r);
    for (const g of parts.hostgroups) {
      const n = normalizeDn(g.dn);
      for (const m of g.attrs.member ?? []) push(this.hostParents, normalizeDn(m), n);
    }
    for (const s of parts.services) {
      const n = normalizeDn(s.dn);
      const name = (s.attrs.cn?.[0] ?? '').toLowerCase();
      this.serviceByName.set(name, n);
      this.serviceName.set(n, name);
    }
    for (const g of parts.serviceGroups) {
      const n = normalizeDn(g.dn);
      const members = (g.attrs.member ?? []).map(normalizeDn);
      this.groupServices.set(n, members);
      for (const m of members) push(this.serviceParents, m, n);
    }
  }

  /** The rule named `name` (any letter case), if any. */
  rule(name: string): HbacRule | undefined {
    return this.byName.get(name.toLowerCase());
  }

  /** The host and the host groups it is in, nested (a loop ends where it started). */
  hostKeys(hostDn: string): Set<string> {
    return this.closure(normalizeDn(hostDn), this.hostParents);
  }

  /** The HBAC service named `service` and the service groups it is in; empty when no HBAC service has that name. */
  serviceKeys(service: string): Set<string> {
    const dn = this.serviceByName.get(service.toLowerCase());
    return dn === undefined ? new Set() : this.closure(dn, this.serviceParents);
  }

  private closure(start: string, parents: ReadonlyMap<string, readonly string[]>): Set<string> {
    const out = new Set([start]);
    const todo = [start];
    while (todo.length > 0) {
      for (const p of parents.get(todo.pop()!) ?? []) {
        if (!out.has(p)) {
          out.add(p);
          todo.push(p);
        }
      }
    }
    return out;
  }


  /** The enabled rules that apply on the host. */
  rulesOnHost(hostDn: string): readonly HbacRule[] {
    const n = normalizeDn(hostDn);
    const known = this.hostRules.get(n);
    if (known) return known;
    const keys = this.hostKeys(n);
    return keep(this.hostRules, n, this.rules.filter((r) => r.enabled && matchesHost(r, keys)));
  }

  /** What the enabled rules of the host grant, by whom they name (worked out once per index and host). */
  grantsOnHost(hostDn: string): HostGrants {
    const n = normalizeDn(hostDn);
    const known = this.grantsByHost.get(n);
    if (known) return known;
    const everyone: Grant = { all: false, services: new Set() };
    const byMember = new Map<string, Grant>();
    for (const r of this.rulesOnHost(n)) {
      const into: Grant[] = [];
      if (r.userAll) into.push(everyone);
      else
        for (const u of r.users) {
          let g = byMember.get(u);
          if (!g) byMember.set(u, (g = { all: false, services: new Set() }));
          into.push(g);
        }
      for (const g of into) if (!g.all && this.addServices(r, g.services)) g.all = true;
    }
    return keep(this.grantsByHost, n, { everyone, byMember });
  }

  /** Whether the rule applies to the user (its keys: userKeysOf): its category, the user itself, or a group the user is in. */
  matchesUser(rule: HbacRule, userKeys: readonly string[]): boolean {
    if (rule.userAll) return true;
    if (rule.users.size === 0) return false;
    for (const k of userKeys) if (rule.users.has(k)) return true;
    return false;
  }

  /** The services `rule` grants, by name, added to `into`; true when it grants every service. */
  addServices(rule: HbacRule, into: Set<string>): boolean {
    if (rule.serviceAll) return true;
    for (const s of rule.services) {
      const name = this.serviceName.get(s);
      if (name !== undefined) into.add(name);
      for (const m of this.groupServices.get(s) ?? []) {
        const member = this.serviceName.get(m);
        if (member !== undefined) into.add(member);
      }
    }
    return false;
  }
}

/** The user (normalised DN) and every entry holding it, nested: its groups, as the membership index has them. */
function userKeysOf(membership: MembershipIndex, nUserDn: string): readonly string[] {
  return [nUserDn, ...membership.holdersOf(nUserDn)];
}

function matchesHost(rule: HbacRule, hostKeys: ReadonlySet<string>): boolean {
  if (rule.hostAll) return true;
  for (const k of hostKeys) if (rule.hosts.has(k)) return true;
  return false;
}

function matchesService(rule: HbacRule, serviceKeys: ReadonlySet<string>): boolean {
  if (rule.serviceAll) return true;
  for (const k of serviceKeys) if (rule.services.has(k)) return true;
  return false;
}

/**
 * The subtrees the index is read from: the rules, HBAC services and service
 * groups, and the host groups (a user's groups are the membership index's,
 * read at each evaluation beside this one). A rename or delete elsewhere
 * that rewrites a reference in them moves their generation too.
 */
function watchedSubtrees(dir: Directory): string[] {
  return [hbacruleObject, hbacsvcObject, hbacsvcgroupObject, hostgroupObject].map((o) => containerDn(o, dir.baseDn));
}

/**
 * The index of the directory's rules as they stand: read again after a write
 * to a subtree it is read from (directory subtreeGeneration), not after every
 * write (a failed login's counter, a user's name).
 */
export function hbacIndex(dir: Directory): Promise<HbacIndex> {
  return derived(dir, rulesIndex);
}

const rulesIndex: Derivation<HbacIndex> = { subtrees: watchedSubtrees, build: (dir) => readIndex(dir) };

async function readIndex(dir: Directory): Promise<HbacIndex> {
  const read = async (obj: ObjectDef, cls: string, attrs: string[]) => {
    const res = await dir.search({ base: containerDn(obj, dir.baseDn), scope: 'one', filter: `(objectClass=${cls})`, attrs, keep: true });
    return res.entries;
  };
  const [rules, hostgroups, services, serviceGroups] = await Promise.all([
    read(hbacruleObject, 'dirHbacRule', ['cn', 'ipaEnabledFlag', 'userCategory', 'hostCategory', 'serviceCategory', 'memberUser', 'memberHost', 'memberService']),
    read(hostgroupObject, 'dirHostGroup', ['member']),
    read(hbacsvcObject, 'dirHbacService', ['cn']),
    read(hbacsvcgroupObject, 'dirHbacServiceGroup', ['member']),
  ]);
  return new HbacIndex({ rules, hostgroups, services, serviceGroups });
}

/**
 * hbactest: whether the user may use the PAM service on the host, with the
 * rules that matched and those that did not. `rules` names the rules to
 * test, enabled or not (a rule can be tried before it is enabled); without
 * it every enabled rule is tested. Names no rule has are returned in
 * `unknown` and test nothing.
 */
export async function hbacTest(dir: Directory, q: { userDn: string; hostDn: string; service: string; rules?: readonly string[] }): Promise<HbacAnswer & { unknown: string[] }> {
  const [index, membership] = await Promise.all([hbacIndex(dir), membershipIndex(dir)]);
  const unknown: string[] = [];
  let rules: readonly HbacRule[];
  if (q.rules) {
    const picked = new Map<string, HbacRule>();
    for (const name of q.rules) {
      const r = index.rule(name);
      if (r) picked.set(r.name, r);
      else unknown.push(name);
    }
    rules = [...picked.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
  } else rules = index.rules.filter((r) => r.enabled);
  const hostKeys = index.hostKeys(q.hostDn);
  const serviceKeys = index.serviceKeys(q.service);
  const userKeys = userKeysOf(membership, normalizeDn(q.userDn));
  const matched: string[] = [];
  const notMatched: string[] = [];
  for (const r of rules) {
    const ok = matchesHost(r, hostKeys) && matchesService(r, serviceKeys) && index.matchesUser(r, userKeys);
    (ok ? matched : notMatched).push(r.name);
  }
  return { granted: matched.length > 0, matched, notMatched, unknown };
}

/**
 * The PAM services the enabled rules grant the user on the host: what the
 * LDAP service tells that host's SSSD (ldap-server/host-access.ts). A
 * service is in the list (or `all` is true) exactly when hbactest grants it.
 */
export async function grantedServices(dir: Directory, userDn: string, hostDn: string): Promise<GrantedServices> {
  return (await hostGrants(dir, hostDn))(normalizeDn(userDn));
}

/**
 * grantedServices for many users on one host (an LDAP search's entries):
 * the rules as they stand now, folded for the host once; the function
 * takes a user's normalised DN.
 */
export async function hostGrants(dir: Directory, hostDn: string): Promise<(nUserDn: string) => GrantedServices> {
  const [index, membership] = await Promise.all([hbacIndex(dir), membershipIndex(dir)]);
  const grants = index.grantsOnHost(hostDn);
  return (n) => grantedTo(membership, grants, n);
}

/** What `grants` (one host's) give the user whose normalised DN is `nUserDn`. */
function grantedTo(membership: MembershipIndex, grants: HostGrants, nUserDn: string): GrantedServices {
  if (grants.everyone.all) return { all: true, services: [] };
  const services = new Set(grants.everyone.services);
  for (const k of userKeysOf(membership, nUserDn)) {
    const g = grants.byMember.get(k);
    if (!g) continue;
    if (g.all) return { all: true, services: [] };
    for (const s of g.services) services.add(s);
  }
  return { all: false, services: [...services].sort() };
}
