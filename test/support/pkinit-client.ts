/**
 * A small anonymous PKINIT client for tests (RFC 4556, RFC 8062): builds an
 * AS-REQ for WELLKNOWN/ANONYMOUS with PA-PK-AS-REQ (an unsigned AuthPack in
 * CMS SignedData, Diffie-Hellman over a MODP group), each part open to
 * being spoiled, and checks the KDC's answer as MIT's client does: the
 * signature over KDCDHKeyInfo by a certificate, the reply key (RFC 8636 KDF
 * or octetstring2key with DH nonces), the session key against PA-PKINIT-KX.
 */
import 'reflect-metadata';
import { createHash, createPublicKey, getDiffieHellman, randomBytes, verify, type DiffieHellmanGroup } from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { ContentInfo, DigestAlgorithmIdentifiers, EncapsulatedContent, EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos, id_signedData } from '@peculiar/asn1-cms';
import { AlgorithmIdentifier, SubjectKeyIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { asReqBody, decodeReplyOrError, KrbClientError, processKdcRep, type Credentials } from '../../src/kerberos/client.js';
import { der, tlv } from '../../src/kerberos/asn1/der.js';
import { decodeKdcRepNode } from '../../src/kerberos/asn1/kdc-rep.js';
import { encodeKdcReq, encodeKdcReqBody, type KdcReqBody } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeEncryptedData, decodeKeyBlock, type PaData, type PrincipalName } from '../../src/kerberos/asn1/primitives.js';
import { decodeKdcDhKeyInfo, decodePaPkAsRep, encodeAuthPack, encodeDhDomainParameters, encodeDhPublicValue, encodeKdfOtherInfo, encodePaPkAsReq, PkinitOid, type AuthPack } from '../../src/kerberos/asn1/pkinit.js';
import { parseDer } from '../../src/kerberos/asn1/der.js';
import { cf2, profile, type EncryptionKey } from '../../src/kerberos/crypto/index.js';
import { flagBit, KdcOption, KeyUsage, MsgType, PaType } from '../../src/kerberos/iana.js';
import { ANONYMOUS_REALM, anonymousPrincipalName } from '../../src/kerberos/principal.js';
import { kdfKey, octetString2Key } from '../../src/kdc/pkinit.js';

export interface AnonymousRequestOptions {
  realm: string;
  /** default modp14 */
  group?: 'modp2' | 'modp14' | 'modp16';
  etypes?: number[];
  cname?: PrincipalName;
  sname?: PrincipalName;
  dhNonce?: boolean;
  /** RFC 8636 KDFs offered (default none: octetstring2key) */
  kdfs?: string[];
  /** spoil the request: each changes one thing the KDC checks */
  nonce?: number;
  ctime?: Date;
  paChecksum?: Buffer | null;
  paChecksum2?: { digest: 'sha256'; oid: string; wrong?: boolean };
  publicValue?: Buffer;
  noPublicValue?: boolean;
  /** the AuthPack signed (a SignerInfo present): certificate PKINIT */
  signed?: boolean;
  /** the PA-PK-AS-REQ bytes as given */
  rawPaValue?: Buffer;
  requestAnonymous?: boolean;
}

export interface AnonymousRequest {
  msg: Buffer;
  body: KdcReqBody;
  dh: DiffieHellmanGroup;
  clientDHNonce?: Buffer;
}

