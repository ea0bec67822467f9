/**
 * HTTP Negotiate (RFC 4559) acceptor: SPNEGO (RFC 4178) carrying a Kerberos
 * AP-REQ, or a bare Kerberos token, verified by kerberos/ap-exchange.ts. The
 * ticket must be for a name `accepts` says is the API's (the HTTP/ principal
 * of a dirid server of the realm, server/acceptor-names.ts; any other
 * service's ticket is refused naming its server, docs/access.md); the client
 * must be a principal of the directory whose account may authenticate now
 * (account/state.ts, which also finds both principals by name). The
 * Kerberos token goes through the one GSS acceptor (kerberos/gss-context.ts)
 * that the LDAP service's SASL GSSAPI also uses. Mutual authentication
 * answers with an AP-REP inside a NegTokenResp (accept-completed). The
 * caller's principal carries the ticket's authentication indicators, read
 * under the HTTP service's key.
 */
import type { Accounts } from '../account/state.js';
import { SKEW_MS } from '../kerberos/ap-exchange.js';
import { acceptSecContext } from '../kerberos/gss-context.js';
import { ReplayCache } from '../kerberos/replay-cache.js';
import { decodeInitialContextToken, Oid } from '../kerberos/asn1/gss.js';
import { decodeNegTokenInit, encodeNegTokenResp, NegState } from '../kerberos/asn1/spnego.js';
import { serviceKeyFinder } from '../account/keys.js';
import type { NegotiateOutcome } from './server.js';
import { AuthRefusal, kerberosLogin } from '../objects/login.js';

export class NegotiateError extends Error {}

/** The Negotiate acceptor; `accepts(server)` says whether a ticket's server (name@REALM) is one of the API's own names. */
export function createNegotiator(accounts: Accounts, accepts: (server: string) => Promise<boolean>): (token: string) => Promise<NegotiateOutcome> {
  // a Negotiate login is followed by a session cookie, so the API sees far fewer authenticators than the KDC
  const replay = new ReplayCache(2 * SKEW_MS, 100_000);
  const keyFor = serviceKeyFinder(accounts, accepts);

  return async (b64: string) => {
    const token = Buffer.from(b64, 'base64');
    // SPNEGO carries the Kerberos token optimistically; a bare Kerberos token is accepted as it is
    let krbToken: Buffer = token;
    let spnegoMech: string | undefined;
    const outer = decodeInitialContextToken(token);
    if (outer.mech === Oid.SPNEGO) {
      const init = decodeNegTokenInit(outer.inner);
      const first = init.mechTypes[0];
      if (!first || !(first === Oid.KRB5 || first === Oid.MS_KRB5) || !init.mechToken) {
        throw new NegotiateError('SPNEGO without an optimistic Kerberos token');
      }
      spnegoMech = first;
      krbToken = init.mechToken;
    }
    // the one GSS acceptor (kerberos/gss-context.ts): AP-REQ checks, GSS checksum, AP-REP when mutual
    const accepted = await acceptSecContext(krbToken, { keyFor, replay });
    const principal = await kerberosLogin(accounts, accepted.client);
    if (!principal) throw new NegotiateError(`${accepted.client} is not a principal of this realm`);
    if (principal instanceof AuthRefusal) throw principal;
    const out: NegotiateOutcome = { principal: { ...principal, authIndicators: accepted.authIndicators } };
    const rep = accepted.outputToken;
    if (spnegoMech) out.responseToken = encodeNegTokenResp({ negState: NegState.ACCEPT_COMPLETED, supportedMech: spnegoMech, ...(rep ? { responseToken: rep } : {}) }).toString('base64');
    else if (rep) out.responseToken = rep.toString('base64');
    return out;
  };
}
