/**
 * Host-based access rules (FreeIPA's hbacrule, docs/hbac.md): who (users,
 * groups, or every user) may log in to which hosts (hosts, host groups, or
 * every host) through which PAM services (HBAC services, service groups,
 * or every service). Access is granted when at least one enabled rule
 * matches the user, the host and the service (objects/hbac-eval.ts, the one
 * evaluation hbactest and the LDAP service both run). Members are DNs in
 * memberUser, memberHost and memberService, FreeIPA's attributes; a
 * category `all` (userCategory, hostCategory, serviceCategory) stands for
 * every member of its kind and excludes members of that kind, as in
 * FreeIPA. A new rule is enabled; hbacrule-disable keeps it without effect.
 * Deleting a user, group, host, host group or service drops it from the
 * rules (the directory's referential integrity), so a rule never grants
 * more than it did. A new realm starts with `allow_all` (every user, host
 * and service) and `allow_systemd-user`, as FreeIPA does: nothing changes
 * until an administrator restricts access, and once deleted they stay
 * deleted (ObjectDef.initial). For administrators and holders of the HBAC
 * Administrator privilege.
 */
import { escapeRdnValue } from '../directory/dn.js';
import type { Command, ObjectDef } from '../framework/command.js';
import { getEntryToWrite, modifyEntry, pkeyOf } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import { defineObject } from '../framework/object.js';
import { HBAC_SERVICES_CONTAINER } from './hbacsvc.js';

export const HBAC_RULES_CONTAINER = 'cn=rules,cn=hbac';

const NAME = /^[a-zA-Z0-9_.][a-zA-Z0-9_. -]{0,254}$/;

/** The kinds of a rule's members: the category attribute, the member attribute, and what FreeIPA says when both would be set. */
export const RULE_KINDS = [
  { category: 'userCategory', member: 'memberUser', what: 'user', plural: 'users' },
  { category: 'hostCategory', member: 'memberHost', what: 'host', plural: 'hosts' },
  { category: 'serviceCategory', member: 'memberService', what: 'service', plural: 'services' },
] as const;

const category = (what: string) => ({ type: 'enum', values: ['all'], label: `${what[0]!.toUpperCase()}${what.slice(1)} category`, doc: `${what[0]!.toUpperCase()}${what.slice(1)} category the rule applies to` }) as const;

function isAll(values: readonly string[] | undefined): boolean {
  return (values ?? []).some((v) => v.toLowerCase() === 'all');
}