export function anonymousRequest(o: AnonymousRequestOptions): AnonymousRequest {
  const body = asReqBody(o.cname ?? anonymousPrincipalName(), o.realm, { etypes: o.etypes ?? [18], forwardable: false, ...(o.sname ? { sname: o.sname } : {}) });
  if (o.requestAnonymous !== false) body.kdcOptions = (body.kdcOptions | flagBit(KdcOption.REQUEST_ANONYMOUS)) >>> 0;
  const bodyRaw = encodeKdcReqBody(body);
  const dh = getDiffieHellman(o.group ?? 'modp14');
  dh.generateKeys();
  const p = dh.getPrime();
  const q = Buffer.from(((BigInt('0x' + p.toString('hex')) - 1n) / 2n).toString(16).padStart(p.length * 2, '0'), 'hex');
  const spki = new SubjectPublicKeyInfo({
    algorithm: new AlgorithmIdentifier({ algorithm: PkinitOid.DH_PUBLIC_NUMBER, parameters: ab(encodeDhDomainParameters({ p, g: dh.getGenerator(), q })) }),
    subjectPublicKey: ab(encodeDhPublicValue(o.publicValue ?? dh.getPublicKey())),
  });
  const now = Date.now();
  const clientDHNonce = o.dhNonce ? randomBytes(32) : undefined;
  const authPack: AuthPack = {
    pkAuthenticator: {
      cusec: (now % 1000) * 1000,
      ctime: o.ctime ?? new Date(Math.floor(now / 1000) * 1000),
      nonce: o.nonce ?? body.nonce,
      ...(o.paChecksum === null ? {} : { paChecksum: o.paChecksum ?? createHash('sha1').update(bodyRaw).digest() }),
      ...(o.paChecksum2
        ? { paChecksum2: { checksum: createHash(o.paChecksum2.digest).update(o.paChecksum2.wrong ? Buffer.from('other') : bodyRaw).digest(), algorithm: { algorithm: o.paChecksum2.oid } } }
        : {}),
    },
    ...(o.noPublicValue ? {} : { clientPublicValue: Buffer.from(AsnConvert.serialize(spki)) }),
    supportedCMSTypes: [{ algorithm: '1.2.840.113549.3.7' }],
    ...(clientDHNonce ? { clientDHNonce } : {}),
    ...(o.kdfs ? { supportedKDFs: o.kdfs } : {}),
  };
  const signerInfos = o.signed
    ? [
        new SignerInfo({
          version: 3,
          sid: new SignerIdentifier({ subjectKeyIdentifier: new SubjectKeyIdentifier(new Uint8Array(20)) }),
          digestAlgorithm: new AlgorithmIdentifier({ algorithm: '2.16.840.1.101.3.4.2.1' }),
          signatureAlgorithm: new AlgorithmIdentifier({ algorithm: '1.2.840.10045.4.3.2' }),
          signature: new OctetString(new Uint8Array(64)),
        }),
      ]
    : [];
  const sd = new SignedData({
    version: 3,
    digestAlgorithms: new DigestAlgorithmIdentifiers([]),
    encapContentInfo: new EncapsulatedContentInfo({ eContentType: PkinitOid.AUTH_DATA, eContent: new EncapsulatedContent({ single: new OctetString(encodeAuthPack(authPack)) }) }),
    signerInfos: new SignerInfos(signerInfos),
  });
  const signedAuthPack = Buffer.from(AsnConvert.serialize(new ContentInfo({ contentType: id_signedData, content: AsnConvert.serialize(sd) })));
  const pa: PaData = { type: PaType.PK_AS_REQ, value: o.rawPaValue ?? encodePaPkAsReq({ signedAuthPack }) };
  const msg = encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [pa], body, bodyRaw });
  return { msg, body, dh, ...(clientDHNonce ? { clientDHNonce } : {}) };
}

function ab(b: Buffer): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}

export interface AnonymousResult {
  creds: Credentials;
  replyKey: EncryptionKey;
  kdf?: string;
  serverDHNonce?: Buffer;
  /** the DER of the certificate that signed KDCDHKeyInfo */
  signerCertificate: Buffer;
}

/**
 * Checks the KDC's AS-REP: PA-PK-AS-REP signed by the certificate it
 * carries, the reply key from the DH secret, and the session key
 * KRB-FX-CF2(PA-PKINIT-KX's key, "PKINIT", reply key, "KEYEXCHANGE").
 */
