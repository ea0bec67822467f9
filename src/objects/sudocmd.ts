/**
 * Sudo commands and sudo command groups (FreeIPA's sudocmd and
 * sudocmdgroup): the commands sudo rules allow or deny (objects/sudorule.ts).
 * A command is its full path and its arguments, if any, as sudo matches it
 * (sudoers(5), "Cmnd_List"); it is the entry's name, so a rule's command
 * becomes its sudoCommand without another read. Names compare without
 * regard to case, as every DN does here: two commands that differ only in
 * case are one. A command a rule names directly cannot be deleted while it
 * does (ReferencedEntry); one in a command group leaves the group. For
 * administrators and holders of the Sudo Administrator privilege.
 */
import { defineObject } from '../framework/object.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import { escapeFilterValue } from '../directory/filter.js';
import { containerOf } from '../framework/crud.js';

const GROUP_NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

/** The privilege that writes sudo rules, commands and command groups (objects/role.ts lists it). */
export const SUDO_PRIVILEGE = 'Sudo Administrator';

/** A command as sudo takes it: an absolute path, or sudoedit, then its arguments if any. */
const COMMAND = /^(?:\/\S*|sudoedit)(?:\s.*)?$/;

export const sudocmdObject = defineObject({
  name: 'sudocmd',
  label: 'Sudo Commands',
  labelSingular: 'Sudo Command',
  doc: 'Commands that sudo rules allow or deny.',
  container: 'cn=sudocmds,cn=sudo',
  readBy: 'authenticated',
  schema: {
    attributeTypes: [{ name: 'sudoCmd', syntax: 'exact', singleValue: true }],
    objectClasses: [{ name: 'dirSudoCmd', kind: 'structural', sup: 'top', must: ['sudoCmd'], may: ['description'] }],
  },
  rdnAttr: 'sudoCmd',
  objectClasses: ['top', 'dirSudoCmd'],
  pkey: 'command',
  noRename: true,
  managePrivilege: SUDO_PRIVILEGE,
  params: {
    command: {
      attr: 'sudoCmd',
      type: 'str',
      label: 'Sudo Command',
      doc: 'The command: its full path, then its arguments if any',
      pattern: COMMAND,
      patternError: 'must be a full path (or sudoedit), then the arguments if any',
      maxLength: 1024,
      caseExact: true,
    },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'A description of this command', maxLength: 1024 },
  },
  computed: { memberof_sudocmdgroup: { label: 'Member of Sudo Command Groups', default: true } },
  defaultAttributes: ['command', 'description'],
  searchAttributes: ['command', 'description'],
  hooks: {
    async postRead(ctx, entry, out) {
      const groups = ctx.registry.objects.get('sudocmdgroup');
      if (!groups) return;
      const res = await ctx.dir.search({ base: containerOf(groups, ctx.dir.baseDn), scope: 'one', filter: `(member=${escapeFilterValue(entry.dn)})`, attrs: ['cn'] });
      const names = res.entries.map((g) => g.attrs.cn?.[0] ?? '').sort();
      if (names.length > 0) out.memberof_sudocmdgroup = names;
    },
  },
});

export const sudocmdgroupObject = defineObject({
  name: 'sudocmdgroup',
  label: 'Sudo Command Groups',
  labelSingular: 'Sudo Command Group',
  doc: 'Groups of sudo commands.',
  container: 'cn=sudocmdgroups,cn=sudo',
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [{ name: 'dirSudoCmdGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] }],
  },
  commands: (self) =>
    memberCommands(self, [{ option: 'sudocmds', target: 'sudocmd', kind: 'sudocmd', label: 'sudo command' }], {
      add: 'sudocmdgroup_add_member',
      remove: 'sudocmdgroup_remove_member',
      what: 'members',
    }),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirSudoCmdGroup'],
  pkey: 'name',
  managePrivilege: SUDO_PRIVILEGE,
  params: {
    name: { attr: 'cn', type: 'str', label: 'Sudo Command Group', doc: 'The name of the group', pattern: GROUP_NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Group description', maxLength: 1024 },
  },
  computed: { member_sudocmd: { label: 'Member Sudo commands', default: true } },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_sudocmd: 'sudocmd' }));
    },
  },
});
