/**
 * Authorization: who may do what. Reads need an authenticated principal and
 * reach only the readable subtrees (the one read rule of every transport:
 * the API's show and find, the LDAP service's search and compare): the
 * places of the objects declared readable (ObjectDef.readBy: today users,
 * groups, roles, services, hosts, IdP references and privileges), and the
 * entries on the way down to them; never the Kerberos container (principal
 * keys, the realm's policy) nor cn=etc (ID ranges and server settings).
 * Secrets are never read by anyone: the directory does not return them.
 * Writes to an object need membership (direct or nested) in the `admins`
 * group, or a role holding the object's privilege (role-based delegation as
 * in FreeIPA's privilege/role model: a privilege entry lists the roles that
 * hold it; a role lists its member users and groups).
 * A delegate's privilege stops at those who hold more than the delegate
 * (mayActOn): a holder of User Administrators may not set the password of,
 * disable, modify, unlock or delete a member of admins, nor of any group
 * whose roles grant a privilege the holder lacks; a holder of Group
 * Administrators may not change such a group (its members included). On
 * hosts an entry also holds what its POSIX numbers give it: a number outside
 * the realm's ID range (which hosts may give a meaning of their own: root's
 * group, the sudo group, a local user) and a user's primary group count as
 * holdings too, and the POSIX identity a delegate gives (assertMayStore: a
 * UID or GID, a user's primary group, a home directory) stays within what
 * the delegate holds. Which attributes only administrators may name in
 * --setattr/--addattr/--delattr is here too (assertMayWriteAttribute): a
 * principal's name, the POSIX numbers, the object classes. Admins keep every
 * power.
 */
import { publicError } from './errors.js';
import type { ActsAs, CallContext, Command, CommandRegistry, ObjectDef, PendingEntry, Principal, RealmPlace } from './command.js';
import { readablePlaces, realmOf } from './place.js';
import { containers, idRangeDn } from '../directory/layout.js';
import type { Directory, Entry } from '../directory/types.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { formatDn, isWithin, normalizeDn, parentDn, parseDn, sameDn } from '../directory/dn.js';

/** The roots of the subtrees an authenticated principal may read: the places of the objects declared readable (place.ts). */
export function readableSubtrees(objects: Iterable<ObjectDef>, at: RealmPlace): string[] {
  return readablePlaces(objects, at, 'authenticated');
}

/** The readable part of a tree, worked out once per registry and realm (it follows from the declarations alone). */
export interface ReadableLayout {
  /** the base DN, normalised */
  base: string;
  /** the readable roots, and the same normalised */
  roots: string[];
  normalizedRoots: string[];
  /** the entries on the way down from the base DN to the roots, the base DN included, each once */
  paths: string[];
}

const layouts = new WeakMap<CommandRegistry, Map<string, ReadableLayout>>();

export function readableLayout(registry: CommandRegistry, at: RealmPlace): ReadableLayout {
  let known = layouts.get(registry);
  if (!known) layouts.set(registry, (known = new Map()));
  const key = `${at.realm}\n${at.baseDn}`;
  let l = known.get(key);
  if (!l) {
    const base = normalizeDn(at.baseDn);
    const roots = readableSubtrees(registry.objects.values(), at);
    const paths = new Map<string, string>();
    for (const root of roots) {
      for (let p = parentDn(root); p !== '' && isWithin(normalizeDn(p), base); p = parentDn(p)) paths.set(normalizeDn(p), p);
    }
    known.set(key, (l = { base, roots, normalizedRoots: roots.map(normalizeDn), paths: [...paths.values()] }));
  }
  return l;
}

/**
 * What `principal` may read of the entry at `dn`, given the readable part
 * of the tree (readableLayout): everything below a
 * readable root ('subtree'); an entry on the way down to one, the base DN
 * and the containers above the roots, as an entry of its own but not its
 * other children ('path'); or nothing ('none', also for anonymous callers).
 * Throws the directory's invalidDNSyntax for a DN that does not parse.
 */
