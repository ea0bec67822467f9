/**
 * Anonymous PKINIT (RFC 4556, RFC 8062; docs/kerberos.md): MIT `kinit -n`
 * with the realm's krb5.conf (pkinit_anchors = the realm CA) gets a TGT for
 * WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS; that TGT armors `kinit -T` for a
 * password user, and by default (idp_anonymous_armor = deny) starts no IdP
 * user's device-flow login (test/kdc/idp-start-limits.test.ts runs one where
 * the realm allows it); it gets no service
 * ticket (kvno), and the API and LDAP never take the anonymous principal as
 * an account. A small client of our own checks the KDC's answer field by
 * field (signature, key derivations, PA-PKINIT-KX) and sends spoiled
 * requests, each answered with its KRB-ERROR. The KDC certificate is
 * issued at init with the PKINIT key purpose and id-pkinit-san, and a realm
 * without one gets one when its server starts.
 */
import 'reflect-metadata';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { addActiveUser, startAdminRealm, startTestRealm, type TestRealm } from '../support/realm.js';
import { idpReference, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { runTool } from '../support/mit-tools.js';
import { pty } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { anonymousRequest, processAnonymousReply, type AnonymousRequestOptions } from '../support/pkinit-client.js';
import { sendTcp } from '../../src/kerberos/transport.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodePaDataList } from '../../src/kerberos/asn1/primitives.js';
import { parseDer } from '../../src/kerberos/asn1/der.js';
import { decodeDhDomainParameters, decodeKrb5PrincipalName, decodeTdDhParameters, decodeTypedData, PkinitOid, TypedDataType } from '../../src/kerberos/asn1/pkinit.js';
import { ErrorCode, PaType } from '../../src/kerberos/iana.js';
import { tgsExchange } from '../../src/kerberos/client.js';
import { kerberosLogin, AuthRefusal } from '../../src/objects/login.js';
import { Accounts } from '../../src/account/state.js';
import { startServer } from '../../src/server/start.js';

const REALM = 'EXAMPLE.TEST';

describe('anonymous PKINIT with MIT kinit -n', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let anon: string;

  before(async () => {
    idp = await startTestIdp({ accounts: ['dora-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `pkinit-idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'default.cc')}` };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await addActiveUser(admin, 'carol', 'Carol-pass-1', { first: 'Carol', last: 'C' });
    await admin.call('idp_add', ['testidp'], idpReference(idp, 'openid email'));
    await admin.call('user_add', ['dora'], { first: 'Dora', last: 'D' });
    await admin.call('user_mod', ['dora'], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: 'dora-sub' });
    await addActiveUser(admin, 'erin', 'Erin-pass-12', { first: 'Erin', last: 'E' });
    await admin.call('user_mod', ['erin'], { user_auth_type: ['idp', 'password'], idp: 'testidp', idp_user_id: 'erin-sub' });
    anon = `FILE:${join(realm.dataDir, 'anon.cc')}`;
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  it('krb5.conf names the realm CA as pkinit_anchors; the KDC key is private', () => {
    const data = join(realm.dataDir, 'realm');
    assert.match(readFileSync(join(data, 'krb5.conf'), 'utf8'), new RegExp(`\\n  pkinit_anchors = FILE:${join(data, 'ca.crt').replace(/[.]/g, '\\.')}\\n`));
    assert.equal(statSync(join(data, 'kdc.key')).mode & 0o777, 0o600);
  });

  it('kinit -n gets a TGT for WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS, flagged anonymous', async () => {
    const r = await runTool('kinit', ['-n', '-c', anon], env);
    assert.equal(r.code, 0, r.stderr);
    const l = await runTool('klist', ['-f', '-c', anon], env);
    assert.match(l.stdout, /Default principal: WELLKNOWN\/ANONYMOUS@WELLKNOWN:ANONYMOUS/);
    assert.match(l.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\n\s+Flags: IAa\b/);
    assert.ok(realm.log.some((x) => / kdc as_req .*client=WELLKNOWN\/ANONYMOUS@WELLKNOWN:ANONYMOUS .*outcome=ISSUE .*preauth="pkinit anonymous \(modp14, kdf 1\.3\.6\.1\.5\.2\.3\.6\.2\)"/.test(x)), realm.log.join('\n'));
  });

  it('the anonymous TGT gets no service ticket (kvno): KDC policy', async () => {
    const r = await runTool('kvno', ['-c', anon, 'HTTP/localhost'], env);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /KDC policy rejects request/);
    assert.ok(realm.log.some((x) => / kdc tgs_req .*client=WELLKNOWN\/ANONYMOUS@WELLKNOWN:ANONYMOUS .*outcome=KDC_ERR_POLICY/.test(x)));
  });

  it('armors kinit -T for a password user (encrypted challenge)', async () => {
    const cc = `FILE:${join(realm.dataDir, 'carol.cc')}`;
    const r = await runTool('kinit', ['-T', anon, '-c', cc, 'carol'], env, 'Carol-pass-1\n');
    assert.equal(r.code, 0, r.stderr);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.match(l.stdout, /Default principal: carol@EXAMPLE\.TEST/);
    assert.match(l.stdout, /pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 138/);
    assert.equal((await runTool('kvno', ['-c', cc, 'HTTP/localhost'], env)).code, 0);
  });

  it('starts no IdP login under anonymous armor by default (idp_anonymous_armor = deny): "KDC policy rejects request", the IdP not asked', async () => {
    assert.match(readFileSync(join(realm.dataDir, 'realm', 'server.conf'), 'utf8'), /^idp_anonymous_armor = deny$/m);
    const before = idp.stats().requests['/device/auth'] ?? 0;
    const r = await pty(`kinit -T ${anon} -c FILE:${join(realm.dataDir, 'dora.cc')} dora`, env, () => {});
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.out, /press ENTER/);
    assert.match(r.out, /kinit: KDC policy rejects request while getting initial credentials/);
    assert.equal((idp.stats().requests['/device/auth'] ?? 0) - before, 0, 'a device authorization was asked for');
    assert.ok(realm.log.some((x) => /client=dora@EXAMPLE.TEST .*outcome=KDC_ERR_POLICY .*preauth="idp: not started: anonymous armor \(kinit -n\) may not start IdP logins in this realm/.test(x)), realm.log.join('\n'));
  });

  it('a linked user who also has a password is asked for it under anonymous armor, and logs in with it', async () => {
    const cc = `FILE:${join(realm.dataDir, 'erin.cc')}`;
    const r = await runTool('kinit', ['-T', anon, '-c', cc, 'erin'], env, 'Erin-pass-12\n');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /Authenticate/);
    assert.match((await runTool('klist', ['-C', '-c', cc], env)).stdout, /pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 138/);
  });
});

describe('anonymous PKINIT, field by field', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  const send = (m: Buffer) => sendTcp({ host: '127.0.0.1', port: realm.server.kdcPort }, m);
  const request = (o: Partial<AnonymousRequestOptions> = {}) => anonymousRequest({ realm: REALM, ...o });

  /** The KRB-ERROR a spoiled request gets: its code, e-text and e-data. */
  async function refusal(o: Partial<AnonymousRequestOptions>): Promise<{ code: number; eText: string; eData?: Buffer | undefined }> {
    const raw = await send(request(o).msg);
    const e = decodeKrbError(raw);
    return { code: e.errorCode, eText: e.eText ?? '', eData: e.eData };
  }

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
  });
  after(async () => realm?.stop());

  it('answers with a reply signed by the KDC certificate, issued by the realm CA for krbtgt/REALM', async () => {
    const req = request({ kdfs: [PkinitOid.KDF_SHA256] });
    const res = processAnonymousReply(await send(req.msg), req);
    assert.equal(res.kdf, PkinitOid.KDF_SHA256);
    assert.equal(res.creds.crealm, 'WELLKNOWN:ANONYMOUS');
    assert.deepEqual(res.creds.client.nameString, ['WELLKNOWN', 'ANONYMOUS']);
    const cert = new x509.X509Certificate(res.signerCertificate);
    const ca = new x509.X509Certificate(realm.ca);
    assert.ok(await cert.verify({ publicKey: ca.publicKey, signatureOnly: true }), 'issued by the realm CA');
    assert.deepEqual([...(cert.getExtension(x509.ExtendedKeyUsageExtension)?.usages ?? [])], [PkinitOid.KP_KDC]);
    const san = cert.getExtension(x509.SubjectAlternativeNameExtension)!;
    const sanDer = Buffer.from(san.value);
    const at = sanDer.indexOf(Buffer.from('06062b0601050202', 'hex'));
    assert.ok(at > 0, 'an id-pkinit-san otherName');
    // [0] EXPLICIT KRB5PrincipalName after the type id
    const value = parseDer(sanDer.subarray(at + 8, at + 8 + 2 + sanDer[at + 9]!));
    assert.deepEqual(decodeKrb5PrincipalName(value.children[0]!), { realm: REALM, name: { nameType: 2, nameString: ['krbtgt', REALM] } });
  });

  it('octetstring2key with both DH nonces when the client offers no KDF; paChecksum2 accepted', async () => {
    const req = request({ dhNonce: true, paChecksum2: { digest: 'sha256', oid: '2.16.840.1.101.3.4.2.1' } });
    const res = processAnonymousReply(await send(req.msg), req);
    assert.equal(res.kdf, undefined);
    assert.equal(res.serverDHNonce?.length, 32);
    assert.ok(realm.log.some((x) => /preauth="pkinit anonymous \(modp14, octetstring2key\)"/.test(x)));
  });

  it('the 4096-bit group works too', async () => {
    const req = request({ group: 'modp16', kdfs: [PkinitOid.KDF_SHA512] });
    assert.equal(processAnonymousReply(await send(req.msg), req).kdf, PkinitOid.KDF_SHA512);
  });

  it('the anonymous TGT gets no service ticket from our own client either', async () => {
    const req = request();
    const { creds } = processAnonymousReply(await send(req.msg), req);
    await assert.rejects(tgsExchange(send, creds, { nameType: 2, nameString: ['HTTP', 'localhost'] }), (e: Error & { code?: number }) => e.code === ErrorCode.KDC_ERR_POLICY && /only as FAST armor/.test(e.message));
  });

  it('without PA-PK-AS-REQ: PREAUTH_REQUIRED offering PKINIT and PA-PKINIT-KX', async () => {
    const req = request();
    const { encodeKdcReq } = await import('../../src/kerberos/asn1/kdc-req.js');
    const { MsgType } = await import('../../src/kerberos/iana.js');
    const e = decodeKrbError(await send(encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [], body: req.body })));
    assert.equal(e.errorCode, ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const types = decodePaDataList(parseDer(e.eData!)).map((p) => p.type);
    assert.ok(types.includes(PaType.PK_AS_REQ) && types.includes(PaType.PKINIT_KX), String(types));
  });

  it('an unsupported group: DH_KEY_PARAMETERS_NOT_ACCEPTED with TD-DH-PARAMETERS listing groups 14 and 16', async () => {
    const r = await refusal({ group: 'modp2' });
    assert.equal(r.code, ErrorCode.KDC_ERR_DH_KEY_PARAMETERS_NOT_ACCEPTED);
    const td = decodeTypedData(r.eData!);
    assert.equal(td[0]!.type, TypedDataType.TD_DH_PARAMETERS);
    const groups = decodeTdDhParameters(td[0]!.value!);
    assert.deepEqual(groups.map((g) => g.algorithm), [PkinitOid.DH_PUBLIC_NUMBER, PkinitOid.DH_PUBLIC_NUMBER]);
    assert.deepEqual(groups.map((g) => decodeDhDomainParameters(g.parameters!).p.length * 8), [2048, 4096]);
  });

  it('spoiled requests each get their KRB-ERROR, and the KDC keeps answering', async () => {
    const cases: Array<[string, Partial<AnonymousRequestOptions>, number, RegExp]> = [
      ['garbage PA-PK-AS-REQ', { rawPaValue: Buffer.from('30030201ff', 'hex') }, ErrorCode.KDC_ERR_PREAUTH_FAILED, /malformed PA-PK-AS-REQ/],
      ['not DER at all', { rawPaValue: Buffer.from('not asn.1') }, ErrorCode.KDC_ERR_PREAUTH_FAILED, /malformed PA-PK-AS-REQ/],
      ['another nonce', { nonce: 12345 }, ErrorCode.KDC_ERR_PREAUTH_FAILED, /nonce/],
      ['a wrong paChecksum', { paChecksum: Buffer.alloc(20) }, ErrorCode.KRB_AP_ERR_MODIFIED, /checksum/],
      ['no paChecksum', { paChecksum: null }, ErrorCode.KDC_ERR_PA_CHECKSUM_MUST_BE_INCLUDED, /no checksum/],
      ['a wrong paChecksum2', { paChecksum2: { digest: 'sha256', oid: '2.16.840.1.101.3.4.2.1', wrong: true } }, ErrorCode.KRB_AP_ERR_MODIFIED, /paChecksum2/],
      ['a stale PKAuthenticator', { ctime: new Date(Date.now() - 3600_000) }, ErrorCode.KRB_AP_ERR_SKEW, /skew/],
      ['a public value of 1', { publicValue: Buffer.from([1]) }, ErrorCode.KDC_ERR_PREAUTH_FAILED, /out of range/],
      ['no public value', { noPublicValue: true }, ErrorCode.KDC_ERR_PREAUTH_FAILED, /Diffie-Hellman/],
      ['a signed AuthPack (certificate PKINIT)', { signed: true }, ErrorCode.KDC_ERR_CLIENT_NOT_TRUSTED, /client certificate is not supported/],
      ['a service other than krbtgt', { sname: { nameType: 2, nameString: ['HTTP', 'localhost'] } }, ErrorCode.KDC_ERR_POLICY, /only for a TGT/],
      ['anonymity asked for a named client', { cname: { nameType: 1, nameString: ['admin'] } }, ErrorCode.KDC_ERR_BADOPTION, /only to the client WELLKNOWN\/ANONYMOUS/],
      ['certificate PKINIT for a named client', { cname: { nameType: 1, nameString: ['admin'] }, requestAnonymous: false }, ErrorCode.KDC_ERR_CLIENT_NOT_TRUSTED, /client certificate is not supported/],
    ];
    for (const [what, o, code, text] of cases) {
      const r = await refusal(o);
      assert.equal(r.code, code, `${what}: ${r.code} ${r.eText}`);
      assert.match(r.eText, text, what);
    }
    assert.ok(!realm.log.some((x) => /internal_error|internal error/.test(x)), 'no internal error');
    const req = request();
    assert.ok(processAnonymousReply(await send(req.msg), req).creds);
  });

  it('the API and LDAP never take the anonymous principal for an account, even one of that name', async () => {
    await admin.call('service_add', ['WELLKNOWN/ANONYMOUS@EXAMPLE.TEST'], {}).catch(() => undefined);
    const accounts = new Accounts(realm.server.dir);
    for (const name of ['WELLKNOWN/ANONYMOUS@WELLKNOWN:ANONYMOUS', 'WELLKNOWN/ANONYMOUS@EXAMPLE.TEST']) {
      const r = await kerberosLogin(accounts, name);
      assert.ok(r instanceof AuthRefusal, name);
      assert.match(r.message, /anonymous, not an account/);
    }
  });
});

describe('the KDC certificate of a realm made before anonymous PKINIT', () => {
  it('is issued when the server starts, and kinit -n then works', async () => {
    const realm = await startTestRealm();
    try {
      const data = join(realm.dataDir, 'realm');
      await realm.server.stop();
      rmSync(join(data, 'kdc.crt'));
      rmSync(join(data, 'kdc.key'));
      const log: string[] = [];
      const server = await startServer({ dataDir: data, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => log.push(l) });
      try {
        assert.equal(statSync(join(data, 'kdc.key')).mode & 0o777, 0o600);
        const env = { KRB5_CONFIG: join(data, 'krb5.conf') };
        const r = await runTool('kinit', ['-n', '-c', `FILE:${join(realm.dataDir, 'anon.cc')}`], env);
        assert.equal(r.code, 0, r.stderr);
      } finally {
        await server.stop();
      }
    } finally {
      await realm.stop();
    }
  });
});
