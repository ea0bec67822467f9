/**
 * Groups of users and groups (nested), POSIX groups by default (a gidNumber
 * from the realm's range, objects/posix.ts; `--nonposix` for groups hosts
 * need not see, `group-mod --posix` to make one POSIX later). Members are
 * `member` DNs, as RFC 2307bis has them. The `admins` group grants full
 * administrative rights (framework/access.ts), keeps its name and an enabled
 * member (objects/last-admin.ts). A group's name is no name hosts reserve
 * (posix.ts checkHostReservedName). A group's password policy
 * (objects/pwpolicy.ts) is deleted with the group, as FreeIPA's group-del
 * does, and names it: a group with one keeps its name.
 */
import { defineObject } from '../framework/object.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import { publicError } from '../framework/errors.js';
import { addGroupPosix, allocateId, checkHostReservedName, checkIdChange, checkPrivateGroupName } from './posix.js';
import { hasObjectClass } from '../directory/entry.js';
import { checkDelete, checkGroupWrite } from './last-admin.js';
import { KNOWN_CONTAINERS } from '../directory/layout.js';
import { groupPolicyDn } from './pwpolicy.js';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

export const groupObject = defineObject({
  name: 'group',
  label: 'groups',
  labelSingular: 'group',
  doc: 'Groups of users.',
  container: KNOWN_CONTAINERS.groups,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [
      { name: 'dirGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description', 'gidNumber'] },
    ],
  },
  commands: (group) =>
    memberCommands(
      group,
      [
        { option: 'users', target: 'user', kind: 'user', label: 'member user' },
        { option: 'groups', target: 'group', kind: 'group', label: 'member group' },
      ],
      { add: 'group_add_member', remove: 'group_remove_member', what: 'members' },
    ),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirGroup'],
  pkey: 'name',
  managePrivilege: 'Group Administrators',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Group name', doc: 'Group name', pattern: NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Group description', maxLength: 1024 },
    gid: { attr: 'gidNumber', type: 'int', label: 'GID', doc: 'GID (assigned from the realm\'s ID range when not given)', minValue: 1, maxValue: 2_147_483_646 },
  },
  extraOptions: {
    add: { nonposix: { type: 'bool', flag: true, label: 'Non-POSIX group', doc: 'Create as a non-POSIX group (no GID)' } },
    mod: { posix: { type: 'bool', flag: true, label: 'POSIX group', doc: 'Change a non-POSIX group into a POSIX group' } },
  },
  computed: {
    member_user: { label: 'Member users', default: true },
    member_group: { label: 'Member groups', default: true },
  },
  defaultAttributes: ['name', 'description', 'gid'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async preAdd(ctx, attrs, options, pkey) {
      checkHostReservedName(pkey, 'name');
      await checkPrivateGroupName(ctx, pkey, 'group');
      await addGroupPosix(ctx, attrs, options.nonposix === true);
    },
    async preMod(ctx, mods, options, entry) {
      if (typeof options.rename === 'string') {
        checkHostReservedName(options.rename, 'rename');
        await checkPrivateGroupName(ctx, options.rename, 'group');
        const name = entry.attrs.cn?.[0] ?? '';
        if (await ctx.dir.get(groupPolicyDn(ctx.dir.baseDn, name), ['1.1'])) {
          throw publicError('ValidationError', { name: 'rename', error: `group "${name}" has a password policy, which is named after it: delete it (pwpolicy-del), rename the group, and add it again` });
        }
      }
      const posix = hasObjectClass(entry.attrs.objectClass, 'posixGroup');
      const gidMod = mods.find((m) => m.attr === 'gidNumber');
      if (options.posix === true) {
        if (posix) throw publicError('ValidationError', { name: 'posix', error: 'the group is already a POSIX group' });
        if (!gidMod) mods.push({ op: 'replace', attr: 'gidNumber', values: [String(await allocateId(ctx))] });
        mods.push({ op: 'add', attr: 'objectClass', values: ['posixGroup'] });
      } else if (gidMod && !posix) {
        throw publicError('ValidationError', { name: 'gid', error: 'a non-POSIX group has no GID; use --posix' });
      }
      await checkIdChange(ctx, mods, entry, 'gidNumber');
    },
    async complete(ctx, entry, options) {
      // the realm keeps an enabled administrator, and admins its name (last-admin.ts)
      await checkGroupWrite(ctx, entry, entry.before?.attrs.cn?.[0] ?? '', options.rename);
    },
    async preDel(ctx, entry) {
      await checkDelete(ctx, entry, entry.attrs.cn?.[0] ?? entry.dn);
    },
    async alsoDelete(ctx, entry) {
      const policy = groupPolicyDn(ctx.dir.baseDn, entry.attrs.cn?.[0] ?? '');
      return (await ctx.dir.get(policy, ['1.1'])) ? [policy] : [];
    },
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_user: 'user', member_group: 'group' }));
    },
  },
});
