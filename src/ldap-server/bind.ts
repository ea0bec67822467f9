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
 */
import { LDAP_VERSION, ResultCode } from '../ldap/codes.js';
import type { BindRequest } from '../ldap/protocol-requests.js';
import type { BindResponse } from '../ldap/protocol-responses.js';
import { parseDn, normalizeDn, formatDn, sameDn } from '../directory/dn.js';
import { containers } from '../directory/layout.js';
import { publicError } from '../framework/errors.js';
import { AuthRefusal, passwordLogin } from '../objects/login.js';
import type { LdapConnection, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';
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

export async function bind(ctx: ServiceContext, conn: LdapConnection, req: BindRequest): Promise<OpResult> {
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
  if (outcome instanceof AuthRefusal) throw outcome;
  if (!sameDn(outcome.dn, name)) throw invalid('the DN is not the entry of that user');
  conn.principal = outcome;
  return { response: success(), note: { dn: outcome.dn } };
}
