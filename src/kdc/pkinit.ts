/**
 * Anonymous PKINIT on the KDC side (RFC 4556 with RFC 8062's anonymous
 * profile, docs/kerberos.md "Anonymous PKINIT"): a client that names
 * WELLKNOWN/ANONYMOUS gets a TGT without proving any identity, its reply
 * key agreed by Diffie-Hellman with the KDC, whose certificate (issued by
 * the realm CA, with the KDC key purpose and krbtgt/REALM as id-pkinit-san)
 * signs the KDC's half. What MIT's `kinit -n` sends and expects:
 *
 * - the AuthPack arrives as CMS SignedData with no signer (anonymous;
 *   MIT's client sends a bare ContentInfo instead to a KDC that does not
 *   offer PA-PKINIT-KX, which we accept too); a signed one, with a client
 *   certificate, is refused: certificate PKINIT is not supported;
 * - its PKAuthenticator must be fresh (clock skew), carry the request's
 *   nonce and the SHA-1 of KDC-REQ-BODY (paChecksum), and paChecksum2 when
 *   the client adds one;
 * - Diffie-Hellman over the MODP groups 14 (2048 bits, MIT's default) and
 *   16 (4096 bits); any other group or key type is answered with
 *   KDC_ERR_DH_KEY_PARAMETERS_NOT_ACCEPTED and TD-DH-PARAMETERS listing ours;
 * - the reply key: RFC 8636's key derivation when the client lists one we
 *   have (SHA-256, SHA-512, SHA-1), else RFC 4556's octetstring2key, with
 *   both DH nonces when the client sent one;
 * - the KDC's public value goes back in KDCDHKeyInfo, signed (CMS
 *   SignedData, content type id-pkinit-DHKeyData) with the KDC key;
 * - the ticket's session key is KRB-FX-CF2 of a fresh KDC contribution and
 *   the reply key, the contribution sealed in PA-PKINIT-KX (RFC 8062 §7):
 *   MIT's client checks it.
 *
 * Anonymous tickets serve only as FAST armor: the TGS refuses them
 * (isAnonymousTicket), and the only server an anonymous AS request may name
 * is the realm's krbtgt.
 */
import { createHash, getDiffieHellman, randomBytes, sign, timingSafeEqual } from 'node:crypto';
import 'reflect-metadata';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { Attribute, CertificateChoices, CertificateSet, ContentInfo, DigestAlgorithmIdentifiers, EncapsulatedContent, EncapsulatedContentInfo, IssuerAndSerialNumber, SignedData, SignerIdentifier, SignerInfo, SignerInfos, id_signedData } from '@peculiar/asn1-cms';
import { AlgorithmIdentifier as X509AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { der, oid, octets, tlv } from '../kerberos/asn1/der.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import {
  decodeAuthPack,
  decodeDhDomainParameters,
  decodeDhPublicValue,
  decodePaPkAsReq,
  encodeKdcDhKeyInfo,
  encodeKdfOtherInfo,
  encodePaPkAsRep,
  encodeTdDhParameters,
  encodeTypedData,
  PkinitOid,
  TypedDataType,
  type AuthPack,
  type DhDomainParameters,
} from '../kerberos/asn1/pkinit.js';
import { encodeEncryptedData, encodeKeyBlock, type PaData } from '../kerberos/asn1/primitives.js';
import type { EncTicketPart } from '../kerberos/asn1/ticket.js';
import { SKEW_MS } from '../kerberos/ap-exchange.js';
import { cf2, profile, supportedEtypes, type EncryptionKey } from '../kerberos/crypto/index.js';
import { flagBit, hasFlag, KdcOption, KeyUsage, PaType, TicketFlag } from '../kerberos/iana.js';
import { ANONYMOUS_REALM, anonymousPrincipalName, isAnonymousName, tgsPrincipal } from '../kerberos/principal.js';
import { KdcError } from './errors.js';
import type { ExchangeContext } from './exchange-context.js';
import type { KdcPrincipal } from './principals.js';
import type { PkinitIdentity } from './pkinit-identity.js';

const Oid = {
  SHA1: '1.3.14.3.2.26',
  SHA256: '2.16.840.1.101.3.4.2.1',
  SHA384: '2.16.840.1.101.3.4.2.2',
  SHA512: '2.16.840.1.101.3.4.2.3',
  CONTENT_TYPE: '1.2.840.113549.1.9.3',
  MESSAGE_DIGEST: '1.2.840.113549.1.9.4',
} as const;