export function readability(principal: Principal | null, dn: string, known: ReadableLayout): 'subtree' | 'path' | 'none' {
  if (!principal) return 'none';
  const n = normalizeDn(dn);
  if (known.normalizedRoots.some((r) => isWithin(n, r))) return 'subtree';
  if (isWithin(n, known.base) && known.normalizedRoots.some((r) => isWithin(r, n))) return 'path';
  return 'none';
}

/** Throws unless the caller may read everything below `dn` (the container a show or find reads). */
export function assertReadable(ctx: CallContext, dn: string): void {
  if (!ctx.principal) throw publicError('NotAuthenticated');
  if (readability(ctx.principal, dn, readableLayout(ctx.registry, realmOf(ctx))) !== 'subtree') throw publicError('ACIError', { info: 'not allowed to read this part of the directory' });
}

/**
 * The DNs of the groups the entry at `dn` is in, nested memberships
 * included (16 levels at most; a loop ends where it started), as stored:
 * the one reading of group membership that the write rule and host-based
 * access (objects/hbac-eval.ts) share.
 */
export async function nestedGroupsOf(dir: Directory, dn: string): Promise<string[]> {
  const seen = new Set<string>();
  const out: string[] = [];
  let frontier = [dn];
  const base = containers(dir.baseDn).groups;
  for (let depth = 0; frontier.length > 0 && depth < 16; depth++) {
    const filter = `(|${frontier.map((d) => `(member=${filterEscape(d)})`).join('')})`;
    const res = await dir.search({ base, scope: 'one', filter, attrs: ['1.1'] });
    frontier = [];
    for (const e of res.entries) {
      const k = e.dn.toLowerCase();
      if (!seen.has(k)) {
        seen.add(k);
        out.push(e.dn);
        frontier.push(e.dn);
      }
    }
  }
  return out;
}

/** Group DNs the principal (or the group at `dn`) belongs to, nested memberships included, lower-cased. */
export async function groupsOf(ctx: CallContext, principal: Pick<Principal, 'dn'>): Promise<Set<string>> {
  const key = `groups:${principal.dn}`;
  const cached = ctx.cache.get(key) as Set<string> | undefined;
  if (cached) return cached;
  const seen = new Set((await nestedGroupsOf(ctx.dir, principal.dn)).map((dn) => dn.toLowerCase()));
  ctx.cache.set(key, seen);
  return seen;
}

export async function isAdmin(ctx: CallContext, principal: Principal): Promise<boolean> {
  const groups = await groupsOf(ctx, principal);
  return groups.has(containers(ctx.dir.baseDn).adminsGroup.toLowerCase());
}

/** Names of the privileges the principal (or the members of the group at `dn`) holds through its roles, lower-cased. */
export async function privilegesOf(ctx: CallContext, principal: Pick<Principal, 'dn'>): Promise<Set<string>> {
  const key = `privileges:${principal.dn}`;
  const cached = ctx.cache.get(key) as Set<string> | undefined;
  if (cached) return cached;
  const c = containers(ctx.dir.baseDn);
  const holders = [principal.dn, ...(await groupsOf(ctx, principal))];
  const roleFilter = `(|${holders.map((dn) => `(member=${filterEscape(dn)})`).join('')})`;
  const roles = await ctx.dir.search({ base: c.roles, scope: 'one', filter: roleFilter, attrs: ['cn'] });
  const out = new Set<string>();
  if (roles.entries.length > 0) {
    const privFilter = `(|${roles.entries.map((r) => `(member=${filterEscape(r.dn)})`).join('')})`;
    const privs = await ctx.dir.search({ base: c.privileges, scope: 'one', filter: privFilter, attrs: ['cn'] });
    for (const p of privs.entries) out.add((p.attrs.cn?.[0] ?? '').toLowerCase());
  }
  ctx.cache.set(key, out);
  return out;
}

/** Whether the principal may write objects guarded by `privilege`. */
export async function canManage(ctx: CallContext, privilege: string | undefined): Promise<boolean> {
  const p = ctx.principal;
  if (!p) return false;
  if (await isAdmin(ctx, p)) return true;
  if (!privilege) return false;
  return (await privilegesOf(ctx, p)).has(privilege.toLowerCase());
}

