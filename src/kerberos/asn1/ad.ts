/**
 * Authorization data (RFC 4120 §5.2.6): the AuthorizationData sequence and
 * its containers AD-IF-RELEVANT (§5.2.6.1, an AuthorizationData in the
 * ad-data) and AD-KDCIssued (§5.2.6.2, elements signed by the KDC).
 */
import { der, asNode, ctx, fields, gstr, readString, req, seq, type DerNode } from './der.js';
import {
  decodeAuthData,
  decodeChecksum,
  decodePrincipalName,
  encodeAuthData,
  encodeChecksum,
  encodePrincipalName,
  type AuthData,
  type Checksum,
  type PrincipalName,
} from './primitives.js';

export type { AuthData } from './primitives.js';
export const decodeAuthorizationData = (input: Uint8Array | DerNode): AuthData[] => decodeAuthData(input);
export const encodeAuthorizationData = (list: AuthData[]): Buffer => der(encodeAuthData(list));

/** The elements inside an AD-IF-RELEVANT ad-data. */
export const decodeAdIfRelevant = (adData: Uint8Array): AuthData[] => decodeAuthData(adData);
export const encodeAdIfRelevant = (elements: AuthData[]): Buffer => der(encodeAuthData(elements));

export interface AdKdcIssued {
  adChecksum: Checksum;
  iRealm?: string;
  iSname?: PrincipalName;
  elements: AuthData[];
}

export function decodeAdKdcIssued(input: Uint8Array | DerNode): AdKdcIssued {
  const f = fields(asNode(input), 'AD-KDCIssued');
  const out: AdKdcIssued = { adChecksum: decodeChecksum(req(f, 0, 'AD-KDCIssued')), elements: decodeAuthData(req(f, 3, 'AD-KDCIssued')) };
  if (f.has(1)) out.iRealm = readString(f.get(1)!, 'i-realm');
  if (f.has(2)) out.iSname = decodePrincipalName(f.get(2)!);
  return out;
}

export const encodeAdKdcIssued = (a: AdKdcIssued): Buffer =>
  der(seq(ctx(0, encodeChecksum(a.adChecksum)), a.iRealm !== undefined ? ctx(1, gstr(a.iRealm)) : undefined, a.iSname ? ctx(2, encodePrincipalName(a.iSname)) : undefined, ctx(3, encodeAuthData(a.elements))));
