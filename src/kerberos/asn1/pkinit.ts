/**
 * The Kerberos-side messages of PKINIT (RFC 4556 §3.2), as MIT krb5 sends
 * and reads them: PA-PK-AS-REQ, AuthPack and PKAuthenticator (with RFC
 * 8070's freshness token and RFC 8636's paChecksum2 and supportedKDFs),
 * KDCDHKeyInfo, PA-PK-AS-REP with DHRepInfo, KRB5PrincipalName (the
 * id-pkinit-san of a KDC certificate), TYPED-DATA with TD-DH-PARAMETERS
 * (the e-data of KDC_ERR_DH_KEY_PARAMETERS_NOT_ACCEPTED), the Diffie-Hellman
 * domain parameters of a dhpublicnumber key (RFC 3279 §2.3.3) and RFC
 * 8636's OtherInfo and PkinitSuppPubInfo for its key derivation. The
 * module's tags are explicit, except the IMPLICIT OCTET STRINGs of
 * signedAuthPack, kdcPkId and dhSignedData. The CMS SignedData around
 * AuthPack and KDCDHKeyInfo and the X.509 SubjectPublicKeyInfo are not
 * here: they are @peculiar/asn1-cms and asn1-x509 types (kdc/pkinit.ts).
 */
import { asNode, Asn1Error, ctx, der, expect, fields, gstr, int, octets, oid, readInt, readOctets, readOid, readString, readTime, readUInt32, req, seq, seqOf, seqOfItems, time, tlv, type Der, type DerNode } from './der.js';
import { encodePrincipalName, type PrincipalName } from './primitives.js';

/** Object identifiers of PKINIT (RFC 4556 §3.1, RFC 8636 §3) and the X9.42 Diffie-Hellman key type. */
export const PkinitOid = {
  /** content type of the signed AuthPack */
  AUTH_DATA: '1.3.6.1.5.2.3.1',
  /** content type of the signed KDCDHKeyInfo */
  DH_KEY_DATA: '1.3.6.1.5.2.3.2',
  /** extended key usage of a KDC certificate */
  KP_KDC: '1.3.6.1.5.2.3.5',
  /** otherName type of the id-pkinit-san subject alternative name */
  SAN: '1.3.6.1.5.2.2',
  KDF_SHA1: '1.3.6.1.5.2.3.6.1',
  KDF_SHA256: '1.3.6.1.5.2.3.6.2',
  KDF_SHA512: '1.3.6.1.5.2.3.6.3',
  /** dhpublicnumber (RFC 3279 §2.3.3) */
  DH_PUBLIC_NUMBER: '1.2.840.10046.2.1',
} as const;

/** TYPED-DATA types of PKINIT errors (RFC 4556 §3.2.2, §3.2.3.1). */
export const TypedDataType = {
  TD_TRUSTED_CERTIFIERS: 104,
  TD_INVALID_CERTIFICATES: 105,
  TD_DH_PARAMETERS: 109,
} as const;

// ---- helpers: IMPLICIT OCTET STRING fields and unsigned big integers --------------

/** The fields of a SEQUENCE whose fields are context-tagged, explicit or implicit, by tag number; tags ascending. */
function taggedFields(n: DerNode, what: string): Map<number, DerNode> {
  expect(n, 'universal', 16, what);
  if (!n.constructed) throw new Asn1Error(`${what}: SEQUENCE must be constructed`);
  const out = new Map<number, DerNode>();
  let last = -1;
  for (const c of n.children) {
    if (c.cls !== 'context' || c.tag <= last) throw new Asn1Error(`${what}: unexpected or out-of-order field`);
    last = c.tag;
    out.set(c.tag, c);
  }
  return out;
}

/** The content of an [n] IMPLICIT OCTET STRING. */
function implicitOctets(n: DerNode, what: string): Buffer {
  if (n.constructed) throw new Asn1Error(`${what}: constructed OCTET STRING`);
  return n.content;
}

/** Content octets of a DER INTEGER holding the unsigned big-endian value `v`. */
export function unsignedIntegerContent(v: Buffer): Buffer {
  let i = 0;
  while (i < v.length - 1 && v[i] === 0) i++;
  const s = v.subarray(i);
  return s.length > 0 && s[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), s]) : Buffer.from(s);
}

