/**
 * KDC-REQ (RFC 4120 §5.4.1): AS-REQ (APPLICATION 10) and TGS-REQ
 * (APPLICATION 12). The decoded request keeps the raw bytes of
 * KDC-REQ-BODY: the TGS authenticator checksum (usage 6) and the FAST
 * request checksum (usage 50) are computed over exactly those bytes.
 */
import { der, asNode, app, Asn1Error, ctx, fields, flags, gstr, int, readFlags, readInt, readString, readTime, readUInt32, req, seq, seqOf, seqOfItems, time, type DerNode } from './der.js';
import {
  decodeEncryptedData,
  decodeHostAddresses,
  decodePaDataList,
  decodePrincipalName,
  encodeEncryptedData,
  encodeHostAddresses,
  encodePaDataList,
  encodePrincipalName,
  type EncryptedData,
  type HostAddress,
  type PaData,
  type PrincipalName,
} from './primitives.js';
import { decodeTicketNode, type Ticket } from './ticket.js';
import type { MsgType } from '../iana.js';

export interface KdcReqBody {
  kdcOptions: number;
  cname?: PrincipalName;
  realm: string;
  sname?: PrincipalName;
  from?: Date;
  till: Date;
  rtime?: Date;
  nonce: number;
  etypes: number[];
  addresses?: HostAddress[];
  encAuthorizationData?: EncryptedData;
  additionalTickets?: Ticket[];
}

export interface KdcReq {
  msgType: typeof MsgType.AS_REQ | typeof MsgType.TGS_REQ;
  padata: PaData[];
  body: KdcReqBody;
  /** DER of KDC-REQ-BODY as received */
  bodyRaw: Buffer;
}

export function decodeKdcReqBody(n: DerNode): KdcReqBody {
  const f = fields(n, 'KDC-REQ-BODY');
  const etypes = seqOf(req(f, 8, 'KDC-REQ-BODY'), 'etype').map((e) => readInt(e, 'etype'));
  if (etypes.length > 64) throw new Asn1Error('KDC-REQ-BODY: too many etypes');
  const body: KdcReqBody = {
    kdcOptions: readFlags(req(f, 0, 'KDC-REQ-BODY'), 'kdc-options'),
    realm: readString(req(f, 2, 'KDC-REQ-BODY'), 'realm'),
    till: readTime(req(f, 5, 'KDC-REQ-BODY'), 'till'),
    nonce: readUInt32(req(f, 7, 'KDC-REQ-BODY'), 'nonce'),
    etypes,
  };
  if (f.has(1)) body.cname = decodePrincipalName(f.get(1)!);
  if (f.has(3)) body.sname = decodePrincipalName(f.get(3)!);
  if (f.has(4)) body.from = readTime(f.get(4)!, 'from');
  if (f.has(6)) body.rtime = readTime(f.get(6)!, 'rtime');
  if (f.has(9)) body.addresses = decodeHostAddresses(f.get(9)!);
  if (f.has(10)) body.encAuthorizationData = decodeEncryptedData(f.get(10)!);
  if (f.has(11)) body.additionalTickets = seqOf(f.get(11)!, 'additional-tickets').map(decodeTicketNode);
  return body;
}

export function encodeKdcReqBody(b: KdcReqBody): Buffer {
  return der(seq(
    ctx(0, flags(b.kdcOptions)),
    b.cname ? ctx(1, encodePrincipalName(b.cname)) : undefined,
    ctx(2, gstr(b.realm)),
    b.sname ? ctx(3, encodePrincipalName(b.sname)) : undefined,
    b.from ? ctx(4, time(b.from)) : undefined,
    ctx(5, time(b.till)),
    b.rtime ? ctx(6, time(b.rtime)) : undefined,
    ctx(7, int(b.nonce > 0x7fffffff ? b.nonce - 0x100000000 : b.nonce)),
    ctx(8, seqOfItems(b.etypes.map(int))),
    b.addresses ? ctx(9, encodeHostAddresses(b.addresses)) : undefined,
    b.encAuthorizationData ? ctx(10, encodeEncryptedData(b.encAuthorizationData)) : undefined,
    b.additionalTickets && b.additionalTickets.length ? ctx(11, seqOfItems(b.additionalTickets.map((t) => t.raw))) : undefined,
  ));
}

/** Decodes an AS-REQ or TGS-REQ from a parsed node. */
export function decodeKdcReqNode(n: DerNode): KdcReq {
  if (n.cls !== 'application' || (n.tag !== 10 && n.tag !== 12) || n.children.length !== 1) throw new Asn1Error('not a KDC-REQ');
  const f = fields(n.children[0]!, 'KDC-REQ');
  if (readInt(req(f, 1, 'KDC-REQ'), 'pvno') !== 5) throw new Asn1Error('KDC-REQ: pvno must be 5');
  const msgType = readInt(req(f, 2, 'KDC-REQ'), 'msg-type');
  if (msgType !== n.tag) throw new Asn1Error('KDC-REQ: msg-type does not match the tag');
  const bodyNode = req(f, 4, 'KDC-REQ');
  return {
    msgType: msgType as KdcReq['msgType'],
    padata: f.has(3) ? decodePaDataList(f.get(3)!) : [],
    body: decodeKdcReqBody(bodyNode),
    bodyRaw: bodyNode.raw,
  };
}

export const decodeKdcReq = (b: Uint8Array | DerNode): KdcReq => decodeKdcReqNode(asNode(b));

export function encodeKdcReq(r: { msgType: typeof MsgType.AS_REQ | typeof MsgType.TGS_REQ; padata: PaData[]; body: KdcReqBody; bodyRaw?: Buffer }): Buffer {
  return der(app(r.msgType, seq(ctx(1, int(5)), ctx(2, int(r.msgType)), r.padata.length ? ctx(3, encodePaDataList(r.padata)) : undefined, ctx(4, r.bodyRaw ?? encodeKdcReqBody(r.body)))));
}
