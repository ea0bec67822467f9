/**
 * HBAC service groups (FreeIPA's hbacsvcgroup): named sets of HBAC
 * services that rules name at once (`Sudo`: sudo and sudo-i). Members are
 * `member` DNs of HBAC services; groups do not nest, as in FreeIPA. A
 * deleted service leaves the groups that held it. Every realm has FreeIPA's
 * two (the object's defaults). For administrators and holders of the HBAC
 * Administrator privilege.
 */
import { escapeRdnValue } from '../directory/dn.js';
import { defineObject } from '../framework/object.js';
import { memberCommands, membersByKind } from '../framework/membership.js';
import { HBAC_SERVICES_CONTAINER } from './hbacsvc.js';
import { HBAC_NAME, HBAC_NAME_ERROR } from './hostgroup.js';

const CONTAINER = 'cn=hbacservicegroups,cn=hbac';

/** The service groups every realm has, and their services. */
export const defaultHbacServiceGroups: ReadonlyArray<{ name: string; description: string; services: readonly string[] }> = [
  { name: 'Sudo', description: 'Default group of Sudo related services', services: ['sudo', 'sudo-i'] },
  { name: 'ftp', description: 'Default group of ftp related services', services: ['ftp', 'proftpd', 'pure-ftpd', 'vsftpd', 'gssftp'] },
];

export const hbacsvcgroupObject = defineObject({
  name: 'hbacsvcgroup',
  label: 'HBAC service groups',
  labelSingular: 'HBAC service group',
  doc: 'Groups of HBAC services.',
  container: CONTAINER,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [{ name: 'dirHbacServiceGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] }],
  },
  defaults: ({ baseDn }) =>
    defaultHbacServiceGroups.map((g) => ({
      dn: `cn=${escapeRdnValue(g.name)},${CONTAINER},${baseDn}`,
      attrs: {
        objectClass: ['top', 'dirHbacServiceGroup'],
        cn: [g.name],
        description: [g.description],
        member: g.services.map((s) => `cn=${escapeRdnValue(s)},${HBAC_SERVICES_CONTAINER},${baseDn}`),
      },
    })),
  commands: (group) =>
    memberCommands(group, [{ option: 'hbacsvcs', target: 'hbacsvc', kind: 'hbacsvc', label: 'member HBAC service' }], {
      add: 'hbacsvcgroup_add_member',
      remove: 'hbacsvcgroup_remove_member',
      what: 'members',
    }),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirHbacServiceGroup'],
  pkey: 'name',
  managePrivilege: 'HBAC Administrator',
  params: {
    name: { attr: 'cn', type: 'str', label: 'Service group name', doc: 'Service group name', pattern: HBAC_NAME, patternError: HBAC_NAME_ERROR },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'HBAC service group description', maxLength: 1024 },
  },
  computed: { member_hbacsvc: { label: 'Member HBAC services', default: true } },
  defaultAttributes: ['name', 'description'],
  searchAttributes: ['name', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
  hooks: {
    async postRead(ctx, entry, out) {
      Object.assign(out, membersByKind(ctx, entry.attrs.member ?? [], { member_hbacsvc: 'hbacsvc' }));
    },
  },
});
