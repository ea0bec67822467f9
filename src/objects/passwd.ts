/**
 * passwd: sets a user's password (their own, or anyone's for administrators
 * and holders of the User Administrators privilege, a holder only for users
 * who hold no more than they do: framework/access.ts); the Kerberos keys are
 * derived again from it with the next key version. The password rules and
 * what a password stores are account/credentials.ts's, as for user-add and
 * user-mod --password; they are applied once the caller is known to be
 * allowed the change (after the current password). One's own password is
 * changed only with the current one (`current_password`, checked by the
 * password login rule of login.ts, so a wrong one counts as a failed login),
 * as FreeIPA's passwd asks: a session or a ticket left behind is not enough
 * to take the account over. A transport whose own request already proved
 * the password says so (CallContext.ownPasswordProven: the password service
 * takes only an initial ticket for it, the LDAP service a bind, or the old
 * password Password Modify checked). An administrator setting someone
 * else's password gives none. A user whose login is an
 * external identity provider's alone (user authentication type idp) does not
 * change their own password here, on any way in (the API, LDAP Password
 * Modify, kpasswd): it lives at the IdP; an administrator may still set one.
 * Also the password change a Kerberos client asks the password service for
 * (kdc/kpasswd.ts): it runs this same command as that client; and the change
 * of an expired password with the old one and no session (the API's
 * /dirid/session/change_password, FreeIPA's /ipa/session/change_password),
 * which runs it as the user once the old password is checked.
 */
import { Accounts } from '../account/state.js';
import { hasObjectClass } from '../directory/entry.js';
import type { Directory } from '../directory/types.js';
import { canManage } from '../framework/access.js';
import type { CallContext, Command, CommandRegistry, ServerInfo } from '../framework/command.js';
import { getEntryToWrite, writeEntries } from '../framework/crud.js';
import { dispatch } from '../framework/dispatch.js';
import { PublicError, publicError } from '../framework/errors.js';
import { AuthRefusal, currentPasswordCheck, kerberosLogin } from './login.js';
import { passwordMods, userObject } from './user.js';

export const passwdCommand: Command = {
  name: 'passwd',
  doc: 'Set a user password; the Kerberos keys are derived again with a new key version.',
  args: [
    { name: 'login', type: 'str', label: 'User login', doc: 'User login (default: yourself)', maxLength: 64 },
    { name: 'password', type: 'password', label: 'New password', doc: 'New password', secret: true, prompt: true, required: true },
  ],
  options: {
    current_password: {
      type: 'password',
      label: 'Current password',
      doc: 'Your current password: needed to change your own, not to set another user\'s',
      secret: true,
      noSearch: true,
    },
  },
  access: 'authenticated',
  output: 'summary',
  async run(ctx, args, opts) {
    const login = args[0] === undefined ? ctx.principal!.uid : String(args[0]);
    const self = login === ctx.principal!.uid;
    if (!self && !(await canManage(ctx, userObject.managePrivilege))) {
      throw publicError('ACIError', { info: "not allowed to change another user's password" });
    }
    const password = String(args[1]);
    const entry = await getEntryToWrite(ctx, userObject, login);
    if (self && passwordAtIdp(entry.attrs)) throw publicError('ACIError', { info: passwordAtIdpMessage(login) });
    if (self && ctx.ownPasswordProven !== true) await checkCurrentPassword(ctx, login, opts.current_password);
    // held to the password rules once the caller may change it, so a refusal tells nothing to one who may not
    const mods = await passwordMods(ctx, entry, password, self ? 'self' : 'admin');
    await writeEntries(ctx, userObject, login, () => ctx.dir.modify(entry.dn, mods));
    return { result: null, value: login, summary: `Changed password for "${login}@${ctx.server.realm}"` };
  },
};

/**
 * One's own password changes only with the current one: missing, it is
 * required; wrong, it is refused and counted as a failed login (login.ts);
 * an account that may not log in now is refused as its login would be.
 */
async function checkCurrentPassword(ctx: CallContext, login: string, current: unknown): Promise<void> {
  if (typeof current !== 'string' || current === '') throw publicError('RequirementError', { name: 'current_password' });
  const accounts = new Accounts(ctx.dir);
  const refusal = await currentPasswordCheck(accounts, ctx.server.realm, login, current);
  if (refusal) throw refusal.publicError;
}

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
  /** the password service's logger: the change is logged on it as a write (framework/audit.ts) */
  log?: CallContext['log'];
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
    // the password service takes one's own change only on an initial ticket, which that password itself obtained (kdc/kpasswd.ts)
    await dispatch({ dir: env.dir, principal, server: env.server, cache: new Map(), registry: env.registry, ownPasswordProven: true, ...(env.log ? { log: env.log } : {}) }, 'passwd', [login, change.password], {});
    return { outcome: 'changed' };
  } catch (e) {
    if (!(e instanceof PublicError)) throw e;
    const outcome = REJECTING.has(e.errorName) ? 'rejected' : DENYING.has(e.errorName) ? 'denied' : 'failed';
    // kpasswd prints "Access denied: " before an ACIError's reason, which then needs no "Insufficient access: " of its own
    const reason = e.errorName === 'ACIError' && typeof e.params.info === 'string' ? e.params.info : e.message;
    return { outcome, message: reason };
  }
}

/**
 * A user changes their own password with the old one, without a session:
 * the way an API user whose password has expired (one an administrator set,
 * or one past the policy's maximum lifetime) chooses a new one, as MIT
 * kinit does at the KDC. The old password is checked by the password login
 * rule (login.ts: a wrong one counts towards the lockout, an expired one is
 * accepted), then `passwd` runs as that user, held to the rules.
 */
export async function changeOwnPassword(env: PasswordChangeEnv, change: { user: string; oldPassword: string; newPassword: string }): Promise<PasswordChangeOutcome> {
  const realm = env.server.realm;
  const uid = change.user.endsWith(`@${realm}`) ? change.user.slice(0, -realm.length - 1) : change.user;
  const refusal = await currentPasswordCheck(env.accounts, realm, uid, change.oldPassword);
  if (refusal) return { outcome: 'denied', message: refusal.publicError.errorName === 'ACIError' ? 'the current password is wrong' : refusal.publicError.message };
  const entry = await env.accounts.find(`${uid}@${realm}`);
  const login = entry?.attrs.uid?.[0];
  if (!entry || !login) return { outcome: 'denied', message: 'the current password is wrong' };
  const principal = { name: `${login}@${realm}`, dn: entry.dn, uid: login };
  try {
    await dispatch({ dir: env.dir, principal, server: env.server, cache: new Map(), registry: env.registry, ownPasswordProven: true }, 'passwd', [login, change.newPassword], {});
    return { outcome: 'changed' };
  } catch (e) {
    if (!(e instanceof PublicError)) throw e;
    const outcome = REJECTING.has(e.errorName) ? 'rejected' : DENYING.has(e.errorName) ? 'denied' : 'failed';
    return { outcome, message: e.errorName === 'ACIError' && typeof e.params.info === 'string' ? e.params.info : e.message };
  }
}
