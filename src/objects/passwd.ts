/**
 * passwd: sets a user's password (their own, or anyone's for administrators
 * and holders of the User Administrators privilege, a holder only for users
 * who hold no more than they do: framework/access.ts); the Kerberos keys are
 * derived again from it with the next key version. A user whose login is an
 * external identity provider's alone (user authentication type idp) does not
 * change their own password here, on any way in (the API, LDAP Password
 * Modify, kpasswd): it lives at the IdP; an administrator may still set one.
 * Also the password change a Kerberos client asks the password service for
 * (kdc/kpasswd.ts): it runs this same command as that client.
 */
import type { Accounts } from '../account/state.js';
import { hasObjectClass } from '../directory/entry.js';
import type { Directory } from '../directory/types.js';
import { canManage } from '../framework/access.js';
import type { Command, CommandRegistry, ServerInfo } from '../framework/command.js';
import { getEntryToWrite, writeEntries } from '../framework/crud.js';
import { dispatch } from '../framework/dispatch.js';
import { PublicError, publicError } from '../framework/errors.js';
import { AuthRefusal, kerberosLogin } from './login.js';
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
    const entry = await getEntryToWrite(ctx, userObject, login);
    if (self && passwordAtIdp(entry.attrs)) throw publicError('ACIError', { info: passwordAtIdpMessage(login) });
    const mods = [{ op: 'replace' as const, attr: 'userPassword', values: [await hashPassword(password)] }, ...(await passwordKeyMods(ctx, entry, password))];
    await writeEntries(ctx, userObject, login, () => ctx.dir.modify(entry.dn, mods));
    return { result: null, value: login, summary: `Changed password for "${login}@${ctx.server.realm}"` };
  },
};

/** Whether a user's only login is an external identity provider's (auth type idp without password). */
function passwordAtIdp(attrs: Readonly<Record<string, readonly string[] | undefined>>): boolean {
  const authTypes = (attrs.dirUserAuthType ?? []).map((t) => t.toLowerCase());
  return authTypes.includes('idp') && !authTypes.includes('password');
}

function passwordAtIdpMessage(login: string): string {
  return `${login} logs in through an external identity provider (user authentication type idp), not with a password: change it there`;
}

/** What the server a Kerberos password change reaches runs it with. */
export interface PasswordChangeEnv {
  dir: Directory;
  accounts: Accounts;
  registry: CommandRegistry;
  server: ServerInfo;
}

/**
 * What a password change came to: changed; or refused because the new
 * password breaks the rule (the user may try another), because the client
 * may not change it, or for any other reason; the message is for the user.
 */
export type PasswordChangeOutcome = { outcome: 'changed' } | { outcome: 'rejected' | 'denied' | 'failed'; message: string };

/** Errors that say the new password itself was refused. */
const REJECTING: ReadonlySet<string> = new Set(['ValidationError', 'RequirementError']);
/** Errors that say the client may not make this change. */
const DENYING: ReadonlySet<string> = new Set(['ACIError', 'NotAuthenticated', 'AccountDisabled', 'AccountLocked', 'AccountExpired', 'PasswordExpired']);

/**
 * `client` (a principal whose ticket the password service accepted) sets
 * the password of `target` (`login@REALM`): the client must be an account
 * that may act now (login.ts), the target a user, and then `passwd` runs as
 * the client.
 */
export async function kerberosPasswordChange(env: PasswordChangeEnv, change: { client: string; target: string; password: string }): Promise<PasswordChangeOutcome> {
  const realm = env.server.realm;
  const principal = await kerberosLogin(env.accounts, change.client);
  if (principal === null) return { outcome: 'denied', message: `${change.client} is not a principal of this directory` };
  if (principal instanceof AuthRefusal) return { outcome: 'denied', message: principal.publicError.message };
  const target = change.target.endsWith(`@${realm}`) ? await env.accounts.find(change.target) : null;
  const login = target?.attrs.uid?.[0];
  if (!target || !login || !hasObjectClass(target.attrs.objectClass, 'dirUser')) {
    return { outcome: 'failed', message: `${change.target} is not a user of realm ${realm}: only users' passwords are changed here` };
  }
  try {
    await dispatch({ dir: env.dir, principal, server: env.server, cache: new Map(), registry: env.registry }, 'passwd', [login, change.password], {});
    return { outcome: 'changed' };
  } catch (e) {
    if (!(e instanceof PublicError)) throw e;
    const outcome = REJECTING.has(e.errorName) ? 'rejected' : DENYING.has(e.errorName) ? 'denied' : 'failed';
    // kpasswd prints "Access denied: " before an ACIError's reason, which then needs no "Insufficient access: " of its own
    const reason = e.errorName === 'ACIError' && typeof e.params.info === 'string' ? e.params.info : e.message;
    return { outcome, message: reason };
  }
}
