/**
 * The AP exchange (RFC 4120 §3.2): verifying an AP-REQ (§3.2.3: the
 * authenticator decrypts with the ticket's session key and names the
 * ticket's client, its time is within the clock skew, the ticket is within
 * its times, and the authenticator is not a replay) and building the AP-REP
 * for mutual authentication (with the acceptor's sequence number and subkey
 * a GSS-API context needs); plus the initiator side for clients. The one
 * AP-REQ verification of the project: HTTP Negotiate, the GSS-API acceptor
 * (gss-context.ts, for SASL GSSAPI), the KDC's TGS exchange (§3.3.2) and FAST
 * armor (RFC 6113 §5.4.1.1) all use {@link verifyApReq}; they differ only in
 * how they open the ticket. A service reads the ticket's authentication
 * indicators under its own key (auth-indicators.ts).
 */
import { decodeApReq, decodeAuthenticator, decodeEncApRepPart, encodeApRep, encodeApReq, encodeAuthenticator, encodeEncApRepPart, decodeApRep, type ApReq, type Authenticator, type EncApRepPart } from './asn1/ap-req.js';
import { principalToString, type PrincipalName } from './asn1/primitives.js';
import { decodeEncTicketPart, type EncTicketPart, type Ticket } from './asn1/ticket.js';
import { profile, type EncryptionKey } from './crypto/index.js';
import { ErrorCode, flagBit, KeyUsage } from './iana.js';
import type { ReplayCache } from './replay-cache.js';
import { microseconds, wholeSeconds } from './time.js';
import { serviceVerifiedIndicators } from './auth-indicators.js';
import { samePrincipalName } from './principal.js';

/** A failed AP-REQ check; `code` is the KRB_AP_ERR code the KDC answers with. */
export class ApError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'ApError';
  }
}

/** The clock skew allowed between clients and us (RFC 4120 §1.6: 5 minutes), for authenticators and pre-authentication. */
export const SKEW_MS = 300_000;

export interface ApReqChecks {
  /** the authenticator's key usage: 11 for an AP-REQ, 7 in a TGS-REQ */
  usage: number;
  now: number;
  replay: ReplayCache;
  /**
   * The acceptor's own checks on the decrypted authenticator, made before
   * its time and novelty. Returning 'continued' says that this AP-REQ is the
   * one the acceptor accepted when it started the exchange the request
   * continues (FAST armor: MIT clients send one armor AP-REQ with every
   * request of an AS conversation), so its time and novelty were checked then.
   */
  check?: (auth: Authenticator) => 'continued' | void;
}

/**
 * Verifies an AP-REQ whose ticket the caller has opened (decrypted with its
 * own key, or the krbtgt key) and returns the authenticator.
 */
export function verifyApReq(ap: ApReq, ticket: EncTicketPart, sessionKey: EncryptionKey, o: ApReqChecks): Authenticator {
  let auth: Authenticator;
  try {
    auth = decodeAuthenticator(profile(sessionKey.etype).decrypt(sessionKey, o.usage, ap.authenticator.cipher));
  } catch {
    throw new ApError('the authenticator does not decrypt', ErrorCode.KRB_AP_ERR_BAD_INTEGRITY);
  }
  if (auth.crealm !== ticket.crealm || !samePrincipalName(auth.cname, ticket.cname)) {
    throw new ApError('authenticator and ticket name different clients', ErrorCode.KRB_AP_ERR_BADMATCH);
  }
  if ((ticket.starttime ?? ticket.authtime).getTime() > o.now + SKEW_MS) throw new ApError('ticket not yet valid', ErrorCode.KRB_AP_ERR_TKT_NYV);
  if (ticket.endtime.getTime() < o.now - SKEW_MS) throw new ApError('ticket expired', ErrorCode.KRB_AP_ERR_TKT_EXPIRED);
  const continued = o.check?.(auth) === 'continued';
  if (continued) return auth;
  if (Math.abs(auth.ctime.getTime() - o.now) > SKEW_MS) throw new ApError('clock skew too great', ErrorCode.KRB_AP_ERR_SKEW);
  if (!o.replay.check(ap.authenticator.cipher, o.now)) throw new ApError('request is a replay', ErrorCode.KRB_AP_ERR_REPEAT);
  return auth;
}

export interface AcceptedAp {
  client: string;
  ticket: EncTicketPart;
  authenticator: Authenticator;
  sessionKey: EncryptionKey;
  mutual: boolean;
  server: string;
  /** how the client authenticated: the ticket's indicators, believed under the service verifier (auth-indicators.ts) */
  authIndicators: string[];
}

