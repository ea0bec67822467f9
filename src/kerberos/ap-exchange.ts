/**
 * The AP exchange (RFC 4120 §3.2) for services: verifying an AP-REQ with the
 * service's keys (ticket decryption, authenticator, matching names, clock
 * skew, ticket times, replay cache) and building the AP-REP for mutual
 * authentication; plus the initiator side for clients.
 */
import { decodeApReq, decodeAuthenticator, decodeEncApRepPart, encodeApRep, encodeApReq, encodeAuthenticator, encodeEncApRepPart, decodeApRep, type Authenticator } from './asn1/ap-req.js';
import { principalToString, type PrincipalName } from './asn1/primitives.js';
import { decodeEncTicketPart, type EncTicketPart, type Ticket } from './asn1/ticket.js';
import { profile, type EncryptionKey } from './crypto/index.js';
import { flagBit, KeyUsage } from './iana.js';
import type { ReplayCache } from './replay-cache.js';

export class ApError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'ApError';
  }
}

export const SKEW_MS = 300_000;

export interface AcceptedAp {
  client: string;
  ticket: EncTicketPart;
  authenticator: Authenticator;
  sessionKey: EncryptionKey;
  mutual: boolean;
  server: string;
}

/**
 * Verifies an AP-REQ. `keyFor(serverName, etype, kvno)` returns the
 * service's key or null when the service is not ours.
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
  if (!key) throw new ApError(`no key for ${server}`, 35);
  let etp: EncTicketPart;
  try {
    etp = decodeEncTicketPart(profile(key.etype).decrypt(key, KeyUsage.TICKET, ap.ticket.encPart.cipher));
  } catch {
    throw new ApError('the ticket does not decrypt', 31);
  }
  const sessionKey = { etype: etp.key.etype, value: etp.key.value };
  let auth: Authenticator;
  try {
    auth = decodeAuthenticator(profile(sessionKey.etype).decrypt(sessionKey, KeyUsage.AP_REQ_AUTH, ap.authenticator.cipher));
  } catch {
    throw new ApError('the authenticator does not decrypt', 31);
  }
  const client = principalToString(etp.cname, etp.crealm);
  if (principalToString(auth.cname, auth.crealm) !== client) throw new ApError('authenticator and ticket name different clients', 36);
  if (Math.abs(auth.ctime.getTime() - now) > SKEW_MS) throw new ApError('clock skew too great', 37);
  if (etp.endtime.getTime() < now - SKEW_MS) throw new ApError('ticket expired', 32);
  if ((etp.starttime ?? etp.authtime).getTime() > now + SKEW_MS) throw new ApError('ticket not yet valid', 33);
  if (!replay.check(ap.authenticator.cipher, now)) throw new ApError('request is a replay', 34);
  return { client, ticket: etp, authenticator: auth, sessionKey, mutual: (ap.apOptions & flagBit(2)) !== 0, server };
}

/** AP-REP echoing the authenticator's time (mutual authentication). */
export function makeApRep(a: AcceptedAp, seqNumber?: number): Buffer {
  const part = encodeEncApRepPart({ ctime: a.authenticator.ctime, cusec: a.authenticator.cusec, ...(seqNumber !== undefined ? { seqNumber } : {}) });
  return encodeApRep({ etype: a.sessionKey.etype, cipher: profile(a.sessionKey.etype).encrypt(a.sessionKey, KeyUsage.AP_REP_ENC_PART, part) });
}

/** Builds an AP-REQ for a service ticket (client side). */
export function makeApReq(o: { ticket: Ticket; sessionKey: EncryptionKey; client: PrincipalName; crealm: string; checksum?: { type: number; value: Buffer }; mutual?: boolean; subkey?: EncryptionKey }): { apReq: Buffer; ctime: Date; cusec: number } {
  const now = Date.now();
  const ctime = new Date(Math.floor(now / 1000) * 1000);
  const cusec = (now % 1000) * 1000;
  const auth = encodeAuthenticator({
    crealm: o.crealm,
    cname: o.client,
    cusec,
    ctime,
    ...(o.checksum ? { cksum: o.checksum } : {}),
    ...(o.subkey ? { subkey: { etype: o.subkey.etype, value: o.subkey.value } } : {}),
    seqNumber: Math.floor(Math.random() * 0x7fffffff),
  });
  const cipher = profile(o.sessionKey.etype).encrypt(o.sessionKey, KeyUsage.AP_REQ_AUTH, auth);
  return { apReq: encodeApReq({ apOptions: o.mutual ? flagBit(2) : 0, ticket: o.ticket, authenticator: { etype: o.sessionKey.etype, cipher } }), ctime, cusec };
}

/** Checks an AP-REP against the authenticator we sent (client side). */
export function verifyApRep(apRep: Buffer, sessionKey: EncryptionKey, ctime: Date, cusec: number): void {
  const enc = decodeApRep(apRep);
  let part;
  try {
    part = decodeEncApRepPart(profile(sessionKey.etype).decrypt(sessionKey, KeyUsage.AP_REP_ENC_PART, enc.cipher));
  } catch {
    throw new ApError('mutual authentication failed: the AP-REP does not decrypt', 46);
  }
  if (part.ctime.getTime() !== ctime.getTime() || part.cusec !== cusec) throw new ApError('mutual authentication failed', 46);
}
