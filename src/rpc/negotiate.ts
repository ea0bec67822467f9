/**
 * HTTP Negotiate (RFC 4559) acceptor: SPNEGO (RFC 4178) carrying a Kerberos
 * AP-REQ, or a bare Kerberos token, verified by kerberos/ap-exchange.ts. The
 * ticket must be for one of the realm's HTTP/ service principals; the client
 * must be a principal of the directory whose account may authenticate now
 * (account/state.ts, which also finds both principals by name). Mutual
 * authentication answers with an AP-REP inside a NegTokenResp (accept-completed).
 */
import { accountOf, verdict, type Accounts } from '../account/state.js';
import type { Principal } from '../framework/command.js';
import { acceptApReq, makeApRep, SKEW_MS } from '../kerberos/ap-exchange.js';
import { ReplayCache } from '../kerberos/replay-cache.js';
import { decodeGssChecksum, decodeInitialContextToken, encodeKrb5Token, GssFlag, Oid, TokId } from '../kerberos/asn1/gss.js';
import { decodeNegTokenInit, encodeNegTokenResp, NegState } from '../kerberos/asn1/spnego.js';
import { parseKeys } from '../account/keys.js';
import { accountRefusal, type NegotiateOutcome } from './server.js';

const GSS_CHECKSUM = 0x8003;

export class NegotiateError extends Error {}

/** A krb5 inner token holding an AP-REQ (TOK_ID 01 00, RFC 4121 §4.1). */
const isApReq = (inner: Buffer) => inner.length >= 2 && inner.readUInt16BE(0) === TokId.AP_REQ;

export function createNegotiator(accounts: Accounts, realm: string): (token: string) => Promise<NegotiateOutcome> {
  // a Negotiate login is followed by a session cookie, so the API sees far fewer authenticators than the KDC
  const replay = new ReplayCache(2 * SKEW_MS, 100_000);
  const keyFor = async (server: string, etype: number, kvno: number | undefined) => {
    if (!server.startsWith('HTTP/') || !server.endsWith(`@${realm}`)) return null;
    const e = await accounts.find(server);
    if (!e) return null;
    const k = parseKeys(await accounts.dir.readSecret(e.dn, 'krbPrincipalKey')).filter((x) => x.etype === etype && (kvno === undefined || x.kvno === kvno));
    return k.length ? { etype, value: k[0]!.key } : null;
  };

  return async (b64: string) => {
    const token = Buffer.from(b64, 'base64');
    const outer = decodeInitialContextToken(token);
    let apReq: Buffer;
    let mech: string | undefined;
    if (outer.mech === Oid.SPNEGO) {
      const init = decodeNegTokenInit(outer.inner);
      const first = init.mechTypes[0];
      if (!first || !(first === Oid.KRB5 || first === Oid.MS_KRB5) || !init.mechToken) {
        throw new NegotiateError('SPNEGO without an optimistic Kerberos token');
      }
      mech = first;
      const krb = decodeInitialContextToken(init.mechToken);
      if (krb.mech !== Oid.KRB5) throw new NegotiateError('mechanism token is not Kerberos');
      if (!isApReq(krb.inner)) throw new NegotiateError('mechanism token is not an AP-REQ');
      apReq = krb.inner.subarray(2);
    } else if (outer.mech === Oid.KRB5) {
      if (!isApReq(outer.inner)) throw new NegotiateError('token is not an AP-REQ');
      apReq = outer.inner.subarray(2);
    } else throw new NegotiateError('unsupported GSS mechanism');
    const accepted = await acceptApReq(apReq, keyFor, replay);
    const cksum = accepted.authenticator.cksum;
    if (!cksum || cksum.type !== GSS_CHECKSUM) throw new NegotiateError('the authenticator lacks the GSS checksum');
    const gss = decodeGssChecksum(cksum.value);
    const entry = await accounts.find(accepted.client);
    if (!entry) throw new NegotiateError(`${accepted.client} is not a principal of this realm`);
    const v = verdict(accountOf(entry), await accounts.policy(), Date.now());
    if (v.state !== 'usable') throw accountRefusal(v);
    const uid = entry.attrs.uid?.[0] ?? accepted.client;
    const principal: Principal = { name: accepted.client, dn: entry.dn, uid };
    const out: NegotiateOutcome = { principal };
    if (gss.flags & GssFlag.MUTUAL || accepted.mutual) {
      const rep = encodeKrb5Token(TokId.AP_REP, makeApRep(accepted));
      out.responseToken = (mech ? encodeNegTokenResp({ negState: NegState.ACCEPT_COMPLETED, supportedMech: mech, responseToken: rep }) : rep).toString('base64');
    } else if (mech) {
      out.responseToken = encodeNegTokenResp({ negState: NegState.ACCEPT_COMPLETED, supportedMech: mech }).toString('base64');
    }
    return out;
  };
}
