/**
 * passwd: sets a user's password (their own, or anyone's for administrators
 * and holders of the User Administrators privilege); the Kerberos keys are
 * derived again from it with the next key version.
 */
import { canManage } from '../framework/access.js';
import type { Command } from '../framework/command.js';
import { getEntry, writeEntries } from '../framework/crud.js';
import { publicError } from '../framework/errors.js';
import { hashPassword } from './password.js';
import { passwordKeyMods, userObject } from './user.js';

export const passwdCommand: Command = {
  name: 'passwd',
  doc: 'Set a user password; the Kerberos keys are derived again with a new key version.',
  args: [
    { name: 'login', type: 'str', label: 'User login', doc: 'User login (default: yourself)', maxLength: 64 },
    { name: 'password', type: 'password', label: 'New password', doc: 'New password', secret: true, prompt: true, required: true },
  ],
  options: {},
  access: 'authenticated',
  output: 'summary',
  async run(ctx, args) {
    const login = args[0] === undefined ? ctx.principal!.uid : String(args[0]);
    const self = login === ctx.principal!.uid;
    if (!self && !(await canManage(ctx, userObject.managePrivilege))) {
      throw publicError('ACIError', { info: "not allowed to change another user's password" });
    }
    const password = String(args[1]);
    if (password.length < 8) throw publicError('ValidationError', { name: 'password', error: 'must be at least 8 characters' });
    const entry = await getEntry(ctx, userObject, login);
    const mods = [{ op: 'replace' as const, attr: 'userPassword', values: [await hashPassword(password)] }, ...(await passwordKeyMods(ctx, entry, password))];
    await writeEntries(ctx, userObject, login, () => ctx.dir.modify(entry.dn, mods));
    return { result: null, value: login, summary: `Changed password for "${login}@${ctx.server.realm}"` };
  },
};