// ---- the anonymous request ---------------------------------------------------------

/**
 * Whether an AS request asks for an anonymous ticket: its client is
 * WELLKNOWN/ANONYMOUS. Asking for anonymity with another client name (the
 * realm-only anonymity of RFC 8062 §4.2) is not offered.
 */
export function isAnonymousRequest(req: KdcReq): boolean {
  const named = req.body.cname !== undefined && isAnonymousName(req.body.cname);
  if (!named && hasFlag(req.body.kdcOptions, KdcOption.REQUEST_ANONYMOUS)) throw new KdcError('KDC_ERR_BADOPTION', 'anonymity is offered only to the client WELLKNOWN/ANONYMOUS');
  return named;
}

/** Whether a TGT was issued to the anonymous principal (it is good only as FAST armor). */
export function isAnonymousTicket(tgt: EncTicketPart): boolean {
  return hasFlag(tgt.flags, TicketFlag.ANONYMOUS) || isAnonymousName(tgt.cname) || tgt.crealm === ANONYMOUS_REALM;
}

/** A request carrying PKINIT for a named client: certificate PKINIT is not supported, and the client is told so. */
export function refuseCertificatePkinit(req: KdcReq): void {
  if (req.padata.some((p) => (p.type === PaType.PK_AS_REQ || p.type === PaType.PK_AS_REQ_OLD) && p.value.length > 0)) {
    throw new KdcError('KDC_ERR_CLIENT_NOT_TRUSTED', 'PKINIT with a client certificate is not supported; only anonymous PKINIT (WELLKNOWN/ANONYMOUS) is');
  }
}

/** What anonymous PKINIT proved: the reply key and the PA-PK-AS-REP that lets the client compute it. */
export interface PkinitProof {
  key: EncryptionKey;
  padata: PaData[];
  method: 'anonymous-pkinit';
}

/**
 * Checks an anonymous AS request's PA-PK-AS-REQ and answers it: the reply
 * key and PA-PK-AS-REP. Without PA-PK-AS-REQ, PREAUTH_REQUIRED offers it.
 */
export function anonymousPkinit(ctx: ExchangeContext, req: KdcReq, server: KdcPrincipal): PkinitProof {
  ctx.note.client = `WELLKNOWN/ANONYMOUS@${ANONYMOUS_REALM}`;
  if (req.body.realm !== ctx.realm) throw new KdcError('KDC_ERR_WRONG_REALM', `realm ${req.body.realm} is not served here`);
  if (server.name !== tgsPrincipal(ctx.realm)) throw new KdcError('KDC_ERR_POLICY', 'an anonymous client may ask only for a TGT');
  const identity = ctx.pkinit;
  if (!identity) throw new KdcError('KDC_ERR_POLICY', 'anonymous PKINIT is not available: this KDC has no PKINIT certificate');
  const pa = req.padata.find((p) => p.type === PaType.PK_AS_REQ && p.value.length > 0);
  if (!pa) {
    // an empty PA-PKINIT-KX says "RFC 6112 KDC": MIT's client then sends its AuthPack as unsigned SignedData
    const hints: PaData[] = [{ type: PaType.PK_AS_REQ, value: Buffer.alloc(0) }, { type: PaType.PKINIT_KX, value: Buffer.alloc(0) }];
    if (!ctx.fast) hints.push({ type: PaType.FX_FAST, value: Buffer.alloc(0) }, ctx.cookies.seal({ kind: 'preauth' }));
    throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'pre-authentication required (anonymous PKINIT)', hints);
  }
  ctx.note.preauth = 'pkinit anonymous failed';
  const authPack = readAuthPack(pa.value);
  checkAuthenticator(ctx, req, authPack);
  const { group, clientValue } = clientDh(authPack);
  const etype = req.body.etypes.find((e) => supportedEtypes.includes(e));
  if (etype === undefined) throw new KdcError('KDC_ERR_ETYPE_NOSUPP', 'no requested encryption type is supported');
  const dh = getDiffieHellman(group.name);
  dh.generateKeys();
  let secret: Buffer;
  try {
    secret = leftPad(dh.computeSecret(clientValue), group.params.p.length);
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'the client Diffie-Hellman value is not usable');
  }
  const serverDHNonce = authPack.clientDHNonce ? randomBytes(32) : undefined;
  const keyInfo = encodeKdcDhKeyInfo({ publicValue: dh.getPublicKey(), nonce: authPack.pkAuthenticator.nonce });
  const kdf = [...(authPack.supportedKDFs ?? [])].find((k) => KDF_DIGESTS[k] !== undefined);
  const pkAsRep = encodePaPkAsRep({ dhSignedData: signedData(identity, PkinitOid.DH_KEY_DATA, keyInfo), ...(serverDHNonce ? { serverDHNonce } : {}), ...(kdf ? { kdf } : {}) });
  const key = kdf
    ? kdfKey(kdf, secret, etype, encodeKdfOtherInfo({ kdf, client: { realm: ANONYMOUS_REALM, name: anonymousPrincipalName() }, kdc: { realm: req.body.realm, name: req.body.sname! }, enctype: etype, asReq: ctx.raw, pkAsRep }))
    : octetString2Key(Buffer.concat([secret, ...(serverDHNonce ? [authPack.clientDHNonce!, serverDHNonce] : [])]), etype);
  ctx.note.preauth = `pkinit anonymous (${group.name}, ${kdf ? `kdf ${kdf}` : 'octetstring2key'})`;
  return { key, padata: [{ type: PaType.PK_AS_REP, value: pkAsRep }], method: 'anonymous-pkinit' };
}

