/**
 * Logins: the one rule every transport that takes a user's password runs
 * (the API's login_password, the LDAP service's simple bind, the current
 * password passwd asks for), the one step
 * after a Kerberos client's ticket was accepted (Negotiate, SASL GSSAPI),
 * and the one check that a session or a bound connection may still act.
 * Password login: A user,
 * found by its principal name, whose account may authenticate now
 * (account/state.ts, asked before the password is checked, as the KDC does),
 * with a matching password; a wrong one counts towards the account's
 * lockout, a right one is refused only when it has expired. Every attempt
 * costs the same password hash, so its time does not tell who exists. A
 * refusal is an AuthRefusal carrying the public error the caller sees and,
 * for the log only, the real reason; each transport turns the public error
 * into its wire form in its own one place.
 */
import { accountOf, describeRefusal, verdict, type Accounts, type Refusal } from '../account/state.js';
import type { Principal } from '../framework/command.js';
import { publicError, type PublicError } from '../framework/errors.js';
import { checkPassword } from '../account/password-hash.js';

/**
 * An authentication refused with a public error: bad credentials, or an
 * account that may not authenticate. The message is the real reason, for
 * the server log only.
 */
export class AuthRefusal extends Error {
  constructor(
    readonly publicError: PublicError,
    reason: string,
  ) {
    super(reason);
    this.name = 'AuthRefusal';
  }
}

/**
 * The public error of each refusal. Like FreeIPA's login, we name the
 * state: the KDC already answers anyone asking for such an account with the
 * state (revoked, expired) before any pre-authentication, so hiding it here
 * would protect nothing, and the user learns why they cannot log in. A
 * password's expiry is told only to whoever gave that password.
 */
const refusalErrors: Record<Refusal['state'], () => PublicError> = {
  disabled: () => publicError('AccountDisabled'),
  locked: () => publicError('AccountLocked'),
  expired: () => publicError('AccountExpired'),
  'password-expired': () => publicError('PasswordExpired'),
};

export function accountRefusal(v: Refusal): AuthRefusal {
  return new AuthRefusal(refusalErrors[v.state](), describeRefusal(v));
}

/** A login name: the uid part of a user principal. */
const LOGIN = /^[a-z_][a-z0-9_.-]{0,31}$/;

/**
 * The password check of `user` (a login, or `login@REALM`): the principal
 * on success, otherwise the refusal. Every attempt costs one password hash
 * (account/password-hash.ts checkPassword), whatever it comes to: an unknown
 * user, a user without a password and an account refused before its
 * password is looked at (disabled, locked, expired) take the time a wrong
 * password takes, so that time does not tell who exists.
 */
export async function passwordLogin(accounts: Accounts, realm: string, user: string, password: string): Promise<Principal | AuthRefusal> {
  const invalid = (reason: string) => new AuthRefusal(publicError('InvalidCredentials'), reason);
  const uid = user.endsWith(`@${realm}`) ? user.slice(0, -realm.length - 1) : user;
  const isLogin = LOGIN.test(uid);
  const entry = isLogin ? await accounts.find(`${uid}@${realm}`) : null;
  const account = entry ? accountOf(entry) : null;
  const policy = account?.isUser ? await accounts.lockout(account) : null;
  const before = entry && account?.isUser && policy ? verdict(account, policy, Date.now()) : null;
  const [stored] = entry && before?.state === 'usable' ? await accounts.dir.readSecret(entry.dn, 'userPassword') : [];
  const matches = await checkPassword(password, stored);
  if (!isLogin) return invalid('not a user name');
  if (!entry || !account?.isUser || !before) return invalid('no such user');
  if (before.state !== 'usable') return accountRefusal(before);
  if (!stored) return invalid('the user has no password');
  if (!matches) {
    await accounts.failedPassword(account, policy!, Date.now());
    return invalid('wrong password');
  }
  await accounts.passwordAccepted(account);
  const after = verdict(account, policy!, Date.now(), 'password');
  if (after.state !== 'usable') return accountRefusal(after);
  // a user renamed since keeps its old name as an alias: the login is under its name now
  const login = entry.attrs.uid?.[0] ?? uid;
  return { name: `${login}@${realm}`, dn: entry.dn, uid: login };
}

/**
 * The check of the current password a user gives to change it (passwd of
 * one's own password): the password login rule above, so a wrong one counts
 * towards the lockout and an account that may not log in is refused as its
 * login would be; a right one that has expired is accepted, since changing
 * it is the way out. Null when the password is right; a wrong one is an
 * ACIError that says so.
 */
export async function currentPasswordCheck(accounts: Accounts, realm: string, uid: string, password: string): Promise<AuthRefusal | null> {
  const r = await passwordLogin(accounts, realm, uid, password);
  if (!(r instanceof AuthRefusal) || r.publicError.errorName === 'PasswordExpired') return null;
  if (r.publicError.errorName === 'InvalidCredentials') return new AuthRefusal(publicError('ACIError', { info: 'the current password is wrong' }), r.message);
  return r;
}

/**
 * The anonymous principal of anonymous PKINIT, in any realm: its tickets
 * prove no identity (the KDC issues them only as FAST armor), so it is never
 * an account, even should an entry of that name exist.
 */
const ANONYMOUS = /^WELLKNOWN\/ANONYMOUS@/;

/**
 * The principal a Kerberos client authenticated as, once the GSS acceptor
 * took its ticket: a principal of this directory whose account may
 * authenticate now; null when the directory does not know it; refused for
 * the anonymous principal.
 */
export async function kerberosLogin(accounts: Accounts, client: string): Promise<Principal | AuthRefusal | null> {
  if (ANONYMOUS.test(client)) return new AuthRefusal(publicError('InvalidCredentials'), `${client} is anonymous, not an account`);
  const entry = await accounts.find(client);
  if (!entry) return null;
  const account = accountOf(entry);
  const v = verdict(account, await accounts.lockout(account), Date.now());
  if (v.state !== 'usable') return accountRefusal(v);
  return { name: client, dn: entry.dn, uid: entry.attrs.uid?.[0] ?? client };
}

/** Whether the account at `dn` (a session's, a bound connection's) may still act: 'gone' once deleted. */
export async function stillUsable(accounts: Accounts, dn: string): Promise<'usable' | 'gone' | AuthRefusal> {
  const account = await accounts.get(dn);
  if (!account) return 'gone';
  const v = verdict(account, await accounts.lockout(account), Date.now());
  return v.state === 'usable' ? 'usable' : accountRefusal(v);
}