/** A DER INTEGER of an unsigned big-endian value. */
export const bigInt = (v: Buffer): Der => tlv('universal', false, 2, unsignedIntegerContent(v.length === 0 ? Buffer.from([0]) : v));

/** The unsigned big-endian value of a non-negative DER INTEGER (no leading zero octet). */
export function readBigUInt(n: DerNode, what: string): Buffer {
  expect(n, 'universal', 2, what);
  const c = n.content;
  if (n.constructed || c.length === 0) throw new Asn1Error(`${what}: malformed INTEGER`);
  if (c[0]! & 0x80) throw new Asn1Error(`${what}: negative INTEGER`);
  if (c.length > 1 && c[0] === 0 && !(c[1]! & 0x80)) throw new Asn1Error(`${what}: non-minimal INTEGER`);
  return c[0] === 0 && c.length > 1 ? c.subarray(1) : c;
}

/** An AlgorithmIdentifier (RFC 5280 §4.1.1.2): its OID and the DER of its parameters, if any. */
export interface AlgorithmIdentifier {
  algorithm: string;
  parameters?: Buffer;
}

export function decodeAlgorithmIdentifier(input: Uint8Array | DerNode, what = 'AlgorithmIdentifier'): AlgorithmIdentifier {
  const n = asNode(input);
  expect(n, 'universal', 16, what);
  if (!n.constructed || n.children.length < 1 || n.children.length > 2) throw new Asn1Error(`${what}: malformed`);
  const out: AlgorithmIdentifier = { algorithm: readOid(n.children[0]!, what) };
  if (n.children[1]) out.parameters = n.children[1].raw;
  return out;
}

export const encodeAlgorithmIdentifier = (a: AlgorithmIdentifier): Der => seq(oid(a.algorithm), a.parameters);

/** A UInt32 nonce as MIT encodes it: a signed 32-bit INTEGER. */
const int32 = (v: number): Der => int(v > 0x7fffffff ? v - 0x100000000 : v);

// ---- PA-PK-AS-REQ -------------------------------------------------------------------

export interface PaPkAsReq {
  /** DER of a ContentInfo holding SignedData whose content is AuthPack */
  signedAuthPack: Buffer;
  /** DER of the SEQUENCE OF ExternalPrincipalIdentifier, when sent (the CAs the client trusts) */
  trustedCertifiers?: Buffer;
  kdcPkId?: Buffer;
}

export function decodePaPkAsReq(input: Uint8Array | DerNode): PaPkAsReq {
  const f = taggedFields(asNode(input), 'PA-PK-AS-REQ');
  const sap = f.get(0);
  if (!sap) throw new Asn1Error('PA-PK-AS-REQ: missing signedAuthPack');
  const out: PaPkAsReq = { signedAuthPack: implicitOctets(sap, 'signedAuthPack') };
  const tc = f.get(1);
  if (tc) {
    if (!tc.constructed || tc.children.length !== 1) throw new Asn1Error('PA-PK-AS-REQ: malformed trustedCertifiers');
    seqOf(tc.children[0]!, 'trustedCertifiers');
    out.trustedCertifiers = tc.children[0]!.raw;
  }
  const kid = f.get(2);
  if (kid) out.kdcPkId = implicitOctets(kid, 'kdcPkId');
  if ([...f.keys()].some((k) => k > 2)) throw new Asn1Error('PA-PK-AS-REQ: unknown field');
  return out;
}

export const encodePaPkAsReq = (p: PaPkAsReq): Buffer =>
  der(seq(tlv('context', false, 0, p.signedAuthPack), p.trustedCertifiers ? tlv('context', true, 1, p.trustedCertifiers) : undefined, p.kdcPkId ? tlv('context', false, 2, p.kdcPkId) : undefined));

// ---- AuthPack and PKAuthenticator ---------------------------------------------------

/** RFC 8636 §4: a checksum of KDC-REQ-BODY by a named digest. */
export interface PaChecksum2 {
  checksum: Buffer;
  algorithm: AlgorithmIdentifier;
}

export interface PkAuthenticator {
  cusec: number;
  ctime: Date;
  nonce: number;
  /** SHA-1 of KDC-REQ-BODY */
  paChecksum?: Buffer;
  freshnessToken?: Buffer;
  paChecksum2?: PaChecksum2;
}

