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
 */
import type { Attributes, Entry, Modification, UniqueRule } from '../directory/types.js';
import type { CallContext } from '../framework/command.js';
import { publicError } from '../framework/errors.js';
import { defineObject } from '../framework/object.js';
import { hashPassword } from './password.js';
import { keysFromPassword, parseKeys, serializeKeys } from '../account/keys.js';
import { generalizedTime } from '../directory/schema.js';
import { addUserPosix, checkPrivateGroupName } from './posix.js';
import { hasObjectClass } from '../directory/entry.js';

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
 * New Kerberos keys for a password change: every enctype, kvno + 1. A new
 * password has not expired: an expiry date set for the old one goes with it
 * (as MIT's kadmin does for a principal without a password policy), which
 * is what lets a user whose password expired log in again once they have
 * changed it.
 */
export async function passwordKeyMods(ctx: CallContext, entry: Entry, password: string): Promise<Modification[]> {
  const uid = entry.attrs.uid?.[0] ?? '';
  const old = parseKeys(await ctx.dir.readSecret(entry.dn, 'krbPrincipalKey'));
  const kvno = Math.max(0, ...old.map((k) => k.kvno)) + 1;
  const mods: Modification[] = [
    { op: 'replace', attr: 'krbPrincipalKey', values: serializeKeys(keysFromPassword(password, ctx.server.realm, [uid], kvno)) },
    { op: 'replace', attr: 'krbLastPwdChange', values: [generalizedTime()] },
  ];
  if (entry.attrs.krbPasswordExpiration) mods.push({ op: 'replace', attr: 'krbPasswordExpiration', values: [] });
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
  container: 'users',
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
  },
  defaultAttributes: ['login', 'first', 'last', 'email', 'uid', 'gidnumber', 'homedir', 'shell', 'disabled', 'user_auth_type', 'idp', 'idp_user_id'],
  searchAttributes: ['login', 'first', 'last', 'cn', 'email'],
  hooks: {
    async preAdd(ctx: CallContext, attrs: Attributes, options, pkey) {
      if (!attrs.cn) attrs.cn = [`${options.first} ${options.last}`];
      attrs.objectClass = [...(attrs.objectClass ?? []), 'krbPrincipalAux'];
      attrs.krbPrincipalName = [`${pkey}@${ctx.server.realm}`];
      if (attrs.userPassword) {
        const password = attrs.userPassword[0]!;
        attrs.krbPrincipalKey = serializeKeys(keysFromPassword(password, ctx.server.realm, [pkey], 1));
        attrs.krbLastPwdChange = [generalizedTime()];
        attrs.userPassword = [await hashPassword(password)];
      }
      await checkPrivateGroupName(ctx, pkey, 'user');
      await addUserPosix(ctx, attrs, pkey);
    },
    async preMod(ctx, mods, options, entry) {
      if (typeof options.rename === 'string') {
        await checkPrivateGroupName(ctx, options.rename, 'user');
        // a renamed user logs in under the new name; the keys keep the salt they were made with
        mods.push({ op: 'replace', attr: 'krbPrincipalName', values: [`${options.rename}@${ctx.server.realm}`] });
      }
      for (let i = 0; i < mods.length; i++) {
        const m = mods[i]!;
        if (m.attr === 'userPassword' && m.op === 'replace' && m.values.length === 1) {
          const password = m.values[0]!;
          mods[i] = { ...m, values: [await hashPassword(password)] };
          // an expiry the same call sets explicitly stays
          const setsExpiry = mods.some((x) => x.attr.toLowerCase() === 'krbpasswordexpiration');
          mods.push(...(await passwordKeyMods(ctx, entry, password)).filter((x) => !(setsExpiry && x.attr === 'krbPasswordExpiration')));
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
    },
    async complete(_ctx, entry) {
      // a link is both attributes or neither, whichever options made it (another user's is refused at the write: idpLinkRule)
      const link = entry.values('dirIdpConfigLink');
      if (entry.changes('dirIdpConfigLink') || entry.changes('dirIdpSub')) checkLinkPair(entry.values('dirIdpSub'), link);
      // dirIdpUser marks a linked user: it comes with a link and leaves with it
      const classes = entry.values('objectClass');
      if (link.length > 0 && !hasObjectClass(classes, 'dirIdpUser')) entry.set('objectClass', [...classes, 'dirIdpUser']);
      if (link.length === 0 && hasObjectClass(classes, 'dirIdpUser')) entry.set('objectClass', classes.filter((c) => c.toLowerCase() !== 'diridpuser'));
    },
  },
});
