/**
 * POSIX identities, as Linux hosts read them (RFC 2307 object classes, RFC
 * 2307bis `member` DNs; docs/posix.md). Every user has a uidNumber, a
 * gidNumber (by default its user private group: gid = uid, a group hosts
 * derive from the user, SSSD's `auto_private_groups`), a homeDirectory, a
 * loginShell and a gecos; every group has a gidNumber unless it is
 * non-POSIX.
 *
 * Numbers come from the realm's ID range, chosen at `init` (a random base,
 * as FreeIPA does, so that two realms rarely overlap; a realm made before
 * ranges gets a random one from the upgrade at start, server/upgrade.ts). The range entry
 * holds the next free number; taking one is a compare-and-swap on it (an
 * LDAP-style modify that deletes the value it read), so concurrent adds, on
 * one server or several over one database, never take the same number. A
 * number given by hand is accepted when no user has it as uidNumber and no
 * group as gidNumber (a private group's gid is its user's uid, so users and
 * groups share one space): {@link posixIdRule}, which the directory enforces
 * at every write, whoever writes. Nor, for a group's gidNumber or a user's
 * uidNumber (its private group's gid), when a user has it as its primary
 * group (gidNumber) that no group has now: the new group would get that
 * user's files (checkPrimaryGidFree, before the write).
 *
 * Names hosts give a meaning of their own (hostReservedName) are no user's
 * login and no group's name: sudoers, polkit and sshd match groups by name,
 * and hosts give each user a private group named after its login.
 */
import { randomInt } from 'node:crypto';
import { containers, idRangeDn } from '../directory/layout.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { sameDn } from '../directory/dn.js';
import { DirectoryError, type Attributes, type Directory, type Entry, type Modification, type UniqueRule, type WriteOp } from '../directory/types.js';
import type { CallContext } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { HOMES } from '../framework/access.js';
import { hasObjectClass } from '../directory/entry.js';
import { serialized } from '../directory/serialized.js';

/** The size of a range FreeIPA picks, and ours: ids base … base + size - 1. */
export const DEFAULT_RANGE_SIZE = 200_000;
/** The largest id a range may reach: ids are signed 32-bit numbers on Linux, minus nobody. */
export const MAX_ID = 2_147_483_646;
/** Ids below this belong to the host's own system users and groups. */
export const MIN_ID = 1000;
export const DEFAULT_SHELL = '/bin/bash';

export interface IdRange {
  base: number;
  size: number;
}

/** A random range as FreeIPA chooses one: a multiple of 200,000 between 200,000 and 2,000,000,000. */
export function randomRange(): IdRange {
  return { base: randomInt(1, 10_001) * DEFAULT_RANGE_SIZE, size: DEFAULT_RANGE_SIZE };
}

/** Why a range cannot be used, or null. */
export function rangeProblem(r: IdRange): string | null {
  if (!Number.isSafeInteger(r.base) || r.base < MIN_ID) return `the first ID must be at least ${MIN_ID}`;
  if (!Number.isSafeInteger(r.size) || r.size < 1) return 'the range must hold at least one ID';
  if (r.base + r.size - 1 > MAX_ID) return `the range must end at ${MAX_ID} or below`;
  return null;
}

/** The entry that holds the range, with its counter at `next` (in cn=ranges,cn=etc, which the realm's tree has). */
export function rangeEntry(baseDn: string, realm: string, r: IdRange, next = r.base): WriteOp {
  return {
    kind: 'add',
    dn: idRangeDn(baseDn, realm),
    attrs: {
      objectClass: ['top', 'dirIdRange'],
      cn: [`${realm}_id_range`],
      dirBaseId: [String(r.base)],
      dirIdRangeSize: [String(r.size)],
      dirNextId: [String(next)],
    },
  };
}

/** The range and its counter (every realm has one: init makes it, the upgrade gives one to a realm made before ranges). */
async function readRange(dir: Directory, realm: string): Promise<IdRange & { next: number }> {
  const e = await dir.get(idRangeDn(dir.baseDn, realm));
  if (!e) throw publicError('DatabaseError', { desc: 'the realm has no ID range' });
  const num = (attr: string) => Number(e.attrs[attr]?.[0]);
  return { base: num('dirBaseId'), size: num('dirIdRangeSize'), next: num('dirNextId') };
}

/**
 * One POSIX id space: a user's uidNumber and a POSIX group's gidNumber are
 * never another entry's uidNumber or POSIX group's gidNumber (a user's own
 * gidNumber, its primary group's, is no key: many users share one).
 */
export const posixIdRule: UniqueRule = {
  name: 'POSIX ID',
  keys: [
    { attrs: ['uidNumber'], refusal: 'UID {uidNumber} is already used by {holder}' },
    { attrs: ['gidNumber'], objectClass: 'posixGroup', refusal: 'GID {gidNumber} is already used by {holder}' },
  ],
};

/**
 * Whether `id` is taken for a new number of the range: a user's uidNumber, a
 * POSIX group's gidNumber, or a user's gidNumber (its primary group, also
 * when no group has that number now).
 */