export interface AuthPack {
  pkAuthenticator: PkAuthenticator;
  /** DER of the client's SubjectPublicKeyInfo (Diffie-Hellman); absent for RSA key transport */
  clientPublicValue?: Buffer;
  /** the CMS algorithms the client supports, in its order */
  supportedCMSTypes?: AlgorithmIdentifier[];
  clientDHNonce?: Buffer;
  /** RFC 8636 key derivation functions, by OID, in the client's order */
  supportedKDFs?: string[];
}

function decodePkAuthenticator(n: DerNode): PkAuthenticator {
  const f = fields(n, 'PKAuthenticator');
  const out: PkAuthenticator = {
    cusec: readInt(req(f, 0, 'PKAuthenticator'), 'cusec'),
    ctime: readTime(req(f, 1, 'PKAuthenticator'), 'ctime'),
    nonce: readUInt32(req(f, 2, 'PKAuthenticator'), 'nonce'),
  };
  if (f.has(3)) out.paChecksum = readOctets(f.get(3)!, 'paChecksum');
  if (f.has(4)) out.freshnessToken = readOctets(f.get(4)!, 'freshnessToken');
  if (f.has(5)) {
    const c = fields(f.get(5)!, 'PAChecksum2');
    out.paChecksum2 = { checksum: readOctets(req(c, 0, 'PAChecksum2'), 'checksum'), algorithm: decodeAlgorithmIdentifier(req(c, 1, 'PAChecksum2'), 'PAChecksum2 algorithm') };
  }
  return out;
}

export function decodeAuthPack(input: Uint8Array | DerNode): AuthPack {
  const f = fields(asNode(input), 'AuthPack');
  const out: AuthPack = { pkAuthenticator: decodePkAuthenticator(req(f, 0, 'AuthPack')) };
  if (f.has(1)) {
    const spki = f.get(1)!;
    expect(spki, 'universal', 16, 'clientPublicValue');
    out.clientPublicValue = spki.raw;
  }
  if (f.has(2)) out.supportedCMSTypes = seqOf(f.get(2)!, 'supportedCMSTypes').map((a) => decodeAlgorithmIdentifier(a, 'supportedCMSTypes'));
  if (f.has(3)) out.clientDHNonce = readOctets(f.get(3)!, 'clientDHNonce');
  if (f.has(4)) out.supportedKDFs = seqOf(f.get(4)!, 'supportedKDFs').map((k) => readOid(req(fields(k, 'KDFAlgorithmId'), 0, 'KDFAlgorithmId'), 'kdf-id'));
  return out;
}

export function encodeAuthPack(a: AuthPack): Buffer {
  const p = a.pkAuthenticator;
  const pk = seq(
    ctx(0, int(p.cusec)),
    ctx(1, time(p.ctime)),
    ctx(2, int32(p.nonce)),
    p.paChecksum ? ctx(3, octets(p.paChecksum)) : undefined,
    p.freshnessToken ? ctx(4, octets(p.freshnessToken)) : undefined,
    p.paChecksum2 ? ctx(5, seq(ctx(0, octets(p.paChecksum2.checksum)), ctx(1, encodeAlgorithmIdentifier(p.paChecksum2.algorithm)))) : undefined,
  );
  return der(
    seq(
      ctx(0, pk),
      a.clientPublicValue ? ctx(1, a.clientPublicValue) : undefined,
      a.supportedCMSTypes ? ctx(2, seqOfItems(a.supportedCMSTypes.map(encodeAlgorithmIdentifier))) : undefined,
      a.clientDHNonce ? ctx(3, octets(a.clientDHNonce)) : undefined,
      a.supportedKDFs ? ctx(4, seqOfItems(a.supportedKDFs.map((k) => seq(ctx(0, oid(k)))))) : undefined,
    ),
  );
}

// ---- KDCDHKeyInfo and PA-PK-AS-REP ----------------------------------------------------

export interface KdcDhKeyInfo {
  /** the KDC's public value y, unsigned big-endian (carried as a DER INTEGER inside the BIT STRING) */
  publicValue: Buffer;
  /** the nonce of the client's PKAuthenticator */
  nonce: number;
  dhKeyExpiration?: Date;
}

