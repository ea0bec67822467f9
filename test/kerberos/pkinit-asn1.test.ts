/**
 * The PKINIT messages of kerberos/asn1/pkinit.ts against MIT krb5's own
 * bytes (test/data/kerberos/pkinit): kinit -n's PA-PK-AS-REQ and an MIT
 * KDC's PA-PK-AS-REP decode to what MIT sent and re-encode byte for byte;
 * and the other messages round-trip.
 */
import 'reflect-metadata';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { getDiffieHellman } from 'node:crypto';
import { AsnConvert } from '@peculiar/asn1-schema';
import { ContentInfo, SignedData } from '@peculiar/asn1-cms';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import {
  decodeAuthPack,
  decodeDhDomainParameters,
  decodeDhPublicValue,
  decodeKdcDhKeyInfo,
  decodeKrb5PrincipalName,
  decodePaPkAsRep,
  decodePaPkAsReq,
  decodeTdDhParameters,
  decodeTypedData,
  encodeAuthPack,
  encodeKdcDhKeyInfo,
  encodeKrb5PrincipalName,
  encodePaPkAsRep,
  encodePaPkAsReq,
  encodeTdDhParameters,
  encodeTypedData,
  PkinitOid,
} from '../../src/kerberos/asn1/pkinit.js';

const data = (name: string) => readFileSync(new URL(`../data/kerberos/pkinit/${name}`, import.meta.url));
const ab = (b: Buffer) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

describe('PKINIT messages from MIT krb5', () => {
  it("kinit -n's PA-PK-AS-REQ: an unsigned AuthPack, MODP group 14, three KDFs; byte-exact round trip", () => {
    const raw = data('kinit-n-pa-pk-as-req.der');
    const req = decodePaPkAsReq(raw);
    assert.ok(req.trustedCertifiers);
    assert.deepEqual(encodePaPkAsReq(req), raw);
    const info = AsnConvert.parse(ab(req.signedAuthPack), ContentInfo);
    const sd = AsnConvert.parse(info.content, SignedData);
    assert.equal(sd.encapContentInfo.eContentType, PkinitOid.AUTH_DATA);
    assert.equal(sd.signerInfos.length, 0);
    const content = Buffer.from(sd.encapContentInfo.eContent!.single!.buffer);
    const ap = decodeAuthPack(content);
    assert.equal(ap.pkAuthenticator.nonce, 0x43455079);
    assert.equal(ap.pkAuthenticator.paChecksum?.length, 20);
    assert.ok(ap.pkAuthenticator.freshnessToken);
    assert.deepEqual(ap.supportedKDFs, [PkinitOid.KDF_SHA256, PkinitOid.KDF_SHA1, PkinitOid.KDF_SHA512]);
    assert.equal(ap.clientDHNonce, undefined);
    const spki = AsnConvert.parse(ab(ap.clientPublicValue!), SubjectPublicKeyInfo);
    assert.equal(spki.algorithm.algorithm, PkinitOid.DH_PUBLIC_NUMBER);
    const params = decodeDhDomainParameters(Buffer.from(spki.algorithm.parameters!));
    assert.deepEqual(params.p, getDiffieHellman('modp14').getPrime());
    assert.equal(decodeDhPublicValue(Buffer.from(spki.subjectPublicKey)).length, 256);
    assert.deepEqual(encodeAuthPack(ap), content);
  });

  it("an MIT KDC's PA-PK-AS-REP: DHRepInfo with the SHA-256 KDF and a signed KDCDHKeyInfo; byte-exact round trip", () => {
    const raw = data('mit-kdc-pa-pk-as-rep.der');
    const rep = decodePaPkAsRep(raw);
    assert.equal(rep.kdf, PkinitOid.KDF_SHA256);
    assert.equal(rep.serverDHNonce, undefined);
    assert.deepEqual(encodePaPkAsRep(rep), raw);
    const sd = AsnConvert.parse(AsnConvert.parse(ab(rep.dhSignedData), ContentInfo).content, SignedData);
    assert.equal(sd.encapContentInfo.eContentType, PkinitOid.DH_KEY_DATA);
    const content = Buffer.from(sd.encapContentInfo.eContent!.single!.buffer);
    const keyInfo = decodeKdcDhKeyInfo(content);
    assert.equal(keyInfo.nonce, 0x43455079);
    assert.deepEqual(encodeKdcDhKeyInfo(keyInfo), content);
  });
});

describe('PKINIT messages round-trip', () => {
  it('KRB5PrincipalName, TYPED-DATA with TD-DH-PARAMETERS, DHRepInfo with a server nonce', () => {
    const name = { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] };
    assert.deepEqual(decodeKrb5PrincipalName(encodeKrb5PrincipalName('EXAMPLE.TEST', name)), { realm: 'EXAMPLE.TEST', name });
    const dh = getDiffieHellman('modp14');
    const td = encodeTypedData([{ type: 109, value: encodeTdDhParameters([{ p: dh.getPrime(), g: dh.getGenerator() }]) }]);
    const [t] = decodeTypedData(td);
    assert.equal(t!.type, 109);
    const [alg] = decodeTdDhParameters(t!.value!);
    assert.deepEqual(decodeDhDomainParameters(alg!.parameters!).p, dh.getPrime());
    const rep = { dhSignedData: Buffer.from('3000', 'hex'), serverDHNonce: Buffer.alloc(32, 7) };
    assert.deepEqual(decodePaPkAsRep(encodePaPkAsRep(rep)), rep);
  });

  it('a nonce above 2^31 is sent as MIT does (a negative Int32) and read back', () => {
    const k = { publicValue: Buffer.from([0x80, 1, 2]), nonce: 0xfedcba98 };
    assert.deepEqual(decodeKdcDhKeyInfo(encodeKdcDhKeyInfo(k)), k);
  });
});
