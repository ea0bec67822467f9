/**
 * The realm keeps an administrator: a write that would leave the `admins`
 * group (framework/access.ts: its members, direct or through nested groups,
 * may do everything) without an enabled member user is refused, for every
 * caller, as FreeIPA refuses it (LastMemberError, 4308). The writes that can
 * do it: disabling a user (`user-disable`, `user-mod --disabled`, or
 * nsAccountLock through --setattr), deleting a user or a group inside admins
 * (a delete takes the entry out of every group), and removing a member of
 * admins or of a group inside it (`group-remove-member`, or `member`
 * through `group-mod`). The `admins` group itself may be neither deleted nor
 * renamed (ProtectedEntryError, 4309): the rule that makes its members
 * administrators names it.
 *
 * The user and group objects ask this module from their hooks (a mod's and
 * a membership change's `complete`, a delete's `preDel`), so every command
 * that writes them does. The check reads before the write: two
 * administrators disabling each other in the same instant are not caught.
 */
import type { CallContext, PendingEntry } from '../framework/command.js';
import type { Entry } from '../directory/types.js';
import { publicError } from '../framework/errors.js';
import { groupsOf } from '../framework/access.js';
import { pkeyOfDn } from '../framework/crud.js';
import { containers } from '../directory/layout.js';
import { normalizeDn, parentDn, sameDn } from '../directory/dn.js';

/** How deep nested groups are followed (as access.ts groupsOf does). */
const MAX_DEPTH = 16;

/** What a write changes, as the admins group's members see it. */
interface Change {
  /** entries gone (normalised DNs): deleted users and groups */
  gone: ReadonlySet<string>;
  /** users disabled (normalised DNs) */
  disabled: ReadonlySet<string>;
  /** a group whose members the write changes, and its members after it */
  members?: { group: string; after: readonly string[] };
}

const NO_CHANGE: Change = { gone: new Set(), disabled: new Set() };

/** The entries this call deletes (a delete of several names is one batch: each name's check counts the earlier ones). */
function goneInThisCall(ctx: CallContext): Set<string> {
  let gone = ctx.cache.get('lastAdmin:gone') as Set<string> | undefined;
  if (!gone) ctx.cache.set('lastAdmin:gone', (gone = new Set()));
  return gone;
}

/** Whether admins, with `change` made, has a member user (directly or through nested groups) that is enabled. */
async function hasEnabledAdmin(ctx: CallContext, change: Change): Promise<boolean> {
  const c = containers(ctx.dir.baseDn);
  const users = normalizeDn(c.users);
  const groups = normalizeDn(c.groups);
  const seen = new Set<string>([normalizeDn(c.adminsGroup)]);
  let frontier = [c.adminsGroup];
  for (let depth = 0; frontier.length > 0 && depth < MAX_DEPTH; depth++) {
    const next: string[] = [];
    for (const group of frontier) {
      const members = change.members && sameDn(change.members.group, group) ? change.members.after : ((await ctx.dir.get(group, ['member']))?.attrs.member ?? []);
      for (const m of members) {
        const n = normalizeDn(m);
        if (seen.has(n) || change.gone.has(n)) continue;
        seen.add(n);
        const parent = normalizeDn(parentDn(m));
        if (parent === groups) next.push(m);
        else if (parent === users && !change.disabled.has(n)) {
          const u = await ctx.dir.get(m, ['nsAccountLock']);
          if (u && u.attrs.nsAccountLock?.[0]?.toUpperCase() !== 'TRUE') return true;
        }
      }
    }
    frontier = next;
  }
  return false;
}

/** Whether the entry at `dn` is admins or inside it (a member, directly or through nested groups). */
async function inAdmins(ctx: CallContext, dn: string): Promise<boolean> {
  const admins = containers(ctx.dir.baseDn).adminsGroup;
  return sameDn(dn, admins) || (await groupsOf(ctx, { dn })).has(admins.toLowerCase());
}

/** Throws LastMemberError, naming `key`, when `change` would leave admins without an enabled member user it has now. */
async function assertKeeps(ctx: CallContext, change: Change, key: string): Promise<void> {
  if (!(await hasEnabledAdmin(ctx, change)) && (await hasEnabledAdmin(ctx, NO_CHANGE))) {
    throw publicError('LastMemberError', { key, label: 'group', container: 'admins' });
  }
}

/** A user's mod or add: disabling an enabled member of admins (`login` names it). */
export async function checkUserWrite(ctx: CallContext, entry: PendingEntry, login: string): Promise<void> {
  if (!entry.before || !entry.changes('nsAccountLock')) return;
  const disabling = entry.values('nsAccountLock')[0]?.toUpperCase() === 'TRUE' && entry.before.attrs.nsAccountLock?.[0]?.toUpperCase() !== 'TRUE';
  if (!disabling || !(await inAdmins(ctx, entry.dn))) return;
  await assertKeeps(ctx, { gone: goneInThisCall(ctx), disabled: new Set([normalizeDn(entry.dn)]) }, login);
}

/**
 * A group's mod or membership change: members removed from admins or from
 * a group inside it; and admins' name, which may not change. `name` is the
 * group's name before the write.
 */
export async function checkGroupWrite(ctx: CallContext, entry: PendingEntry, name: string, rename: unknown): Promise<void> {
  if (!entry.before) return;
  const admins = containers(ctx.dir.baseDn).adminsGroup;
  if (typeof rename === 'string' && sameDn(entry.dn, admins)) throw protectedAdmins();
  if (!entry.changes('member')) return;
  const after = entry.values('member');
  const kept = new Set(after.map(normalizeDn));
  const removed = (entry.before.attrs.member ?? []).filter((m) => !kept.has(normalizeDn(m)));
  if (removed.length === 0 || !(await inAdmins(ctx, entry.dn))) return;
  const key = removed.length === 1 ? pkeyOfDn(removed[0]!) : name;
  await assertKeeps(ctx, { gone: goneInThisCall(ctx), disabled: new Set(), members: { group: entry.dn, after } }, key);
}

/** A user's or a group's delete: an entry inside admins (`key` names it); admins itself is never deleted. */
export async function checkDelete(ctx: CallContext, entry: Entry, key: string): Promise<void> {
  if (sameDn(entry.dn, containers(ctx.dir.baseDn).adminsGroup)) throw protectedAdmins();
  const gone = goneInThisCall(ctx);
  if (await inAdmins(ctx, entry.dn)) await assertKeeps(ctx, { gone: new Set([...gone, normalizeDn(entry.dn)]), disabled: new Set() }, key);
  // the later names of the same delete count this one as gone
  gone.add(normalizeDn(entry.dn));
}

function protectedAdmins() {
  return publicError('ProtectedEntryError', { label: 'group', key: 'admins', reason: 'privileged group: its members are the realm\'s administrators' });
}
