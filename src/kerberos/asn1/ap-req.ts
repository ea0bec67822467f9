/**
 * AP-REQ (RFC 4120 §5.5.1, APPLICATION 14), Authenticator (APPLICATION 2),
 * AP-REP (APPLICATION 15) and EncAPRepPart (APPLICATION 27).
 */
import { der, asNode, app, Asn1Error, ctx, fields, flags, gstr, int, readFlags, readInt, readString, readTime, readUInt32, req, seq, time, unwrapApp, type DerNode } from './der.js';
import {
  decodeAuthData,
  decodeChecksum,
  decodeEncryptedData,
  decodeKeyBlock,
  decodePrincipalName,
  encodeAuthData,
  encodeChecksum,
  encodeEncryptedData,
  encodeKeyBlock,
  encodePrincipalName,
  type AuthData,
  type Checksum,
  type EncryptedData,
  type KeyBlock,
  type PrincipalName,
} from './primitives.js';
import { decodeTicketNode, type Ticket } from './ticket.js';

export interface ApReq {
  apOptions: number;
  ticket: Ticket;
  authenticator: EncryptedData;
}

export function decodeApReqNode(n: DerNode): ApReq {
  const f = fields(unwrapApp(n, 14, 'AP-REQ'), 'AP-REQ');
  if (readInt(req(f, 0, 'AP-REQ'), 'pvno') !== 5 || readInt(req(f, 1, 'AP-REQ'), 'msg-type') !== 14) throw new Asn1Error('AP-REQ: bad pvno or msg-type');
  return { apOptions: readFlags(req(f, 2, 'AP-REQ'), 'ap-options'), ticket: decodeTicketNode(req(f, 3, 'AP-REQ')), authenticator: decodeEncryptedData(req(f, 4, 'AP-REQ')) };
}
export const decodeApReq = (b: Uint8Array | DerNode): ApReq => decodeApReqNode(asNode(b));
export const encodeApReq = (a: ApReq): Buffer =>
  der(app(14, seq(ctx(0, int(5)), ctx(1, int(14)), ctx(2, flags(a.apOptions)), ctx(3, a.ticket.raw), ctx(4, encodeEncryptedData(a.authenticator)))));

export interface Authenticator {
  crealm: string;
  cname: PrincipalName;
  cksum?: Checksum;
  cusec: number;
  ctime: Date;
  subkey?: KeyBlock;
  seqNumber?: number;
  authorizationData?: AuthData[];
}

export function decodeAuthenticator(b: Uint8Array | DerNode): Authenticator {
  const f = fields(unwrapApp(asNode(b), 2, 'Authenticator'), 'Authenticator');
  if (readInt(req(f, 0, 'Authenticator'), 'authenticator-vno') !== 5) throw new Asn1Error('Authenticator: bad version');
  const a: Authenticator = {
    crealm: readString(req(f, 1, 'Authenticator'), 'crealm'),
    cname: decodePrincipalName(req(f, 2, 'Authenticator')),
    cusec: readInt(req(f, 4, 'Authenticator'), 'cusec'),
    ctime: readTime(req(f, 5, 'Authenticator'), 'ctime'),
  };
  if (f.has(3)) a.cksum = decodeChecksum(f.get(3)!);
  if (f.has(6)) a.subkey = decodeKeyBlock(f.get(6)!);
  if (f.has(7)) a.seqNumber = readUInt32(f.get(7)!, 'seq-number');
  if (f.has(8)) a.authorizationData = decodeAuthData(f.get(8)!);
  return a;
}

export function encodeAuthenticator(a: Authenticator): Buffer {
  return der(app(
    2,
    seq(
      ctx(0, int(5)),
      ctx(1, gstr(a.crealm)),
      ctx(2, encodePrincipalName(a.cname)),
      a.cksum ? ctx(3, encodeChecksum(a.cksum)) : undefined,
      ctx(4, int(a.cusec)),
      ctx(5, time(a.ctime)),
      a.subkey ? ctx(6, encodeKeyBlock(a.subkey)) : undefined,
      a.seqNumber !== undefined ? ctx(7, int(a.seqNumber)) : undefined,
      a.authorizationData && a.authorizationData.length ? ctx(8, encodeAuthData(a.authorizationData)) : undefined,
    ),
  ));
}

export interface EncApRepPart {
  ctime: Date;
  cusec: number;
  subkey?: KeyBlock;
  seqNumber?: number;
}

export const encodeApRep = (encPart: EncryptedData): Buffer => der(app(15, seq(ctx(0, int(5)), ctx(1, int(15)), ctx(2, encodeEncryptedData(encPart)))));

export function decodeApRep(b: Uint8Array | DerNode): EncryptedData {
  const f = fields(unwrapApp(asNode(b), 15, 'AP-REP'), 'AP-REP');
  return decodeEncryptedData(req(f, 2, 'AP-REP'));
}

export const encodeEncApRepPart = (e: EncApRepPart): Buffer =>
  der(app(27, seq(ctx(0, time(e.ctime)), ctx(1, int(e.cusec)), e.subkey ? ctx(2, encodeKeyBlock(e.subkey)) : undefined, e.seqNumber !== undefined ? ctx(3, int(e.seqNumber)) : undefined)));

export function decodeEncApRepPart(b: Uint8Array | DerNode): EncApRepPart {
  const f = fields(unwrapApp(asNode(b), 27, 'EncAPRepPart'), 'EncAPRepPart');
  const e: EncApRepPart = { ctime: readTime(req(f, 0, 'EncAPRepPart'), 'ctime'), cusec: readInt(req(f, 1, 'EncAPRepPart'), 'cusec') };
  if (f.has(2)) e.subkey = decodeKeyBlock(f.get(2)!);
  if (f.has(3)) e.seqNumber = readUInt32(f.get(3)!, 'seq-number');
  return e;
}