async function idHeld(dir: Directory, id: number): Promise<boolean> {
  const res = await dir.search({ base: dir.baseDn, scope: 'sub', filter: `(|(uidNumber=${id})(gidNumber=${id}))`, attrs: ['1.1'], sizeLimit: 1 });
  return res.entries.length > 0;
}

/**
 * Refuses a group's gidNumber, or a user's uidNumber (its private group's
 * gid), given by hand when another user has it as its primary group and no
 * group has it now (the group was deleted or renumbered, or an
 * administrator gave a number no group had): a group or a private group
 * given it would get that user's files on every host. A number another
 * user or group holds as its own is posixIdRule's, refused at the write.
 */
async function checkPrimaryGidFree(ctx: CallContext, attr: 'uidNumber' | 'gidNumber', id: number, exceptDn?: string): Promise<void> {
  const res = await ctx.dir.search({ base: ctx.dir.baseDn, scope: 'sub', filter: `(&(objectClass=posixAccount)(gidNumber=${id}))`, attrs: ['uid'], sizeLimit: 2 });
  const user = res.entries.find((e) => exceptDn === undefined || !sameDn(e.dn, exceptDn));
  if (!user) return;
  // a user's UID (its private group's GID) or a group's GID: posixIdRule's to refuse, naming its holder
  const own = await ctx.dir.search({ base: ctx.dir.baseDn, scope: 'sub', filter: `(|(uidNumber=${id})(&(objectClass=posixGroup)(gidNumber=${id})))`, attrs: ['1.1'], sizeLimit: 2 });
  if (own.entries.some((e) => exceptDn === undefined || !sameDn(e.dn, exceptDn))) return;
  throw publicError('DuplicateEntry', { reason: `${ID_LABELS[attr]} ${id} is already used by the primary group of user "${user.attrs.uid?.[0] ?? user.dn}" (its GID, which no group has now)` });
}

const ID_LABELS = { uidNumber: 'UID', gidNumber: 'GID' } as const;

/** A mod that gives `attr` (uidNumber, gidNumber) a new number: refused when a user has it as its primary group (checkPrimaryGidFree). */
export async function checkIdChange(ctx: CallContext, mods: readonly Modification[], entry: Entry, attr: 'uidNumber' | 'gidNumber'): Promise<void> {
  const m = mods.find((x) => x.attr === attr);
  if (m?.op === 'replace' && m.values.length === 1 && m.values[0] !== entry.attrs[attr]?.[0]) await checkPrimaryGidFree(ctx, attr, Number(m.values[0]), entry.dn);
}

/** `attr` of a new entry: the number given (one held already is refused at the write; one that is a user's primary group here) or the next of the range; and the object class that holds it. */
async function assignId(ctx: CallContext, attrs: Attributes, attr: 'uidNumber' | 'gidNumber', objectClass: string): Promise<string> {
  const given = attrs[attr]?.[0];
  if (given === undefined) attrs[attr] = [String(await allocateId(ctx))];
  else await checkPrimaryGidFree(ctx, attr, Number(given));
  if (!hasObjectClass(attrs.objectClass, objectClass)) attrs.objectClass = [...(attrs.objectClass ?? []), objectClass];
  return attrs[attr]![0]!;
}

const ATTEMPTS = 20;

/**
 * The next free id of the realm's range. Allocations of one server run one
 * after another; another server's allocation between the read and the
 * write makes the write fail, and it reads again after a short random wait.
 */
export function allocateId(ctx: CallContext): Promise<number> {
  const dn = idRangeDn(ctx.dir.baseDn, ctx.server.realm);
  return serialized(ctx.dir, dn, () => takeNextId(ctx, dn));
}

async function takeNextId(ctx: CallContext, dn: string): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, randomInt(1, 10 * Math.min(attempt, 5))));
    const r = await readRange(ctx.dir, ctx.server.realm);
    const last = r.base + r.size - 1;
    let id = Math.max(r.next, r.base);
    // numbers given by hand inside the range are skipped
    while (id <= last && (await idHeld(ctx.dir, id))) id++;
    if (id > last) throw publicError('DatabaseError', { desc: `the ID range ${r.base}-${last} is used up` });
    try {
      await ctx.dir.modify(dn, [
        { op: 'delete', attr: 'dirNextId', values: [String(r.next)] },
        { op: 'add', attr: 'dirNextId', values: [String(id + 1)] },
      ]);
      return id;
    } catch (err) {
      // the counter moved under us: read it again
      if (err instanceof DirectoryError && err.code === 'noSuchAttribute') continue;
      throw err;
    }
  }
  throw publicError('DatabaseError', { desc: 'could not allocate an ID: too many concurrent requests' });
}

/** A new user's POSIX attributes: what was given, the rest allocated and defaulted. */
export async function addUserPosix(ctx: CallContext, attrs: Attributes, login: string): Promise<void> {
  posixDefaults(attrs, login, await assignId(ctx, attrs, 'uidNumber', 'posixAccount'));
}

