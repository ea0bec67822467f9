/**
 * Sudo rules (FreeIPA's sudorule): who (users, groups, or everyone) may run
 * which commands (sudo commands and command groups allowed, others denied,
 * or all) on which hosts (hosts, host groups, or all), as whom (run-as
 * users and groups, root when none is named), with which sudo options and
 * in which order. A rule names what it lists by DN (memberUser,
 * memberHost, memberAllowCmd, memberDenyCmd, ipaSudoRunAs,
 * ipaSudoRunAsGroup), so a rename is followed and a deleted user, group or
 * host leaves the rule; a command or command group a rule names cannot be
 * deleted while it does. Hosts read the enabled rules as sudoRole entries
 * below ou=sudoers (objects/sudo-roles.ts), which SSSD's ldap sudo provider
 * fetches (docs/sssd-host.md).
 *
 * A category `all` and members of the same kind exclude each other, and
 * two rules never share an order, as in FreeIPA. Writes are for
 * administrators and holders of the Sudo Administrator privilege; a
 * holder's rules let no one act as a user or group that holds more than the
 * holder (run-as, framework/access.ts), and a holder may not change a rule
 * that does.
 */
import type { CallContext, Command, ObjectDef, PendingEntry } from '../framework/command.js';
import { commonOptions, getEntryToWrite, modifyEntry, outputEntry, getEntry } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { memberCommands, membersByKind, type MemberKind } from '../framework/membership.js';
import { defineObject } from '../framework/object.js';
import { escapeFilterValue } from '../directory/filter.js';
import type { Entry } from '../directory/types.js';
import { sudoersView } from './sudo-roles.js';
import { SUDO_PRIVILEGE } from './sudocmd.js';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

const category = (label: string, what: string) =>
  ({ type: 'enum', values: ['all'], label, doc: `${what} category the rule applies to`, noSearch: true }) as const;

/** Each category, the members it excludes and FreeIPA's words for both ways round. */
const CATEGORIES = [
  { attr: 'userCategory', members: 'memberUser', set: "user category cannot be set to 'all' while there are allowed users", add: "users cannot be added when user category='all'" },
  { attr: 'hostCategory', members: 'memberHost', set: "host category cannot be set to 'all' while there are allowed hosts", add: "hosts cannot be added when host category='all'" },
  { attr: 'cmdCategory', members: 'memberAllowCmd', set: "command category cannot be set to 'all' while there are allow commands", add: "commands cannot be added when command category='all'" },
  {
    attr: 'ipaSudoRunAsUserCategory',
    members: 'ipaSudoRunAs',
    set: "user runAs category cannot be set to 'all' while there are users or groups for which sudo is allowed to run as",
    add: "users cannot be added when runAs user category='all'",
  },
  {
    attr: 'ipaSudoRunAsGroupCategory',
    members: 'ipaSudoRunAsGroup',
    set: "group runAs category cannot be set to 'all' while there are groups for which sudo is allowed to run as",
    add: "groups cannot be added when runAs group category='all'",
  },
] as const;

const isAll = (values: readonly string[] | undefined) => values?.[0]?.toLowerCase() === 'all';

/** Refuses adding members of a kind while the rule's category for that kind is `all`. */
const categoryCheck =
  (members: string) =>
  (_ctx: CallContext, entry: Entry, _opts: Record<string, unknown>, add: boolean): void => {
    // denied commands have no category: they narrow command category all
    const c = CATEGORIES.find((x) => x.members === members);
    if (c && add && isAll(entry.attrs[c.attr])) throw publicError('MutuallyExclusiveError', { reason: c.add });
  };

/** The membership commands of one attribute of the rule: sudorule-add-NAME and sudorule-remove-NAME. */
function ruleMembers(self: ObjectDef, name: string, attr: string, what: string, kinds: ReadonlyArray<Omit<MemberKind, 'attr'>>): Command[] {
  return memberCommands(
    self,
    kinds.map((k) => ({ ...k, attr })),
    { add: `sudorule_add_${name}`, remove: `sudorule_remove_${name}`, what, check: categoryCheck(attr) },
  );
}

