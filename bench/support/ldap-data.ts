/**
 * The data set of bench/ldap.ts, made the same way for both servers: users
 * uid=userN and groups cn=groupG under the DNs dirid uses
 * (cn=users,cn=accounts,BASE and cn=groups,cn=accounts,BASE), each group
 * with `members` distinct users drawn from a seeded generator, so the bench
 * process, dirid's loader (another process) and the LDIF for slapadd all
 * agree. It also answers what a correct server returns to each workload's
 * search (how many groups hold userN, how many uids start with a prefix),
 * so the load generator can check every answer. Attribute values follow
 * what dirid itself writes for a user (objects/user.ts, objects/posix.ts);
 * only the object classes differ where the schemas do (see objectClasses).
 */
import { prng } from '../../test/support/prng.js';
import type { Attributes, WriteOp } from '../../src/directory/types.js';

export const BENCH_REALM = 'BENCH.TEST';
export const BENCH_DOMAIN = 'bench.test';
export const BASE_DN = 'dc=bench,dc=test';
export const ACCOUNTS_DN = `cn=accounts,${BASE_DN}`;
export const USERS_DN = `cn=users,${ACCOUNTS_DN}`;
export const GROUPS_DN = `cn=groups,${ACCOUNTS_DN}`;
/** Every user's password (the bind+search workload binds with it). */
export const BENCH_PASSWORD = 'Bench-password-1';
/** Ids above the range dirid's loader gives its realm (bench/support/dirid-ldap-server.ts), so none is taken twice. */
const FIRST_UID = 1_000_000_001;
const FIRST_GID = 1_100_000_001;
const SEED = 0x1da9;

export interface DataSize {
  users: number;
  groups: number;
  /** members per group (fewer when there are fewer users) */
  members: number;
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

/** The whole tree as LDIF for slapadd, in chunks (parents first); `access`: users with STORED_ACCESS. */
export function* slapdLdif(size: DataSize, groups: readonly number[][], passwordHash: string, access = false): Generator<string> {
  const container = (cn: string) => ({ objectClass: ['top', 'organizationalRole'], cn: [cn] });
  yield ldifEntry(BASE_DN, { objectClass: ['top', 'dcObject', 'organization'], dc: ['bench'], o: ['bench'] }) +
    ldifEntry(ACCOUNTS_DN, container('accounts')) +
    ldifEntry(USERS_DN, container('users')) +
    ldifEntry(GROUPS_DN, container('groups'));
  let chunk = '';
  for (let j = 0; j < size.users; j++) {
    const stored: Attributes = access ? { host: STORED_ACCESS.host, authorizedService: STORED_ACCESS.authorizedService } : {};
    chunk += ldifEntry(userDn(j), { objectClass: [...objectClasses.slapd.user, ...(access ? STORED_ACCESS.objectClass : [])], ...userAttrs(j), ...stored, userPassword: [passwordHash] });
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
}
