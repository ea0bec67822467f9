/**
 * The data set of bench/ldap.ts, made the same way for both servers: users
 * uid=userN and groups cn=groupG under the DNs dirid uses
 * (cn=users,cn=accounts,BASE and cn=groups,cn=accounts,BASE), each group
 * with `members` distinct users drawn from a seeded generator, so the bench
 * process, dirid's loader (another process) and the LDIF for slapadd all
 * agree. It also answers what a correct server returns to each workload's
 * search (how many groups hold userN, how many uids start with a prefix),
 * so the load generator can check every answer; and hosts, sudo commands,
 * command groups and sudo rules naming them (sudoRules), which dirid serves
 * as the sudoRole entries of its view below ou=sudoers and slapd holds as
 * those entries, rendered here the way objects/sudo-roles.ts renders them.
 * Attribute values follow
 * what dirid itself writes for a user (objects/user.ts, objects/posix.ts);
 * only the object classes differ where the schemas do (see objectClasses).
 */
import { prng } from './prng.js';
import type { Attributes, WriteOp } from '../../src/directory/types.js';

export const BENCH_REALM = 'BENCH.TEST';
export const BENCH_DOMAIN = 'bench.test';
export const BASE_DN = 'dc=bench,dc=test';
export const ACCOUNTS_DN = `cn=accounts,${BASE_DN}`;
export const USERS_DN = `cn=users,${ACCOUNTS_DN}`;
export const GROUPS_DN = `cn=groups,${ACCOUNTS_DN}`;
/** Every user's password (the bind+search workload binds with it). */
export const BENCH_PASSWORD = 'Bench-password-1';
/** Ids above the range dirid's loader gives its realm (test/support/dirid-ldap-server.ts), so none is taken twice. */
const FIRST_UID = 1_000_000_001;
const FIRST_GID = 1_100_000_001;
const SEED = 0x1da9;

/** The command-line options of a data size (node:util parseArgs), the figures by default; dataSize reads them. */
export const DATA_SIZE_OPTIONS = {
  users: { type: 'string', default: '100000' },
  groups: { type: 'string', default: '1000' },
  members: { type: 'string', default: '100' },
  hosts: { type: 'string', default: '1000' },
  rules: { type: 'string', default: '1000' },
} as const;

/** The data size the DATA_SIZE_OPTIONS values name. */
export function dataSize(v: Record<keyof typeof DATA_SIZE_OPTIONS, string>): DataSize {
  return { users: Number(v.users), groups: Number(v.groups), members: Number(v.members), hosts: Number(v.hosts), rules: Number(v.rules) };
}

export interface DataSize {
  users: number;
  groups: number;
  /** members per group (fewer when there are fewer users) */
  members: number;
  /** hosts and sudo rules (the sudo workloads) */
  hosts: number;
  rules: number;
}

export const userName = (j: number): string => `user${j}`;
export const userDn = (j: number): string => `uid=user${j},${USERS_DN}`;
export const groupDn = (g: number): string => `cn=group${g},${GROUPS_DN}`;

/**
 * The object classes on each side. dirid: its own user classes (dirUser,
 * krbPrincipalAux) beside RFC 2307's posixAccount, and dirGroup with
 * posixGroup as an auxiliary class (as RFC 2307bis has it). slapd: Debian
 * ships nis.schema (RFC 2307), where posixGroup is structural and has no
 * `member`; rfc2307bis.schema is not shipped. The closest equivalent without
 * a schema of our own is posixGroup plus RFC 4512's extensibleObject
 * (auxiliary, built into slapd), which admits `member` with its standard
 * definition (DN syntax, distinguishedNameMatch), so both servers hold the
 * same attribute and answer the same filter.
 */
export const objectClasses = {
  dirid: { user: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser', 'posixAccount', 'krbPrincipalAux'], group: ['top', 'dirGroup', 'posixGroup'] },
  slapd: { user: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'posixAccount'], group: ['top', 'posixGroup', 'extensibleObject'] },
} as const;

/** The attributes of user j both servers hold (password and object classes apart). */
export function userAttrs(j: number): Attributes {
  const name = userName(j);
  const cn = `Given${j} Family${j % 977}`;
  return {
    uid: [name],
    cn: [cn],
    givenName: [`Given${j}`],
    sn: [`Family${j % 977}`],
    uidNumber: [String(FIRST_UID + j)],
    gidNumber: [String(FIRST_UID + j)],
    homeDirectory: [`/home/${name}`],
    loginShell: ['/bin/bash'],
    gecos: [cn],
  };
}