/** sudorule-add-option and sudorule-remove-option: the rule's sudo options (sudoers(5) Defaults, e.g. !authenticate). */
function optionCommand(self: ObjectDef, add: boolean): Command {
  return {
    name: add ? 'sudorule_add_option' : 'sudorule_remove_option',
    doc: add ? 'Add an option to a sudo rule.' : 'Remove an option from a sudo rule.',
    object: self.name,
    args: [{ ...self.params.name!, name: 'name', required: true }],
    options: {
      sudooption: { type: 'str', multivalue: true, required: true, label: 'Sudo Option', doc: 'A sudo option, as sudoers(5) names it (!authenticate, env_keep+=LANG)', maxLength: 1024 },
      all: commonOptions.all,
      raw: commonOptions.raw,
    },
    access: { manage: self.name },
    output: 'entry',
    async run(ctx, args, opts) {
      const name = String(args[0]);
      const entry = await getEntryToWrite(ctx, self, name);
      const current = entry.attrs.ipaSudoOpt ?? [];
      const given = opts.sudooption as string[];
      for (const o of given) {
        const present = current.includes(o);
        if (add && present) throw publicError('DuplicateEntry', { reason: `sudo option "${o}" is already in sudo rule "${name}"` });
        if (!add && !present) throw publicError('AttrValueNotFound', { attr: 'ipasudoopt', value: o });
      }
      await modifyEntry(ctx, self, name, entry, [{ op: add ? 'add' : 'delete', attr: 'ipaSudoOpt', values: given }], {});
      return {
        result: await outputEntry(ctx, self, await getEntry(ctx, self, name), opts),
        value: name,
        summary: `${add ? 'Added' : 'Removed'} option "${given.join(', ')}" ${add ? 'to' : 'from'} Sudo Rule "${name}"`,
      };
    },
  };
}

/** sudorule-enable and sudorule-disable (ipaEnabledFlag): a disabled rule is not served to hosts. */
function stateCommand(self: ObjectDef, enable: boolean): Command {
  return {
    name: enable ? 'sudorule_enable' : 'sudorule_disable',
    doc: enable ? 'Enable a sudo rule.' : 'Disable a sudo rule.',
    object: self.name,
    args: [{ ...self.params.name!, name: 'name', required: true }],
    options: {},
    access: { manage: self.name },
    output: 'summary',
    async run(ctx, args) {
      const name = String(args[0]);
      const entry = await getEntryToWrite(ctx, self, name);
      const enabled = entry.attrs.ipaEnabledFlag?.[0]?.toUpperCase() !== 'FALSE';
      if (enable && enabled) throw publicError('AlreadyActive');
      if (!enable && !enabled) throw publicError('AlreadyInactive');
      await modifyEntry(ctx, self, name, entry, [{ op: 'replace', attr: 'ipaEnabledFlag', values: [enable ? 'TRUE' : 'FALSE'] }], {});
      return { result: true, value: name, summary: `${enable ? 'Enabled' : 'Disabled'} Sudo Rule "${name}"` };
    },
  };
}

/** A category `all` with members of its kind, and an order another rule has, are refused. */
async function completeRule(ctx: CallContext, entry: PendingEntry): Promise<void> {
  for (const c of CATEGORIES) {
    if ((entry.changes(c.attr) || entry.changes(c.members)) && isAll(entry.values(c.attr)) && entry.values(c.members).length > 0) {
      throw publicError('MutuallyExclusiveError', { reason: entry.changes(c.attr) ? c.set : c.add });
    }
  }
  const [order] = entry.values('sudoOrder');
  if (order === undefined || !entry.changes('sudoOrder')) return;
  const res = await ctx.dir.search({ base: ctx.dir.baseDn, scope: 'sub', filter: `(&(objectClass=dirSudoRule)(sudoOrder=${escapeFilterValue(order)}))`, attrs: ['cn'], sizeLimit: 2 });
  const other = res.entries.find((e) => e.dn.toLowerCase() !== entry.dn.toLowerCase());
  if (other) throw publicError('ValidationError', { name: 'order', error: `order must be a unique value (${order} already used by ${other.attrs.cn?.[0] ?? other.dn})` });
}

