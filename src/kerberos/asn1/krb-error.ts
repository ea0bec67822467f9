/** KRB-ERROR (RFC 4120 §5.9.1, APPLICATION 30). */
import { der, asNode, app, Asn1Error, ctx, fields, gstr, int, octets, readInt, readOctets, readString, readTime, req, seq, time, unwrapApp, type DerNode } from './der.js';
import { decodePrincipalName, encodePrincipalName, type PrincipalName } from './primitives.js';

export interface KrbError {
  ctime?: Date;
  cusec?: number;
  stime: Date;
  susec: number;
  errorCode: number;
  crealm?: string;
  cname?: PrincipalName;
  realm: string;
  sname: PrincipalName;
  eText?: string;
  eData?: Buffer;
}

export function decodeKrbError(b: Uint8Array | DerNode): KrbError {
  const f = fields(unwrapApp(asNode(b), 30, 'KRB-ERROR'), 'KRB-ERROR');
  if (readInt(req(f, 0, 'KRB-ERROR'), 'pvno') !== 5 || readInt(req(f, 1, 'KRB-ERROR'), 'msg-type') !== 30) throw new Asn1Error('KRB-ERROR: bad pvno or msg-type');
  const e: KrbError = {
    stime: readTime(req(f, 4, 'KRB-ERROR'), 'stime'),
    susec: readInt(req(f, 5, 'KRB-ERROR'), 'susec'),
    errorCode: readInt(req(f, 6, 'KRB-ERROR'), 'error-code'),
    realm: readString(req(f, 9, 'KRB-ERROR'), 'realm'),
    sname: decodePrincipalName(req(f, 10, 'KRB-ERROR')),
  };
  if (f.has(2)) e.ctime = readTime(f.get(2)!, 'ctime');
  if (f.has(3)) e.cusec = readInt(f.get(3)!, 'cusec');
  if (f.has(7)) e.crealm = readString(f.get(7)!, 'crealm');
  if (f.has(8)) e.cname = decodePrincipalName(f.get(8)!);
  if (f.has(11)) e.eText = readString(f.get(11)!, 'e-text');
  if (f.has(12)) e.eData = readOctets(f.get(12)!, 'e-data');
  return e;
}

export function encodeKrbError(e: KrbError): Buffer {
  return der(app(
    30,
    seq(
      ctx(0, int(5)),
      ctx(1, int(30)),
      e.ctime ? ctx(2, time(e.ctime)) : undefined,
      e.cusec !== undefined ? ctx(3, int(e.cusec)) : undefined,
      ctx(4, time(e.stime)),
      ctx(5, int(e.susec)),
      ctx(6, int(e.errorCode)),
      e.crealm ? ctx(7, gstr(e.crealm)) : undefined,
      e.cname ? ctx(8, encodePrincipalName(e.cname)) : undefined,
      ctx(9, gstr(e.realm)),
      ctx(10, encodePrincipalName(e.sname)),
      e.eText !== undefined ? ctx(11, gstr(e.eText)) : undefined,
      e.eData ? ctx(12, octets(e.eData)) : undefined,
    ),
  ));
}
