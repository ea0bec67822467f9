/**
 * The sudo rules as hosts read them: one sudoRole entry (the schema of
 * sudoers.ldap(5), which SSSD's ldap sudo provider and sudo's own LDAP
 * backend read) per enabled rule, below ou=sudoers,BASE, computed from the
 * rules and what they name and never stored (a view, framework/view.ts),
 * as FreeIPA's compat tree serves its rules. Each entry holds:
 * - cn: the rule's name;
 * - sudoUser: each user's login, `%group` for each group, or ALL (user
 *   category all);
 * - sudoHost: each host's name, the names of the hosts of each host group
 *   (nested groups too: SSSD asks for rules by the host's own names), or
 *   ALL;
 * - sudoCommand: each allowed command (those of each command group), then
 *   each denied one prefixed with `!`; ALL first for command category all;
 * - sudoRunAsUser (`login`, `%group` or ALL), sudoRunAsGroup (group or
 *   ALL): whom the commands run as (root alone when neither is there);
 * - sudoOption, sudoOrder: the rule's options and order;
 * - modifyTimestamp: the latest change of the rule or of a command group or
 *   host group it names. A rename of a user or group rewrites the rule's
 *   reference and so moves the rule's own time (directory/write-path.ts).
 *   SSSD's smart refresh asks by the entryUSN every view entry gets
 *   (framework/view.ts), which grows with any change of the entry's
 *   content, in the same second too.
 * A disabled rule has no entry. Names come from the member DNs' RDNs (a
 * user's uid, a group's cn, a host's fqdn, a command): only command groups
 * and host groups are read besides the rules.
 */
import { escapeRdnValue, normalizeDn, parseDn } from '../directory/dn.js';
import type { Attributes, Entry } from '../directory/types.js';
import type { ViewDef, ViewSource } from '../framework/command.js';
import { containerOf } from '../framework/crud.js';

/** Where the sudoRole entries are, relative to the base DN. */
export const SUDOERS_RDN = 'ou=sudoers';

/** The DN below which hosts find the sudoRole entries (SSSD's ldap_sudo_search_base). */
export function sudoersDn(baseDn: string): string {
  return `${SUDOERS_RDN},${baseDn}`;
}

/** The normalised containers of what a rule names; hostgroups only when the registry has host groups. */
export interface SudoContainers {
  users: string;
  groups: string;
  hosts: string;
  hostgroups?: string;
  sudocmds: string;
  sudocmdgroups: string;
}

/** What a rendering reads besides the rules: command groups and host groups by normalised DN. */
export interface SudoRuleSources {
  baseDn: string;
  containers: SudoContainers;
  cmdGroups: ReadonlyMap<string, Entry>;
  hostGroups: ReadonlyMap<string, Entry>;
}

const isAll = (values: readonly string[] | undefined) => values?.[0]?.toLowerCase() === 'all';

/** The value of a DN's first RDN (a user's uid, a group's cn, a host's fqdn, a command), as stored. */
function rdnValue(dn: string): string {
  return parseDn(dn)[0]?.[0]?.value ?? dn;
}

/** The parent of a DN in normal form, in normal form: what follows its first separating comma. */
function parentDn(ndn: string): string {
  for (let i = 0; i < ndn.length; i++) {
    if (ndn[i] === '\\') i++;
    else if (ndn[i] === ',') return ndn.slice(i + 1);
  }
  return '';
}

/** The latest of two GeneralizedTime values (same format: text order is time order). */
const later = (a: string | undefined, b: string | undefined) => (a === undefined ? b : b === undefined || a >= b ? a : b);

/** Per rendering: host groups expanded once each, with their latest change. */
class Expander {
  private readonly hosts = new Map<string, { fqdns: string[]; modified: string | undefined }>();
  private readonly commands = new Map<string, { commands: string[]; modified: string | undefined }>();

  constructor(private readonly src: SudoRuleSources) {}

  /** The host names of a host group and its nested groups, and the latest change among them. */
  hostGroup(ndn: string, path: Set<string> = new Set()): { fqdns: string[]; modified: string | undefined } {
    const done = this.hosts.get(ndn);
    if (done) return done;
    const e = this.src.hostGroups.get(ndn);
    const out = { fqdns: [] as string[], modified: e?.attrs.modifyTimestamp?.[0] };
    if (!e || path.has(ndn)) return out;
    path.add(ndn);
    const c = this.src.containers;
    for (const m of e.attrs.member ?? []) {
      const n = normalizeDn(m);
      const parent = parentDn(n);
      if (parent === c.hosts) out.fqdns.push(rdnValue(m));
      else if (parent === c.hostgroups) {
        const nested = this.hostGroup(n, path);
        out.fqdns.push(...nested.fqdns);
        out.modified = later(out.modified, nested.modified);
      }
    }
    path.delete(ndn);
    this.hosts.set(ndn, out);
    return out;
  }

  /** The commands of a command group, and when it last changed. */
  cmdGroup(ndn: string): { commands: string[]; modified: string | undefined } {
    let done = this.commands.get(ndn);
    if (!done) {
      const e = this.src.cmdGroups.get(ndn);
      const c = this.src.containers;
      done = { commands: (e?.attrs.member ?? []).filter((m) => parentDn(normalizeDn(m)) === c.sudocmds).map(rdnValue), modified: e?.attrs.modifyTimestamp?.[0] };
      this.commands.set(ndn, done);
    }
    return done;
  }
}