export const sudoruleObject = defineObject({
  name: 'sudorule',
  label: 'Sudo Rules',
  labelSingular: 'Sudo Rule',
  doc: 'Sudo rules: who may run which commands on which hosts, as whom.',
  container: 'cn=sudorules,cn=sudo',
  readBy: 'authenticated',
  views: [sudoersView],
  schema: {
    attributeTypes: [
      { name: 'cmdCategory', syntax: 'string', singleValue: true },
      { name: 'ipaSudoRunAsUserCategory', syntax: 'string', singleValue: true },
      { name: 'ipaSudoRunAsGroupCategory', syntax: 'string', singleValue: true },
      // commands and command groups: kept while a rule names them
      { name: 'memberAllowCmd', syntax: 'dn', indexed: true, references: 'restrict' },
      { name: 'memberDenyCmd', syntax: 'dn', indexed: true, references: 'restrict' },
      { name: 'ipaSudoRunAs', syntax: 'dn', indexed: true, references: 'remove' },
      { name: 'ipaSudoRunAsGroup', syntax: 'dn', indexed: true, references: 'remove' },
      { name: 'ipaSudoOpt', syntax: 'exact', maxLength: 1024 },
      { name: 'sudoOrder', syntax: 'integer', singleValue: true, indexed: true },
      // the sudoRole entries hosts read (sudoers.ldap(5); caseExactIA5Match there): the view's, never stored
      { name: 'sudoUser', syntax: 'exact' },
      { name: 'sudoHost', syntax: 'exact' },
      { name: 'sudoCommand', syntax: 'exact' },
      { name: 'sudoRunAs', syntax: 'exact' },
      { name: 'sudoOption', syntax: 'exact' },
      { name: 'sudoRunAsUser', syntax: 'exact' },
      { name: 'sudoRunAsGroup', syntax: 'exact' },
      { name: 'sudoNotBefore', syntax: 'time' },
      { name: 'sudoNotAfter', syntax: 'time' },
    ],
    objectClasses: [
      {
        name: 'dirSudoRule',
        kind: 'structural',
        sup: 'top',
        must: ['cn'],
        may: [
          'description',
          'ipaEnabledFlag',
          'userCategory',
          'hostCategory',
          'cmdCategory',
          'ipaSudoRunAsUserCategory',
          'ipaSudoRunAsGroupCategory',
          'sudoOrder',
          'memberUser',
          'memberHost',
          'memberAllowCmd',
          'memberDenyCmd',
          'ipaSudoRunAs',
          'ipaSudoRunAsGroup',
          'ipaSudoOpt',
        ],
      },
      {
        name: 'sudoRole',
        kind: 'structural',
        sup: 'top',
        must: ['cn'],
        may: ['sudoUser', 'sudoHost', 'sudoCommand', 'sudoRunAs', 'sudoOption', 'sudoRunAsUser', 'sudoRunAsGroup', 'sudoNotBefore', 'sudoNotAfter', 'sudoOrder', 'description'],
      },
      { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: ['description'] },
    ],
  },
  commands: (self) => [
    ...ruleMembers(self, 'user', 'memberUser', 'users and groups affected by', [
      { option: 'users', target: 'user', kind: 'user', label: 'user' },
      { option: 'groups', target: 'group', kind: 'group', label: 'group' },
    ]),
    ...ruleMembers(self, 'host', 'memberHost', 'hosts and host groups affected by', [
      { option: 'hosts', target: 'host', kind: 'host', label: 'host' },
      { option: 'hostgroups', target: 'hostgroup', kind: 'hostgroup', label: 'host group' },
    ]),
    ...ruleMembers(self, 'allow_command', 'memberAllowCmd', 'commands allowed by', [
      { option: 'sudocmds', target: 'sudocmd', kind: 'sudocmd', label: 'sudo command' },
      { option: 'sudocmdgroups', target: 'sudocmdgroup', kind: 'sudocmdgroup', label: 'sudo command group' },
    ]),
    ...ruleMembers(self, 'deny_command', 'memberDenyCmd', 'commands denied by', [
      { option: 'sudocmds', target: 'sudocmd', kind: 'sudocmd', label: 'sudo command' },
      { option: 'sudocmdgroups', target: 'sudocmdgroup', kind: 'sudocmdgroup', label: 'sudo command group' },
    ]),
    ...ruleMembers(self, 'runasuser', 'ipaSudoRunAs', 'run-as users and groups of', [
      { option: 'users', target: 'user', kind: 'user', label: 'run-as user', actedAs: 'self' },
      { option: 'groups', target: 'group', kind: 'group', label: 'run-as group of users', actedAs: 'members' },
    ]),
    ...ruleMembers(self, 'runasgroup', 'ipaSudoRunAsGroup', 'run-as groups of', [{ option: 'groups', target: 'group', kind: 'group', label: 'run-as group', actedAs: 'self' }]),
    optionCommand(self, true),
    optionCommand(self, false),
    stateCommand(self, true),
    stateCommand(self, false),
  ],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirSudoRule'],
  pkey: 'name',
  managePrivilege: SUDO_PRIVILEGE,
  actsAs: {
    attrs: [{ attr: 'ipaSudoRunAs', members: true }, { attr: 'ipaSudoRunAsGroup' }],
    anyone: [
      { attr: 'ipaSudoRunAsUserCategory', value: 'all', what: 'any user' },
      { attr: 'ipaSudoRunAsGroupCategory', value: 'all', what: 'any group' },
    ],
  },
  params: {
    name: { attr: 'cn', type: 'str', label: 'Rule name', doc: 'Rule name', pattern: NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
    ipaenabledflag: { attr: 'ipaEnabledFlag', type: 'bool', label: 'Enabled', doc: 'Whether hosts apply the rule (sudorule-enable, sudorule-disable)', noCreate: true, noUpdate: true, noSearch: true },
    usercat: { attr: 'userCategory', ...category('User category', 'User') },
    hostcat: { attr: 'hostCategory', ...category('Host category', 'Host') },
    cmdcat: { attr: 'cmdCategory', ...category('Command category', 'Command') },
    runasusercat: { attr: 'ipaSudoRunAsUserCategory', ...category('RunAs User category', 'RunAs User') },
    runasgroupcat: { attr: 'ipaSudoRunAsGroupCategory', ...category('RunAs Group category', 'RunAs Group') },
    order: { attr: 'sudoOrder', type: 'int', label: 'Sudo order', doc: 'integer to order the Sudo rules (unique; a higher order takes precedence)', minValue: 0, maxValue: 2_147_483_647 },
    sudooption: { attr: 'ipaSudoOpt', type: 'str', multivalue: true, label: 'Sudo Option', doc: 'Sudo options (sudorule-add-option, sudorule-remove-option)', noCreate: true, noUpdate: true, noSearch: true },
  },
  computed: {
    memberuser_user: { label: 'Users', default: true },
    memberuser_group: { label: 'User Groups', default: true },
    memberhost_host: { label: 'Hosts', default: true },
    memberhost_hostgroup: { label: 'Host Groups', default: true },
    memberallowcmd_sudocmd: { label: 'Sudo Allow Commands', default: true },
    memberallowcmd_sudocmdgroup: { label: 'Sudo Allow Command Groups', default: true },
    memberdenycmd_sudocmd: { label: 'Sudo Deny Commands', default: true },
    memberdenycmd_sudocmdgroup: { label: 'Sudo Deny Command Groups', default: true },
    ipasudorunas_user: { label: 'RunAs Users', default: true },
    ipasudorunas_group: { label: 'RunAs Users of Groups', default: true },
    ipasudorunasgroup_group: { label: 'RunAs Groups', default: true },
  },
  defaultAttributes: ['name', 'description', 'ipaenabledflag', 'usercat', 'hostcat', 'cmdcat', 'runasusercat', 'runasgroupcat', 'order', 'sudooption'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async preAdd(_ctx, attrs) {
      attrs.ipaEnabledFlag = ['TRUE'];
    },
    complete: completeRule,
    async postRead(ctx, entry, out) {
      const a = entry.attrs;
      Object.assign(
        out,
        membersByKind(ctx, a.memberUser ?? [], { memberuser_user: 'user', memberuser_group: 'group' }),
        membersByKind(ctx, a.memberHost ?? [], { memberhost_host: 'host', memberhost_hostgroup: 'hostgroup' }),
        membersByKind(ctx, a.memberAllowCmd ?? [], { memberallowcmd_sudocmd: 'sudocmd', memberallowcmd_sudocmdgroup: 'sudocmdgroup' }),
        membersByKind(ctx, a.memberDenyCmd ?? [], { memberdenycmd_sudocmd: 'sudocmd', memberdenycmd_sudocmdgroup: 'sudocmdgroup' }),
        membersByKind(ctx, a.ipaSudoRunAs ?? [], { ipasudorunas_user: 'user', ipasudorunas_group: 'group' }),
        membersByKind(ctx, a.ipaSudoRunAsGroup ?? [], { ipasudorunasgroup_group: 'group' }),
      );
    },
  },
});
