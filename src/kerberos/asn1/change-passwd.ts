/**
 * ChangePasswdData (RFC 3244 §2): what a version 0xff80 password request
 * seals in its KRB-PRIV: the new password and, to set another principal's
 * password, that principal's name and realm. An untagged SEQUENCE.
 */
import { der, asNode, ctx, fields, gstr, octets, readOctets, readString, req, seq, type DerNode } from './der.js';
import { decodePrincipalName, encodePrincipalName, type PrincipalName } from './primitives.js';

export interface ChangePasswdData {
  newPassword: Buffer;
  targetName?: PrincipalName;
  targetRealm?: string;
}

export function decodeChangePasswdData(input: Uint8Array | DerNode): ChangePasswdData {
  const f = fields(asNode(input), 'ChangePasswdData');
  const c: ChangePasswdData = { newPassword: readOctets(req(f, 0, 'ChangePasswdData'), 'newpasswd') };
  if (f.has(1)) c.targetName = decodePrincipalName(f.get(1)!);
  if (f.has(2)) c.targetRealm = readString(f.get(2)!, 'targrealm');
  return c;
}

export function encodeChangePasswdData(c: ChangePasswdData): Buffer {
  return der(seq(ctx(0, octets(c.newPassword)), c.targetName ? ctx(1, encodePrincipalName(c.targetName)) : undefined, c.targetRealm !== undefined ? ctx(2, gstr(c.targetRealm)) : undefined));
}