/** The AuthPack of an anonymous PA-PK-AS-REQ: CMS SignedData with no signer, holding id-pkinit-authData. */
function readAuthPack(value: Buffer): AuthPack {
  let content: Buffer;
  try {
    const info = AsnConvert.parse(toArrayBuffer(decodePaPkAsReq(value).signedAuthPack), ContentInfo);
    if (info.contentType === PkinitOid.AUTH_DATA) {
      // the bare ContentInfo MIT's client sends a KDC that did not offer PA-PKINIT-KX (before RFC 6112)
      content = Buffer.from(AsnConvert.parse(info.content, OctetString).buffer);
    } else {
      if (info.contentType !== id_signedData) throw new Error(`content type ${info.contentType} is neither SignedData nor id-pkinit-authData`);
      const signed = AsnConvert.parse(info.content, SignedData);
      if (signed.encapContentInfo.eContentType !== PkinitOid.AUTH_DATA) throw new Error('the SignedData does not hold id-pkinit-authData');
      if (signed.signerInfos.length > 0) return refuseSigned();
      const c = signed.encapContentInfo.eContent?.single;
      if (!c) throw new Error('the SignedData has no content');
      content = Buffer.from(c.buffer);
    }
  } catch (e) {
    if (e instanceof KdcError) throw e;
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', `malformed PA-PK-AS-REQ: ${e instanceof Error ? e.message : String(e)}`);
  }
  try {
    return decodeAuthPack(content);
  } catch (e) {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', `malformed AuthPack: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function refuseSigned(): never {
  throw new KdcError('KDC_ERR_CLIENT_NOT_TRUSTED', 'PKINIT with a client certificate is not supported; only anonymous PKINIT (an unsigned AuthPack) is');
}

const CHECKSUM2_DIGESTS: Record<string, string> = { [Oid.SHA1]: 'sha1', [Oid.SHA256]: 'sha256', [Oid.SHA384]: 'sha384', [Oid.SHA512]: 'sha512' };

/** RFC 4556 §3.2.1: a fresh PKAuthenticator bound to this request by its nonce and checksums of KDC-REQ-BODY. */
function checkAuthenticator(ctx: ExchangeContext, req: KdcReq, authPack: AuthPack): void {
  const a = authPack.pkAuthenticator;
  if (Math.abs(a.ctime.getTime() + Math.floor(a.cusec / 1000) - ctx.now()) > SKEW_MS) throw new KdcError('KRB_AP_ERR_SKEW', 'clock skew too great');
  if (a.nonce !== req.body.nonce) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'the PKAuthenticator nonce is not the request nonce');
  if (!a.paChecksum || a.paChecksum.length === 0) throw new KdcError('KDC_ERR_PA_CHECKSUM_MUST_BE_INCLUDED', 'the PKAuthenticator has no checksum of the request');
  if (!sameBytes(a.paChecksum, createHash('sha1').update(req.bodyRaw).digest())) throw new KdcError('KRB_AP_ERR_MODIFIED', 'the PKAuthenticator checksum does not match the request');
  if (a.paChecksum2) {
    const digest = CHECKSUM2_DIGESTS[a.paChecksum2.algorithm.algorithm];
    if (!digest) throw new KdcError('KDC_ERR_PREAUTH_FAILED', `paChecksum2 digest ${a.paChecksum2.algorithm.algorithm} not supported`);
    if (!sameBytes(a.paChecksum2.checksum, createHash(digest).update(req.bodyRaw).digest())) throw new KdcError('KRB_AP_ERR_MODIFIED', 'the PKAuthenticator checksum (paChecksum2) does not match the request');
  }
}