/** The defaults of a user with uid `uid`: its private group (gid = uid), /home/LOGIN, the default shell, the full name as gecos. */
export function posixDefaults(attrs: Attributes, login: string, uid: string): void {
  attrs.gidNumber ??= [uid];
  attrs.homeDirectory ??= [`${HOMES}/${login}`];
  attrs.loginShell ??= [DEFAULT_SHELL];
  attrs.gecos ??= [attrs.cn?.[0] ?? login];
}

/**
 * A user's login and a group's name are never the same (docs/posix.md):
 * hosts give each user a private group named after the login (SSSD's
 * auto_private_groups), which a group of that name would clash with.
 * `kind` is what is being added or renamed to `name`.
 */
export async function checkPrivateGroupName(ctx: CallContext, name: string, kind: 'user' | 'group'): Promise<void> {
  const c = containers(ctx.dir.baseDn);
  const [base, attr] = kind === 'group' ? [c.users, 'uid'] : [c.groups, 'cn'];
  const found = await ctx.dir.search({ base, scope: 'one', filter: `(${attr}=${filterEscape(name)})`, attrs: [attr], sizeLimit: 1 });
  if (found.entries.length === 0) return;
  const reason =
    kind === 'group'
      ? `user "${name}" exists, and hosts give every user a private group named after the login: choose another group name`
      : `group "${name}" exists, and hosts would give the user a private group of that name: choose another login`;
  throw publicError('DuplicateEntry', { reason });
}

/**
 * The system users and groups of Debian's base-passwd (its passwd.master and
 * group.master, base-passwd 3.6.1, the names every Debian and Ubuntu host
 * has), kept here as data.
 */
const DEBIAN_SYSTEM_USERS = ['root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy', 'www-data', 'backup', 'list', 'irc', '_apt', 'nobody'] as const;
const DEBIAN_SYSTEM_GROUPS = [
  'root', 'daemon', 'bin', 'sys', 'adm', 'tty', 'disk', 'lp', 'mail', 'news', 'uucp', 'man', 'proxy', 'kmem', 'dialout', 'fax', 'voice', 'cdrom', 'floppy', 'tape',
  'sudo', 'audio', 'dip', 'www-data', 'backup', 'operator', 'list', 'irc', 'src', 'shadow', 'utmp', 'video', 'sasl', 'plugdev', 'staff', 'games', 'users', 'nogroup',
] as const;
/**
 * Groups other hosts give root to by name: `wheel` (Fedora, RHEL and the
 * BSDs: sudoers, pam_wheel, polkit) and `admin` (Ubuntu's default sudoers,
 * `%admin ALL=(ALL) ALL`). The realm's own `admin` user, which init makes,
 * keeps its name; no other user or group is given it (docs/access.md).
 */
const ROOT_GROUPS_ELSEWHERE = ['wheel', 'admin'] as const;

const RESERVED_GROUPS: ReadonlySet<string> = new Set([...DEBIAN_SYSTEM_GROUPS, ...ROOT_GROUPS_ELSEWHERE]);
const RESERVED_USERS: ReadonlySet<string> = new Set(DEBIAN_SYSTEM_USERS);

/**
 * Why hosts reserve `name`, or null: a system user or group of Debian's
 * base-passwd, or a group other hosts give root to. A user's login names its
 * private group too, and logins and group names share one space (above), so
 * both lists hold for both. Letter case aside: `Sudo` is as close to sudo as
 * a name should come.
 */
export function hostReservedName(name: string): string | null {
  const n = name.toLowerCase();
  if (n === 'wheel') return 'the group Fedora, RHEL and the BSDs give root to';
  if (n === 'admin') return "the group Ubuntu's sudoers gives root to";
  if (RESERVED_GROUPS.has(n)) return RESERVED_USERS.has(n) ? `Debian's system user and group "${n}"` : `Debian's system group "${n}"`;
  return hostSystemUser(n);
}

/** Why `name` is a host's own user (a system user of Debian's base-passwd), or null. */
export function hostSystemUser(name: string): string | null {
  const n = name.toLowerCase();
  return RESERVED_USERS.has(n) ? `Debian's system user "${n}"` : null;
}

/**
 * Refuses, for every caller, a user's login or a group's name that hosts
 * reserve (hostReservedName): sudoers matches `%sudo` by name, and hosts give
 * each user a private group named after its login, so a user or group of
 * such a name would be root on hosts; a principal `root@REALM` is root over
 * GSSAPI where /root/.k5login is missing. Only a new name is checked (an
 * add, a rename): an entry a realm holds already keeps working.
 * `option` names what gave it (login, name, rename).
 */
export function checkHostReservedName(name: string, option: string): void {
  const why = hostReservedName(name);
  if (why) throw publicError('ValidationError', { name: option, error: `"${name}" is a name hosts reserve (${why}): a user or group of that name would get its rights on hosts; choose another` });
}

/** A new group's gidNumber, unless it is non-POSIX. */
export async function addGroupPosix(ctx: CallContext, attrs: Attributes, nonPosix: boolean): Promise<void> {
  if (nonPosix) {
    if (attrs.gidNumber) throw publicError('MutuallyExclusiveError', { reason: 'gid cannot be set for a non-POSIX group' });
    return;
  }
  await assignId(ctx, attrs, 'gidNumber', 'posixGroup');
}
