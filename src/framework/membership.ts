/**
 * Membership commands (X-add-member, X-remove-member, role-add-privilege,
 * sudorule-add-user, hbacrule-add-user...): derived from a declaration of which kinds of
 * members an object takes. Members are DNs in an attribute of the entry
 * (`member`, or the kind's own: a sudo or HBAC rule's memberUser, memberHost...);
 * `direction: 'reverse'` stores the object's DN in the target's `member`
 * instead (a privilege lists its roles). A kind whose object this registry
 * lacks finds no entry by that name. Each change is checked as a mod of
 * the entry that holds the attribute (crud.ts checkModification: the
 * object's `complete` hook sees it, as it sees `member` changed through
 * X-mod), and a directory failure of the write becomes its public error as
 * in crud.ts.
 */
import { checkModification, commonOptions, containerOf, dnOf, getEntry, getEntryToWrite, outputEntry, pkeyOf, pkeyOfDn, withArticle, writeEntries } from './crud.js';
import { assertMayLetActAs } from './access.js';
import type { CallContext, Command, CommandResult, OptionDef } from './command.js';
import type { ObjectDef } from './object.js';
import type { Entry, Modification } from '../directory/types.js';

export interface MemberKind {
  /** option key: users, groups, privileges */
  option: string;
  /** object the option names */
  target: string;
  /** key in `failed` and in output: user, group, privilege */
  kind: string;
  label: string;
  /** 'forward': our entry's attribute lists targets; 'reverse': target's member lists us */
  direction?: 'forward' | 'reverse';
  /** the attribute of our entry that lists them (forward only; default `member`); `failed` is keyed by it, lower-cased */
  attr?: string;
  /**
   * the entry's users act as these members (a sudo rule's run-as users and
   * groups): a delegate adds only members that hold nothing beyond the
   * delegate (access.ts assertMayLetActAs); `members`: a group stands for
   * each of its members too (run as any member of it)
   */
  actedAs?: 'self' | 'members';
}

/** The names of a pair of membership commands, and what they check first. */
export interface MemberCommandNames {
  add: string;
  remove?: string;
  /** what they change, for help: `members`, `users and groups` */
  what: string;
  /** runs before a change, given the entry (an HBAC or sudo rule refuses users while its user category is all) */
  check?: MemberPreCheck;
}

/** What a membership command may check before it changes anything (a category that excludes members). */
export type MemberPreCheck = (ctx: CallContext, entry: Entry, opts: Record<string, unknown>, add: boolean) => void | Promise<void>;

function memberOptions(kinds: readonly MemberKind[]): Record<string, OptionDef> {
  const out: Record<string, OptionDef> = {};
  for (const k of kinds) out[k.option] = { type: 'str', multivalue: true, label: k.label, doc: `${k.label} to add or remove`, maxLength: 255 };
  return out;
}

async function change(ctx: CallContext, obj: ObjectDef, kinds: readonly MemberKind[], names: MemberCommandNames, pkey: string, opts: Record<string, unknown>, add: boolean): Promise<CommandResult> {
  // the members of a group get what it grants: a delegate changes only a group that grants no more than they hold
  const entry = await getEntryToWrite(ctx, obj, pkey);
  await names.check?.(ctx, entry, opts, add);
  const failed: Record<string, Record<string, Array<[string, string]>>> = {};
  let completed = 0;
  for (const k of kinds) {
    const attr = k.direction === 'reverse' ? 'member' : (k.attr ?? 'member');
    const mine: Array<[string, string]> = [];
    (failed[attr.toLowerCase()] ??= {})[k.kind] = mine;
    const target = ctx.registry.objects.get(k.target);
    for (const name of (opts[k.option] as string[] | undefined) ?? []) {
      const targetEntry = target ? await ctx.dir.get(dnOf(target, ctx.dir.baseDn, name)) : null;
      if (!target || !targetEntry) {
        mine.push([name, 'no such entry']);
        continue;
      }
      const holder: Entry = k.direction === 'reverse' ? targetEntry : entry;
      const value = k.direction === 'reverse' ? entry.dn : targetEntry.dn;
      // the value as stored (a DN may be stored in another letter case): what a removal deletes
      const present = (holder.attrs[attr] ?? []).find((m) => m.toLowerCase() === value.toLowerCase());
      if (add && present) {
        mine.push([name, 'This entry is already a member']);
        continue;
      }
      if (!add && !present) {
        mine.push([name, 'This entry is not a member']);
        continue;
      }
      if (add && k.direction !== 'reverse' && value.toLowerCase() === entry.dn.toLowerCase()) {
        mine.push([name, 'A group may not be a member of itself']);
        continue;
      }
      if (add && k.actedAs) await assertMayLetActAs(ctx, targetEntry.dn, `${target.labelSingular} "${name}"`, k.actedAs === 'members');
      const holderObj = k.direction === 'reverse' ? target : obj;
      const mods: Modification[] = [{ op: add ? 'add' : 'delete', attr, values: [present ?? value] }];
      await checkModification(ctx, holderObj, holder, mods);
      await writeEntries(ctx, holderObj, k.direction === 'reverse' ? name : pkey, () => ctx.dir.modify(holder.dn, mods));
      if (holder === entry) entry.attrs[attr] = add ? [...(entry.attrs[attr] ?? []), value] : (entry.attrs[attr] ?? []).filter((m) => m !== present);
      completed++;
    }
  }
  const updated = await getEntry(ctx, obj, pkey);
  return {
    result: await outputEntry(ctx, obj, updated, opts as never),
    value: pkey,
    completed,
    failed,
    summary: `Number of members ${add ? 'added' : 'removed'} ${completed}`,
  };
}

export function memberCommands(obj: ObjectDef, kinds: readonly MemberKind[], names: MemberCommandNames): Command[] {
  const pk = obj.params[obj.pkey]!;
  const build = (name: string, add: boolean): Command => ({
    name,
    doc: `${add ? 'Add' : 'Remove'} ${names.what} ${add ? 'to' : 'from'} ${withArticle(obj.labelSingular)}.`,
    object: obj.name,
    args: [{ ...pk, name: obj.pkey, required: true }],
    options: { ...memberOptions(kinds), all: commonOptions.all, raw: commonOptions.raw },
    access: { manage: obj.name },
    output: 'entry',
    run: (ctx, args, opts) => change(ctx, obj, kinds, names, pkeyOf(ctx, obj, args[0]), opts, add),
  });
  return [build(names.add, true), ...(names.remove ? [build(names.remove, false)] : [])];
}

/** Splits member DNs into primary keys per member object (for output). */
export function membersByKind(ctx: CallContext, dns: readonly string[], kinds: Record<string, string>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [outKey, objName] of Object.entries(kinds)) {
    const obj = ctx.registry.objects.get(objName);
    if (!obj) continue;
    const suffix = `,${containerOf(obj, ctx.dir.baseDn)}`.toLowerCase();
    const names = dns.filter((d) => d.toLowerCase().endsWith(suffix)).map(pkeyOfDn).sort();
    if (names.length > 0) out[outKey] = names;
  }
  return out;
}