/**
 * What the entry at `dn` holds beyond the caller, who is no admin, in words
 * (`administrator rights (the admins group)`), or null when it holds nothing
 * more: membership of admins (or being admins), a privilege its roles grant
 * (to it, or to the members of the group it is) that the caller lacks, or
 * what its POSIX numbers give it on hosts (posixBeyondCaller). Entries that
 * are neither users nor groups hold nothing.
 */
async function beyondCaller(ctx: CallContext, caller: Principal, dn: string, depth = 0): Promise<string | null> {
  const admins = containers(ctx.dir.baseDn).adminsGroup.toLowerCase();
  if (dn.toLowerCase() === admins || (await groupsOf(ctx, { dn })).has(admins)) return 'administrator rights (the admins group)';
  const mine = await privilegesOf(ctx, caller);
  for (const p of await privilegesOf(ctx, { dn })) if (!mine.has(p)) return `a privilege you do not hold ("${p}")`;
  const acting = actingObjectOf(ctx, dn);
  if (acting && depth < 4) {
    const e = await ctx.dir.get(dn);
    const acts = e && (await actsBeyond(ctx, caller, acting.actsAs!, (a) => e.attrs[a] ?? [], () => true, depth + 1));
    if (acts) return acts;
  }
  return posixBeyondCaller(ctx, caller, dn, depth);
}

/** The registered object whose entries let their users act as others (ObjectDef.actsAs) that `dn` is an entry of, if any. */
function actingObjectOf(ctx: CallContext, dn: string): ObjectDef | undefined {
  const parent = normalizeDn(parentDn(dn));
  for (const o of ctx.registry.objects.values()) if (o.actsAs && o.container !== undefined && normalizeDn(`${o.container},${ctx.dir.baseDn}`) === parent) return o;
  return undefined;
}

/** An entry named for a message: `user "admin"`, by the object whose container holds it (its DN otherwise). */
function nameOf(ctx: CallContext, dn: string): string {
  const rdns = parseDn(dn);
  const parent = normalizeDn(formatDn(rdns.slice(1)));
  for (const o of ctx.registry.objects.values()) {
    if (o.container !== undefined && normalizeDn(`${o.container},${ctx.dir.baseDn}`) === parent) return `${o.labelSingular} "${rdns[0]?.[0]?.value ?? dn}"`;
  }
  return `"${dn}"`;
}

/**
 * What acting as the entry at `dn` gives beyond the caller, as the clause
 * of a message (`holds administrator rights (the admins group)`), or null:
 * what the entry holds (beyondCaller) and, with `members`, what any of its
 * members holds, nested groups' members included (a rule that runs
 * commands as any member of a group runs them as each).
 */
async function actingAsBeyond(ctx: CallContext, caller: Principal, dn: string, members: boolean, depth: number): Promise<string | null> {
  const own = await beyondCaller(ctx, caller, dn, depth);
  if (own) return `holds ${own}`;
  if (!members) return null;
  const seen = new Set([normalizeDn(dn)]);
  let frontier = [dn];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const g of frontier) {
      for (const m of (await ctx.dir.get(g, ['member']))?.attrs.member ?? []) {
        const n = normalizeDn(m);
        if (seen.has(n)) continue;
        seen.add(n);
        const b = await beyondCaller(ctx, caller, m, depth);
        if (b) return `has the member ${nameOf(ctx, m)}, who holds ${b}`;
        next.push(m);
      }
    }
    frontier = next;
  }
  return null;
}

/**
 * Whom the users of an entry act as beyond the caller, in words (`the right
 * to act as any user`, `the right to act as user "admin", who holds …`),
 * or null: its values of the declaration's attributes (`get`), those for
 * which `fresh` is true.
 */
