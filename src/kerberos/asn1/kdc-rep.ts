/**
 * KDC-REP (RFC 4120 §5.4.2): AS-REP (APPLICATION 11), TGS-REP
 * (APPLICATION 13), and EncKDCRepPart (EncASRepPart 25 / EncTGSRepPart 26;
 * MIT sends 26 for both and accepts either, so the decoder does too).
 */
import { der, asNode, app, Asn1Error, ctx, fields, flags, gstr, int, readFlags, readInt, readString, readTime, readUInt32, req, seq, time, type DerNode } from './der.js';
import {
  decodeEncryptedData,
  decodeHostAddresses,
  decodeKeyBlock,
  decodeLastReq,
  decodePaDataList,
  decodePrincipalName,
  encodeEncryptedData,
  encodeHostAddresses,
  encodeKeyBlock,
  encodeLastReq,
  encodePaDataList,
  encodePrincipalName,
  type EncryptedData,
  type HostAddress,
  type KeyBlock,
  type LastReq,
  type PaData,
  type PrincipalName,
} from './primitives.js';
import { decodeTicketNode, type Ticket } from './ticket.js';
import type { MsgType } from '../iana.js';

export interface KdcRep {
  msgType: typeof MsgType.AS_REP | typeof MsgType.TGS_REP;
  padata: PaData[];
  crealm: string;
  cname: PrincipalName;
  ticket: Ticket;
  encPart: EncryptedData;
}

export function decodeKdcRepNode(n: DerNode): KdcRep {
  if (n.cls !== 'application' || (n.tag !== 11 && n.tag !== 13) || n.children.length !== 1) throw new Asn1Error('not a KDC-REP');
  const f = fields(n.children[0]!, 'KDC-REP');
  if (readInt(req(f, 0, 'KDC-REP'), 'pvno') !== 5) throw new Asn1Error('KDC-REP: pvno must be 5');
  const msgType = readInt(req(f, 1, 'KDC-REP'), 'msg-type');
  if (msgType !== n.tag) throw new Asn1Error('KDC-REP: msg-type does not match the tag');
  return {
    msgType: msgType as KdcRep['msgType'],
    padata: f.has(2) ? decodePaDataList(f.get(2)!) : [],
    crealm: readString(req(f, 3, 'KDC-REP'), 'crealm'),
    cname: decodePrincipalName(req(f, 4, 'KDC-REP')),
    ticket: decodeTicketNode(req(f, 5, 'KDC-REP')),
    encPart: decodeEncryptedData(req(f, 6, 'KDC-REP')),
  };
}
export const decodeKdcRep = (b: Uint8Array | DerNode): KdcRep => decodeKdcRepNode(asNode(b));

export function encodeKdcRep(r: KdcRep): Buffer {
  return der(app(
    r.msgType,
    seq(
      ctx(0, int(5)),
      ctx(1, int(r.msgType)),
      r.padata.length ? ctx(2, encodePaDataList(r.padata)) : undefined,
      ctx(3, gstr(r.crealm)),
      ctx(4, encodePrincipalName(r.cname)),
      ctx(5, r.ticket.raw),
      ctx(6, encodeEncryptedData(r.encPart)),
    ),
  ));
}

export interface EncKdcRepPart {
  key: KeyBlock;
  lastReq: LastReq[];
  nonce: number;
  keyExpiration?: Date;
  flags: number;
  authtime: Date;
  starttime?: Date;
  endtime: Date;
  renewTill?: Date;
  srealm: string;
  sname: PrincipalName;
  caddr?: HostAddress[];
  encryptedPaData?: PaData[];
}

export function decodeEncKdcRepPart(b: Uint8Array | DerNode): EncKdcRepPart {
  const n = asNode(b);
  if (n.cls !== 'application' || (n.tag !== 25 && n.tag !== 26) || n.children.length !== 1) throw new Asn1Error('not an EncKDCRepPart');
  const f = fields(n.children[0]!, 'EncKDCRepPart');
  const e: EncKdcRepPart = {
    key: decodeKeyBlock(req(f, 0, 'EncKDCRepPart')),
    lastReq: decodeLastReq(req(f, 1, 'EncKDCRepPart')),
    nonce: readUInt32(req(f, 2, 'EncKDCRepPart'), 'nonce'),
    flags: readFlags(req(f, 4, 'EncKDCRepPart'), 'flags'),
    authtime: readTime(req(f, 5, 'EncKDCRepPart'), 'authtime'),
    endtime: readTime(req(f, 7, 'EncKDCRepPart'), 'endtime'),
    srealm: readString(req(f, 9, 'EncKDCRepPart'), 'srealm'),
    sname: decodePrincipalName(req(f, 10, 'EncKDCRepPart')),
  };
  if (f.has(3)) e.keyExpiration = readTime(f.get(3)!, 'key-expiration');
  if (f.has(6)) e.starttime = readTime(f.get(6)!, 'starttime');
  if (f.has(8)) e.renewTill = readTime(f.get(8)!, 'renew-till');
  if (f.has(11)) e.caddr = decodeHostAddresses(f.get(11)!);
  if (f.has(12)) e.encryptedPaData = decodePaDataList(f.get(12)!);
  return e;
}

/** APPLICATION tags of EncASRepPart and EncTGSRepPart (RFC 4120 §5.4.2). */
export const EncPartTag = { AS: 25, TGS: 26 } as const;

/** Encodes with APPLICATION 26 by default, as MIT does for AS and TGS replies. */
export function encodeEncKdcRepPart(e: EncKdcRepPart, tag: (typeof EncPartTag)[keyof typeof EncPartTag] = EncPartTag.TGS): Buffer {
  return der(app(
    tag,
    seq(
      ctx(0, encodeKeyBlock(e.key)),
      ctx(1, encodeLastReq(e.lastReq)),
      ctx(2, int(e.nonce > 0x7fffffff ? e.nonce - 0x100000000 : e.nonce)),
      e.keyExpiration ? ctx(3, time(e.keyExpiration)) : undefined,
      ctx(4, flags(e.flags)),
      ctx(5, time(e.authtime)),
      e.starttime ? ctx(6, time(e.starttime)) : undefined,
      ctx(7, time(e.endtime)),
      e.renewTill ? ctx(8, time(e.renewTill)) : undefined,
      ctx(9, gstr(e.srealm)),
      ctx(10, encodePrincipalName(e.sname)),
      e.caddr && e.caddr.length ? ctx(11, encodeHostAddresses(e.caddr)) : undefined,
      e.encryptedPaData && e.encryptedPaData.length ? ctx(12, encodePaDataList(e.encryptedPaData)) : undefined,
    ),
  ));
}
