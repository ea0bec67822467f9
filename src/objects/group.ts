/**
 * Groups of users and groups (nested). The `admins` group grants full
 * administrative rights (framework/access.ts).
 */
import { defineObject } from '../framework/object.js';
import { crudCommands } from '../framework/crud.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import type { Command } from '../framework/command.js';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

export const groupObject = defineObject({
  name: 'group',
  label: 'groups',
  labelSingular: 'group',
  doc: 'Groups of users.',
  container: 'groups',
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirGroup'],
  pkey: 'name',
  managePrivilege: 'Group Administrators',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Group name', doc: 'Group name', pattern: NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Group description', maxLength: 1024 },
  },
  computed: {
    member_user: { label: 'Member users', default: true },
    member_group: { label: 'Member groups', default: true },
  },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_user: 'user', member_group: 'group' }));
    },
  },
});

export function groupCommands(): Command[] {
  return [
    ...crudCommands({ ...groupObject, methods: ['add', 'del', 'find', 'show', 'mod'] }),
    ...memberCommands(
      groupObject,
      [
        { option: 'users', target: 'user', kind: 'user', label: 'member user' },
        { option: 'groups', target: 'group', kind: 'group', label: 'member group' },
      ],
      { add: 'group_add_member', remove: 'group_remove_member', what: 'members' },
    ),
  ];
}