/** The members of every group (user numbers), drawn once from the fixed seed. */
export function memberships(size: DataSize): number[][] {
  const rand = prng(SEED);
  const per = Math.min(size.members, size.users);
  const out: number[][] = [];
  for (let g = 0; g < size.groups; g++) {
    const picked = new Set<number>();
    while (picked.size < per) picked.add(rand(size.users));
    out.push([...picked].sort((a, b) => a - b));
  }
  return out;
}

export function groupAttrs(g: number, members: readonly number[]): Attributes {
  return { cn: [`group${g}`], gidNumber: [String(FIRST_GID + g)], member: members.map(userDn) };
}

/** What a correct server answers, for checking every reply. */
export class Expected {
  /** groups holding each user */
  readonly groupsOf: Uint16Array;
  /** uids starting with `user` + each two-digit prefix 10..99 */
  private readonly prefixCount = new Map<number, number>();

  constructor(size: DataSize, groups: readonly number[][]) {
    this.groupsOf = new Uint16Array(size.users);
    for (const ms of groups) for (const j of ms) this.groupsOf[j]!++;
    for (let k = 10; k < 100; k++) this.prefixCount.set(k, 0);
    for (let j = 10; j < size.users; j++) {
      const k = Number(String(j).slice(0, 2));
      this.prefixCount.set(k, this.prefixCount.get(k)! + 1);
    }
  }

  /** How many users match (uid=user<k>*) for k in 10..99. */
  prefixMatches(k: number): number {
    return this.prefixCount.get(k) ?? 0;
  }
}

/** The users as adds for dirid's directory batch API, `batch` per write (the realm's init made the containers). */
export function* diridUserBatches(size: DataSize, passwordHash: string, batch = 2000): Generator<WriteOp[]> {
  for (let i = 0; i < size.users; i += batch) {
    const ops: WriteOp[] = [];
    for (let j = i; j < Math.min(size.users, i + batch); j++) {
      const attrs = userAttrs(j);
      ops.push({
        kind: 'add',
        dn: userDn(j),
        attrs: { objectClass: [...objectClasses.dirid.user], ...attrs, krbPrincipalName: [`${userName(j)}@${BENCH_REALM}`], userPassword: [passwordHash] },
      });
    }
    yield ops;
  }
}

export function* diridGroupBatches(groups: readonly number[][], batch = 50): Generator<WriteOp[]> {
  for (let i = 0; i < groups.length; i += batch) {
    const ops: WriteOp[] = [];
    for (let g = i; g < Math.min(groups.length, i + batch); g++) ops.push({ kind: 'add', dn: groupDn(g), attrs: { objectClass: [...objectClasses.dirid.group], ...groupAttrs(g, groups[g]!) } });
    yield ops;
  }
}

function ldifEntry(dn: string, attrs: Attributes): string {
  let s = `dn: ${dn}\n`;
  for (const [name, values] of Object.entries(attrs)) for (const v of values) s += `${name}: ${v}\n`;
  return s + '\n';
}

/**
 * What slapd stores for SSSD's access check (bench/ldap.ts `access`): a
 * site without dirid's rules would keep `host` and `authorizedService` on
 * each user, written by a script; these are such values.
 */
export const STORED_ACCESS = { objectClass: ['authorizedServiceObject', 'hostObject'], host: ['*'], authorizedService: ['sshd', 'su', 'systemd-user'] };

/**
 * The whole tree as LDIF for slapadd, in chunks (parents first): users
 * (with STORED_ACCESS when `access`, and the memberOf values slapd's
 * memberof overlay keeps, which slapadd does not run, written as it would
 * have), groups and the sudoRole entries of `rules`.
 */
