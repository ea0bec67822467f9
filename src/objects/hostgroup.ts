/**
 * Host groups (FreeIPA's hostgroup): named sets of hosts and other host
 * groups, nested, that host-based access rules name instead of hosts one
 * by one (objects/hbacrule.ts, docs/hbac.md). Members are `member` DNs of
 * hosts and host groups; a name is kept in lower case, as FreeIPA keeps
 * it. Deleting a host or a host group drops it from the groups that held
 * it (the directory's referential integrity). For administrators and
 * holders of the Host Group Administrators privilege.
 */
import { defineObject } from '../framework/object.js';
import { memberCommands, membersByKind } from '../framework/membership.js';

/** A host group's or an HBAC object's name: letters, digits, `_`, `.` and `-`, as FreeIPA's host groups have them. */
export const HBAC_NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_.-]{0,254}$/;
export const HBAC_NAME_ERROR = 'may only include letters, numbers, _, - and .';

export const hostgroupObject = defineObject({
  name: 'hostgroup',
  label: 'host groups',
  labelSingular: 'host group',
  doc: 'Groups of hosts, nested.',
  container: 'cn=hostgroups,cn=accounts',
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [{ name: 'dirHostGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] }],
  },
  commands: (hostgroup) =>
    memberCommands(
      hostgroup,
      [
        { option: 'hosts', target: 'host', kind: 'host', label: 'member host' },
        { option: 'hostgroups', target: 'hostgroup', kind: 'hostgroup', label: 'member host group' },
      ],
      { add: 'hostgroup_add_member', remove: 'hostgroup_remove_member', what: 'members' },
    ),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirHostGroup'],
  pkey: 'name',
  managePrivilege: 'Host Group Administrators',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Host-group', doc: 'Name of host-group', pattern: HBAC_NAME, patternError: HBAC_NAME_ERROR },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'A description of this host-group', maxLength: 1024 },
  },
  computed: {
    member_host: { label: 'Member hosts', default: true },
    member_hostgroup: { label: 'Member host-groups', default: true },
  },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_host: 'host', member_hostgroup: 'hostgroup' }));
    },
  },
});