export function encodeKdcDhKeyInfo(k: KdcDhKeyInfo): Buffer {
  const bits = tlv('universal', false, 3, Buffer.from([0]), der(bigInt(k.publicValue)));
  return der(seq(ctx(0, bits), ctx(1, int32(k.nonce)), k.dhKeyExpiration ? ctx(2, time(k.dhKeyExpiration)) : undefined));
}

export function decodeKdcDhKeyInfo(input: Uint8Array | DerNode): KdcDhKeyInfo {
  const f = fields(asNode(input), 'KDCDHKeyInfo');
  const bits = expect(req(f, 0, 'KDCDHKeyInfo'), 'universal', 3, 'subjectPublicKey');
  if (bits.constructed || bits.content[0] !== 0) throw new Asn1Error('subjectPublicKey: malformed BIT STRING');
  const out: KdcDhKeyInfo = { publicValue: Buffer.from(readBigUInt(asNode(bits.content.subarray(1)), 'subjectPublicKey')), nonce: readUInt32(req(f, 1, 'KDCDHKeyInfo'), 'nonce') };
  if (f.has(2)) out.dhKeyExpiration = readTime(f.get(2)!, 'dhKeyExpiration');
  return out;
}

/** PA-PK-AS-REP, the Diffie-Hellman choice (DHRepInfo); encKeyPack (RSA key transport) is not used. */
export interface DhRepInfo {
  /** DER of a ContentInfo holding SignedData whose content is KDCDHKeyInfo */
  dhSignedData: Buffer;
  serverDHNonce?: Buffer;
  /** RFC 8636 key derivation function chosen, by OID; absent: octetstring2key of RFC 4556 */
  kdf?: string;
}

export function encodePaPkAsRep(r: DhRepInfo): Buffer {
  const info = seq(tlv('context', false, 0, r.dhSignedData), r.serverDHNonce ? ctx(1, octets(r.serverDHNonce)) : undefined, r.kdf ? ctx(2, seq(ctx(0, oid(r.kdf)))) : undefined);
  return der(ctx(0, info)!);
}

export function decodePaPkAsRep(input: Uint8Array | DerNode): DhRepInfo {
  const n = asNode(input);
  if (n.cls !== 'context' || n.tag !== 0 || !n.constructed || n.children.length !== 1) throw new Asn1Error('PA-PK-AS-REP: only the dhInfo choice is understood');
  const f = taggedFields(n.children[0]!, 'DHRepInfo');
  const sd = f.get(0);
  if (!sd) throw new Asn1Error('DHRepInfo: missing dhSignedData');
  const out: DhRepInfo = { dhSignedData: implicitOctets(sd, 'dhSignedData') };
  const explicit = (n: DerNode, what: string): DerNode => {
    if (!n.constructed || n.children.length !== 1) throw new Asn1Error(`DHRepInfo: malformed ${what}`);
    return n.children[0]!;
  };
  const nonce = f.get(1);
  if (nonce) out.serverDHNonce = readOctets(explicit(nonce, 'serverDHNonce'), 'serverDHNonce');
  const kdf = f.get(2);
  if (kdf) out.kdf = readOid(req(fields(explicit(kdf, 'kdf'), 'KDFAlgorithmId'), 0, 'KDFAlgorithmId'), 'kdf-id');
  return out;
}

// ---- KRB5PrincipalName, RFC 8636 OtherInfo --------------------------------------------

/** KRB5PrincipalName (RFC 4556 §3.2.2): a realm and a PrincipalName, the value of id-pkinit-san. */
export const encodeKrb5PrincipalName = (realm: string, name: PrincipalName): Buffer => der(seq(ctx(0, gstr(realm)), ctx(1, encodePrincipalName(name))));

export function decodeKrb5PrincipalName(input: Uint8Array | DerNode): { realm: string; name: PrincipalName } {
  const f = fields(asNode(input), 'KRB5PrincipalName');
  const pn = fields(req(f, 1, 'KRB5PrincipalName'), 'PrincipalName');
  return {
    realm: readString(req(f, 0, 'KRB5PrincipalName'), 'realm'),
    name: { nameType: readInt(req(pn, 0, 'PrincipalName'), 'name-type'), nameString: seqOf(req(pn, 1, 'PrincipalName'), 'name-string').map((s) => readString(s, 'name-string')) },
  };
}

