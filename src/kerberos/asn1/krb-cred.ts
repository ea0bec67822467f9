/**
 * KRB-CRED (RFC 4120 §5.8.1, APPLICATION 22) and EncKrbCredPart
 * (APPLICATION 29) with KrbCredInfo: forwarded credentials, as carried in
 * the GSS delegation field (RFC 4121 §4.1.1) and by kinit-less tools.
 * Tickets keep their raw bytes.
 */
import { der, app, Asn1Error, asNode, ctx, fields, flags, gstr, int, readFlags, readInt, readString, readTime, readUInt32, req, seq, seqOf, seqOfItems, time, unwrapApp, type DerNode } from './der.js';
import {
  decodeEncryptedData,
  decodeHostAddress,
  decodeHostAddresses,
  decodeKeyBlock,
  decodePrincipalName,
  encodeEncryptedData,
  encodeHostAddress,
  encodeHostAddresses,
  encodeKeyBlock,
  encodePrincipalName,
  type EncryptedData,
  type HostAddress,
  type KeyBlock,
  type PrincipalName,
} from './primitives.js';
import { decodeTicketNode, type Ticket } from './ticket.js';
import { MsgType } from '../iana.js';

export interface KrbCred {
  tickets: Ticket[];
  encPart: EncryptedData;
}

export function decodeKrbCred(input: Uint8Array | DerNode): KrbCred {
  const f = fields(unwrapApp(asNode(input), 22, 'KRB-CRED'), 'KRB-CRED');
  if (readInt(req(f, 0, 'KRB-CRED'), 'pvno') !== 5 || readInt(req(f, 1, 'KRB-CRED'), 'msg-type') !== MsgType.KRB_CRED) throw new Asn1Error('KRB-CRED: bad pvno or msg-type');
  return {
    tickets: seqOf(req(f, 2, 'KRB-CRED'), 'tickets').map((t) => decodeTicketNode(t)),
    encPart: decodeEncryptedData(req(f, 3, 'KRB-CRED')),
  };
}

export function encodeKrbCred(c: KrbCred): Buffer {
  return der(app(22, seq(ctx(0, int(5)), ctx(1, int(MsgType.KRB_CRED)), ctx(2, seqOfItems(c.tickets.map((t) => t.raw))), ctx(3, encodeEncryptedData(c.encPart)))));
}

export interface KrbCredInfo {
  key: KeyBlock;
  prealm?: string;
  pname?: PrincipalName;
  flags?: number;
  authtime?: Date;
  starttime?: Date;
  endtime?: Date;
  renewTill?: Date;
  srealm?: string;
  sname?: PrincipalName;
  caddr?: HostAddress[];
}

export interface EncKrbCredPart {
  ticketInfo: KrbCredInfo[];
  nonce?: number;
  timestamp?: Date;
  usec?: number;
  sAddress?: HostAddress;
  rAddress?: HostAddress;
}

function decodeKrbCredInfo(n: DerNode): KrbCredInfo {
  const f = fields(n, 'KrbCredInfo');
  const i: KrbCredInfo = { key: decodeKeyBlock(req(f, 0, 'KrbCredInfo')) };
  if (f.has(1)) i.prealm = readString(f.get(1)!, 'prealm');
  if (f.has(2)) i.pname = decodePrincipalName(f.get(2)!);
  if (f.has(3)) i.flags = readFlags(f.get(3)!, 'flags');
  if (f.has(4)) i.authtime = readTime(f.get(4)!, 'authtime');
  if (f.has(5)) i.starttime = readTime(f.get(5)!, 'starttime');
  if (f.has(6)) i.endtime = readTime(f.get(6)!, 'endtime');
  if (f.has(7)) i.renewTill = readTime(f.get(7)!, 'renew-till');
  if (f.has(8)) i.srealm = readString(f.get(8)!, 'srealm');
  if (f.has(9)) i.sname = decodePrincipalName(f.get(9)!);
  if (f.has(10)) i.caddr = decodeHostAddresses(f.get(10)!);
  return i;
}

const encodeKrbCredInfo = (i: KrbCredInfo): Buffer =>
  der(seq(
    ctx(0, encodeKeyBlock(i.key)),
    i.prealm !== undefined ? ctx(1, gstr(i.prealm)) : undefined,
    i.pname ? ctx(2, encodePrincipalName(i.pname)) : undefined,
    i.flags !== undefined ? ctx(3, flags(i.flags)) : undefined,
    i.authtime ? ctx(4, time(i.authtime)) : undefined,
    i.starttime ? ctx(5, time(i.starttime)) : undefined,
    i.endtime ? ctx(6, time(i.endtime)) : undefined,
    i.renewTill ? ctx(7, time(i.renewTill)) : undefined,
    i.srealm !== undefined ? ctx(8, gstr(i.srealm)) : undefined,
    i.sname ? ctx(9, encodePrincipalName(i.sname)) : undefined,
    i.caddr ? ctx(10, encodeHostAddresses(i.caddr)) : undefined,
  ));

export function decodeEncKrbCredPart(input: Uint8Array | DerNode): EncKrbCredPart {
  const f = fields(unwrapApp(asNode(input), 29, 'EncKrbCredPart'), 'EncKrbCredPart');
  const e: EncKrbCredPart = { ticketInfo: seqOf(req(f, 0, 'EncKrbCredPart'), 'ticket-info').map(decodeKrbCredInfo) };
  if (f.has(1)) e.nonce = readUInt32(f.get(1)!, 'nonce');
  if (f.has(2)) e.timestamp = readTime(f.get(2)!, 'timestamp');
  if (f.has(3)) e.usec = readInt(f.get(3)!, 'usec');
  if (f.has(4)) e.sAddress = decodeHostAddress(f.get(4)!);
  if (f.has(5)) e.rAddress = decodeHostAddress(f.get(5)!);
  return e;
}

export function encodeEncKrbCredPart(e: EncKrbCredPart): Buffer {
  return der(app(
    29,
    seq(
      ctx(0, seqOfItems(e.ticketInfo.map(encodeKrbCredInfo))),
      e.nonce !== undefined ? ctx(1, int(e.nonce > 0x7fffffff ? e.nonce - 0x100000000 : e.nonce)) : undefined,
      e.timestamp ? ctx(2, time(e.timestamp)) : undefined,
      e.usec !== undefined ? ctx(3, int(e.usec)) : undefined,
      e.sAddress ? ctx(4, encodeHostAddress(e.sAddress)) : undefined,
      e.rAddress ? ctx(5, encodeHostAddress(e.rAddress)) : undefined,
    ),
  ));
}
