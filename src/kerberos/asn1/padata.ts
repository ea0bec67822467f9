/**
 * Pre-authentication payloads: PA-ENC-TS-ENC (RFC 4120 §5.2.7.2),
 * ETYPE-INFO2 (§5.2.7.5) and METHOD-DATA (a sequence of PA-DATA).
 */
import { ctx, fields, gstr, int, octets, parseDer, readInt, readOctets, readString, readTime, req, seq, seqOf, seqOfItems, time } from './der.js';

export interface PaEncTsEnc {
  patimestamp: Date;
  pausec?: number;
}

export function decodePaEncTsEnc(b: Uint8Array): PaEncTsEnc {
  const f = fields(parseDer(b), 'PA-ENC-TS-ENC');
  const out: PaEncTsEnc = { patimestamp: readTime(req(f, 0, 'PA-ENC-TS-ENC'), 'patimestamp') };
  if (f.has(1)) out.pausec = readInt(f.get(1)!, 'pausec');
  return out;
}
export const encodePaEncTsEnc = (p: PaEncTsEnc): Buffer => seq(ctx(0, time(p.patimestamp)), p.pausec !== undefined ? ctx(1, int(p.pausec)) : undefined);

export interface EtypeInfo2Entry {
  etype: number;
  salt?: string;
  s2kparams?: Buffer;
}

export function decodeEtypeInfo2(b: Uint8Array): EtypeInfo2Entry[] {
  return seqOf(parseDer(b), 'ETYPE-INFO2').map((n) => {
    const f = fields(n, 'ETYPE-INFO2-ENTRY');
    const e: EtypeInfo2Entry = { etype: readInt(req(f, 0, 'ETYPE-INFO2-ENTRY'), 'etype') };
    if (f.has(1)) e.salt = readString(f.get(1)!, 'salt');
    if (f.has(2)) e.s2kparams = readOctets(f.get(2)!, 's2kparams');
    return e;
  });
}
export const encodeEtypeInfo2 = (list: EtypeInfo2Entry[]): Buffer =>
  seqOfItems(list.map((e) => seq(ctx(0, int(e.etype)), e.salt !== undefined ? ctx(1, gstr(e.salt)) : undefined, e.s2kparams ? ctx(2, octets(e.s2kparams)) : undefined)));
