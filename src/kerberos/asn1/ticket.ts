/**
 * Ticket (RFC 4120 §5.3, APPLICATION 1) and EncTicketPart (APPLICATION 3).
 * A decoded Ticket keeps its raw bytes: tickets are carried on unchanged and
 * FAST checksums cover them exactly.
 */
import { der, asNode, app, Asn1Error, ctx, fields, flags, gstr, int, octets, readFlags, readInt, readOctets, readString, readTime, req, seq, time, unwrapApp, type DerNode } from './der.js';
import {
  decodeAuthData,
  decodeEncryptedData,
  decodeHostAddresses,
  decodeKeyBlock,
  decodePrincipalName,
  encodeAuthData,
  encodeEncryptedData,
  encodeHostAddresses,
  encodeKeyBlock,
  encodePrincipalName,
  type AuthData,
  type EncryptedData,
  type HostAddress,
  type KeyBlock,
  type PrincipalName,
} from './primitives.js';

export interface Ticket {
  realm: string;
  sname: PrincipalName;
  encPart: EncryptedData;
  /** the DER bytes as received or encoded */
  raw: Buffer;
}

export function decodeTicketNode(n: DerNode): Ticket {
  const f = fields(unwrapApp(n, 1, 'Ticket'), 'Ticket');
  const vno = readInt(req(f, 0, 'Ticket'), 'tkt-vno');
  if (vno !== 5) throw new Asn1Error('Ticket: tkt-vno must be 5');
  return {
    realm: readString(req(f, 1, 'Ticket'), 'realm'),
    sname: decodePrincipalName(req(f, 2, 'Ticket')),
    encPart: decodeEncryptedData(req(f, 3, 'Ticket')),
    raw: n.raw,
  };
}
export const decodeTicket = (b: Uint8Array | DerNode): Ticket => decodeTicketNode(asNode(b));

export function encodeTicket(t: Omit<Ticket, 'raw'>): Buffer {
  return der(app(1, seq(ctx(0, int(5)), ctx(1, gstr(t.realm)), ctx(2, encodePrincipalName(t.sname)), ctx(3, encodeEncryptedData(t.encPart)))));
}

export interface EncTicketPart {
  flags: number;
  key: KeyBlock;
  crealm: string;
  cname: PrincipalName;
  transited: { type: number; contents: Buffer };
  authtime: Date;
  starttime?: Date;
  endtime: Date;
  renewTill?: Date;
  caddr?: HostAddress[];
  authorizationData?: AuthData[];
}

export function decodeEncTicketPart(b: Uint8Array | DerNode): EncTicketPart {
  const f = fields(unwrapApp(asNode(b), 3, 'EncTicketPart'), 'EncTicketPart');
  const tr = fields(req(f, 4, 'EncTicketPart'), 'TransitedEncoding');
  const opt = <T>(tag: number, fn: (n: DerNode) => T): T | undefined => {
    const n = f.get(tag);
    return n ? fn(n) : undefined;
  };
  const e: EncTicketPart = {
    flags: readFlags(req(f, 0, 'EncTicketPart'), 'flags'),
    key: decodeKeyBlock(req(f, 1, 'EncTicketPart')),
    crealm: readString(req(f, 2, 'EncTicketPart'), 'crealm'),
    cname: decodePrincipalName(req(f, 3, 'EncTicketPart')),
    transited: { type: readInt(req(tr, 0, 'TransitedEncoding'), 'tr-type'), contents: readOctets(req(tr, 1, 'TransitedEncoding'), 'contents') },
    authtime: readTime(req(f, 5, 'EncTicketPart'), 'authtime'),
    endtime: readTime(req(f, 7, 'EncTicketPart'), 'endtime'),
  };
  const st = opt(6, (n) => readTime(n, 'starttime'));
  if (st) e.starttime = st;
  const rt = opt(8, (n) => readTime(n, 'renew-till'));
  if (rt) e.renewTill = rt;
  const ca = opt(9, decodeHostAddresses);
  if (ca) e.caddr = ca;
  const ad = opt(10, decodeAuthData);
  if (ad) e.authorizationData = ad;
  return e;
}

export function encodeEncTicketPart(e: EncTicketPart): Buffer {
  return der(app(
    3,
    seq(
      ctx(0, flags(e.flags)),
      ctx(1, encodeKeyBlock(e.key)),
      ctx(2, gstr(e.crealm)),
      ctx(3, encodePrincipalName(e.cname)),
      ctx(4, seq(ctx(0, int(e.transited.type)), ctx(1, octets(e.transited.contents)))),
      ctx(5, time(e.authtime)),
      e.starttime ? ctx(6, time(e.starttime)) : undefined,
      ctx(7, time(e.endtime)),
      e.renewTill ? ctx(8, time(e.renewTill)) : undefined,
      e.caddr && e.caddr.length ? ctx(9, encodeHostAddresses(e.caddr)) : undefined,
      e.authorizationData && e.authorizationData.length ? ctx(10, encodeAuthData(e.authorizationData)) : undefined,
    ),
  ));
}
