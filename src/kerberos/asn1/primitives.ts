/**
 * Kerberos ASN.1 building blocks (RFC 4120 §5.2): PrincipalName,
 * EncryptedData, EncryptionKey, Checksum, PA-DATA, HostAddresses,
 * AuthorizationData, LastReq. Each decoder takes the DER bytes of the type
 * or an already parsed node; each encoder returns DER.
 */
import { formatPrincipal, parsePrincipalName, type PrincipalName } from '../principal.js';
import { NameType } from '../iana.js';
import { asNode, Asn1Error, ctx, fields, gstr, int, octets, readInt, readOctets, readString, readTime, req, seq, seqOf, seqOfItems, time, type DerNode, type Der } from './der.js';

export type { PrincipalName } from '../principal.js';
export interface EncryptedData {
  etype: number;
  kvno?: number;
  cipher: Buffer;
}
export interface KeyBlock {
  etype: number;
  value: Buffer;
}
export interface Checksum {
  type: number;
  value: Buffer;
}
export interface PaData {
  type: number;
  value: Buffer;
}
export interface HostAddress {
  type: number;
  address: Buffer;
}
export interface AuthData {
  type: number;
  data: Buffer;
}
export interface LastReq {
  type: number;
  value: Date;
}

const MAX_COMPONENTS = 16;

export function decodePrincipalName(input: Uint8Array | DerNode): PrincipalName {
  const n = asNode(input);
  const f = fields(n, 'PrincipalName');
  const names = seqOf(req(f, 1, 'PrincipalName'), 'PrincipalName.name-string').map((s) => readString(s, 'name component'));
  if (names.length > MAX_COMPONENTS) throw new Asn1Error('PrincipalName: too many components');
  return { nameType: readInt(req(f, 0, 'PrincipalName'), 'name-type'), nameString: names };
}
export const encodePrincipalName = (p: PrincipalName): Der => seq(ctx(0, int(p.nameType)), ctx(1, seqOfItems(p.nameString.map(gstr))));

export function decodeEncryptedData(input: Uint8Array | DerNode): EncryptedData {
  const n = asNode(input);
  const f = fields(n, 'EncryptedData');
  const kvno = f.get(1);
  // the optional field set on the object made, not spread into it: a conditional spread costs V8 several times the decoding
  const e: EncryptedData = { etype: readInt(req(f, 0, 'EncryptedData'), 'etype'), cipher: readOctets(req(f, 2, 'EncryptedData'), 'cipher') };
  if (kvno) e.kvno = readInt(kvno, 'kvno') >>> 0;
  return e;
}
export const encodeEncryptedData = (e: EncryptedData): Der => seq(ctx(0, int(e.etype)), e.kvno === undefined ? undefined : ctx(1, int(e.kvno)), ctx(2, octets(e.cipher)));

export function decodeKeyBlock(input: Uint8Array | DerNode): KeyBlock {
  const n = asNode(input);
  const f = fields(n, 'EncryptionKey');
  return { etype: readInt(req(f, 0, 'EncryptionKey'), 'keytype'), value: readOctets(req(f, 1, 'EncryptionKey'), 'keyvalue') };
}
export const encodeKeyBlock = (k: KeyBlock): Der => seq(ctx(0, int(k.etype)), ctx(1, octets(k.value)));

export function decodeChecksum(input: Uint8Array | DerNode): Checksum {
  const n = asNode(input);
  const f = fields(n, 'Checksum');
  return { type: readInt(req(f, 0, 'Checksum'), 'cksumtype'), value: readOctets(req(f, 1, 'Checksum'), 'checksum') };
}
export const encodeChecksum = (c: Checksum): Der => seq(ctx(0, int(c.type)), ctx(1, octets(c.value)));

export function decodePaData(input: Uint8Array | DerNode): PaData {
  const n = asNode(input);
  const f = fields(n, 'PA-DATA');
  return { type: readInt(req(f, 1, 'PA-DATA'), 'padata-type'), value: readOctets(req(f, 2, 'PA-DATA'), 'padata-value') };
}
export const encodePaData = (p: PaData): Der => seq(ctx(1, int(p.type)), ctx(2, octets(p.value)));
export const decodePaDataList = (input: Uint8Array | DerNode): PaData[] => seqOf(asNode(input), 'METHOD-DATA').map(decodePaData);
export const encodePaDataList = (list: PaData[]): Der => seqOfItems(list.map(encodePaData));

export function decodeHostAddress(input: Uint8Array | DerNode): HostAddress {
  const f = fields(asNode(input), 'HostAddress');
  return { type: readInt(req(f, 0, 'HostAddress'), 'addr-type'), address: readOctets(req(f, 1, 'HostAddress'), 'address') };
}
export const encodeHostAddress = (a: HostAddress): Der => seq(ctx(0, int(a.type)), ctx(1, octets(a.address)));
export const decodeHostAddresses = (input: Uint8Array | DerNode): HostAddress[] => seqOf(asNode(input), 'HostAddresses').map((a) => decodeHostAddress(a));
export const encodeHostAddresses = (list: HostAddress[]): Der => seqOfItems(list.map(encodeHostAddress));

export function decodeAuthData(input: Uint8Array | DerNode): AuthData[] {
  const n = asNode(input);
  return seqOf(n, 'AuthorizationData').map((a) => {
    const f = fields(a, 'AuthorizationData');
    return { type: readInt(req(f, 0, 'AuthorizationData'), 'ad-type'), data: readOctets(req(f, 1, 'AuthorizationData'), 'ad-data') };
  });
}
export const encodeAuthData = (list: AuthData[]): Der => seqOfItems(list.map((a) => seq(ctx(0, int(a.type)), ctx(1, octets(a.data)))));

export function decodeLastReq(input: Uint8Array | DerNode): LastReq[] {
  const n = asNode(input);
  return seqOf(n, 'LastReq').map((a) => {
    const f = fields(a, 'LastReq');
    return { type: readInt(req(f, 0, 'LastReq'), 'lr-type'), value: readTime(req(f, 1, 'LastReq'), 'lr-value') };
  });
}
export const encodeLastReq = (list: LastReq[]): Der => seqOfItems(list.map((a) => seq(ctx(0, int(a.type)), ctx(1, time(a.value)))));

/** Formats `a/b@REALM` (kept here for existing callers; see ../principal.ts). */
export const principalToString = formatPrincipal;

/** Parses `a/b@REALM`; the realm defaults to `defaultRealm`, the name type to `nameType`. */
export function parsePrincipal(text: string, defaultRealm: string, nameType: number = NameType.PRINCIPAL): { name: PrincipalName; realm: string } {
  return parsePrincipalName(text, defaultRealm, nameType);
}