function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---- Diffie-Hellman ---------------------------------------------------------------

interface Group {
  /** Node's name of the group */
  name: 'modp14' | 'modp16';
  params: DhDomainParameters;
}

let groupCache: Group[] | undefined;

/** The groups we accept, preferred first: RFC 3526's 2048-bit (MIT's default) and 4096-bit MODP groups. */
function groups(): Group[] {
  return (groupCache ??= (['modp14', 'modp16'] as const).map((name) => {
    const dh = getDiffieHellman(name);
    const p = dh.getPrime();
    const q = (BigInt('0x' + p.toString('hex')) - 1n) / 2n;
    return { name, params: { p, g: dh.getGenerator(), q: Buffer.from(q.toString(16).padStart(p.length * 2, '0'), 'hex') } };
  }));
}

const unsigned = (b: Buffer): bigint => (b.length === 0 ? 0n : BigInt('0x' + b.toString('hex')));

/** The client's group (one of ours) and public value, which must lie in 2..p-2. */
function clientDh(authPack: AuthPack): { group: Group; clientValue: Buffer } {
  if (!authPack.clientPublicValue) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'anonymous PKINIT needs Diffie-Hellman (the AuthPack has no clientPublicValue)');
  let spki: SubjectPublicKeyInfo;
  try {
    spki = AsnConvert.parse(toArrayBuffer(authPack.clientPublicValue), SubjectPublicKeyInfo);
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'malformed clientPublicValue');
  }
  const notAccepted = (why: string) =>
    new KdcError('KDC_ERR_DH_KEY_PARAMETERS_NOT_ACCEPTED', why, undefined, encodeTypedData([{ type: TypedDataType.TD_DH_PARAMETERS, value: encodeTdDhParameters(groups().map((g) => g.params)) }]));
  if (spki.algorithm.algorithm !== PkinitOid.DH_PUBLIC_NUMBER || !spki.algorithm.parameters) throw notAccepted(`key type ${spki.algorithm.algorithm} not accepted: only Diffie-Hellman MODP groups 14 and 16`);
  let params: DhDomainParameters;
  let y: Buffer;
  try {
    params = decodeDhDomainParameters(Buffer.from(spki.algorithm.parameters));
    y = decodeDhPublicValue(Buffer.from(spki.subjectPublicKey));
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'malformed Diffie-Hellman parameters or public value');
  }
  const group = groups().find((g) => g.params.p.equals(params.p) && unsigned(g.params.g) === unsigned(params.g));
  if (!group) throw notAccepted(`Diffie-Hellman group of ${params.p.length * 8} bits not accepted: only MODP groups 14 and 16`);
  const v = unsigned(y);
  if (v < 2n || v > unsigned(group.params.p) - 2n) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'the client Diffie-Hellman value is out of range');
  return { group, clientValue: y };
}

function leftPad(b: Buffer, length: number): Buffer {
  return b.length >= length ? b : Buffer.concat([Buffer.alloc(length - b.length), b]);
}

// ---- reply key derivation -------------------------------------------------------------

/** RFC 4556 §3.2.3.1: octetstring2key, the SHA-1 of a counter octet and x, repeated, truncated to the key, random-to-key. */
export function octetString2Key(x: Buffer, etype: number): EncryptionKey {
  const p = profile(etype);
  const blocks: Buffer[] = [];
  for (let i = 0, have = 0; have < p.keyBytes; i++) {
    const h = createHash('sha1').update(Buffer.from([i])).update(x).digest();
    blocks.push(h);
    have += h.length;
  }
  return p.randomToKey(Buffer.concat(blocks).subarray(0, p.keyBytes));
}

const KDF_DIGESTS: Record<string, string | undefined> = { [PkinitOid.KDF_SHA256]: 'sha256', [PkinitOid.KDF_SHA512]: 'sha512', [PkinitOid.KDF_SHA1]: 'sha1' };