export function processAnonymousReply(raw: Buffer, req: AnonymousRequest): AnonymousResult {
  const r = decodeReplyOrError(raw);
  if (r.kind === 'error') throw new KrbClientError(r.error.eText ?? `KDC error ${r.error.errorCode}`, r.error.errorCode, r.error);
  const rep = decodeKdcRepNode(r.node);
  const pkRep = rep.padata.find((p) => p.type === PaType.PK_AS_REP);
  if (!pkRep) throw new Error('no PA-PK-AS-REP');
  const dhRep = decodePaPkAsRep(pkRep.value);
  const info = AsnConvert.parse(ab(dhRep.dhSignedData), ContentInfo);
  if (info.contentType !== id_signedData) throw new Error('dhSignedData is not SignedData');
  const sd = AsnConvert.parse(info.content, SignedData);
  if (sd.encapContentInfo.eContentType !== PkinitOid.DH_KEY_DATA) throw new Error('content type is not id-pkinit-DHKeyData');
  const content = Buffer.from(sd.encapContentInfo.eContent!.single!.buffer);
  const cert = sd.certificates?.[0]?.certificate;
  const signer = sd.signerInfos[0];
  if (!cert || !signer || !signer.signedAttrs) throw new Error('no signer');
  const digest = signer.signedAttrs.find((a) => a.attrType === '1.2.840.113549.1.9.4');
  if (!digest || !Buffer.from(digest.attrValues[0]!).subarray(2).equals(createHash('sha256').update(content).digest())) throw new Error('message digest mismatch');
  const attrs = signer.signedAttrs.map((a) => Buffer.from(AsnConvert.serialize(a)));
  const signedAttrs = der(tlv('universal', true, 17, ...attrs));
  const certDer = Buffer.from(AsnConvert.serialize(cert));
  const publicKey = createPublicKey({ key: Buffer.from(AsnConvert.serialize(cert.tbsCertificate.subjectPublicKeyInfo)), format: 'der', type: 'spki' });
  if (!verify('sha256', signedAttrs, publicKey, Buffer.from(signer.signature.buffer))) throw new Error('bad signature over KDCDHKeyInfo');
  const keyInfo = decodeKdcDhKeyInfo(content);
  const secret = req.dh.computeSecret(keyInfo.publicValue);
  const p = req.dh.getPrime();
  const z = secret.length < p.length ? Buffer.concat([Buffer.alloc(p.length - secret.length), secret]) : secret;
  const etype = rep.encPart.etype;
  const replyKey = dhRep.kdf
    ? kdfKey(dhRep.kdf, z, etype, encodeKdfOtherInfo({ kdf: dhRep.kdf, client: { realm: ANONYMOUS_REALM, name: anonymousPrincipalName() }, kdc: { realm: req.body.realm, name: req.body.sname! }, enctype: etype, asReq: req.msg, pkAsRep: pkRep.value }))
    : octetString2Key(Buffer.concat([z, ...(req.clientDHNonce && dhRep.serverDHNonce ? [req.clientDHNonce, dhRep.serverDHNonce] : [])]), etype);
  const creds = processKdcRep(raw, req.body, replyKey, KeyUsage.AS_REP_ENC_PART);
  const kx = rep.padata.find((p) => p.type === PaType.PKINIT_KX);
  if (!kx) throw new Error('no PA-PKINIT-KX');
  const enc = decodeEncryptedData(parseDer(kx.value));
  const contribution = decodeKeyBlock(parseDer(profile(replyKey.etype).decrypt(replyKey, KeyUsage.PA_PKINIT_KX, enc.cipher)));
  const expected = cf2({ etype: contribution.etype, value: contribution.value }, 'PKINIT', replyKey, 'KEYEXCHANGE');
  if (!expected.value.equals(creds.sessionKey.value)) throw new Error('the session key is not tied to the reply key (PA-PKINIT-KX)');
  return { creds, replyKey, ...(dhRep.kdf ? { kdf: dhRep.kdf } : {}), ...(dhRep.serverDHNonce ? { serverDHNonce: dhRep.serverDHNonce } : {}), signerCertificate: certDer };
}
