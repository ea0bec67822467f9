/**
 * KRB-PRIV (RFC 4120 §5.7.1, APPLICATION 21) and EncKrbPrivPart
 * (APPLICATION 28): application data sealed with a key the two sides share
 * after an AP exchange. The password-change protocol (kpasswd.ts) carries
 * the new password in one and the result in another. KRB-PRIV has no field
 * [2]. The sender's address is required by the ASN.1, but peers behind NAT
 * or without a usable address have sent none, so it is read as optional
 * (and always written).
 */
import { der, app, asNode, Asn1Error, ctx, fields, int, octets, readInt, readOctets, readTime, readUInt32, req, seq, time, unwrapApp, type DerNode } from './der.js';
import { decodeEncryptedData, decodeHostAddress, encodeEncryptedData, encodeHostAddress, type EncryptedData, type HostAddress } from './primitives.js';
import { MsgType } from '../iana.js';

export function decodeKrbPriv(input: Uint8Array | DerNode): EncryptedData {
  const f = fields(unwrapApp(asNode(input), 21, 'KRB-PRIV'), 'KRB-PRIV');
  if (readInt(req(f, 0, 'KRB-PRIV'), 'pvno') !== 5 || readInt(req(f, 1, 'KRB-PRIV'), 'msg-type') !== MsgType.KRB_PRIV) throw new Asn1Error('KRB-PRIV: bad pvno or msg-type');
  return decodeEncryptedData(req(f, 3, 'KRB-PRIV'));
}

export function encodeKrbPriv(encPart: EncryptedData): Buffer {
  return der(app(21, seq(ctx(0, int(5)), ctx(1, int(MsgType.KRB_PRIV)), ctx(3, encodeEncryptedData(encPart)))));
}

export interface EncKrbPrivPart {
  userData: Buffer;
  timestamp?: Date;
  usec?: number;
  seqNumber?: number;
  sAddress?: HostAddress;
  rAddress?: HostAddress;
}

export function decodeEncKrbPrivPart(input: Uint8Array | DerNode): EncKrbPrivPart {
  const f = fields(unwrapApp(asNode(input), 28, 'EncKrbPrivPart'), 'EncKrbPrivPart');
  const e: EncKrbPrivPart = { userData: readOctets(req(f, 0, 'EncKrbPrivPart'), 'user-data') };
  if (f.has(1)) e.timestamp = readTime(f.get(1)!, 'timestamp');
  if (f.has(2)) e.usec = readInt(f.get(2)!, 'usec');
  if (f.has(3)) e.seqNumber = readUInt32(f.get(3)!, 'seq-number');
  if (f.has(4)) e.sAddress = decodeHostAddress(f.get(4)!);
  if (f.has(5)) e.rAddress = decodeHostAddress(f.get(5)!);
  return e;
}

export function encodeEncKrbPrivPart(e: EncKrbPrivPart): Buffer {
  return der(app(
    28,
    seq(
      ctx(0, octets(e.userData)),
      e.timestamp ? ctx(1, time(e.timestamp)) : undefined,
      e.usec !== undefined ? ctx(2, int(e.usec)) : undefined,
      // a UInt32 above 2^31 goes out as the negative Int32 MIT writes
      e.seqNumber !== undefined ? ctx(3, int(e.seqNumber > 0x7fffffff ? e.seqNumber - 0x100000000 : e.seqNumber)) : undefined,
      e.sAddress ? ctx(4, encodeHostAddress(e.sAddress)) : undefined,
      e.rAddress ? ctx(5, encodeHostAddress(e.rAddress)) : undefined,
    ),
  ));
}
