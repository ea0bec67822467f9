/**
 * The steps the AS and TGS exchanges share to know who a request is about:
 * the client and the server it names, looked up in this realm, whose
 * accounts must be usable now (account/state.ts; a refusal is thrown as
 * AccountRefused). The server must be a principal with random keys (a
 * service, a host, the realm's own: account/lookup.ts servesTickets): a
 * user is refused with MUST_USE_USER2USER, as MIT's KDC refuses a principal
 * without `-allow_svr` (and we issue no user-to-user tickets), so that no
 * ticket is ever sealed with a key derived from a password. At once when
 * the principals are cached.
 */
import { servesTickets } from '../account/lookup.js';
import { verdict, type Proof } from '../account/state.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { principalToString } from '../kerberos/asn1/primitives.js';
import { AccountRefused, KdcError } from './errors.js';
import type { ExchangeContext } from './exchange-context.js';
import { mapMaybe, type KdcPrincipal, type Maybe } from './principals.js';

/** The principal if its account may authenticate now with this proof; AccountRefused otherwise. */
export function checkAccount(ctx: ExchangeContext, p: KdcPrincipal, role: 'client' | 'server', proof: Proof = 'other'): KdcPrincipal {
  const v = verdict(p.account, p.lockout, ctx.now(), proof);
  if (v.state !== 'usable') throw new AccountRefused(v, role, p.name);
  return p;
}

/** The client an AS request names, in this realm, with a usable account. */
export function lookupClient(ctx: ExchangeContext, req: KdcReq): Maybe<KdcPrincipal> {
  const body = req.body;
  if (!body.cname) throw new KdcError('KDC_ERR_C_PRINCIPAL_UNKNOWN', 'no client name');
  if (body.realm !== ctx.realm) throw new KdcError('KDC_ERR_WRONG_REALM', `realm ${body.realm} is not served here`);
  const name = principalToString(body.cname, ctx.realm);
  ctx.note.client = name;
  return usableClient(ctx, name);
}

/** The client of this name (an AS request's, or the one a TGT names), which must exist and have a usable account. */
export function usableClient(ctx: ExchangeContext, name: string): Maybe<KdcPrincipal> {
  return mapMaybe(ctx.db.find(name), (client) => {
    if (!client) throw new KdcError('KDC_ERR_C_PRINCIPAL_UNKNOWN', `client ${name} not found`);
    return checkAccount(ctx, client, 'client');
  });
}

/** The server a request names: a service, a host or the realm's own, with a usable account. */
export function lookupServer(ctx: ExchangeContext, req: KdcReq): Maybe<KdcPrincipal> {
  if (!req.body.sname) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', 'no server name');
  const name = principalToString(req.body.sname, ctx.realm);
  ctx.note.server = name;
  return mapMaybe(ctx.db.find(name), (server) => {
    if (!server) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', `server ${name} not found`);
    if (!servesTickets(server.kind)) throw new KdcError('KDC_ERR_MUST_USE_USER2USER', `${name} is ${server.kind === 'user' ? 'a user' : 'no service, host or principal of the realm'}: no ticket is issued for it`);
    return checkAccount(ctx, server, 'server');
  });
}
