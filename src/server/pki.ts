/**
 * The realm's small PKI: a CA, the server's TLS certificate and the KDC's
 * PKINIT certificate (key purpose id-pkinit-KPKdc, krbtgt/REALM@REALM as
 * id-pkinit-san: what MIT's client checks before it trusts an anonymous
 * PKINIT reply), made at `dirid-server init` (the KDC's also at `start`,
 * for a realm made before it) with @peculiar/x509 over Node's WebCrypto. ECDSA P-256
 * with SHA-256, which Node, curl and MIT's tools all accept. Keys are
 * exported as PKCS#8 PEM; the caller writes them with mode 0600.
 */
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { AsnConvert } from '@peculiar/asn1-schema';
import { GeneralName, OtherName, SubjectAlternativeName, id_ce_subjectAltName } from '@peculiar/asn1-x509';
import { encodeKrb5PrincipalName, PkinitOid } from '../kerberos/asn1/pkinit.js';
import { tgsPrincipalName } from '../kerberos/principal.js';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY = 24 * 60 * 60 * 1000;

export interface PemPair {
  certPem: string;
  keyPem: string;
}

async function exportKey(key: webcrypto.CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function escapeDnValue(v: string): string {
  return v.replace(/[,+"\\<>;=]/g, (c) => '\\' + c);
}

export async function createCa(commonName: string, opts: { years?: number } = {}): Promise<PemPair> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: webcrypto.getRandomValues(new Uint8Array(16)).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '').replace(/^[89a-f]/, '1'),
    name: `CN=${escapeDnValue(commonName)}`,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + (opts.years ?? 10) * 365 * DAY),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: pemWithNewline(cert.toString('pem')), keyPem: pemWithNewline(await exportKey(keys.privateKey)) };
}

export async function issueServerCert(ca: PemPair, o: { commonName: string; dnsNames: string[]; ipAddresses: string[]; years?: number }): Promise<PemPair> {
  return issueLeafCert(ca, o.commonName, o.years ?? 2, [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth], false),
    new x509.SubjectAlternativeNameExtension([
      ...o.dnsNames.map((value) => ({ type: 'dns' as const, value })),
      ...o.ipAddresses.map((value) => ({ type: 'ip' as const, value })),
    ]),
  ]);
}

/** The KDC's PKINIT certificate for `realm`, issued by the realm CA. */
export async function issueKdcCert(ca: PemPair, realm: string, o: { years?: number } = {}): Promise<PemPair> {
  const san = new SubjectAlternativeName([new GeneralName({ otherName: new OtherName({ typeId: PkinitOid.SAN, value: new Uint8Array(encodeKrb5PrincipalName(realm, tgsPrincipalName(realm))).buffer }) })]);
  return issueLeafCert(ca, `KDC ${realm}`, o.years ?? 2, [
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([PkinitOid.KP_KDC], false),
    new x509.Extension(id_ce_subjectAltName, false, AsnConvert.serialize(san)),
  ]);
}

/**
 * A certificate the realm CA issues to a new key: not a CA, valid from a
 * day ago for `years`, with `usage` (key usages, extended usages, names)
 * between the basic constraints and the key identifiers.
 */
async function issueLeafCert(ca: PemPair, commonName: string, years: number, usage: x509.Extension[]): Promise<PemPair> {
  const caCert = new x509.X509Certificate(ca.certPem);
  const caKey = await webcrypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(ca.keyPem), ALG, false, ['sign']);
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: webcrypto.getRandomValues(new Uint8Array(16)).reduce((s, b) => s + b.toString(16).padStart(2, '0'), '').replace(/^[89a-f]/, '1'),
    subject: `CN=${escapeDnValue(commonName)}`,
    issuer: caCert.subject,
    notBefore: new Date(now - DAY),
    notAfter: new Date(now + years * 365 * DAY),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: caKey,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      ...usage,
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return { certPem: pemWithNewline(cert.toString('pem')), keyPem: pemWithNewline(await exportKey(keys.privateKey)) };
}

function pemWithNewline(pem: string): string {
  const t = pem.replace(/\r\n/g, '\n');
  return t.endsWith('\n') ? t : t + '\n';
}
