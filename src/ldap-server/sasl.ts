/**
 * SASL binds (RFC 4513 §5.2, docs/ldap.md "Bind"): GSSAPI only, with our
 * own Kerberos (kerberos/sasl-gssapi.ts runs the RFC 4752 exchange). The
 * client's ticket must be for one of the service's own names (the ldap/
 * principals of the realm's dirid servers; a ticket for any other service is
 * refused naming its server, docs/access.md), whose keys the service finds
 * in the directory as Negotiate finds HTTP/'s. We
 * offer only the "none" layer over TLS (it already protects the stream) and
 * none, integrity and confidentiality in clear; once the bind succeeds, a
 * chosen layer other than none wraps every PDU both ways. Whether the
 * account may authenticate is asked after the exchange, as for every way in.
 */
import { ResultCode } from '../ldap/codes.js';
import { SaslGssapiError, SaslGssapiServer, SaslLayer } from '../kerberos/sasl-gssapi.js';
import { publicError } from '../framework/errors.js';
import { AuthRefusal, kerberosLogin } from '../objects/login.js';
import type { LdapConnection, OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';

/** The largest Wrap token we take from a client once a layer is in force. */
export const SASL_MAX_BUFFER = 65536;

export async function saslBind(ctx: ServiceContext, conn: LdapConnection, _name: string, mechanism: string, credentials: Buffer | undefined): Promise<OpResult> {
  if (mechanism !== 'GSSAPI') {
    conn.saslExchange = null;
    throw refuse('authMethodNotSupported', `SASL mechanism ${mechanism} is not supported: use GSSAPI`);
  }
  let exchange = conn.saslExchange;
  if (!exchange) {
    // a stream already protected (TLS, or a layer from an earlier bind) needs no other layer
    const layers = conn.tls || conn.saslLayer > SaslLayer.NONE ? SaslLayer.NONE : SaslLayer.NONE | SaslLayer.INTEGRITY | SaslLayer.CONFIDENTIALITY;
    exchange = new SaslGssapiServer({ ...ctx.gssapi, layers, maxBuffer: SASL_MAX_BUFFER });
    conn.saslExchange = exchange;
  }
  let step;
  try {
    step = await exchange.step(credentials ?? Buffer.alloc(0));
  } catch (e) {
    conn.saslExchange = null;
    if (e instanceof SaslGssapiError) throw new AuthRefusal(publicError('InvalidCredentials'), `GSSAPI: ${e.message}`);
    throw e;
  }
  if (!step.done) {
    return {
      response: { op: 'bindResponse', resultCode: ResultCode.saslBindInProgress, matchedDN: '', diagnosticMessage: '', serverSaslCreds: step.serverToken },
      note: { step: 'continue' },
    };
  }
  conn.saslExchange = null;
  const principal = await kerberosLogin(ctx.accounts, step.client);
  if (!principal) throw new AuthRefusal(publicError('InvalidCredentials'), `${step.client} is not a principal of this realm`);
  if (principal instanceof AuthRefusal) throw principal;
  conn.principal = principal;
  const done = exchange;
  return {
    response: { op: 'bindResponse', resultCode: ResultCode.success, matchedDN: '', diagnosticMessage: '' },
    after: () => conn.installLayer(done),
    note: { client: step.client, layer: step.layer },
  };
}