/**
 * Accepts an AP-REQ for one of our services. `keyFor(serverName, etype,
 * kvno)` returns the service's key, or null when the ticket's server is not
 * a name the service accepts: the refusal then names that server, as every
 * acceptor logs it (docs/access.md, "Tickets a dirid server accepts").
 */
export async function acceptApReq(
  apReqBytes: Buffer,
  keyFor: (server: string, etype: number, kvno: number | undefined) => Promise<EncryptionKey | null>,
  replay: ReplayCache,
  now: number = Date.now(),
): Promise<AcceptedAp> {
  const ap = decodeApReq(apReqBytes);
  const server = principalToString(ap.ticket.sname, ap.ticket.realm);
  const key = await keyFor(server, ap.ticket.encPart.etype, ap.ticket.encPart.kvno);
  if (!key) throw new ApError(`the ticket is for ${server}, a service this server does not run`, ErrorCode.KRB_AP_ERR_NOT_US);
  let etp: EncTicketPart;
  try {
    etp = decodeEncTicketPart(profile(key.etype).decrypt(key, KeyUsage.TICKET, ap.ticket.encPart.cipher));
  } catch {
    throw new ApError('the ticket does not decrypt', ErrorCode.KRB_AP_ERR_BAD_INTEGRITY);
  }
  const sessionKey = { etype: etp.key.etype, value: etp.key.value };
  const auth = verifyApReq(ap, etp, sessionKey, { usage: KeyUsage.AP_REQ_AUTH, now, replay });
  const authIndicators = serviceVerifiedIndicators(etp, key).indicators;
  return { client: principalToString(etp.cname, etp.crealm), ticket: etp, authenticator: auth, sessionKey, mutual: (ap.apOptions & flagBit(2)) !== 0, server, authIndicators };
}

/**
 * AP-REP echoing the authenticator's time (mutual authentication), with the
 * acceptor's initial sequence number and subkey when it has them (GSS-API).
 */
export function makeApRep(a: AcceptedAp, seqNumber?: number, subkey?: EncryptionKey): Buffer {
  const part = encodeEncApRepPart({
    ctime: a.authenticator.ctime,
    cusec: a.authenticator.cusec,
    ...(subkey ? { subkey: { etype: subkey.etype, value: subkey.value } } : {}),
    ...(seqNumber !== undefined ? { seqNumber } : {}),
  });
  return encodeApRep({ etype: a.sessionKey.etype, cipher: profile(a.sessionKey.etype).encrypt(a.sessionKey, KeyUsage.AP_REP_ENC_PART, part) });
}

/** Builds an AP-REQ for a service ticket (client side). */
export function makeApReq(o: { ticket: Ticket; sessionKey: EncryptionKey; client: PrincipalName; crealm: string; checksum?: { type: number; value: Buffer }; mutual?: boolean; subkey?: EncryptionKey }): { apReq: Buffer; ctime: Date; cusec: number; seqNumber: number } {
  const now = Date.now();
  const ctime = wholeSeconds(now);
  const cusec = microseconds(now);
  const seqNumber = Math.floor(Math.random() * 0x7fffffff);
  const auth = encodeAuthenticator({
    crealm: o.crealm,
    cname: o.client,
    cusec,
    ctime,
    ...(o.checksum ? { cksum: o.checksum } : {}),
    ...(o.subkey ? { subkey: { etype: o.subkey.etype, value: o.subkey.value } } : {}),
    seqNumber,
  });
  const cipher = profile(o.sessionKey.etype).encrypt(o.sessionKey, KeyUsage.AP_REQ_AUTH, auth);
  return { apReq: encodeApReq({ apOptions: o.mutual ? flagBit(2) : 0, ticket: o.ticket, authenticator: { etype: o.sessionKey.etype, cipher } }), ctime, cusec, seqNumber };
}

/** Checks an AP-REP against the authenticator we sent (client side); returns its part (the acceptor's subkey and sequence number). */
export function verifyApRep(apRep: Buffer, sessionKey: EncryptionKey, ctime: Date, cusec: number): EncApRepPart {
  const enc = decodeApRep(apRep);
  let part: EncApRepPart;
  try {
    part = decodeEncApRepPart(profile(sessionKey.etype).decrypt(sessionKey, KeyUsage.AP_REP_ENC_PART, enc.cipher));
  } catch {
    throw new ApError('mutual authentication failed: the AP-REP does not decrypt', ErrorCode.KRB_AP_ERR_MUT_FAIL);
  }
  if (part.ctime.getTime() !== ctime.getTime() || part.cusec !== cusec) throw new ApError('mutual authentication failed', ErrorCode.KRB_AP_ERR_MUT_FAIL);
  return part;
}