export const hbacruleObject = defineObject({
  name: 'hbacrule',
  label: 'HBAC rules',
  labelSingular: 'HBAC rule',
  doc: 'Host-based access control rules: who may log in to which hosts through which services.',
  container: HBAC_RULES_CONTAINER,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [
      { name: 'memberService', syntax: 'dn', references: 'remove' },
      { name: 'serviceCategory', syntax: 'string', singleValue: true },
    ],
    objectClasses: [
      {
        name: 'dirHbacRule',
        kind: 'structural',
        sup: 'top',
        must: ['cn', 'ipaEnabledFlag'],
        may: ['description', 'memberUser', 'memberHost', 'memberService', 'userCategory', 'hostCategory', 'serviceCategory'],
      },
    ],
  },
  initial: ({ baseDn }) => {
    const rule = (name: string, description: string, attrs: Record<string, string[]>) => ({
      dn: `cn=${escapeRdnValue(name)},${HBAC_RULES_CONTAINER},${baseDn}`,
      attrs: { objectClass: ['top', 'dirHbacRule'], cn: [name], description: [description], ipaEnabledFlag: ['TRUE'], userCategory: ['all'], hostCategory: ['all'], ...attrs },
    });
    return [
      rule('allow_all', 'Allow all users to access any host from any host', { serviceCategory: ['all'] }),
      rule('allow_systemd-user', "Allow pam_systemd to start every user's systemd instance (user@.service) on any host", {
        memberService: [`cn=systemd-user,${HBAC_SERVICES_CONTAINER},${baseDn}`],
      }),
    ];
  },
  commands: (rule) => [
    ...memberCommands(
      rule,
      [
        { option: 'users', target: 'user', kind: 'user', label: 'user', attr: 'memberUser' },
        { option: 'groups', target: 'group', kind: 'group', label: 'group', attr: 'memberUser' },
      ],
      { add: 'hbacrule_add_user', remove: 'hbacrule_remove_user', what: 'users and groups', check: (_ctx, e, _opts, add) => (add ? refuseBesideCategory(e.attrs, 0) : undefined) },
    ),
    ...memberCommands(
      rule,
      [
        { option: 'hosts', target: 'host', kind: 'host', label: 'host', attr: 'memberHost' },
        { option: 'hostgroups', target: 'hostgroup', kind: 'hostgroup', label: 'host group', attr: 'memberHost' },
      ],
      { add: 'hbacrule_add_host', remove: 'hbacrule_remove_host', what: 'target hosts and host groups', check: (_ctx, e, _opts, add) => (add ? refuseBesideCategory(e.attrs, 1) : undefined) },
    ),
    ...memberCommands(
      rule,
      [
        { option: 'hbacsvcs', target: 'hbacsvc', kind: 'hbacsvc', label: 'HBAC service', attr: 'memberService' },
        { option: 'hbacsvcgroups', target: 'hbacsvcgroup', kind: 'hbacsvcgroup', label: 'HBAC service group', attr: 'memberService' },
      ],
      { add: 'hbacrule_add_service', remove: 'hbacrule_remove_service', what: 'services and service groups', check: (_ctx, e, _opts, add) => (add ? refuseBesideCategory(e.attrs, 2) : undefined) },
    ),
    enableCommand(rule, true),
    enableCommand(rule, false),
  ],
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirHbacRule'],
  pkey: 'name',
  managePrivilege: 'HBAC Administrator',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Rule name', doc: 'Rule name', pattern: NAME, patternError: 'may only include letters, numbers, _, -, . and spaces' },
    usercat: { attr: 'userCategory', ...category('user') },
    hostcat: { attr: 'hostCategory', ...category('host') },
    servicecat: { attr: 'serviceCategory', ...category('service') },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'Description', maxLength: 1024 },
    enabled: { attr: 'ipaEnabledFlag', type: 'bool', label: 'Enabled', doc: 'Whether the rule takes part in access decisions (hbacrule-enable, hbacrule-disable)', noCreate: true, noUpdate: true },
  },
  computed: {
    memberuser_user: { label: 'Users', default: true },
    memberuser_group: { label: 'User Groups', default: true },
    memberhost_host: { label: 'Hosts', default: true },
    memberhost_hostgroup: { label: 'Host Groups', default: true },
    memberservice_hbacsvc: { label: 'HBAC Services', default: true },
    memberservice_hbacsvcgroup: { label: 'HBAC Service Groups', default: true },
  },
  defaultAttributes: ['name', 'usercat', 'hostcat', 'servicecat', 'description', 'enabled'],
  searchAttributes: ['name', 'description'],
  hooks: {
    async preAdd(_ctx, attrs) {
      attrs.ipaEnabledFlag = ['TRUE'];
    },
    async complete(_ctx, entry) {
      for (const k of RULE_KINDS) {
        if (isAll(entry.values(k.category)) && entry.values(k.member).length > 0) {
          throw publicError('MutuallyExclusiveError', { reason: `${k.what} category cannot be set to 'all' while there are allowed ${k.plural}` });
        }
      }
    },
    async postRead(ctx, entry, out) {
      Object.assign(
        out,
        membersByKind(ctx, entry.attrs.memberUser ?? [], { memberuser_user: 'user', memberuser_group: 'group' }),
        membersByKind(ctx, entry.attrs.memberHost ?? [], { memberhost_host: 'host', memberhost_hostgroup: 'hostgroup' }),
        membersByKind(ctx, entry.attrs.memberService ?? [], { memberservice_hbacsvc: 'hbacsvc', memberservice_hbacsvcgroup: 'hbacsvcgroup' }),
      );
    },
  },
});

/** FreeIPA's refusal of members beside a category `all` of their kind. */
function refuseBesideCategory(attrs: Readonly<Record<string, readonly string[] | undefined>>, kind: number): void {
  const k = RULE_KINDS[kind]!;
  if (isAll(attrs[k.category])) throw publicError('MutuallyExclusiveError', { reason: `${k.plural} cannot be added when ${k.what} category='all'` });
}

/** hbacrule-enable and hbacrule-disable: the rule's ipaEnabledFlag, written as hbacrule-mod writes. */
function enableCommand(rule: ObjectDef, enable: boolean): Command {
  return {
    name: enable ? 'hbacrule_enable' : 'hbacrule_disable',
    doc: enable ? 'Enable an HBAC rule.' : 'Disable an HBAC rule.',
    object: rule.name,
    args: [{ ...rule.params[rule.pkey]!, name: rule.pkey, required: true }],
    options: {},
    access: { manage: rule.name },
    output: 'summary',
    async run(ctx, args) {
      const name = pkeyOf(ctx, rule, args[0]);
      const entry = await getEntryToWrite(ctx, rule, name);
      const enabled = entry.attrs.ipaEnabledFlag?.[0]?.toUpperCase() === 'TRUE';
      if (enable && enabled) throw publicError('AlreadyActive');
      if (!enable && !enabled) throw publicError('AlreadyInactive');
      await modifyEntry(ctx, rule, name, entry, [{ op: 'replace', attr: 'ipaEnabledFlag', values: [enable ? 'TRUE' : 'FALSE'] }], {});
      return { result: true, value: name, summary: `${enable ? 'Enabled' : 'Disabled'} HBAC rule "${name}"` };
    },
  };
}
