/**
 * A Kerberos principal name belongs to one entry in the whole tree: the one
 * rule every writer of krbPrincipalName runs before it stores a name (user
 * add, rename and aliases, service add and aliases, host add, the name a
 * password change gives a user that had none). The KDC and every look-up
 * find a principal only when exactly one entry holds its name
 * (account/lookup.ts), so a second holder would take both out of service,
 * or, were the look-up to pick one, let the second stand for the first.
 * FreeIPA keeps krbPrincipalName unique across its tree for the same reason.
 * The check reads before the write; two writers racing for one new name
 * within the same instant are not caught here.
 */
import { escapeFilterValue } from '../directory/filter.js';
import { parentDn, sameDn } from '../directory/dn.js';
import type { CallContext, PendingEntry } from '../framework/command.js';
import { containerOf, pkeyOfDn } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { hostSystemUser } from './posix.js';

/** How a refusal names the entry at `dn`: `host "web.example.test"`, or the entry's DN when no object owns it. */
function holderOf(ctx: CallContext, dn: string): string {
  const parent = parentDn(dn);
  for (const obj of ctx.registry.objects.values()) {
    if (sameDn(parent, containerOf(obj, ctx.dir.baseDn))) return `${obj.labelSingular} "${pkeyOfDn(dn)}"`;
  }
  return `the entry "${dn}"`;
}

/**
 * Throws DuplicateEntry, naming the holder, when an entry other than `self`
 * (the DN of the entry being written) holds one of `names`. An entry already
 * at `self` when an add means to create it is the store's duplicate to
 * report (the object's own "already exists"). A name of one component that
 * is a host's own user (posix.ts hostSystemUser: `root@REALM`) is ValidationError,
 * for every caller: MIT's default aname_to_lname makes it the local user of
 * that name, root over GSSAPI ssh where /root/.k5login is missing.
 */
export async function assertPrincipalNamesFree(ctx: CallContext, names: readonly string[], self: string): Promise<void> {
  for (const name of names) {
    const at = name.lastIndexOf('@');
    const first = at < 0 ? name : name.slice(0, at);
    const why = first.includes('/') ? null : hostSystemUser(first);
    if (why) throw publicError('ValidationError', { name: 'krbPrincipalName', error: `"${name}" names "${first}", ${why}: MIT Kerberos maps it to that local user on hosts; choose another` });
    const res = await ctx.dir.search({ base: ctx.dir.baseDn, scope: 'sub', filter: `(krbPrincipalName=${escapeFilterValue(name)})`, attrs: ['1.1'], sizeLimit: 2 });
    const other = res.entries.find((e) => !sameDn(e.dn, self));
    if (other) throw publicError('DuplicateEntry', { reason: `principal name "${name}" is already held by ${holderOf(ctx, other.dn)}` });
  }
}

/** The names an add or mod gives the entry that it did not hold before, each checked as above. */
export async function checkNewPrincipalNames(ctx: CallContext, entry: PendingEntry): Promise<void> {
  if (!entry.changes('krbPrincipalName')) return;
  const held = new Set(entry.before?.attrs.krbPrincipalName ?? []);
  const added = entry.values('krbPrincipalName').filter((n) => !held.has(n));
  await assertPrincipalNamesFree(ctx, added, entry.dn);
}
