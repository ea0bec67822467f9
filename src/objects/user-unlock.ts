/**
 * user-unlock: ends a password lockout (account/state.ts) at once, as
 * FreeIPA's command of the same name does: the failure count starts again
 * from none. For administrators and holders of the User Administrators
 * privilege (a holder only for users who hold no more than they do:
 * framework/access.ts). A disabled or expired account stays so; only the lockout ends.
 */
import { unlockAccount } from '../account/state.js';
import { canManage } from '../framework/access.js';
import type { Command, ObjectDef } from '../framework/command.js';
import { getEntryToWrite } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';

/** user-unlock, a command of the user object (user.ts declares it). */
export const userUnlockCommand = (userObject: ObjectDef): Command => ({
  name: 'user_unlock',
  doc: 'Unlock a user account locked after too many failed logins.',
  args: [{ name: 'login', type: 'str', label: 'User login', doc: 'User login', required: true, maxLength: 64 }],
  options: {},
  access: 'authenticated',
  output: 'summary',
  async run(ctx, args) {
    const login = String(args[0]);
    if (!(await canManage(ctx, userObject.managePrivilege))) throw publicError('ACIError', { info: 'not allowed to unlock user accounts' });
    const entry = await getEntryToWrite(ctx, userObject, login);
    await unlockAccount(ctx.dir, entry.dn);
    return { result: true, value: login, summary: `Unlocked account "${login}"` };
  },
});
