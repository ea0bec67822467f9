/**
 * Users, with the link to an external identity (docs/device-flow.md):
 * `--user-auth-type`, `--idp` (stored as the DN of the IdP reference
 * in dirIdpConfigLink) and `--idp-user-id` (dirIdpSub). Both link attributes
 * are single-valued: a linked user cannot be linked to a second reference
 * until the first link is removed. The object class dirIdpUser comes with a
 * link and leaves with it, whichever options made or removed the link.
 * An identity at an IdP (reference and IdP user id) links one user only
 * ({@link idpLinkRule}, which the directory enforces at every write).
 * Every user, IdP-linked or not, has a POSIX identity (objects/posix.ts).
 * SSH public keys (`--sshpubkey`, in sshPublicKey: objects/ssh-public-key.ts)
 * are shown by their fingerprints; they are set by whoever may modify the
 * user, not by the user (docs/access.md). A login is no name hosts reserve
 * (posix.ts checkHostReservedName), and the last enabled administrator is
 * neither disabled nor deleted (last-admin.ts).
 * A password is held to the user's password policy (objects/pwpolicy.ts,
 * account/credentials.ts); one an administrator sets has expired at once.
 * A renamed user keeps its old principal name as an alias, as FreeIPA
 * does: tickets and keytabs naming it keep working until an administrator
 * removes it (user-mod --delattr krbprincipalname=OLD@REALM), and the keys
 * keep the salt they were made with, which the KDC sends (ETYPE-INFO2), so
 * the same password logs in under either name. `--all` and user-status show
 * the account's state: the policy it is held to, its failed and last
 * successful logins, and until when it is locked.
 */
import type { Attributes, Entry, Modification, UniqueRule } from '../directory/types.js';
import type { CallContext, Command, ObjectDef } from '../framework/command.js';
import { assertReadable } from '../framework/access.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { parseKeys } from '../account/keys.js';
import { credentialMods, passwordChange, type PasswordSetter } from '../account/credentials.js';
import { accountOf, describeRefusal, lockedUntil, newSecurityStamp, verdict } from '../account/state.js';
import { passwordPolicies } from '../account/password-policy.js';
import { generalizedTime } from '../directory/schema.js';
import { checkNewPrincipalNames } from './principal-name.js';
import { addUserPosix, checkHostReservedName, checkIdChange, checkPrivateGroupName } from './posix.js';
import { hasObjectClass } from '../directory/entry.js';
import { containers, KNOWN_CONTAINERS } from '../directory/layout.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import { sameDn } from '../directory/dn.js';
import { getEntry, pkeyOfDn } from '../framework/crud.js';
import { userUnlockCommand } from './user-unlock.js';
import { userDisableCommand, userEnableCommand } from './user-disable.js';
import { checkDelete, checkUserWrite } from './last-admin.js';
import { completeSshKeys, FINGERPRINT_OUTPUT, sshFingerprints, sshPublicKeyParam } from './ssh-public-key.js';

export const userAuthTypes = ['password', 'idp', 'passkey'] as const;

function checkLinkPair(sub: readonly string[], link: readonly string[]): void {
  if (link.length > 0 && sub.length === 0) throw publicError('RequirementError', { name: 'idp_user_id' });
  if (sub.length > 0 && link.length === 0) throw publicError('RequirementError', { name: 'idp' });
}

/**
 * One identity at an IdP is one user: a link (reference, user id at the IdP)
 * that another user holds is refused, naming that user, or its IdP account
 * would log in as both; the user holding it may set it again. IdP user ids
 * compare exactly (dirIdpSub's syntax); the id is looked up first, being the
 * more selective of the two.
 */
export const idpLinkRule: UniqueRule = {
  name: 'IdP link',
  keys: [{ attrs: ['dirIdpSub', 'dirIdpConfigLink'], refusal: 'IdP user ID "{dirIdpSub}" of IdP reference "{dirIdpConfigLink}" is already linked to {holder}' }],
};

