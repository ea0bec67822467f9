/**
 * dirid's directory schema: attribute types and object classes of users,
 * groups, roles, privileges and IdP references. The product prefix is `dir`
 * (specification §2: object class dirIdpUser, attributes dirIdpSub and
 * dirIdpConfigLink). Standard LDAP names (RFC 4519, RFC 2798) are used where
 * one exists.
 */
import type { SchemaDefinition } from '../directory/types.js';

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
    { name: 'nsAccountLock', syntax: 'boolean', singleValue: true },
    { name: 'dirUserAuthType', syntax: 'string', indexed: true },
    // the link of a user to an external identity (specification §2.3)
    { name: 'dirIdpSub', syntax: 'exact', singleValue: true, indexed: true },
    { name: 'dirIdpConfigLink', syntax: 'dn', singleValue: true, indexed: true, references: 'restrict' },
    // IdP references (specification §2.1)
    { name: 'dirIdpProvider', syntax: 'string', singleValue: true },
    { name: 'dirIdpOrg', syntax: 'exact', singleValue: true },
    { name: 'dirIdpBaseUrl', syntax: 'exact', singleValue: true },
    { name: 'dirIdpClientId', syntax: 'exact', singleValue: true, indexed: true },
    { name: 'dirIdpClientSecret', syntax: 'secret', singleValue: true },
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
    { name: 'fqdn', syntax: 'string', singleValue: true, indexed: true },
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
    { name: 'dirIdpUser', kind: 'auxiliary', must: [], may: ['dirIdpSub', 'dirIdpConfigLink'] },
    {
      name: 'krbPrincipalAux',
      kind: 'auxiliary',
      must: [],
      may: ['krbPrincipalName', 'krbPrincipalKey', 'krbLastPwdChange', 'krbPrincipalExpiration', 'krbMaxTicketLife', 'krbMaxRenewableAge'],
    },
    { name: 'krbPrincipal', kind: 'structural', sup: 'top', must: ['krbPrincipalName'], may: ['description', 'nsAccountLock'] },
    { name: 'krbRealmContainer', kind: 'structural', sup: 'top', must: ['cn'], may: ['krbMaxTicketLife', 'krbMaxRenewableAge'] },
    { name: 'dirHost', kind: 'structural', sup: 'top', must: ['fqdn', 'cn'], may: ['description', 'nsAccountLock'] },
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
};
