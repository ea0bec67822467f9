/**
 * Pre-authentication payloads: PA-ENC-TS-ENC (RFC 4120 §5.2.7.2, also the
 * plaintext of RFC 6113 EncryptedChallenge), ETYPE-INFO (§5.2.7.4),
 * ETYPE-INFO2 (§5.2.7.5), METHOD-DATA (§5.9.1, a sequence of PA-DATA) and
 * MS-KILE's KERB-PA-PAC-REQUEST.
 */
import { der, asNode, Asn1Error, ctx, fields, gstr, int, octets, readInt, readOctets, readString, readTime, req, seq, seqOf, seqOfItems, time, tlv, type DerNode } from './der.js';
import { decodePaDataList, encodePaDataList, type PaData } from './primitives.js';

export interface PaEncTsEnc {
  patimestamp: Date;
  pausec?: number;
}

export function decodePaEncTsEnc(b: Uint8Array | DerNode): PaEncTsEnc {
  const f = fields(asNode(b), 'PA-ENC-TS-ENC');
  const out: PaEncTsEnc = { patimestamp: readTime(req(f, 0, 'PA-ENC-TS-ENC'), 'patimestamp') };
  if (f.has(1)) out.pausec = readInt(f.get(1)!, 'pausec');
  return out;
}
export const encodePaEncTsEnc = (p: PaEncTsEnc): Buffer => der(seq(ctx(0, time(p.patimestamp)), p.pausec !== undefined ? ctx(1, int(p.pausec)) : undefined));

export interface EtypeInfo2Entry {
  etype: number;
  salt?: string;
  s2kparams?: Buffer;
}

export function decodeEtypeInfo2(b: Uint8Array | DerNode): EtypeInfo2Entry[] {
  return seqOf(asNode(b), 'ETYPE-INFO2').map((n) => {
    const f = fields(n, 'ETYPE-INFO2-ENTRY');
    const e: EtypeInfo2Entry = { etype: readInt(req(f, 0, 'ETYPE-INFO2-ENTRY'), 'etype') };
    if (f.has(1)) e.salt = readString(f.get(1)!, 'salt');
    if (f.has(2)) e.s2kparams = readOctets(f.get(2)!, 's2kparams');
    return e;
  });
}
export const encodeEtypeInfo2 = (list: EtypeInfo2Entry[]): Buffer =>
  der(seqOfItems(list.map((e) => seq(ctx(0, int(e.etype)), e.salt !== undefined ? ctx(1, gstr(e.salt)) : undefined, e.s2kparams ? ctx(2, octets(e.s2kparams)) : undefined))));

export interface EtypeInfoEntry {
  etype: number;
  /** ETYPE-INFO carries the salt as OCTET STRING */
  salt?: Buffer;
}

export function decodeEtypeInfo(b: Uint8Array | DerNode): EtypeInfoEntry[] {
  return seqOf(asNode(b), 'ETYPE-INFO').map((n) => {
    const f = fields(n, 'ETYPE-INFO-ENTRY');
    const e: EtypeInfoEntry = { etype: readInt(req(f, 0, 'ETYPE-INFO-ENTRY'), 'etype') };
    if (f.has(1)) e.salt = readOctets(f.get(1)!, 'salt');
    return e;
  });
}
export const encodeEtypeInfo = (list: EtypeInfoEntry[]): Buffer => der(seqOfItems(list.map((e) => seq(ctx(0, int(e.etype)), e.salt ? ctx(1, octets(e.salt)) : undefined))));

/** METHOD-DATA, e.g. the e-data of KDC_ERR_PREAUTH_REQUIRED. */
export const decodeMethodData = (b: Uint8Array | DerNode): PaData[] => decodePaDataList(b);
export const encodeMethodData = (list: PaData[]): Buffer => der(encodePaDataList(list));

/** KERB-PA-PAC-REQUEST ::= SEQUENCE { include-pac [0] BOOLEAN } (PA type 128). */
export function decodePaPacRequest(b: Uint8Array | DerNode): { includePac: boolean } {
  const v = req(fields(asNode(b), 'PA-PAC-REQUEST'), 0, 'PA-PAC-REQUEST');
  if (v.cls !== 'universal' || v.tag !== 1 || v.content.length !== 1) throw new Asn1Error('PA-PAC-REQUEST: include-pac must be a BOOLEAN');
  return { includePac: v.content[0] !== 0 };
}
export const encodePaPacRequest = (r: { includePac: boolean }): Buffer => der(seq(ctx(0, tlv('universal', false, 1, Buffer.from([r.includePac ? 0xff : 0])))));