async function actsBeyond(ctx: CallContext, caller: Principal, acts: ActsAs, get: (attr: string) => readonly string[], fresh: (attr: string, value: string) => boolean, depth: number): Promise<string | null> {
  for (const a of acts.anyone ?? []) {
    if (get(a.attr).some((v) => v.toLowerCase() === a.value.toLowerCase() && fresh(a.attr, v))) return `the right to act as ${a.what}`;
  }
  for (const a of acts.attrs) {
    for (const v of get(a.attr)) {
      if (!fresh(a.attr, v)) continue;
      const b = await actingAsBeyond(ctx, caller, v, a.members === true, depth);
      if (b) return `the right to act as ${nameOf(ctx, v)}, which ${b}`;
    }
  }
  return null;
}

/**
 * Throws the ACIError unless the caller may let others act as the entry at
 * `dn` (`what` names it): a sudo rule's run-as user or group. Administrators
 * may; a delegate only as an entry that holds nothing beyond the delegate
 * (beyondCaller), and with `members` (a group standing for each of its
 * members) none of whose members does.
 */
export async function assertMayLetActAs(ctx: CallContext, dn: string, what: string, members: boolean): Promise<void> {
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (await isAdmin(ctx, p)) return;
  const b = await actingAsBeyond(ctx, p, dn, members, 0);
  if (b) throw publicError('ACIError', { info: `${what} ${b}: only administrators may let others act as it` });
}

/** The realm's ID range, first and last number (read once per call); null while the realm has none. */
async function idRange(ctx: CallContext): Promise<{ first: number; last: number } | null> {
  const key = 'idRange';
  if (ctx.cache.has(key)) return ctx.cache.get(key) as { first: number; last: number } | null;
  const e = await ctx.dir.get(idRangeDn(ctx.dir.baseDn, ctx.server.realm), ['dirBaseId', 'dirIdRangeSize']);
  const first = Number(e?.attrs.dirBaseId?.[0]);
  const size = Number(e?.attrs.dirIdRangeSize?.[0]);
  const range = Number.isSafeInteger(first) && Number.isSafeInteger(size) && size > 0 ? { first, last: first + size - 1 } : null;
  ctx.cache.set(key, range);
  return range;
}

async function inIdRange(ctx: CallContext, id: string): Promise<boolean> {
  const r = await idRange(ctx);
  const n = Number(id);
  return r !== null && Number.isSafeInteger(n) && n >= r.first && n <= r.last;
}

async function idRangeText(ctx: CallContext): Promise<string> {
  const r = await idRange(ctx);
  return r ? `the realm's ID range (${r.first}-${r.last})` : "the realm's ID range";
}

/** Whether the entry is a POSIX group (RFC 2307): its gidNumber is its own; anyone else's is a primary group. */
const isPosixGroup = (classes: readonly string[] | undefined) => (classes ?? []).some((c) => c.toLowerCase() === 'posixgroup');

/**
 * Whose group the GID `gid` is, other than the entry at `self`: the POSIX
 * group with that gidNumber, or the user whose private group it is (hosts
 * derive a user's private group from its uidNumber); null for nobody's.
 */
async function gidHolder(ctx: CallContext, gid: string, self: string): Promise<{ entry: Entry; what: string } | null> {
  const res = await ctx.dir.search({
    base: ctx.dir.baseDn,
    scope: 'sub',
    filter: `(|(&(objectClass=posixGroup)(gidNumber=${filterEscape(gid)}))(uidNumber=${filterEscape(gid)}))`,
    attrs: ['cn', 'uid', 'uidNumber'],
    sizeLimit: 3,
  });
  const e = res.entries.find((x) => !sameDn(x.dn, self));
  if (!e) return null;
  return { entry: e, what: e.attrs.uidNumber ? `user "${e.attrs.uid?.[0] ?? e.dn}"'s private group` : `group "${e.attrs.cn?.[0] ?? e.dn}"` };
}

/**
 * What the POSIX numbers of the entry at `dn` give it on hosts beyond the
 * caller: a uidNumber or gidNumber outside the realm's ID range (a number
 * an administrator gave by hand, which hosts may give a meaning of their
 * own: root's group, the sudo group, a local user), or a user's primary
 * group (its gidNumber, unless that is its own private group) that holds
 * more by the rules of beyondCaller.
 */