/**
 * RFC 8636 §6: OtherInfo for the key derivation, naming the KDF, the client
 * and the KDC (KRB5PrincipalName each) and PkinitSuppPubInfo: the reply's
 * enctype, the AS-REQ and the PA-PK-AS-REP as sent.
 */
export function encodeKdfOtherInfo(o: { kdf: string; client: { realm: string; name: PrincipalName }; kdc: { realm: string; name: PrincipalName }; enctype: number; asReq: Buffer; pkAsRep: Buffer }): Buffer {
  const suppPubInfo = der(seq(ctx(0, int(o.enctype)), ctx(1, octets(o.asReq)), ctx(2, octets(o.pkAsRep))));
  return der(
    seq(
      encodeAlgorithmIdentifier({ algorithm: o.kdf }),
      ctx(0, octets(encodeKrb5PrincipalName(o.client.realm, o.client.name))),
      ctx(1, octets(encodeKrb5PrincipalName(o.kdc.realm, o.kdc.name))),
      ctx(2, octets(suppPubInfo)),
    ),
  );
}

// ---- Diffie-Hellman domain parameters and TD-DH-PARAMETERS ---------------------------------

/** DomainParameters of a dhpublicnumber key (RFC 3279 §2.3.3): p, g and q, unsigned big-endian. */
export interface DhDomainParameters {
  p: Buffer;
  g: Buffer;
  q?: Buffer;
}

export function decodeDhDomainParameters(input: Uint8Array | DerNode): DhDomainParameters {
  const n = asNode(input);
  const items = seqOf(n, 'DomainParameters');
  if (items.length < 2) throw new Asn1Error('DomainParameters: needs p and g');
  const out: DhDomainParameters = { p: readBigUInt(items[0]!, 'p'), g: readBigUInt(items[1]!, 'g') };
  if (items[2] && items[2].cls === 'universal' && items[2].tag === 2) out.q = readBigUInt(items[2], 'q');
  return out;
}

export const encodeDhDomainParameters = (d: DhDomainParameters): Buffer => der(seq(bigInt(d.p), bigInt(d.g), d.q ? bigInt(d.q) : undefined));

/** The unsigned value y of a Diffie-Hellman public key: the DER INTEGER inside a SubjectPublicKeyInfo's BIT STRING. */
export const decodeDhPublicValue = (bytes: Uint8Array): Buffer => Buffer.from(readBigUInt(asNode(bytes), 'DH public value'));
export const encodeDhPublicValue = (y: Buffer): Buffer => der(bigInt(y));

/** TYPED-DATA (RFC 4120 §5.9.1): the e-data of PKINIT errors. */
export interface TypedData {
  type: number;
  value?: Buffer;
}

export const encodeTypedData = (list: TypedData[]): Buffer => der(seqOfItems(list.map((t) => seq(ctx(0, int(t.type)), t.value ? ctx(1, octets(t.value)) : undefined))));

export function decodeTypedData(input: Uint8Array | DerNode): TypedData[] {
  return seqOf(asNode(input), 'TYPED-DATA').map((n) => {
    const f = fields(n, 'TypedData');
    const t: TypedData = { type: readInt(req(f, 0, 'TypedData'), 'data-type') };
    if (f.has(1)) t.value = readOctets(f.get(1)!, 'data-value');
    return t;
  });
}

/** TD-DH-PARAMETERS: the groups a KDC accepts, each as a dhpublicnumber AlgorithmIdentifier, preferred first. */
export const encodeTdDhParameters = (groups: DhDomainParameters[]): Buffer =>
  der(seqOfItems(groups.map((g) => encodeAlgorithmIdentifier({ algorithm: PkinitOid.DH_PUBLIC_NUMBER, parameters: encodeDhDomainParameters(g) }))));

export const decodeTdDhParameters = (input: Uint8Array | DerNode): AlgorithmIdentifier[] => seqOf(asNode(input), 'TD-DH-PARAMETERS').map((a) => decodeAlgorithmIdentifier(a));
