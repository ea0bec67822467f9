/**
 * FAST messages (RFC 6113 §5.4): PA-FX-FAST-REQUEST / KrbFastArmoredReq,
 * KrbFastArmor, KrbFastReq, PA-FX-FAST-REPLY / KrbFastArmoredRep,
 * KrbFastResponse and KrbFastFinished. The armored request keeps the raw
 * bytes of the inner KDC-REQ-BODY.
 */
import { der, asNode, Asn1Error, ctx, fields, flags, gstr, int, octets, readFlags, readInt, readOctets, readString, readTime, readUInt32, req, seq, seqOf, seqOfItems, time, tlv, type DerNode } from './der.js';
import { decodeKdcReqBody, type KdcReqBody } from './kdc-req.js';
import {
  decodeChecksum,
  decodeEncryptedData,
  decodeKeyBlock,
  decodePaData,
  decodePrincipalName,
  encodeChecksum,
  encodeEncryptedData,
  encodeKeyBlock,
  encodePaData,
  encodePaDataList,
  encodePrincipalName,
  type Checksum,
  type EncryptedData,
  type KeyBlock,
  type PaData,
  type PrincipalName,
} from './primitives.js';

export const ArmorType = { AP_REQUEST: 1 } as const;

export interface KrbFastArmoredReq {
  armor?: { type: number; value: Buffer };
  reqChecksum: Checksum;
  encFastReq: EncryptedData;
}

/** Decodes the value of PA-FX-FAST in a request (the CHOICE armored-data [0]). */
export function decodeFastArmoredReq(b: Uint8Array | DerNode): KrbFastArmoredReq {
  const n = asNode(b);
  if (n.cls !== 'context' || n.tag !== 0 || n.children.length !== 1) throw new Asn1Error('PA-FX-FAST-REQUEST: expected armored-data [0]');
  const f = fields(n.children[0]!, 'KrbFastArmoredReq');
  const out: KrbFastArmoredReq = { reqChecksum: decodeChecksum(req(f, 1, 'KrbFastArmoredReq')), encFastReq: decodeEncryptedData(req(f, 2, 'KrbFastArmoredReq')) };
  if (f.has(0)) {
    const a = fields(f.get(0)!, 'KrbFastArmor');
    out.armor = { type: readInt(req(a, 0, 'KrbFastArmor'), 'armor-type'), value: readOctets(req(a, 1, 'KrbFastArmor'), 'armor-value') };
  }
  return out;
}

export function encodeFastArmoredReq(r: KrbFastArmoredReq): Buffer {
  const inner = seq(
    r.armor ? ctx(0, seq(ctx(0, int(r.armor.type)), ctx(1, octets(r.armor.value)))) : undefined,
    ctx(1, encodeChecksum(r.reqChecksum)),
    ctx(2, encodeEncryptedData(r.encFastReq)),
  );
  return der(tlv('context', true, 0, inner));
}

export interface KrbFastReq {
  fastOptions: number;
  padata: PaData[];
  body: KdcReqBody;
  bodyRaw: Buffer;
}

export function decodeFastReq(b: Uint8Array | DerNode): KrbFastReq {
  const f = fields(asNode(b), 'KrbFastReq');
  const bodyNode = req(f, 2, 'KrbFastReq');
  return {
    fastOptions: readFlags(req(f, 0, 'KrbFastReq'), 'fast-options'),
    padata: seqOf(req(f, 1, 'KrbFastReq'), 'padata').map(decodePaData),
    body: decodeKdcReqBody(bodyNode),
    bodyRaw: bodyNode.raw,
  };
}

export function encodeFastReq(r: { fastOptions: number; padata: PaData[]; bodyRaw: Buffer }): Buffer {
  return der(seq(ctx(0, flags(r.fastOptions)), ctx(1, encodePaDataList(r.padata)), ctx(2, r.bodyRaw)));
}

export interface KrbFastFinished {
  timestamp: Date;
  usec: number;
  crealm: string;
  cname: PrincipalName;
  ticketChecksum: Checksum;
}

export interface KrbFastResponse {
  padata: PaData[];
  strengthenKey?: KeyBlock;
  finished?: KrbFastFinished;
  nonce: number;
}

export function encodeFastResponse(r: KrbFastResponse): Buffer {
  return der(seq(
    ctx(0, seqOfItems(r.padata.map(encodePaData))),
    r.strengthenKey ? ctx(1, encodeKeyBlock(r.strengthenKey)) : undefined,
    r.finished
      ? ctx(
          2,
          seq(
            ctx(0, time(r.finished.timestamp)),
            ctx(1, int(r.finished.usec)),
            ctx(2, gstr(r.finished.crealm)),
            ctx(3, encodePrincipalName(r.finished.cname)),
            ctx(4, encodeChecksum(r.finished.ticketChecksum)),
          ),
        )
      : undefined,
    ctx(3, int(r.nonce > 0x7fffffff ? r.nonce - 0x100000000 : r.nonce)),
  ));
}

export function decodeFastResponse(b: Uint8Array | DerNode): KrbFastResponse {
  const f = fields(asNode(b), 'KrbFastResponse');
  const out: KrbFastResponse = { padata: seqOf(req(f, 0, 'KrbFastResponse'), 'padata').map(decodePaData), nonce: readUInt32(req(f, 3, 'KrbFastResponse'), 'nonce') };
  if (f.has(1)) out.strengthenKey = decodeKeyBlock(f.get(1)!);
  if (f.has(2)) {
    const g = fields(f.get(2)!, 'KrbFastFinished');
    out.finished = {
      timestamp: readTime(req(g, 0, 'KrbFastFinished'), 'timestamp'),
      usec: readInt(req(g, 1, 'KrbFastFinished'), 'usec'),
      crealm: readString(req(g, 2, 'KrbFastFinished'), 'crealm'),
      cname: decodePrincipalName(req(g, 3, 'KrbFastFinished')),
      ticketChecksum: decodeChecksum(req(g, 4, 'KrbFastFinished')),
    };
  }
  return out;
}

/** PA-FX-FAST-REPLY ::= CHOICE { armored-data [0] KrbFastArmoredRep { enc-fast-rep [0] EncryptedData } } */
export function encodeFastArmoredRep(encFastRep: EncryptedData): Buffer {
  return der(tlv('context', true, 0, seq(ctx(0, encodeEncryptedData(encFastRep)))));
}

export function decodeFastArmoredRep(b: Uint8Array | DerNode): EncryptedData {
  const n: DerNode = asNode(b);
  if (n.cls !== 'context' || n.tag !== 0 || n.children.length !== 1) throw new Asn1Error('PA-FX-FAST-REPLY: expected armored-data [0]');
  return decodeEncryptedData(req(fields(n.children[0]!, 'KrbFastArmoredRep'), 0, 'KrbFastArmoredRep'));
}