/** RFC 8636 §6: the one-step key derivation of SP 800-56A, H(counter || Z || OtherInfo) repeated, then random-to-key. */
export function kdfKey(kdf: string, secret: Buffer, etype: number, otherInfo: Buffer): EncryptionKey {
  const digest = KDF_DIGESTS[kdf];
  if (!digest) throw new KdcError('KDC_ERR_PREAUTH_FAILED', `key derivation ${kdf} not supported`);
  const p = profile(etype);
  const blocks: Buffer[] = [];
  for (let counter = 1, have = 0; have < p.keyBytes; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    const h = createHash(digest).update(c).update(secret).update(otherInfo).digest();
    blocks.push(h);
    have += h.length;
  }
  return p.randomToKey(Buffer.concat(blocks).subarray(0, p.keyBytes));
}

// ---- CMS SignedData ------------------------------------------------------------------

/**
 * DER of ContentInfo holding SignedData over `content` (of `contentType`),
 * signed by the KDC with signed attributes (content type, message digest)
 * and carrying the KDC certificate.
 */
function signedData(identity: PkinitIdentity, contentType: string, content: Buffer): Buffer {
  const digest = createHash('sha256').update(content).digest();
  const attrs = [new Attribute({ attrType: Oid.CONTENT_TYPE, attrValues: [toArrayBuffer(oid(contentType))] }), new Attribute({ attrType: Oid.MESSAGE_DIGEST, attrValues: [toArrayBuffer(der(octets(digest)))] })]
    .map((a) => ({ a, der: Buffer.from(AsnConvert.serialize(a)) }))
    .sort((x, y) => Buffer.compare(x.der, y.der));
  // the signature covers the signed attributes as a SET OF, in DER order
  const signedAttrs = der(tlv('universal', true, 17, ...attrs.map((x) => x.der)));
  const signature = sign('sha256', signedAttrs, identity.privateKey);
  const cert = identity.certificate;
  const sha256 = new X509AlgorithmIdentifier({ algorithm: Oid.SHA256 });
  const sd = new SignedData({
    version: 3,
    digestAlgorithms: new DigestAlgorithmIdentifiers([sha256]),
    encapContentInfo: new EncapsulatedContentInfo({ eContentType: contentType, eContent: new EncapsulatedContent({ single: new OctetString(content) }) }),
    certificates: new CertificateSet([new CertificateChoices({ certificate: cert })]),
    signerInfos: new SignerInfos([
      new SignerInfo({
        version: 1,
        sid: new SignerIdentifier({ issuerAndSerialNumber: new IssuerAndSerialNumber({ issuer: cert.tbsCertificate.issuer, serialNumber: cert.tbsCertificate.serialNumber }) }),
        digestAlgorithm: sha256,
        signedAttrs: attrs.map((x) => x.a),
        signatureAlgorithm: new X509AlgorithmIdentifier({ algorithm: identity.signatureAlgorithm }),
        signature: new OctetString(signature),
      }),
    ]),
  });
  return Buffer.from(AsnConvert.serialize(new ContentInfo({ contentType: id_signedData, content: AsnConvert.serialize(sd) })));
}

/** The bytes in an ArrayBuffer of their own (@peculiar's parser reads a view's whole underlying buffer). */
function toArrayBuffer(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

// ---- the anonymous ticket ----------------------------------------------------------------

/**
 * The anonymous ticket's names, flags and session key: client
 * WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS, flagged anonymous, neither
 * forwardable, proxiable nor renewable; its session key KRB-FX-CF2 of the
 * planned (random) one, now the KDC's contribution, and the reply key, the
 * contribution sealed under the reply key in PA-PKINIT-KX.
 */
export function anonymousTicket<T extends { crealm: string; cname: { nameType: number; nameString: string[] }; flags: number; renewTill?: Date; sessionKey: { etype: number; value: Buffer } }>(spec: T, replyKey: EncryptionKey): PaData {
  const contribution = { etype: spec.sessionKey.etype, value: spec.sessionKey.value };
  spec.crealm = ANONYMOUS_REALM;
  spec.cname = anonymousPrincipalName();
  spec.flags = ((spec.flags & ~(flagBit(TicketFlag.FORWARDABLE) | flagBit(TicketFlag.PROXIABLE) | flagBit(TicketFlag.RENEWABLE))) | flagBit(TicketFlag.ANONYMOUS)) >>> 0;
  delete spec.renewTill;
  const session = cf2(contribution, 'PKINIT', replyKey, 'KEYEXCHANGE');
  spec.sessionKey = { etype: session.etype, value: session.value };
  const sealed = profile(replyKey.etype).encrypt(replyKey, KeyUsage.PA_PKINIT_KX, der(encodeKeyBlock(contribution)));
  return { type: PaType.PKINIT_KX, value: der(encodeEncryptedData({ etype: replyKey.etype, cipher: sealed })) };
}
