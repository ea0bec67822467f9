/**
 * HBAC services (FreeIPA's hbacsvc): the PAM services host-based access
 * rules name (objects/hbacrule.ts, docs/hbac.md). A host asks for access
 * to one of them by its PAM service name (`sshd` for an SSH login, `su`,
 * `sudo`...), so a name is what a PAM application passes to pam_start,
 * kept in lower case as FreeIPA keeps it. Every realm has the usual ones
 * (the object's defaults; a start adds one that is missing); a rule can
 * only name a service that exists here, and a PAM service no entry names
 * is granted only by a rule for all services. For administrators and
 * holders of the HBAC Administrator privilege.
 */
import { escapeRdnValue } from '../directory/dn.js';
import { defineObject } from '../framework/object.js';
import { HBAC_NAME, HBAC_NAME_ERROR } from './hostgroup.js';

export const HBAC_SERVICES_CONTAINER = 'cn=hbacservices,cn=hbac';

/** The PAM services every realm has, with what logs in through each (FreeIPA's defaults, and Debian's names beside Fedora's). */
export const defaultHbacServices: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'sshd', description: 'SSH logins (password, GSSAPI, SSH key)' },
  { name: 'login', description: 'Console logins' },
  { name: 'su', description: 'su' },
  { name: 'su-l', description: 'su with a login shell (su -)' },
  { name: 'sudo', description: 'sudo' },
  { name: 'sudo-i', description: 'sudo -i' },
  { name: 'gdm', description: 'GNOME display manager' },
  { name: 'gdm-password', description: 'GNOME display manager, password logins' },
  { name: 'kdm', description: 'KDE display manager' },
  { name: 'lightdm', description: 'LightDM display manager' },
  { name: 'sddm', description: 'SDDM display manager' },
  { name: 'systemd-user', description: "The user's systemd instance, started at each login session" },
  { name: 'cron', description: 'cron jobs (Debian)' },
  { name: 'crond', description: 'cron jobs (Fedora, RHEL)' },
  { name: 'ftp', description: 'FTP' },
  { name: 'proftpd', description: 'ProFTPD' },
  { name: 'pure-ftpd', description: 'Pure-FTPd' },
  { name: 'vsftpd', description: 'vsftpd' },
  { name: 'gssftp', description: 'Kerberized FTP' },
];

export const hbacsvcObject = defineObject({
  name: 'hbacsvc',
  label: 'HBAC services',
  labelSingular: 'HBAC service',
  doc: 'PAM services that host-based access rules name.',
  container: HBAC_SERVICES_CONTAINER,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [],
    objectClasses: [{ name: 'dirHbacService', kind: 'structural', sup: 'top', must: ['cn'], may: ['description'] }],
  },
  defaults: ({ baseDn }) =>
    defaultHbacServices.map((s) => ({
      dn: `cn=${escapeRdnValue(s.name)},${HBAC_SERVICES_CONTAINER},${baseDn}`,
      attrs: { objectClass: ['top', 'dirHbacService'], cn: [s.name], description: [s.description] },
    })),
  rdnAttr: 'cn',
  objectClasses: ['top', 'dirHbacService'],
  pkey: 'service',
  managePrivilege: 'HBAC Administrator',
  params: {
    service: { attr: 'cn', type: 'str', label: 'Service name', doc: 'HBAC service (the PAM service name)', pattern: HBAC_NAME, patternError: HBAC_NAME_ERROR },
    description: { attr: 'description', type: 'str', label: 'Description', doc: 'HBAC service description', maxLength: 1024 },
  },
  defaultAttributes: ['service', 'description'],
  searchAttributes: ['service', 'description'],
  normalizePkey: (v) => v.toLowerCase(),
});
