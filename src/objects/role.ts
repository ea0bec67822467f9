/**
 * Roles and privileges (delegation). A privilege is a named right built into
 * the server (e.g. "IdP Administrators" may add, modify and delete IdP
 * references); a role holds privileges and has member users and groups.
 * Privileges list the roles that hold them in their `member` attribute.
 */
import { defineObject } from '../framework/object.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { escapeRdnValue } from '../directory/dn.js';
import { containers, KNOWN_CONTAINERS } from '../directory/layout.js';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

/** Privileges every realm has (the privilege object's defaults); the objects name them as their managePrivilege. */
export const builtinPrivileges = [
  { name: 'IdP Administrators', description: 'Add, modify and delete external IdP references' },
  { name: 'User Administrators', description: 'Add, modify and delete users, and link them to external IdPs' },
  { name: 'Group Administrators', description: 'Add, modify and delete groups and their members' },
  { name: 'Sudo Administrator', description: 'Add, modify and delete sudo rules, sudo commands and sudo command groups' },
  { name: 'Host Group Administrators', description: 'Add, modify and delete host groups and their members' },
  { name: 'HBAC Administrator', description: 'Add, modify, enable, disable and delete host-based access rules, HBAC services and service groups' },
  { name: 'Password Policy Administrators', description: 'Add, modify and delete password policies' },
] as const;

export const privilegeObject = defineObject({
  name: 'privilege',
  label: 'privileges',
  labelSingular: 'privilege',
  doc: 'Privileges: named rights that roles hold.',
  container: KNOWN_CONTAINERS.privileges,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [
      { name: 'dirPrivilege', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] },
    ],
  },
  methods: ['find', 'show'],
  defaults: ({ baseDn }) =>
    builtinPrivileges.map((p) => ({
      dn: `cn=${escapeRdnValue(p.name)},${KNOWN_CONTAINERS.privileges},${baseDn}`,
      attrs: { objectClass: ['top', 'dirPrivilege'], cn: [p.name], description: [p.description] },
    })),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirPrivilege'],
  pkey: 'name',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Privilege name', doc: 'Privilege name', pattern: NAME },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Privilege description', maxLength: 1024 },
  },
  computed: { member_role: { label: 'Roles', default: true } },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_role: 'role' }));
    },
  },
});

export const roleObject = defineObject({
  name: 'role',
  label: 'roles',
  labelSingular: 'role',
  doc: 'Roles: sets of privileges given to users and groups.',
  container: KNOWN_CONTAINERS.roles,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [
      { name: 'dirRole', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] },
    ],
  },
  commands: (role) => [
    ...memberCommands(
      role,
      [
        { option: 'users', target: 'user', kind: 'user', label: 'member user' },
        { option: 'groups', target: 'group', kind: 'group', label: 'member group' },
      ],
      { add: 'role_add_member', remove: 'role_remove_member', what: 'members' },
    ),
    ...memberCommands(
      role,
      [{ option: 'privileges', target: 'privilege', kind: 'privilege', label: 'privilege', direction: 'reverse' }],
      { add: 'role_add_privilege', remove: 'role_remove_privilege', what: 'privileges' },
    ),
  ],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirRole'],
  pkey: 'name',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Role name', doc: 'Role name', pattern: NAME },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Role description', maxLength: 1024 },
  },
  computed: {
    member_user: { label: 'Member users', default: true },
    member_group: { label: 'Member groups', default: true },
    privilege: { label: 'Privileges', default: true },
  },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_user: 'user', member_group: 'group' }));
      const privs = await ctx.dir.search({
        base: containers(ctx.dir.baseDn).privileges,
        scope: 'one',
        filter: `(member=${filterEscape(entry.dn)})`,
        attrs: ['cn'],
      });
      const names = privs.entries.map((p) => p.attrs.cn?.[0] ?? '').sort();
      if (names.length > 0) out.privilege = names;
    },
  },
});