/** The values in order, each once. */
function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The sudoRole entries of the rules (stored dirSudoRule entries), in their order; disabled rules have none. */
export function renderSudoRoles(rules: readonly Entry[], src: SudoRuleSources): Entry[] {
  const x = new Expander(src);
  const c = src.containers;
  const root = sudoersDn(src.baseDn);
  const out: Entry[] = [];
  for (const rule of rules) {
    const a = rule.attrs;
    const name = a.cn?.[0];
    if (name === undefined || a.ipaEnabledFlag?.[0]?.toUpperCase() === 'FALSE') continue;
    let modified: string | undefined = a.modifyTimestamp?.[0];
    // a user or group DN: login, or %group
    const userOrGroup = (dn: string): string | undefined => {
      const parent = parentDn(normalizeDn(dn));
      return parent === c.users ? rdnValue(dn) : parent === c.groups ? `%${rdnValue(dn)}` : undefined;
    };
    const users = isAll(a.userCategory) ? ['ALL'] : (a.memberUser ?? []).map(userOrGroup);
    const hosts: string[] = [];
    if (isAll(a.hostCategory)) hosts.push('ALL');
    else {
      for (const dn of a.memberHost ?? []) {
        const n = normalizeDn(dn);
        const parent = parentDn(n);
        if (parent === c.hosts) hosts.push(rdnValue(dn));
        else if (parent === c.hostgroups) {
          const g = x.hostGroup(n);
          hosts.push(...g.fqdns);
          modified = later(modified, g.modified);
        }
      }
    }
    const commands = (dns: readonly string[] | undefined, prefix: string): string[] => {
      const list: string[] = [];
      for (const dn of dns ?? []) {
        const n = normalizeDn(dn);
        const parent = parentDn(n);
        if (parent === c.sudocmds) list.push(prefix + rdnValue(dn));
        else if (parent === c.sudocmdgroups) {
          const g = x.cmdGroup(n);
          list.push(...g.commands.map((cmd) => prefix + cmd));
          modified = later(modified, g.modified);
        }
      }
      return list;
    };
    const allowed = isAll(a.cmdCategory) ? ['ALL'] : commands(a.memberAllowCmd, '');
    const denied = commands(a.memberDenyCmd, '!');
    const runAsUsers = isAll(a.ipaSudoRunAsUserCategory) ? ['ALL'] : (a.ipaSudoRunAs ?? []).map(userOrGroup);
    const runAsGroups = isAll(a.ipaSudoRunAsGroupCategory) ? ['ALL'] : (a.ipaSudoRunAsGroup ?? []).filter((dn) => parentDn(normalizeDn(dn)) === c.groups).map(rdnValue);
    const attrs: Attributes = { objectClass: ['top', 'sudoRole'], cn: [name] };
    const put = (attr: string, values: ReadonlyArray<string | undefined>) => {
      const list = unique(values.filter((v): v is string => v !== undefined));
      if (list.length > 0) attrs[attr] = list;
    };
    put('sudoUser', users);
    put('sudoHost', hosts);
    put('sudoCommand', [...allowed, ...denied]);
    put('sudoRunAsUser', runAsUsers);
    put('sudoRunAsGroup', runAsGroups);
    put('sudoOption', a.ipaSudoOpt ?? []);
    put('sudoOrder', a.sudoOrder ?? []);
    put('description', a.description ?? []);
    if (a.createTimestamp) attrs.createTimestamp = a.createTimestamp;
    if (modified !== undefined) attrs.modifyTimestamp = [modified];
    out.push({ dn: `cn=${escapeRdnValue(name)},${root}`, attrs });
  }
  return out;
}

/** Every entry below a container, by normalised DN. */
async function byDn(src: ViewSource, container: string, filter: string): Promise<Map<string, Entry>> {
  const res = await src.dir.search({ base: container, scope: 'one', filter, attrs: ['member', 'modifyTimestamp'] });
  return new Map(res.entries.map((e) => [normalizeDn(e.dn), e]));
}

/** The view of the sudo rules: ou=sudoers,BASE and its sudoRole entries, for any authenticated principal (hosts read it). */
export const sudoersView: ViewDef = {
  root: SUDOERS_RDN,
  rootAttrs: { objectClass: ['top', 'organizationalUnit'], ou: ['sudoers'] },
  readBy: 'authenticated',
  // the rules, command groups and host groups: a rename or delete of a user, group, host or command
  // that one of them names rewrites it, so it is a write there too
  watches(src) {
    return ['sudorule', 'sudocmdgroup', 'hostgroup'].flatMap((name) => {
      const o = src.registry.objects.get(name);
      return o ? [containerOf(o, src.dir.baseDn)] : [];
    });
  },
  async build(src) {
    const o = (name: string) => src.registry.objects.get(name);
    const at = (name: string) => normalizeDn(containerOf(o(name)!, src.dir.baseDn));
    const hostgroup = o('hostgroup');
    const containers: SudoContainers = {
      users: at('user'),
      groups: at('group'),
      hosts: at('host'),
      sudocmds: at('sudocmd'),
      sudocmdgroups: at('sudocmdgroup'),
      ...(hostgroup ? { hostgroups: at('hostgroup') } : {}),
    };
    const rules = await src.dir.search({ base: containerOf(o('sudorule')!, src.dir.baseDn), scope: 'one', filter: '(objectClass=dirSudoRule)', orderBy: 'cn' });
    const cmdGroups = await byDn(src, containerOf(o('sudocmdgroup')!, src.dir.baseDn), '(objectClass=*)');
    const hostGroups = hostgroup ? await byDn(src, containerOf(hostgroup, src.dir.baseDn), '(objectClass=*)') : new Map<string, Entry>();
    return renderSudoRoles(rules.entries, { baseDn: src.dir.baseDn, containers, cmdGroups, hostGroups });
  },
};