async function posixBeyondCaller(ctx: CallContext, caller: Principal, dn: string, depth: number): Promise<string | null> {
  const e = await ctx.dir.get(dn, ['objectClass', 'uidNumber', 'gidNumber']);
  const uid = e?.attrs.uidNumber?.[0];
  const gid = e?.attrs.gidNumber?.[0];
  for (const [label, id] of [['UID', uid], ['GID', gid]] as const) {
    if (id !== undefined && !(await inIdRange(ctx, id))) return `${label} ${id}, outside ${await idRangeText(ctx)}, which hosts may give a meaning of their own`;
  }
  if (!e || gid === undefined || gid === uid || isPosixGroup(e.attrs.objectClass) || depth >= 4) return null;
  const holder = await gidHolder(ctx, gid, dn);
  const beyond = holder && (await beyondCaller(ctx, caller, holder.entry.dn, depth + 1));
  return beyond ? `${beyond} through its primary group, ${holder.what}` : null;
}

/**
 * Whether the caller may write the entry at `dn` once its command is
 * allowed: always for admins; for a delegate, only when the entry holds
 * nothing beyond the delegate.
 */
export async function mayActOn(ctx: CallContext, dn: string): Promise<boolean> {
  const p = ctx.principal;
  if (!p) return false;
  if (await isAdmin(ctx, p)) return true;
  return (await beyondCaller(ctx, p, dn)) === null;
}

/** Throws the ACIError unless the caller may write the entry at `dn`; `what` names it (`user "admin"`). */
export async function assertMayActOn(ctx: CallContext, dn: string, what: string): Promise<void> {
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (await isAdmin(ctx, p)) return;
  const beyond = await beyondCaller(ctx, p, dn);
  if (beyond === null) return;
  throw publicError('ACIError', { info: `${what} holds ${beyond}: only administrators may change it` });
}

/**
 * Attributes only administrators may name in --setattr, --addattr and
 * --delattr: krbPrincipalName is a principal's Kerberos identity (a second
 * name on a user would let whoever sets its password log in as that
 * principal), as FreeIPA leaves principal aliases to administrators;
 * uidNumber and gidNumber are who a user is and which groups it is in on
 * every host (delegates give them through --uid, --gidnumber and --gid,
 * which assertMayStore checks), as FreeIPA's "System: Modify Users" leaves
 * them out; objectClass decides what an entry is (a user made a posixGroup
 * becomes a group on hosts, named by its cn); dirSecurityStamp is set by the
 * server when a user's sessions end (account/state.ts): set back, it would
 * bring ended sessions back.
 */
const ADMIN_ONLY_ATTRIBUTES: ReadonlySet<string> = new Set(['krbprincipalname', 'uidnumber', 'gidnumber', 'objectclass', 'dirsecuritystamp']);

/** Throws the ACIError unless the caller may name `attr` in a raw attribute option. */
export async function assertMayWriteAttribute(ctx: CallContext, attr: string): Promise<void> {
  if (!ADMIN_ONLY_ATTRIBUTES.has(attr.toLowerCase())) return;
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (!(await isAdmin(ctx, p))) throw publicError('ACIError', { info: `only administrators may change '${attr}'` });
}

/** Where a delegate may put a user's home: one directory directly below (the default homes, objects/posix.ts). */
export const HOMES = '/home';

/**
 * Throws the ACIError unless the caller may store `entry` as an add or mod
 * leaves it (crud.ts asks on every add and mod, whichever options made the
 * entry). Administrators may store anything. A delegate gives only a POSIX
 * identity that stays within what the delegate holds:
 * - a user's UID, or a group's GID, from the realm's ID range (a number
 *   outside it may be a host's own: root's group, the sudo group, a local
 *   user);
 * - a user's primary group (its gidNumber): its own private group (GID =
 *   UID), or a POSIX group that holds nothing beyond the delegate, never
 *   another user's private group nor a number no group has;
 * - a home directory directly below /home that no other user has: hosts
 *   make a missing home at the first login, owned by the user, so a home in
 *   another's home or in a system directory would hand those files over.
 */
