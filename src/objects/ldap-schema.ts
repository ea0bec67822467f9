/**
 * dirid's directory schema: attribute types and object classes of users,
 * groups, roles, privileges and IdP references. The product prefix is `dir`
 * (object class dirIdpUser, attributes dirIdpSub and
 * dirIdpConfigLink). Standard LDAP names (RFC 4519, RFC 2798) are used where
 * one exists. The uniqueness rules (principal names, POSIX ids, IdP links)
 * are declared beside the objects they concern.
 */
import type { SchemaDefinition } from '../directory/types.js';
import { posixIdRule } from './posix.js';
import { principalNameRule } from './principal-name.js';
import { idpLinkRule } from './user.js';

export const diridSchema: SchemaDefinition = {
  attributeTypes: [
    { name: 'sn', aliases: ['surname'], syntax: 'string', indexed: true },
    { name: 'givenName', syntax: 'string', indexed: true },
    { name: 'displayName', syntax: 'string', singleValue: true },
    { name: 'initials', syntax: 'string' },
    { name: 'mail', syntax: 'string', indexed: true },
    { name: 'userPassword', syntax: 'secret' },
    { name: 'member', syntax: 'dn', indexed: true, references: 'remove' },
    { name: 'gidNumber', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'uidNumber', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'homeDirectory', syntax: 'exact', singleValue: true },
    { name: 'loginShell', syntax: 'exact', singleValue: true },
    { name: 'gecos', syntax: 'string', singleValue: true },
    // the realm's POSIX ID range (src/objects/posix.ts); names after FreeIPA's range and DNA entries
    { name: 'dirBaseId', syntax: 'integer', singleValue: true },
    { name: 'dirIdRangeSize', syntax: 'integer', singleValue: true },
    { name: 'dirNextId', syntax: 'integer', singleValue: true },
    { name: 'nsAccountLock', syntax: 'boolean', singleValue: true },
    { name: 'dirUserAuthType', syntax: 'string', indexed: true },
    // the link of a user to an external identity (docs/device-flow.md)
    { name: 'dirIdpSub', syntax: 'exact', singleValue: true, indexed: true },
    { name: 'dirIdpConfigLink', syntax: 'dn', singleValue: true, indexed: true, references: 'restrict' },
    // IdP references (docs/conventions.md)
    { name: 'dirIdpProvider', syntax: 'string', singleValue: true },
    { name: 'dirIdpOrg', syntax: 'exact', singleValue: true },
    { name: 'dirIdpBaseUrl', syntax: 'exact', singleValue: true },
    { name: 'dirIdpClientId', syntax: 'exact', singleValue: true, indexed: true },
    { name: 'dirIdpClientSecret', syntax: 'secret', singleValue: true },
    // private_key_jwt (docs/client-auth.md): the method, the key algorithm, and the private keys (sealed, never returned)
    { name: 'dirIdpClientAuth', syntax: 'string', singleValue: true },
    { name: 'dirIdpClientKeyAlg', syntax: 'exact', singleValue: true },
    { name: 'dirIdpClientKey', syntax: 'secret', singleValue: true, maxLength: 16384 },
    { name: 'dirIdpAuthEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpDevAuthEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpTokenEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpUserInfoEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpKeysEndpoint', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpIssuerUrl', syntax: 'exact', singleValue: true, maxLength: 2048 },
    { name: 'dirIdpScope', syntax: 'exact', singleValue: true },
    { name: 'dirIdpUserIdAttribute', syntax: 'exact', singleValue: true },
    // Kerberos principals (names after MIT's LDAP KDB schema)
    { name: 'krbPrincipalName', syntax: 'exact', indexed: true },
    { name: 'krbPrincipalKey', syntax: 'secret', maxLength: 8192 },
    { name: 'krbLastPwdChange', syntax: 'time', singleValue: true },
    { name: 'krbPrincipalExpiration', syntax: 'time', singleValue: true },
    { name: 'krbMaxTicketLife', syntax: 'integer', singleValue: true },
    { name: 'krbMaxRenewableAge', syntax: 'integer', singleValue: true },
    // the authentication indicators a ticket for this principal needs one of (FreeIPA's name; docs/kerberos.md)
    { name: 'krbPrincipalAuthInd', syntax: 'exact' },
    { name: 'fqdn', syntax: 'string', singleValue: true, indexed: true },
    // account state (src/account/state.ts): password expiry and lockout counters of a principal,
    // and the realm's lockout policy on its realm container (names after MIT's and FreeIPA's schema)
    { name: 'krbPasswordExpiration', syntax: 'time', singleValue: true },
    { name: 'krbLoginFailedCount', syntax: 'integer', singleValue: true },
    { name: 'krbLastFailedAuth', syntax: 'time', singleValue: true },
    { name: 'krbPwdMaxFailure', syntax: 'integer', singleValue: true },
    { name: 'krbPwdFailureCountInterval', syntax: 'integer', singleValue: true },
    { name: 'krbPwdLockoutDuration', syntax: 'integer', singleValue: true },
    // the servers of a realm (src/server/servers.ts): one value per service, `service=port`
    { name: 'dirServerAddress', syntax: 'exact' },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['userPassword', 'description'] },
    { name: 'organizationalPerson', kind: 'structural', sup: 'person', must: [], may: ['ou'] },
    {
      name: 'inetOrgPerson',
      kind: 'structural',
      sup: 'organizationalPerson',
      must: [],
      may: ['givenName', 'mail', 'uid', 'displayName', 'initials'],
    },
    {
      name: 'dirUser',
      kind: 'auxiliary',
      must: ['uid'],
      may: ['nsAccountLock', 'dirUserAuthType', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell'],
    },
    // RFC 2307 (as RFC 2307bis has them: both auxiliary), read by SSSD and nss on hosts
    {
      name: 'posixAccount',
      kind: 'auxiliary',
      must: ['cn', 'uid', 'uidNumber', 'gidNumber', 'homeDirectory'],
      may: ['userPassword', 'loginShell', 'gecos', 'description'],
    },
    { name: 'posixGroup', kind: 'auxiliary', must: ['gidNumber'], may: ['description'] },
    { name: 'dirIdRange', kind: 'structural', sup: 'top', must: ['cn', 'dirBaseId', 'dirIdRangeSize', 'dirNextId'], may: ['description'] },
    { name: 'dirIdpUser', kind: 'auxiliary', must: [], may: ['dirIdpSub', 'dirIdpConfigLink'] },
    {
      name: 'krbPrincipalAux',
      kind: 'auxiliary',
      must: [],
      may: [
        'krbPrincipalName',
        'krbPrincipalKey',
        'krbLastPwdChange',
        'krbPrincipalExpiration',
        'krbMaxTicketLife',
        'krbMaxRenewableAge',
        'krbPrincipalAuthInd',
        'krbPasswordExpiration',
        'krbLoginFailedCount',
        'krbLastFailedAuth',
      ],
    },
    { name: 'krbPrincipal', kind: 'structural', sup: 'top', must: ['krbPrincipalName'], may: ['description', 'nsAccountLock'] },
    {
      name: 'krbRealmContainer',
      kind: 'structural',
      sup: 'top',
      must: ['cn'],
      may: ['krbMaxTicketLife', 'krbMaxRenewableAge', 'krbPwdMaxFailure', 'krbPwdFailureCountInterval', 'krbPwdLockoutDuration'],
    },
    { name: 'dirHost', kind: 'structural', sup: 'top', must: ['fqdn', 'cn'], may: ['description', 'nsAccountLock'] },
    { name: 'dirServer', kind: 'structural', sup: 'top', must: ['cn'], may: ['dirServerAddress', 'description'] },
    { name: 'dirGroup', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description', 'gidNumber'] },
    { name: 'dirRole', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] },
    { name: 'dirPrivilege', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description'] },
    {
      name: 'dirIdp',
      kind: 'structural',
      sup: 'top',
      must: ['cn', 'dirIdpClientId'],
      may: [
        'description',
        'dirIdpProvider',
        'dirIdpOrg',
        'dirIdpBaseUrl',
        'dirIdpClientSecret',
        'dirIdpClientAuth',
        'dirIdpClientKeyAlg',
        'dirIdpClientKey',
        'dirIdpAuthEndpoint',
        'dirIdpDevAuthEndpoint',
        'dirIdpTokenEndpoint',
        'dirIdpUserInfoEndpoint',
        'dirIdpKeysEndpoint',
        'dirIdpIssuerUrl',
        'dirIdpScope',
        'dirIdpUserIdAttribute',
      ],
    },
  ],
  // what one entry holds alone, enforced at every write (directory/unique.ts)
  unique: [principalNameRule, posixIdRule, idpLinkRule],
};