/**
 * What a user's new password stores (account/credentials.ts: the hash,
 * Kerberos keys at the next key version, the change time, the expiry), the
 * password held to the password rules: one that breaks one is refused with
 * ValidationError naming it, on every way a password is set. `entry` is
 * null for a user being added. A new password ends the user's sessions (a
 * new security stamp, account/state.ts), whoever sets it, on every way in.
 */
export async function passwordAttrs(ctx: CallContext, login: string, entry: Entry | null, password: string, by: PasswordSetter): Promise<Attributes> {
  const policies = passwordPolicies(ctx.dir);
  // a user being added is in no group yet: the global policy
  const rules = await (entry ? policies.forUser(entry.dn) : policies.global());
  let current = null;
  if (entry) {
    const keys = parseKeys(await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey'));
    const [hash] = await ctx.dir.readSecret(entry.dn, 'userPassword');
    const history = await ctx.dir.readSecret(entry.dn, 'passwordHistory');
    current = { attrs: entry.attrs, keys, passwords: { ...(hash ? { current: hash } : {}), history } };
  }
  const change = await passwordChange({ password, realm: ctx.server.realm, components: [login], current, by, now: new Date(), rules });
  if (change.broken) throw publicError('ValidationError', { name: 'password', error: change.broken.message });
  return change.attrs;
}

/**
 * The modifications that set a user's password (passwordAttrs), and
 * make the user a Kerberos principal if it was not one.
 */
export async function passwordMods(ctx: CallContext, entry: Entry, password: string, by: PasswordSetter): Promise<Modification[]> {
  const uid = entry.attrs.uid?.[0] ?? '';
  const mods = credentialMods(await passwordAttrs(ctx, uid, entry, password, by));
  if (!hasObjectClass(entry.attrs.objectClass, 'krbPrincipalAux')) {
    // a name another entry holds is refused at the write (principal-name.ts)
    const name = `${uid}@${ctx.server.realm}`;
    mods.unshift({ op: 'add', attr: 'objectClass', values: ['krbPrincipalAux'] }, { op: 'replace', attr: 'krbPrincipalName', values: [name] });
  }
  return mods;
}

export const userObject = defineObject({
  name: 'user',
  label: 'users',
  labelSingular: 'user',
  doc: 'Users.',
  container: KNOWN_CONTAINERS.users,
  readBy: 'authenticated',
  schema: {
    attributeTypes: [
      { name: 'sn', aliases: ['surname'], syntax: 'string', indexed: true },
      { name: 'givenName', syntax: 'string', indexed: true },
      { name: 'displayName', syntax: 'string', singleValue: true },
      { name: 'initials', syntax: 'string' },
      { name: 'mail', syntax: 'string', indexed: true },
      { name: 'dirUserAuthType', syntax: 'string', indexed: true },
      // replaced when a user's sessions end: a password change, a disablement, a rename (src/account/state.ts)
      { name: 'dirSecurityStamp', syntax: 'exact', singleValue: true },
      // the hashes of the user's last passwords, `TIME{SCRYPT}…` as 389 DS keeps them (account/credentials.ts)
      { name: 'passwordHistory', syntax: 'secret' },
      // the link of a user to an external identity (docs/device-flow.md)
      { name: 'dirIdpSub', syntax: 'exact', singleValue: true, indexed: true },
      { name: 'dirIdpConfigLink', syntax: 'dn', singleValue: true, indexed: true, references: 'restrict' },
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
        may: ['nsAccountLock', 'dirUserAuthType', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell', 'dirSecurityStamp', 'passwordHistory'],
      },
      { name: 'dirIdpUser', kind: 'auxiliary', must: [], may: ['dirIdpSub', 'dirIdpConfigLink'] },
    ],
    // one user per IdP subject of a reference (directory/unique.ts, at every write)
    unique: [idpLinkRule],
  },
  commands: (user) => [userUnlockCommand(user), userDisableCommand(user), userEnableCommand(user), userStatusCommand(user)],
  rdnAttr: 'uid',
  objectClasses: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser'],
  pkey: 'login',
  managePrivilege: 'User Administrators',
  params: {
    login: {
      attr: 'uid',
      type: 'str',
      label: 'User login',
      doc: 'User login',
      pattern: /^[a-z_][a-z0-9_.-]{0,31}$/,
      patternError: 'may only include lower-case letters, numbers, _, - and ., and start with a letter or _',
      maxLength: 32,
    },
    first: { attr: 'givenName', type: 'str', label: 'First name', doc: 'First name', required: true },
    last: { attr: 'sn', type: 'str', label: 'Last name', doc: 'Last name', required: true },
    cn: { attr: 'cn', type: 'str', label: 'Full name', doc: 'Full name (default: first and last name)' },
    email: { attr: 'mail', type: 'str', label: 'Email address', doc: 'Email address', multivalue: true, pattern: /^[^\s@]+@[^\s@]+$/, patternError: 'must be an email address' },
    uid: { attr: 'uidNumber', type: 'int', label: 'UID', doc: 'User ID number (assigned from the realm\'s ID range when not given)', minValue: 1, maxValue: 2_147_483_646 },
    gidnumber: { attr: 'gidNumber', type: 'int', label: 'GID', doc: 'Group ID number of the primary group (default: the user private group, equal to the UID)', minValue: 1, maxValue: 2_147_483_646 },
    homedir: { attr: 'homeDirectory', type: 'str', label: 'Home directory', doc: 'Home directory (default: /home/LOGIN)', pattern: /^\/[^:\n]*$/, patternError: 'must be an absolute path without ":"', maxLength: 1024 },
    shell: { attr: 'loginShell', type: 'str', label: 'Login shell', doc: 'Login shell (default: /bin/bash)', pattern: /^\/[^:\s]*$/, patternError: 'must be an absolute path without ":" or spaces', maxLength: 1024 },
    gecos: { attr: 'gecos', type: 'str', label: 'GECOS', doc: 'GECOS field (default: the full name)', pattern: /^[^:\n]*$/, patternError: 'may not contain ":"', maxLength: 1024 },
    password: {
      attr: 'userPassword',
      type: 'password',
      label: 'Password',
      doc: 'Set the user password (prompted for when given without a value)',
      secret: true,
      noSearch: true,
    },
    disabled: { attr: 'nsAccountLock', type: 'bool', label: 'Account disabled', doc: 'Account disabled' },
    user_auth_type: {
      attr: 'dirUserAuthType',
      type: 'enum',
      values: userAuthTypes,
      multivalue: true,
      label: 'User authentication types',
      doc: 'Types of supported user authentication',
    },
    idp: { attr: 'dirIdpConfigLink', type: 'ref', ref: 'idp', label: 'External IdP configuration', doc: 'External IdP configuration (IdP reference name)' },
    idp_user_id: {
      attr: 'dirIdpSub',
      type: 'str',
      label: 'External IdP user identifier',
      doc: 'A string that identifies the user at the external IdP',
      caseExact: true,
      maxLength: 1024,
    },
    sshpubkey: sshPublicKeyParam('SSH public key, a line of an authorized_keys file (options allowed); repeat for several'),
    // the account's state (account/state.ts), shown with --all and by user-status, set by the server
    last_pwd_change: { attr: 'krbLastPwdChange', type: 'str', label: 'Last password change', doc: 'When the password was last set', noCreate: true, noUpdate: true, noSearch: true },
    password_expiration: { attr: 'krbPasswordExpiration', type: 'str', label: 'Password expiration', doc: 'When the password expires', noCreate: true, noUpdate: true, noSearch: true },
    failed_logins: { attr: 'krbLoginFailedCount', type: 'str', label: 'Failed logins', doc: 'Failed logins counted towards the lockout', noCreate: true, noUpdate: true, noSearch: true },
    last_success: { attr: 'krbLastSuccessfulAuth', type: 'str', label: 'Last successful authentication', doc: 'The last successful password login (recorded to the hour)', noCreate: true, noUpdate: true, noSearch: true },
    last_failure: { attr: 'krbLastFailedAuth', type: 'str', label: 'Last failed authentication', doc: 'The last failed password login', noCreate: true, noUpdate: true, noSearch: true },
  },
  computed: {
    pwpolicy: { label: 'Password policy' },
    locked_until: { label: 'Locked until' },
    ...FINGERPRINT_OUTPUT,
  },
  defaultAttributes: ['login', 'first', 'last', 'email', 'uid', 'gidnumber', 'homedir', 'shell', 'disabled', 'user_auth_type', 'idp', 'idp_user_id'],
  searchAttributes: ['login', 'first', 'last', 'cn', 'email'],
  hooks: {
    async preAdd(ctx: CallContext, attrs: Attributes, options, pkey) {
      checkHostReservedName(pkey, 'login');
      if (!attrs.cn) attrs.cn = [`${options.first} ${options.last}`];
      attrs.objectClass = [...(attrs.objectClass ?? []), 'krbPrincipalAux'];
      attrs.krbPrincipalName = [`${pkey}@${ctx.server.realm}`];
      if (attrs.userPassword) Object.assign(attrs, await passwordAttrs(ctx, pkey, null, attrs.userPassword[0]!, 'admin'));
      await checkPrivateGroupName(ctx, pkey, 'user');
      await addUserPosix(ctx, attrs, pkey);
    },
    async preMod(ctx, mods, options, entry) {
      await checkIdChange(ctx, mods, entry, 'uidNumber');
      if (typeof options.rename === 'string') {
        checkHostReservedName(options.rename, 'rename');
        await checkPrivateGroupName(ctx, options.rename, 'user');
        // a renamed user logs in under the new name, and its old names stay as aliases; the keys keep the salt they were made with
        const name = `${options.rename}@${ctx.server.realm}`;
        const held = entry.attrs.krbPrincipalName ?? [];
        mods.push({ op: 'replace', attr: 'krbPrincipalName', values: [name, ...held.filter((n) => n !== name)] });
      }
      let password: string | undefined;
      for (let i = 0; i < mods.length; i++) {
        const m = mods[i]!;
        if (m.attr === 'userPassword' && m.op === 'replace' && m.values.length === 1) {
          password = m.values[0]!;
          mods.splice(i--, 1);
          continue;
        }
        if (m.attr === 'dirIdpConfigLink' && m.op === 'replace') {
          const current = entry.attrs.dirIdpConfigLink ?? [];
          // Re-linking to the same reference changes nothing; linking to a second
          // one is an *add* so the store's single-value rule refuses it.
          if (current.length > 0 && m.values.length > 0) {
            const same = current[0]!.toLowerCase() === (m.values[0] ?? '').toLowerCase();
            mods[i] = same ? { op: 'replace', attr: m.attr, values: current } : { op: 'add', attr: m.attr, values: m.values };
          }
        }
      }
      if (password !== undefined) {
        // the password becomes what it stores; an expiry the same call sets explicitly stays
        const setsExpiry = mods.some((x) => x.attr.toLowerCase() === 'krbpasswordexpiration');
        const by = ctx.principal && sameDn(ctx.principal.dn, entry.dn) ? 'self' : 'admin';
        mods.push(...(await passwordMods(ctx, entry, password, by)).filter((x) => !(setsExpiry && x.attr === 'krbPasswordExpiration')));
      }
    },
    async postRead(ctx, entry, out, options) {
      if (entry.attrs.sshPublicKey) out.sshpubkeyfp = sshFingerprints(entry.attrs.sshPublicKey);
      if (options.all !== true || options.raw === true) return;
      Object.assign(out, await accountStatus(ctx, entry));
    },
    async complete(ctx, entry, options) {
      // no principal name of a host's own user (root@REALM); that no other entry holds one is the directory's rule, at the write
      checkNewPrincipalNames(entry);
      // disabling or renaming a user ends its sessions, which stay ended once it is enabled again (account/state.ts)
      const disabling = entry.values('nsAccountLock')[0]?.toUpperCase() === 'TRUE' && entry.before?.attrs.nsAccountLock?.[0]?.toUpperCase() !== 'TRUE';
      // the realm keeps an enabled administrator (last-admin.ts)
      if (disabling) await checkUserWrite(ctx, entry, entry.before?.attrs.uid?.[0] ?? '');
      if (entry.before && (disabling || typeof options.rename === 'string')) entry.set('dirSecurityStamp', [newSecurityStamp()]);
      // a link is both attributes or neither, whichever options made it (another user's is refused at the write: idpLinkRule)
      const link = entry.values('dirIdpConfigLink');
      if (entry.changes('dirIdpConfigLink') || entry.changes('dirIdpSub')) checkLinkPair(entry.values('dirIdpSub'), link);
      // dirIdpUser marks a linked user: it comes with a link and leaves with it
      const classes = entry.values('objectClass');
      if (link.length > 0 && !hasObjectClass(classes, 'dirIdpUser')) entry.set('objectClass', [...classes, 'dirIdpUser']);
      if (link.length === 0 && hasObjectClass(classes, 'dirIdpUser')) entry.set('objectClass', classes.filter((c) => c.toLowerCase() !== 'diridpuser'));
      // SSH public keys, served over LDAP to SSSD (sss_ssh_authorizedkeys)
      completeSshKeys(entry, true, ['ldapPublicKey']);
    },
    async preDel(ctx, entry) {
      await checkDelete(ctx, entry, entry.attrs.uid?.[0] ?? entry.dn);
    },
  },
});

/**
 * What --all and user-status add about the account: the password policy it
 * is held to and, when locked, until when (`until an administrator unlocks
 * it` when the policy's lockout has no end).
 */
async function accountStatus(ctx: CallContext, entry: Entry): Promise<{ pwpolicy: string[]; locked_until?: string[] }> {
  const account = accountOf(entry);
  const policy = await passwordPolicies(ctx.dir).forUser(entry.dn);
  const out: { pwpolicy: string[]; locked_until?: string[] } = { pwpolicy: [policy.name] };
  const locked = lockedUntil(account, policy, Date.now());
  if (locked !== false) out.locked_until = [locked ? generalizedTime(locked) : 'until an administrator unlocks it'];
  return out;
}

/**
 * user-status LOGIN (FreeIPA's command of the same name): whether the
 * account may log in now and why not, the password policy it is held to,
 * its failed logins and the last failed and successful ones, when its
 * password changed and expires. Readable as user-show is.
 */
function userStatusCommand(user: ObjectDef): Command {
  return {
    name: 'user_status',
    doc: "Show a user account's lockout and login status.",
    object: user.name,
    args: [{ name: 'login', type: 'str', label: 'User login', doc: 'User login', required: true, maxLength: 64 }],
    options: {},
    access: 'authenticated',
    output: 'entry',
    async run(ctx, args) {
      const login = String(args[0]);
      assertReadable(ctx, containers(ctx.dir.baseDn).users);
      const entry = await getEntry(ctx, user, login);
      const a = entry.attrs;
      const status = await accountStatus(ctx, entry);
      const result: Record<string, unknown> = { uid: a.uid ?? [login], nsaccountlock: [a.nsAccountLock?.[0]?.toUpperCase() === 'TRUE'], ...status };
      for (const attr of ['krbLoginFailedCount', 'krbLastFailedAuth', 'krbLastSuccessfulAuth', 'krbLastPwdChange', 'krbPasswordExpiration'] as const) {
        if (a[attr]) result[attr.toLowerCase()] = a[attr];
      }
      const v = verdict(accountOf(entry), await passwordPolicies(ctx.dir).forUser(entry.dn), Date.now(), 'password');
      const state = v.state === 'usable' ? 'may log in' : describeRefusal(v);
      return { result, value: login, summary: `User "${login}": ${state}` };
    },
  };
}
