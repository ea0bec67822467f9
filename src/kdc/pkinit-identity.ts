/**
 * The KDC's PKINIT identity: the certificate the realm CA issued it (key
 * purpose id-pkinit-KPKdc, krbtgt/REALM as id-pkinit-san) and its private
 * key, read from PEM; pkinit.ts signs the KDC's Diffie-Hellman half with
 * them.
 */
import { createPrivateKey, type KeyObject } from 'node:crypto';
import 'reflect-metadata';
import { AsnConvert } from '@peculiar/asn1-schema';
import { Certificate } from '@peculiar/asn1-x509';

export interface PkinitIdentity {
  certificate: Certificate;
  privateKey: KeyObject;
  /** the CMS signature algorithm of the key: ECDSA or RSA, with SHA-256 */
  signatureAlgorithm: string;
}

const ECDSA_SHA256 = '1.2.840.10045.4.3.2';
const RSA_SHA256 = '1.2.840.113549.1.1.11';

/** The KDC's identity from its certificate and key (PEM); EC or RSA keys. */
export function pkinitIdentity(certPem: string, keyPem: string): PkinitIdentity {
  const m = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(certPem);
  if (!m) throw new Error('no certificate in the KDC certificate file');
  const certificate = AsnConvert.parse(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64'), Certificate);
  const privateKey = createPrivateKey(keyPem);
  const type = privateKey.asymmetricKeyType;
  if (type !== 'ec' && type !== 'rsa') throw new Error(`the KDC key is ${type}: EC or RSA needed`);
  return { certificate, privateKey, signatureAlgorithm: type === 'ec' ? ECDSA_SHA256 : RSA_SHA256 };
}
