/**
 * user-disable and user-enable: FreeIPA's commands of the same names. A
 * disabled account (nsAccountLock TRUE) may not authenticate on any way in
 * (account/state.ts): the KDC, the API's logins and sessions, LDAP binds,
 * and SSSD's account check reads it over LDAP (docs/sssd-host.md). For
 * administrators and holders of the User Administrators privilege, a
 * holder only for users who hold no more than they do (framework/access.ts,
 * as for user-mod); the change is written as user-mod writes it
 * (crud.ts modifyEntry: the user's hooks, the complete-entry check, the
 * write path). Disabling a disabled account, or enabling an enabled one, is
 * AlreadyInactive or AlreadyActive, as in FreeIPA.
 */
import type { Command, ObjectDef } from '../framework/command.js';
import { getEntryToWrite, modifyEntry } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';

function accountStateCommand(userObject: ObjectDef, disable: boolean): Command {
  return {
    name: disable ? 'user_disable' : 'user_enable',
    doc: disable ? 'Disable a user account.' : 'Enable a user account.',
    args: [{ name: 'login', type: 'str', label: 'User login', doc: 'User login', required: true, maxLength: 64 }],
    options: {},
    access: { manage: userObject.name },
    output: 'summary',
    async run(ctx, args) {
      const login = String(args[0]);
      const entry = await getEntryToWrite(ctx, userObject, login);
      const disabled = entry.attrs.nsAccountLock?.[0]?.toUpperCase() === 'TRUE';
      if (disable && disabled) throw publicError('AlreadyInactive');
      if (!disable && !disabled) throw publicError('AlreadyActive');
      // enabling removes the lock, as FreeIPA's does
      await modifyEntry(ctx, userObject, login, entry, [disable ? { op: 'replace', attr: 'nsAccountLock', values: ['TRUE'] } : { op: 'delete', attr: 'nsAccountLock' }], {});
      return { result: true, value: login, summary: `${disable ? 'Disabled' : 'Enabled'} user account "${login}"` };
    },
  };
}

export const userDisableCommand = (userObject: ObjectDef): Command => accountStateCommand(userObject, true);
export const userEnableCommand = (userObject: ObjectDef): Command => accountStateCommand(userObject, false);