export function* slapdLdif(size: DataSize, groups: readonly number[][], passwordHash: string, rules: readonly SudoRule[] = [], access = false): Generator<string> {
  const memberOf: string[][] = Array.from({ length: size.users }, () => []);
  for (let g = 0; g < groups.length; g++) for (const j of groups[g]!) memberOf[j]!.push(groupDn(g));
  const container = (cn: string) => ({ objectClass: ['top', 'organizationalRole'], cn: [cn] });
  yield ldifEntry(BASE_DN, { objectClass: ['top', 'dcObject', 'organization'], dc: ['bench'], o: ['bench'] }) +
    ldifEntry(ACCOUNTS_DN, container('accounts')) +
    ldifEntry(USERS_DN, container('users')) +
    ldifEntry(GROUPS_DN, container('groups'));
  let chunk = '';
  for (let j = 0; j < size.users; j++) {
    const stored: Attributes = access ? { host: STORED_ACCESS.host, authorizedService: STORED_ACCESS.authorizedService } : {};
    const held: Attributes = memberOf[j]!.length > 0 ? { memberOf: memberOf[j]! } : {};
    chunk += ldifEntry(userDn(j), { objectClass: [...objectClasses.slapd.user, ...(access ? STORED_ACCESS.objectClass : [])], ...userAttrs(j), ...stored, ...held, userPassword: [passwordHash] });
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  for (let g = 0; g < groups.length; g++) {
    chunk += ldifEntry(groupDn(g), { objectClass: [...objectClasses.slapd.group], ...groupAttrs(g, groups[g]!) });
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  yield chunk;
  yield slapdSudoLdif(rules);
}

// ---- sudo: hosts, commands, command groups, rules ------------------------------------------

export const HOSTS_DN = `cn=computers,${ACCOUNTS_DN}`;
export const SUDO_DN = `cn=sudo,${BASE_DN}`;
export const SUDOCMDS_DN = `cn=sudocmds,${SUDO_DN}`;
export const SUDOCMDGROUPS_DN = `cn=sudocmdgroups,${SUDO_DN}`;
export const SUDORULES_DN = `cn=sudorules,${SUDO_DN}`;
/** Where hosts read the sudoRole entries (SSSD's ldap_sudo_search_base), on both servers. */
export const SUDOERS_DN = `ou=sudoers,${BASE_DN}`;
const SUDO_SEED = 0x5d0;
const COMMANDS = 200;
const COMMAND_GROUPS = 20;
const PER_COMMAND_GROUP = 10;

export const hostName = (h: number): string => `host${h}.${BENCH_DOMAIN}`;
export const hostDn = (h: number): string => `fqdn=${hostName(h)},${HOSTS_DN}`;
const commandOf = (c: number): string => `/usr/bin/tool${c} --run`;
const commandDn = (c: number): string => `sudoCmd=${commandOf(c)},${SUDOCMDS_DN}`;
const commandGroupDn = (g: number): string => `cn=tools${g},${SUDOCMDGROUPS_DN}`;
const commandGroupMembers = (g: number): number[] => Array.from({ length: PER_COMMAND_GROUP }, (_, i) => (g * PER_COMMAND_GROUP + i) % COMMANDS);

/** One sudo rule of the data set: what it names, by number. */
export interface SudoRule {
  name: string;
  enabled: boolean;
  users: number[];
  groups: number[];
  /** null: host category all */
  hosts: number[] | null;
  /** null: command category all */
  commands: number[] | null;
  commandGroups: number[];
  denied: number[];
  runAsUsers: number[];
  runAsGroups: number[];
  options: string[];
  order: number;
}

/**
 * The rules, drawn once from a fixed seed: three users and a group each;
 * 2% for every host, the rest for three hosts; 10% every command, the rest
 * two commands and, for 30%, a command group; 20% a denied command, 20% a
 * run-as user, 10% a run-as group, 30% !authenticate; 5% disabled; order
 * by number.
 */
export function sudoRules(size: DataSize): SudoRule[] {
  const rand = prng(SUDO_SEED);
  const pick = (n: number, k: number) => {
    const out = new Set<number>();
    while (out.size < Math.min(k, n)) out.add(rand(n));
    return [...out];
  };
  const chance = (percent: number) => rand(100) < percent;
  const rules: SudoRule[] = [];
  for (let r = 0; r < size.rules; r++) {
    const everyHost = chance(2);
    const everyCommand = chance(10);
    rules.push({
      name: `rule${r}`,
      enabled: !chance(5),
      users: pick(size.users, 3),
      groups: size.groups > 0 ? pick(size.groups, 1) : [],
      hosts: everyHost ? null : pick(size.hosts, 3),
      commands: everyCommand ? null : pick(COMMANDS, 2),
      commandGroups: !everyCommand && chance(30) ? pick(COMMAND_GROUPS, 1) : [],
      denied: chance(20) ? pick(COMMANDS, 1) : [],
      runAsUsers: chance(20) ? pick(size.users, 1) : [],
      runAsGroups: size.groups > 0 && chance(10) ? pick(size.groups, 1) : [],
      options: chance(30) ? ['!authenticate'] : [],
      order: r + 1,
    });
  }
  return rules;
}

/** The sudoRole entry of an enabled rule, as objects/sudo-roles.ts renders it (attributes in its order). */
export function sudoRoleAttrs(r: SudoRule): Attributes {
  const attrs: Attributes = { objectClass: ['top', 'sudoRole'], cn: [r.name] };
  attrs.sudoUser = [...r.users.map(userName), ...r.groups.map((g) => `%group${g}`)];
  attrs.sudoHost = r.hosts === null ? ['ALL'] : r.hosts.map(hostName);
  const allowed = r.commands === null ? ['ALL'] : [...r.commands.map(commandOf), ...r.commandGroups.flatMap((g) => commandGroupMembers(g).map(commandOf))];
  attrs.sudoCommand = [...new Set([...allowed, ...r.denied.map((c) => `!${commandOf(c)}`)])];
  if (r.runAsUsers.length > 0) attrs.sudoRunAsUser = r.runAsUsers.map(userName);
  if (r.runAsGroups.length > 0) attrs.sudoRunAsGroup = r.runAsGroups.map((g) => `group${g}`);
  if (r.options.length > 0) attrs.sudoOption = r.options;
  attrs.sudoOrder = [String(r.order)];
  return attrs;
}

/** How many enabled rules name each host, or every host: what a host's full refresh returns. */
export function sudoRulesPerHost(size: DataSize, rules: readonly SudoRule[]): Uint16Array {
  const out = new Uint16Array(size.hosts);
  for (const r of rules) {
    if (!r.enabled) continue;
    if (r.hosts === null) for (let h = 0; h < out.length; h++) out[h]!++;
    else for (const h of r.hosts) out[h]!++;
  }
  return out;
}

/** The hosts, sudo commands, command groups and rules as adds for dirid's batch API (after the users and groups). */
export function* diridSudoBatches(size: DataSize, rules: readonly SudoRule[], batch = 500): Generator<WriteOp[]> {
  const ops: WriteOp[] = [];
  for (let h = 0; h < size.hosts; h++) {
    ops.push({ kind: 'add', dn: hostDn(h), attrs: { objectClass: ['top', 'dirHost', 'krbPrincipalAux'], fqdn: [hostName(h)], cn: [hostName(h)], krbPrincipalName: [`host/${hostName(h)}@${BENCH_REALM}`] } });
  }
  for (let c = 0; c < COMMANDS; c++) ops.push({ kind: 'add', dn: commandDn(c), attrs: { objectClass: ['top', 'dirSudoCmd'], sudoCmd: [commandOf(c)] } });
  for (let g = 0; g < COMMAND_GROUPS; g++) ops.push({ kind: 'add', dn: commandGroupDn(g), attrs: { objectClass: ['top', 'dirSudoCmdGroup'], cn: [`tools${g}`], member: commandGroupMembers(g).map(commandDn) } });
  for (const r of rules) {
    const attrs: Attributes = { objectClass: ['top', 'dirSudoRule'], cn: [r.name], ipaEnabledFlag: [r.enabled ? 'TRUE' : 'FALSE'], sudoOrder: [String(r.order)] };
    attrs.memberUser = [...r.users.map(userDn), ...r.groups.map(groupDn)];
    if (r.hosts === null) attrs.hostCategory = ['all'];
    else attrs.memberHost = r.hosts.map(hostDn);
    if (r.commands === null) attrs.cmdCategory = ['all'];
    else attrs.memberAllowCmd = [...r.commands.map(commandDn), ...r.commandGroups.map(commandGroupDn)];
    if (r.denied.length > 0) attrs.memberDenyCmd = r.denied.map(commandDn);
    if (r.runAsUsers.length > 0) attrs.ipaSudoRunAs = r.runAsUsers.map(userDn);
    if (r.runAsGroups.length > 0) attrs.ipaSudoRunAsGroup = r.runAsGroups.map(groupDn);
    if (r.options.length > 0) attrs.ipaSudoOpt = r.options;
    ops.push({ kind: 'add', dn: `cn=${r.name},${SUDORULES_DN}`, attrs });
  }
  for (let i = 0; i < ops.length; i += batch) yield ops.slice(i, i + batch);
}

/** The sudoRole entries slapd holds: ou=sudoers and one per enabled rule. */
export function slapdSudoLdif(rules: readonly SudoRule[]): string {
  let s = ldifEntry(SUDOERS_DN, { objectClass: ['top', 'organizationalUnit'], ou: ['sudoers'] });
  for (const r of rules) if (r.enabled) s += ldifEntry(`cn=${r.name},${SUDOERS_DN}`, sudoRoleAttrs(r));
  return s;
}
