/**
 * The Bind operation (RFC 4511 §4.2, RFC 4513, docs/ldap.md "Bind"):
 * anonymous (empty name and password); simple with a user's DN
 * (uid=<login>,cn=users,cn=accounts,<base>, matched as the directory matches
 * DNs, so uid in any letter case; the login is the entry's stored uid), only
 * when what the client sends is protected (TLS, or a SASL confidentiality
 * layer), through the password
 * login rule of the API's login_password (objects/login.ts: account state,
 * failures counted); and SASL GSSAPI with our own Kerberos (sasl.ts). Any
 * bind first makes the connection anonymous, so a failed one leaves it so.
 * A simple bind refused because the password has expired (one an
 * administrator set, or one past its lifetime) or the account is locked is
 * invalidCredentials or unwillingToPerform saying so, and, when the bind
 * asked with the password policy control, carries the response control
 * naming it (passwordExpired, accountLocked), as OpenLDAP's ppolicy answers
 * (`ldapwhoami -e ppolicy` prints "Password expired"); a bind that succeeds
 * with a password expiring within a week gets the control's warning.
 */
import { ControlOid, LDAP_VERSION, ResultCode } from '../ldap/codes.js';
import { findControl, PasswordPolicyError, passwordPolicyControl, type Control } from '../ldap/controls.js';
import type { BindRequest } from '../ldap/protocol-requests.js';
import type { BindResponse } from '../ldap/protocol-responses.js';
import { parseDn, normalizeDn, formatDn, sameDn } from '../directory/dn.js';
import { containers } from '../directory/layout.js';
import { publicError } from '../framework/errors.js';
import { AuthRefusal, passwordLogin } from '../objects/login.js';
import type { LdapConnection, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { ldapCodeOf, refuse } from './errors.js';
import { saslBind } from './sasl.js';

const success = (): BindResponse => ({ op: 'bindResponse', resultCode: ResultCode.success, matchedDN: '', diagnosticMessage: '' });

const invalid = (reason: string) => new AuthRefusal(publicError('InvalidCredentials'), reason);

/** The login a user DN names (`uid=<login>` directly below the users container), or null. */
export function loginOfDn(ctx: ServiceContext, dn: string): string | null {
  const rdns = parseDn(dn);
  const first = rdns[0];
  if (rdns.length < 2 || first?.length !== 1 || first[0]!.type.toLowerCase() !== 'uid') return null;
  if (normalizeDn(formatDn(rdns.slice(1))) !== normalizeDn(containers(ctx.dir.baseDn).users)) return null;
  return first[0]!.value;
}

/** How soon before its password expires a bind that asked is warned (MIT kinit's week). */
const EXPIRY_WARNING_MS = 7 * 86400_000;

export async function bind(ctx: ServiceContext, conn: LdapConnection, req: BindRequest, controls: readonly Control[] = []): Promise<OpResult> {
  conn.principal = null;
  const a = req.authentication;
  if (a.method !== 'sasl') conn.saslExchange = null;
  if (req.version !== LDAP_VERSION) throw refuse('protocolError', `only LDAP version ${LDAP_VERSION} is served`);
  if (a.method === 'sasl') return saslBind(ctx, conn, req.name, a.mechanism, a.credentials);
  if (a.method !== 'simple') throw refuse('authMethodNotSupported', 'use a simple bind over TLS, or SASL GSSAPI');
  const name = req.name;
  if (name === '' && a.password.length === 0) return { response: success() };
  if (name === '') throw invalid('a password without a name');
  // RFC 4513 §5.1.2: a name without a password is an unauthenticated bind, which we refuse
  if (a.password.length === 0) throw refuse('unwillingToPerform', 'unauthenticated bind (a DN with an empty password) is not allowed');
  if (!conn.confidential) throw refuse('confidentialityRequired', 'a simple bind sends the password in clear: use StartTLS (ldapsearch -ZZ) or ldaps://');
  const login = loginOfDn(ctx, name);
  if (login === null) throw invalid(`${JSON.stringify(name.slice(0, 200))} is not a user DN`);
  let password: string;
  try {
    password = new TextDecoder('utf-8', { fatal: true }).decode(a.password);
  } catch {
    throw invalid('the password is not UTF-8');
  }
  // the DN names the entry as the directory matches DNs (uid ignores letter case): the login is the stored uid;
  // an entry not found goes to the login as named, which refuses it as it refuses a wrong password
  const entry = await ctx.dir.get(name, ['uid']);
  const outcome = await passwordLogin(ctx.accounts, ctx.realm, entry?.attrs.uid?.[0] ?? login, password);
  const policy = findControl(controls, ControlOid.passwordPolicy) !== undefined;
  if (outcome instanceof AuthRefusal) {
    const error = outcome.publicError.errorName === 'PasswordExpired' ? PasswordPolicyError.passwordExpired : outcome.publicError.errorName === 'AccountLocked' ? PasswordPolicyError.accountLocked : undefined;
    if (!policy || error === undefined) throw outcome;
    const refused: BindResponse = { op: 'bindResponse', resultCode: ldapCodeOf(outcome.publicError), matchedDN: '', diagnosticMessage: outcome.publicError.message };
    return { response: refused, controls: [passwordPolicyControl({ error })], note: { reason: outcome.message } };
  }
  if (!sameDn(outcome.dn, name)) throw invalid('the DN is not the entry of that user');
  conn.principal = outcome;
  const expires = policy ? (await ctx.accounts.get(outcome.dn))?.passwordExpiration : undefined;
  const left = expires ? expires.getTime() - Date.now() : Infinity;
  const warning = left < EXPIRY_WARNING_MS ? [passwordPolicyControl({ timeBeforeExpiration: Math.max(0, Math.floor(left / 1000)) })] : undefined;
  return { response: success(), ...(warning ? { controls: warning } : {}), note: { dn: outcome.dn } };
}
