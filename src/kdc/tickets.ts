/**
 * Making tickets and replies (RFC 4120 §3.1.3, §3.3.3): the session key,
 * the EncTicketPart (with its authentication indicators, if any) sealed
 * with the server's key, and the EncKDCRepPart sealed with the reply key.
 * Shared by the AS and TGS exchanges.
 */
import { encodeEncKdcRepPart, encodeKdcRep, type EncKdcRepPart } from '../kerberos/asn1/kdc-rep.js';
import type { EncryptedData, HostAddress, KeyBlock, PaData, PrincipalName } from '../kerberos/asn1/primitives.js';
import { encodeEncTicketPart, encodeTicket, type EncTicketPart, type Ticket } from '../kerberos/asn1/ticket.js';
import { profile, supportedEtypes, type EncryptionKey } from '../kerberos/crypto/index.js';
import { KeyUsage, LastReqType, MsgType, TransitedType } from '../kerberos/iana.js';
import { EncPartTag } from '../kerberos/asn1/kdc-rep.js';
import { indicatorAuthData, type KdcVerifierKey } from '../kerberos/auth-indicators.js';
import { keyFor, type KdcPrincipal } from './principals.js';
import { KdcError } from './errors.js';

export interface TicketSpec {
  crealm: string;
  cname: PrincipalName;
  server: KdcPrincipal;
  srealm: string;
  sname: PrincipalName;
  flags: number;
  authtime: Date;
  starttime?: Date;
  endtime: Date;
  renewTill?: Date;
  caddr?: HostAddress[];
  sessionKey: KeyBlock;
  /** authentication indicators (kdc/auth-indicators.ts), carried in a CAMMAC under the KDC verifier of this krbtgt key */
  authIndicators?: { values: readonly string[]; kdc: KdcVerifierKey };
}

/** Server key to seal tickets with: its strongest supported key. */
export function ticketKey(server: KdcPrincipal): { key: EncryptionKey; kvno: number } {
  for (const etype of supportedEtypes) {
    const k = keyFor(server, etype);
    if (k) return { key: { etype, value: k.key }, kvno: k.kvno };
  }
  throw new KdcError('KDC_ERR_NULL_KEY', `${server.name} has no usable key`);
}

/** Session key enctype: the first the client asked for that the server can use. */
export function sessionEtype(requested: readonly number[], server: KdcPrincipal): number {
  for (const e of requested) if (supportedEtypes.includes(e) && keyFor(server, e)) return e;
  for (const e of requested) if (supportedEtypes.includes(e)) return e;
  throw new KdcError('KDC_ERR_ETYPE_NOSUPP', 'no requested encryption type is supported');
}

/** The empty transited encoding of every ticket issued here (only read: shared, not made per ticket). */
const NO_TRANSIT = Buffer.alloc(0);

export function makeTicket(spec: TicketSpec): Ticket {
  const etp: EncTicketPart = {
    flags: spec.flags,
    key: spec.sessionKey,
    crealm: spec.crealm,
    cname: spec.cname,
    transited: { type: TransitedType.DOMAIN_X500_COMPRESS, contents: NO_TRANSIT },
    authtime: spec.authtime,
    endtime: spec.endtime,
  };
  if (spec.starttime) etp.starttime = spec.starttime;
  if (spec.renewTill) etp.renewTill = spec.renewTill;
  if (spec.caddr && spec.caddr.length) etp.caddr = spec.caddr;
  const { key, kvno } = ticketKey(spec.server);
  // the KDC verifier covers the whole ticket part, so the indicators go in last
  if (spec.authIndicators?.values.length) etp.authorizationData = indicatorAuthData(etp, spec.authIndicators.values, spec.authIndicators.kdc, key);
  const cipher = profile(key.etype).encrypt(key, KeyUsage.TICKET, encodeEncTicketPart(etp));
  const encPart = { etype: key.etype, kvno, cipher };
  return { realm: spec.srealm, sname: spec.sname, encPart, raw: encodeTicket({ realm: spec.srealm, sname: spec.sname, encPart }) };
}

export interface ReplySpec {
  msgType: typeof MsgType.AS_REP | typeof MsgType.TGS_REP;
  spec: TicketSpec;
  ticket: Ticket;
  nonce: number;
  replyKey: EncryptionKey;
  replyKvno?: number;
  usage: number;
  padata?: PaData[];
  encryptedPaData?: PaData[];
  keyExpiration?: Date;
}

export function makeReply(r: ReplySpec): Buffer {
  const s = r.spec;
  const part: EncKdcRepPart = {
    key: s.sessionKey,
    lastReq: [{ type: LastReqType.NONE, value: s.authtime }],
    nonce: r.nonce,
    flags: s.flags,
    authtime: s.authtime,
    starttime: s.starttime ?? s.authtime,
    endtime: s.endtime,
    srealm: s.srealm,
    sname: s.sname,
  };
  if (s.renewTill) part.renewTill = s.renewTill;
  if (s.caddr && s.caddr.length) part.caddr = s.caddr;
  if (r.keyExpiration) part.keyExpiration = r.keyExpiration;
  if (r.encryptedPaData && r.encryptedPaData.length) part.encryptedPaData = r.encryptedPaData;
  const cipher = profile(r.replyKey.etype).encrypt(r.replyKey, r.usage, encodeEncKdcRepPart(part, r.msgType === MsgType.AS_REP ? EncPartTag.AS : EncPartTag.TGS));
  const encPart: EncryptedData = { etype: r.replyKey.etype, cipher };
  if (r.replyKvno !== undefined) encPart.kvno = r.replyKvno;
  return encodeKdcRep({ msgType: r.msgType, padata: r.padata ?? [], crealm: s.crealm, cname: s.cname, ticket: r.ticket, encPart });
}

/** `till` of 19700101000000Z means "as long as allowed" (RFC 4120 §5.4.1). */
export function effectiveTill(till: Date, max: Date): Date {
  if (till.getTime() === 0 || till.getTime() > max.getTime()) return max;
  return till;
}
