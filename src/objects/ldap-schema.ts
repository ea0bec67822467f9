/**
 * The part of dirid's directory schema that no one object owns: what
 * several objects share (Kerberos principals of users, services and hosts;
 * POSIX accounts and groups; `member`; account locks) and the realm's own
 * entries (its Kerberos container, the ID range, its servers, the
 * directory's version record). Each object declares the rest itself
 * (ObjectDef.schema); objects/index.ts merges them (realmSchema). The
 * product prefix is `dir` (object class dirIdpUser, attributes dirIdpSub
 * and dirIdpConfigLink). Standard LDAP names (RFC 4519, RFC 2798) are used
 * where one exists. The uniqueness rules several objects share (principal
 * names, POSIX ids) are declared beside the objects they concern and listed
 * here; the user object declares its own (IdP links).
 */
import type { SchemaDefinition } from '../directory/types.js';
import { posixIdRule } from './posix.js';
import { principalNameRule } from './principal-name.js';

export const sharedSchema: SchemaDefinition = {
  attributeTypes: [
    { name: 'userPassword', syntax: 'secret' },
    { name: 'member', syntax: 'dn', indexed: true, references: 'remove' },
    // never stored: the LDAP service works it out from `member` (ldap-server/member-of.ts); declared so filters compare DNs and writes are refused
    { name: 'memberOf', syntax: 'dn', operational: true },
    // never stored: the entries of views carry it (framework/view.ts), a number that grows with each change, for hosts' smart refreshes
    { name: 'entryUSN', syntax: 'integer', singleValue: true, operational: true },
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
    // who and where a rule applies to, HBAC rules' and sudo rules' alike (FreeIPA's names): users and groups,
    // hosts and host groups as DNs, or a category `all`; and whether the rule is in force
    { name: 'memberUser', syntax: 'dn', references: 'remove' },
    { name: 'memberHost', syntax: 'dn', references: 'remove' },
    { name: 'userCategory', syntax: 'string', singleValue: true },
    { name: 'hostCategory', syntax: 'string', singleValue: true },
    { name: 'ipaEnabledFlag', syntax: 'boolean', singleValue: true },
    // Kerberos principals (names after MIT's LDAP KDB schema)
    { name: 'krbPrincipalName', syntax: 'exact', indexed: true },
    { name: 'krbPrincipalKey', syntax: 'secret', maxLength: 8192 },
    { name: 'krbLastPwdChange', syntax: 'time', singleValue: true },
    { name: 'krbPrincipalExpiration', syntax: 'time', singleValue: true },
    { name: 'krbMaxTicketLife', syntax: 'integer', singleValue: true },
    { name: 'krbMaxRenewableAge', syntax: 'integer', singleValue: true },
    // the authentication indicators a ticket for this principal needs one of (FreeIPA's name; docs/kerberos.md)
    { name: 'krbPrincipalAuthInd', syntax: 'exact' },
    // account state (src/account/state.ts): password expiry, lockout counters and the last successful
    // login of a principal (names after MIT's and FreeIPA's schema); the lockout figures are the password
    // policies' (objects/pwpolicy.ts), and were the realm container's before (server/upgrade.ts step 3)
    { name: 'krbPasswordExpiration', syntax: 'time', singleValue: true },
    { name: 'krbLoginFailedCount', syntax: 'integer', singleValue: true },
    { name: 'krbLastFailedAuth', syntax: 'time', singleValue: true },
    { name: 'krbLastSuccessfulAuth', syntax: 'time', singleValue: true },
    { name: 'krbPwdMaxFailure', syntax: 'integer', singleValue: true },
    { name: 'krbPwdFailureCountInterval', syntax: 'integer', singleValue: true },
    { name: 'krbPwdLockoutDuration', syntax: 'integer', singleValue: true },
    // the servers of a realm (src/server/servers.ts): one value per service, `service=port`
    { name: 'dirServerAddress', syntax: 'exact' },
    // the directory's version record (src/server/upgrade.ts): its version, and the release that wrote it
    { name: 'dirVersion', syntax: 'integer', singleValue: true },
    { name: 'dirRelease', syntax: 'exact', singleValue: true },
    // OpenSSH public keys of users and hosts (openssh-lpk's name, which SSSD's ldap provider reads: objects/ssh-public-key.ts)
    { name: 'sshPublicKey', syntax: 'exact', maxLength: 8192 },
  ],
  objectClasses: [
    // RFC 2307 (as RFC 2307bis has them: both auxiliary), read by SSSD and nss on hosts
    {
      name: 'posixAccount',
      kind: 'auxiliary',
      must: ['cn', 'uid', 'uidNumber', 'gidNumber', 'homeDirectory'],
      may: ['userPassword', 'loginShell', 'gecos', 'description'],
    },
    { name: 'posixGroup', kind: 'auxiliary', must: ['gidNumber'], may: ['description'] },
    { name: 'dirIdRange', kind: 'structural', sup: 'top', must: ['cn', 'dirBaseId', 'dirIdRangeSize', 'dirNextId'], may: ['description'] },
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
        'krbLastSuccessfulAuth',
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
    // openssh-lpk's class (there MUST sshPublicKey $ uid; a host has no uid): comes and goes with a user's or host's keys
    { name: 'ldapPublicKey', kind: 'auxiliary', must: ['sshPublicKey'], may: ['uid'] },
    { name: 'dirServer', kind: 'structural', sup: 'top', must: ['cn'], may: ['dirServerAddress', 'description'] },
    { name: 'dirVersionRecord', kind: 'structural', sup: 'top', must: ['cn', 'dirVersion'], may: ['dirRelease', 'description'] },
  ],
  // what one entry holds alone, enforced at every write (directory/unique.ts)
  unique: [principalNameRule, posixIdRule],
};