export async function assertMayStore(ctx: CallContext, entry: PendingEntry, obj?: ObjectDef): Promise<void> {
  if (obj?.actsAs) await assertMayStoreActing(ctx, entry, obj.actsAs);
  const ids = entry.changes('uidNumber') || entry.changes('gidNumber');
  const home = entry.changes('homeDirectory');
  if (!ids && !home) return;
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (await isAdmin(ctx, p)) return;
  const refuse = (info: string) => publicError('ACIError', { info });
  if (ids) {
    const [uid] = entry.values('uidNumber');
    const [gid] = entry.values('gidNumber');
    const group = isPosixGroup(entry.values('objectClass'));
    const [label, own] = group ? ['GID', gid] : ['UID', uid];
    if (own !== undefined && !(await inIdRange(ctx, own))) throw refuse(`only administrators may give ${label} ${own}, outside ${await idRangeText(ctx)}`);
    if (!group && gid !== undefined && gid !== uid) {
      const holder = await gidHolder(ctx, gid, entry.dn);
      if (!holder) throw refuse(`no group has GID ${gid}: a user's primary group is its private group (GID = UID) or a group you may change; only administrators may give another`);
      if (holder.entry.attrs.uidNumber) throw refuse(`GID ${gid} is ${holder.what}: only administrators may make it another user's primary group`);
      const beyond = await beyondCaller(ctx, p, holder.entry.dn);
      if (beyond) throw refuse(`${holder.what} holds ${beyond}: only administrators may make it a user's primary group`);
    }
  }
  const [dir] = home ? entry.values('homeDirectory') : [];
  if (dir !== undefined) {
    const name = dir.startsWith(`${HOMES}/`) ? dir.slice(HOMES.length + 1) : '';
    if (name === '' || name.includes('/') || name === '.' || name === '..') throw refuse(`only administrators may give a home directory other than ${HOMES}/NAME: ${dir}`);
    const users = containers(ctx.dir.baseDn).users;
    const res = await ctx.dir.search({ base: users, scope: 'one', filter: `(homeDirectory=${filterEscape(dir)})`, attrs: ['uid'], sizeLimit: 2 });
    const other = res.entries.find((x) => !sameDn(x.dn, entry.dn));
    if (other) throw refuse(`${dir} is the home directory of user "${other.attrs.uid?.[0] ?? other.dn}": only administrators may give it to another user`);
  }
}

/** Throws unless the caller may run the command. */
export async function authorize(ctx: CallContext, cmd: Command): Promise<void> {
  if (cmd.access === 'anonymous') return;
  if (!ctx.principal) throw publicError('NotAuthenticated');
  if (cmd.access === 'authenticated') return;
  const obj = ctx.registry.objects.get(cmd.access.manage);
  if (!(await canManage(ctx, obj?.managePrivilege))) {
    throw publicError('ACIError', { info: `not allowed to perform '${cmd.name.replace(/_/g, '-')}'` });
  }
}

/**
 * A delegate stores an entry whose users act as others (ObjectDef.actsAs: a
 * sudo rule's run-as users, groups and categories) only when what the add
 * or mod gives them holds nothing beyond the delegate: no `all` category,
 * no run-as user or group that holds more (assertMayLetActAs's rule).
 */
async function assertMayStoreActing(ctx: CallContext, entry: PendingEntry, acts: ActsAs): Promise<void> {
  const attrs = [...acts.attrs.map((a) => a.attr), ...(acts.anyone ?? []).map((a) => a.attr)];
  if (!attrs.some((a) => entry.changes(a))) return;
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (await isAdmin(ctx, p)) return;
  const before = (a: string) => new Set((entry.before?.attrs[a] ?? []).map((v) => v.toLowerCase()));
  const b = await actsBeyond(ctx, p, acts, (a) => entry.values(a), (a, v) => !before(a).has(v.toLowerCase()), 0);
  if (b) throw publicError('ACIError', { info: `only administrators may give ${b}` });
}
