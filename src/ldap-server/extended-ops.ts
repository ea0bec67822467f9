/**
 * The extended operations the service answers (RFC 4511 §4.12,
 * docs/ldap.md "Extended operations"): StartTLS (§4.14; refused when TLS or
 * a SASL layer is already in force), Who am I? (RFC 4532: `dn:<DN>` of the
 * bound principal's entry, empty for anonymous) and Password Modify
 * (RFC 3062) for the bound user's own password, which runs the `passwd`
 * command through the framework's dispatcher as that user, so the same rule
 * applies (length, hashing, Kerberos keys derived again). Any other name is
 * a protocolError, as RFC 4511 asks.
 */
import { ExtendedOid, ResultCode } from '../ldap/codes.js';
import { checkWhoAmIRequest, decodePasswordModifyRequest, whoAmIResponse } from '../ldap/extended.js';
import type { ExtendedRequest } from '../ldap/protocol-requests.js';
import { sameDn } from '../directory/dn.js';
import { dispatch } from '../framework/dispatch.js';
import type { Principal } from '../framework/command.js';
import { passwordLogin, AuthRefusal } from '../objects/login.js';
import type { LdapConnection, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';

export async function extended(ctx: ServiceContext, conn: LdapConnection, req: ExtendedRequest): Promise<OpResult> {
  switch (req.requestName) {
    case ExtendedOid.startTls:
      return startTls(conn, req);
    case ExtendedOid.whoAmI:
      checkWhoAmIRequest(req);
      return { response: whoAmIResponse(conn.principal ? `dn:${conn.principal.dn}` : '', ResultCode.success) };
    case ExtendedOid.passwordModify:
      return passwordModify(ctx, conn, req);
    default:
      throw refuse('protocolError', `extended operation ${req.requestName} is not supported`);
  }
}

function startTls(conn: LdapConnection, req: ExtendedRequest): OpResult {
  if (req.requestValue !== undefined) throw refuse('protocolError', 'StartTLS takes no value');
  if (conn.tls) throw refuse('operationsError', 'TLS is already in force');
  if (conn.saslLayer > 1) throw refuse('operationsError', 'a SASL security layer is in force');
  return {
    response: { op: 'extendedResp', resultCode: ResultCode.success, matchedDN: '', diagnosticMessage: '', responseName: ExtendedOid.startTls },
    after: () => conn.upgradeToTls(),
  };
}

/** Whether a Password Modify userIdentity names the bound principal: its DN (bare or `dn:`), or `u:<login>`. */
function namesSelf(identity: string, p: Principal): boolean {
  if (identity.startsWith('u:')) return identity.slice(2) === p.uid;
  const dn = identity.startsWith('dn:') ? identity.slice(3) : identity;
  try {
    return sameDn(dn, p.dn);
  } catch {
    return false;
  }
}

function text(v: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(v);
  } catch {
    throw refuse('unwillingToPerform', `the ${what} is not UTF-8`);
  }
}

async function passwordModify(ctx: ServiceContext, conn: LdapConnection, req: ExtendedRequest): Promise<OpResult> {
  const r = decodePasswordModifyRequest(req.requestValue);
  const p = conn.principal;
  if (!p) throw refuse('insufficientAccessRights', 'bind first: Password Modify changes the bound user\'s own password');
  if (!conn.confidential) throw refuse('confidentialityRequired', 'the password would travel in clear: use StartTLS (-ZZ) or ldaps://');
  if (r.userIdentity !== undefined && r.userIdentity !== '' && !namesSelf(r.userIdentity, p)) {
    throw refuse('insufficientAccessRights', "only your own password can be changed over LDAP; use the dirid API (dirid passwd LOGIN) for another user's");
  }
  if (r.newPasswd === undefined) throw refuse('unwillingToPerform', 'give the new password (ldappasswd -s or -S): the server does not generate one');
  const newPassword = text(r.newPasswd, 'new password');
  if (r.oldPasswd !== undefined) {
    const checked = await passwordLogin(ctx.accounts, ctx.realm, p.uid, text(r.oldPasswd, 'old password'));
    if (checked instanceof AuthRefusal) {
      if (checked.publicError.errorName === 'InvalidCredentials') throw refuse('invalidCredentials', 'the old password is wrong');
      throw checked;
    }
  }
  // the bind proved who the user is, and an old password given was checked above (as FreeIPA's Password Modify takes it)
  const call = { dir: ctx.dir, principal: p, server: ctx.server, cache: new Map<string, unknown>(), registry: ctx.registry, ownPasswordProven: true, log: conn.log };
  await dispatch(call, 'passwd', [p.uid, newPassword], {});
  return { response: { op: 'extendedResp', resultCode: ResultCode.success, matchedDN: '', diagnosticMessage: '' }, note: { extended: 'passwordModify' } };
}
