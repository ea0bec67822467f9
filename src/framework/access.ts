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
 * Administrators may not change such a group (its members included). Which
 * attributes only administrators may name in --setattr/--addattr/--delattr
 * is here too (mayWriteAttribute): a principal's name, which is its
 * Kerberos identity. Admins keep every power.
 */
import { publicError } from './errors.js';
import type { CallContext, Command, CommandRegistry, ObjectDef, Principal, RealmPlace } from './command.js';
import { readablePlaces, realmOf } from './place.js';
import { containers } from '../directory/layout.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { isWithin, normalizeDn, parentDn } from '../directory/dn.js';

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

/** Group DNs the principal (or the group at `dn`) belongs to, nested memberships included, lower-cased. */
export async function groupsOf(ctx: CallContext, principal: Pick<Principal, 'dn'>): Promise<Set<string>> {
  const key = `groups:${principal.dn}`;
  const cached = ctx.cache.get(key) as Set<string> | undefined;
  if (cached) return cached;
  const seen = new Set<string>();
  let frontier = [principal.dn];
  const base = containers(ctx.dir.baseDn).groups;
  for (let depth = 0; frontier.length > 0 && depth < 16; depth++) {
    const filter = `(|${frontier.map((dn) => `(member=${filterEscape(dn)})`).join('')})`;
    const res = await ctx.dir.search({ base, scope: 'one', filter, attrs: ['cn'] });
    frontier = [];
    for (const e of res.entries) {
      const k = e.dn.toLowerCase();
      if (!seen.has(k)) {
        seen.add(k);
        frontier.push(e.dn);
      }
    }
  }
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
 * What the entry at `dn` holds beyond the caller, who is no admin: 'admins'
 * for a member of admins (or admins itself), else the first privilege its
 * roles grant (to it, or to the members of the group it is) that the caller
 * lacks; null when it holds nothing more. Entries that are neither users nor
 * groups hold nothing.
 */
async function beyondCaller(ctx: CallContext, caller: Principal, dn: string): Promise<string | null> {
  const admins = containers(ctx.dir.baseDn).adminsGroup.toLowerCase();
  if (dn.toLowerCase() === admins || (await groupsOf(ctx, { dn })).has(admins)) return 'admins';
  const mine = await privilegesOf(ctx, caller);
  for (const p of await privilegesOf(ctx, { dn })) if (!mine.has(p)) return p;
  return null;
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
  const why = beyond === 'admins' ? 'administrator rights (the admins group)' : `a privilege you do not hold ("${beyond}")`;
  throw publicError('ACIError', { info: `${what} holds ${why}: only administrators may change it` });
}

/**
 * Attributes only administrators may name in --setattr, --addattr and
 * --delattr: krbPrincipalName is a principal's Kerberos identity (a second
 * name on a user would let whoever sets its password log in as that
 * principal), as FreeIPA leaves principal aliases to administrators.
 */
const ADMIN_ONLY_ATTRIBUTES: ReadonlySet<string> = new Set(['krbprincipalname']);

/** Throws the ACIError unless the caller may name `attr` in a raw attribute option. */
export async function assertMayWriteAttribute(ctx: CallContext, attr: string): Promise<void> {
  if (!ADMIN_ONLY_ATTRIBUTES.has(attr.toLowerCase())) return;
  const p = ctx.principal;
  if (!p) throw publicError('NotAuthenticated');
  if (!(await isAdmin(ctx, p))) throw publicError('ACIError', { info: `only administrators may change '${attr}'` });
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
