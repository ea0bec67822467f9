/**
 * Authentication indicators (docs/kerberos.md): MIT kinit with a password
 * earns none, the same password under FAST armor (kinit -T, encrypted
 * challenge) earns "hardened"; a service that requires indicators
 * (service-add/service-mod --auth-ind) gets tickets only for TGTs with one
 * of them, and MIT kvno shows the KDC's policy refusal. The encoding is
 * checked on tickets MIT kinit and kvno stored: AD-IF-RELEVANT, AD-CAMMAC
 * with a KDC verifier under the krbtgt key over the ticket part and a
 * service verifier under the service key, AD-AUTHENTICATION-INDICATOR.
 * Indicators cross renewal (kinit -R); a TGT whose KDC verifier is spoiled
 * loses them. MIT's own GSS-API acceptor (gss-server) reports them as the
 * name attribute auth-indicators. The device-flow login (MIT kinit -T with
 * SSSD's idp plugin) earns "idp", which our Negotiate acceptor logs and
 * `dirid -v ping` shows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { idpReference, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { kinitViaIdp } from '../support/pty.js';
import { freeUdpPort } from '../support/mit-realm.js';
import { loadCcacheFile } from '../../src/kerberos/ccache.js';
import { findCredentials } from '../../src/kerberos/ccache-credentials.js';
import { tgsExchange, KrbClientError } from '../../src/kerberos/client.js';
import { decodeAdIfRelevant } from '../../src/kerberos/asn1/ad.js';
import { decodeAdCammac, encodeAdCammac, decodeAuthIndicators } from '../../src/kerberos/asn1/cammac.js';
import { der } from '../../src/kerberos/asn1/der.js';
import { encodeAuthData } from '../../src/kerberos/asn1/primitives.js';
import { decodeEncTicketPart, encodeEncTicketPart, encodeTicket, type EncTicketPart, type Ticket } from '../../src/kerberos/asn1/ticket.js';
import { profile, type EncryptionKey } from '../../src/kerberos/crypto/index.js';
import { AdType, ErrorCode, KeyUsage } from '../../src/kerberos/iana.js';
import { kdcVerifiedIndicators, serviceVerifiedIndicators } from '../../src/kerberos/auth-indicators.js';
import { keyFor, PrincipalDb } from '../../src/kdc/principals.js';

const REALM = 'EXAMPLE.TEST';
const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('authentication indicators', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let armor: string;
  let db: PrincipalDb;
  const cc = (name: string) => join(realm.dataDir, `${name}.cc`);
  const kinit = (args: string[], ccName: string, password = 'Carol-pass-12') => runTool('kinit', ['-c', `FILE:${cc(ccName)}`, ...args, 'carol'], env, `${password}\n`);
  const kvno = (ccName: string, service: string) => runTool('kvno', ['-c', `FILE:${cc(ccName)}`, `${service}@${REALM}`], env);

  /** The newest key of `principal` of the enctype a ticket was sealed with. */
  async function keyOf(principal: string, etype: number): Promise<EncryptionKey> {
    const p = await db.find(`${principal}@${REALM}`);
    const k = p && keyFor(p, etype);
    assert.ok(k, `${principal} has a key of enctype ${etype}`);
    return { etype, value: k.key };
  }

  /** The ticket part of the credentials for `service` in a cache, decrypted with the service's key. */
  async function ticketPart(ccName: string, service: string): Promise<{ etp: EncTicketPart; key: EncryptionKey; ticket: Ticket }> {
    const creds = findCredentials(loadCcacheFile(cc(ccName)), `${service}@${REALM}`);
    assert.ok(creds, `${service} in ${ccName}`);
    const key = await keyOf(service, creds.ticket.encPart.etype);
    return { etp: decodeEncTicketPart(profile(key.etype).decrypt(key, KeyUsage.TICKET, creds.ticket.encPart.cipher)), key, ticket: creds.ticket };
  }

  const krbtgtKeys = async () => {
    const p = await db.find(`krbtgt/${REALM}@${REALM}`);
    return (kvno: number | undefined, etype: number) => {
      const k = p!.keys.find((x) => x.etype === etype && (kvno === undefined || x.kvno === kvno));
      return k && { etype, value: k.key };
    };
  };

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    db = new PrincipalDb(realm.server.dir, REALM);
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf') };
    await addActiveUser(admin, 'carol', 'Carol-pass-12', { first: 'Carol', last: 'C' });
    await admin.call('service_add', ['HTTP/plain.example.test'], { force: true });
    await admin.call('service_add', ['HTTP/strong.example.test'], { auth_ind: ['hardened'], force: true });
    await admin.call('service_add', ['HTTP/federated.example.test'], { auth_ind: ['idp'], force: true });
    armor = await hostArmor(realm, env);
  });
  after(async () => realm?.stop());

  it('service-add --auth-ind stores the requirement; service-show labels it; service-mod changes it', async () => {
    const shown = await admin.call('service_show', ['HTTP/strong.example.test']);
    assert.deepEqual(shown.result.krbprincipalauthind, ['hardened']);
    await admin.call('service_add', ['HTTP/later.example.test'], { force: true });
    const mod = await admin.call('service_mod', ['HTTP/later.example.test'], { auth_ind: ['idp', 'hardened'] });
    assert.equal(mod.summary, 'Modified service "HTTP/later.example.test@EXAMPLE.TEST"');
    assert.deepEqual([...mod.result.krbprincipalauthind].sort(), ['hardened', 'idp']);
    await assert.rejects(admin.call('service_mod', ['HTTP/later.example.test'], { auth_ind: ['otp'] }), /auth_ind.*must be one of 'hardened', 'idp', 'pkinit'/);
    await assert.rejects(admin.call('service_mod', ['HTTP/later.example.test'], { rename: 'HTTP/other.example.test' }), /Unknown option: rename|unknown option/i);
    await assert.rejects(admin.call('service_mod', ['HTTP/later.example.test'], { setattr: ['krbPrincipalName=HTTP/other.example.test@EXAMPLE.TEST'] }), /'principal' cannot be changed/);
    await admin.call('service_mod', ['HTTP/later.example.test'], { delattr: ['krbPrincipalAuthInd'] });
    assert.equal((await admin.call('service_show', ['HTTP/later.example.test'])).result.krbprincipalauthind, undefined);
    // the command line: the option and the label
    const conf = join(realm.dataDir, 'realm', 'default.conf');
    writeFileSync(conf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = ${realm.url}/dirid/xml`));
    const cliEnv = { ...env, KRB5CCNAME: `FILE:${cc('admin')}`, XDG_CACHE_HOME: join(realm.dataDir, 'cache'), HOME: realm.dataDir };
    assert.equal((await runTool('kinit', ['admin'], cliEnv, `${realm.adminPassword}\n`)).code, 0);
    const m = await runTool(process.execPath, [DIRID, '-c', conf, 'service-mod', 'HTTP/later.example.test', '--auth-ind=idp', '--auth-ind=pkinit'], cliEnv);
    assert.equal(m.code, 0, m.stderr);
    assert.match(m.stdout, /^ {2}Authentication Indicators: idp, pkinit$/m);
    const s = await runTool(process.execPath, [DIRID, '-c', conf, 'service-show', 'HTTP/later.example.test'], cliEnv);
    assert.match(s.stdout, /^ {2}Principal name: HTTP\/later\.example\.test@EXAMPLE\.TEST\n {2}Authentication Indicators: idp, pkinit\n$/m);
  });

  it('a password without FAST earns no indicator: a service requiring one refuses it, with MIT\'s message', async () => {
    const k = await kinit([], 'bare');
    assert.equal(k.code, 0, k.stderr);
    assert.equal((await kvno('bare', 'HTTP/plain.example.test')).code, 0);
    const v = await kvno('bare', 'HTTP/strong.example.test');
    assert.notEqual(v.code, 0);
    assert.match(v.stderr, /KDC policy rejects request while getting credentials for HTTP\/strong\.example\.test@EXAMPLE\.TEST/);
    assert.ok(realm.log.some((l) => /kdc tgs_req .*server=HTTP\/strong\.example\.test@EXAMPLE\.TEST outcome=KDC_ERR_POLICY .*authind="none; required hardened"/.test(l)), realm.log.filter((l) => l.includes('strong')).join('\n'));
    const { etp } = await ticketPart('bare', 'HTTP/plain.example.test');
    assert.equal(etp.authorizationData, undefined, 'no authorization data at all');
  });

  it('the same password under FAST armor earns "hardened", carried into the service ticket', async () => {
    const k = await kinit(['-T', armor], 'armored');
    assert.equal(k.code, 0, k.stderr);
    assert.ok(realm.log.some((l) => /kdc as_req .*client=carol@EXAMPLE\.TEST .*outcome=ISSUE .*preauth=encrypted-challenge authind=hardened/.test(l)), realm.log.filter((l) => l.includes('carol')).join('\n'));
    const v = await kvno('armored', 'HTTP/strong.example.test');
    assert.equal(v.code, 0, v.stderr);
    assert.notEqual((await kvno('armored', 'HTTP/federated.example.test')).code, 0, 'hardened is not idp');
  });

  it('encodes them as MIT does: IF-RELEVANT, CAMMAC with both verifiers, AUTHENTICATION-INDICATOR', async () => {
    const { etp, key } = await ticketPart('armored', 'HTTP/strong.example.test');
    assert.equal(etp.authorizationData?.length, 1);
    const [ifRelevant] = etp.authorizationData!;
    assert.equal(ifRelevant!.type, AdType.IF_RELEVANT);
    const inner = decodeAdIfRelevant(ifRelevant!.data);
    assert.equal(inner.length, 1);
    assert.equal(inner[0]!.type, AdType.CAMMAC);
    const cammac = decodeAdCammac(inner[0]!.data);
    assert.deepEqual(encodeAdCammac(cammac), inner[0]!.data, 'the CAMMAC round-trips byte for byte');
    // elements: one AD-AUTHENTICATION-INDICATOR, a SEQUENCE OF UTF8String
    assert.deepEqual(cammac.elements, [{ type: 97, data: Buffer.from('300a0c0868617264656e6564', 'hex') }]);
    assert.deepEqual(decodeAuthIndicators(cammac.elements[0]!.data), ['hardened']);
    // the service verifier: no key name, a checksum of the DER elements under the service key, usage 64
    const svc = cammac.svcVerifier!;
    assert.equal(svc.identifier, undefined);
    assert.equal(svc.kvno, undefined);
    assert.equal(svc.mac.type, profile(key.etype).checksumType);
    assert.deepEqual(svc.mac.value, profile(key.etype).checksum(key, 64, der(encodeAuthData(cammac.elements))));
    // the KDC verifier: the krbtgt key's version, a checksum under that key over the ticket part with the elements as its authorization data
    const krbtgt = await db.find(`krbtgt/${REALM}@${REALM}`);
    const kdc = cammac.kdcVerifier!;
    const tgtKey = krbtgt!.keys.find((k) => k.etype === 18)!;
    assert.equal(kdc.kvno, tgtKey.kvno);
    assert.equal(kdc.enctype, undefined);
    assert.equal(kdc.mac.type, 16, 'hmac-sha1-96-aes256: the krbtgt key MIT would pick first');
    const covered = encodeEncTicketPart({ ...etp, authorizationData: cammac.elements });
    assert.deepEqual(kdc.mac.value, profile(18).checksum({ etype: 18, value: tgtKey.key }, 64, covered));
    // and the library's own readings agree
    assert.deepEqual(serviceVerifiedIndicators(etp, key), { indicators: ['hardened'], dropped: 0 });
    assert.deepEqual(kdcVerifiedIndicators(etp, await krbtgtKeys()), { indicators: ['hardened'], dropped: 0 });
    assert.deepEqual(serviceVerifiedIndicators(etp, { etype: key.etype, value: Buffer.alloc(key.value.length, 1) }), { indicators: [], dropped: 1 }, 'another key does not verify');
  });

  it('the TGT carries them too, and they cross renewal (kinit -R)', async () => {
    const k = await kinit(['-T', armor, '-l', '1h', '-r', '2h'], 'renew');
    assert.equal(k.code, 0, k.stderr);
    const before = await ticketPart('renew', `krbtgt/${REALM}`);
    assert.deepEqual(kdcVerifiedIndicators(before.etp, await krbtgtKeys()).indicators, ['hardened']);
    await new Promise((r) => setTimeout(r, 1100));
    const r = await runTool('kinit', ['-R', '-c', `FILE:${cc('renew')}`], env);
    assert.equal(r.code, 0, r.stderr);
    const after = await ticketPart('renew', `krbtgt/${REALM}`);
    assert.notDeepEqual(after.etp.starttime, before.etp.starttime, 'a renewed TGT');
    assert.deepEqual(kdcVerifiedIndicators(after.etp, await krbtgtKeys()), { indicators: ['hardened'], dropped: 0 }, 'a fresh KDC verifier over the renewed ticket');
    assert.equal((await kvno('renew', 'HTTP/strong.example.test')).code, 0);
  });

  it('a TGT whose KDC verifier does not check out loses its indicators (dropped, as MIT does), so a service requiring them refuses it', async () => {
    const creds = findCredentials(loadCcacheFile(cc('armored')), `krbtgt/${REALM}@${REALM}`)!;
    const key = await keyOf(`krbtgt/${REALM}`, creds.ticket.encPart.etype);
    const etp = decodeEncTicketPart(profile(key.etype).decrypt(key, KeyUsage.TICKET, creds.ticket.encPart.cipher));
    const cammac = decodeAdCammac(decodeAdIfRelevant(etp.authorizationData![0]!.data)[0]!.data);
    cammac.kdcVerifier!.mac.value = Buffer.from(cammac.kdcVerifier!.mac.value);
    cammac.kdcVerifier!.mac.value[0]! ^= 1;
    const spoiled: EncTicketPart = { ...etp, authorizationData: [{ type: AdType.IF_RELEVANT, data: der(encodeAuthData([{ type: AdType.CAMMAC, data: encodeAdCammac(cammac) }])) }] };
    const t = { realm: creds.ticket.realm, sname: creds.ticket.sname, encPart: { ...creds.ticket.encPart, cipher: profile(key.etype).encrypt(key, KeyUsage.TICKET, encodeEncTicketPart(spoiled)) } };
    const tgt = { ...creds, ticket: { ...t, raw: encodeTicket(t) } };
    const send = async (m: Buffer) => (await realm.server.kdc.handle(m, 'udp'))!;
    const sname = (s: string) => ({ nameType: 2, nameString: s.split('/') });
    await assert.rejects(tgsExchange(send, tgt, sname('HTTP/strong.example.test')), (e: unknown) => e instanceof KrbClientError && e.code === ErrorCode.KDC_ERR_POLICY && /Required auth indicators not present in ticket: hardened/.test(e.krbError?.eText ?? ''));
    assert.ok(realm.log.some((l) => /authind="none; required hardened; dropped 1 CAMMAC\(s\) that do not verify"/.test(l)), realm.log.slice(-3).join('\n'));
    const plain = await tgsExchange(send, tgt, sname('HTTP/plain.example.test'));
    const svcKey = await keyOf('HTTP/plain.example.test', plain.ticket.encPart.etype);
    const issued = decodeEncTicketPart(profile(svcKey.etype).decrypt(svcKey, KeyUsage.TICKET, plain.ticket.encPart.cipher));
    assert.equal(issued.authorizationData, undefined, 'the service ticket carries no indicators');
    // the unspoiled TGT still works
    await tgsExchange(send, creds, sname('HTTP/strong.example.test'));
  });

  it('a ticket for the service itself straight from the AS exchange is held to the same rule (kinit -S)', async () => {
    const bare = await kinit(['-S', `HTTP/strong.example.test@${REALM}`], 'as-bare');
    assert.notEqual(bare.code, 0);
    assert.match(bare.stderr, /KDC policy rejects request/);
    const armored = await kinit(['-T', armor, '-S', `HTTP/strong.example.test@${REALM}`], 'as-armored');
    assert.equal(armored.code, 0, armored.stderr);
    const { etp, key } = await ticketPart('as-armored', 'HTTP/strong.example.test');
    assert.deepEqual(serviceVerifiedIndicators(etp, key).indicators, ['hardened']);
  });

  it("MIT's GSS-API acceptor (gss-server) reports them as the name attribute auth-indicators", async () => {
    await admin.call('service_add', ['gssind/localhost']);
    const kt = join(realm.dataDir, 'gssind.keytab');
    writeFileSync(kt, (await admin.call('keytab_get', ['gssind/localhost'])).result.keytab as Buffer);
    const port = await freeUdpPort();
    const server = spawn('gss-server', ['-port', String(port), '-once', '-keytab', kt, 'gssind@localhost'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    server.stdout.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise((r) => server.once('exit', r));
    try {
      let c;
      for (let i = 0; i < 50; i++) {
        c = await runTool('gss-client', ['-port', String(port), 'localhost', 'gssind@localhost', 'hello'], { ...env, KRB5CCNAME: `FILE:${cc('armored')}` });
        if (!/connect|Connection refused/i.test(c.stderr)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(c!.code, 0, c!.stderr + c!.stdout);
      await exited;
      // the attribute's value, printed in hex: "hardened"
      assert.match(out, /^Attribute auth-indicators Authenticated Complete\n\n\n\n68617264656e6564\n/m, out);
    } finally {
      server.kill();
    }
  });
});

describe('authentication indicators of an IdP login', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  const ccFile = () => join(realm.dataDir, 'alice.cc');

  before(async () => {
    idp = await startTestIdp({ accounts: ['alice-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `authind-idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf'), KRB5CCNAME: `FILE:${ccFile()}` };
    await admin.call('idp_add', ['testidp'], idpReference(idp, 'openid email'));
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'L' });
    await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: 'alice-sub' });
    await admin.call('service_add', ['HTTP/federated.example.test'], { auth_ind: ['idp'], force: true });
    await admin.call('service_add', ['HTTP/strong.example.test'], { auth_ind: ['hardened'], force: true });
    const armor = await hostArmor(realm, env);
    const k = await kinitViaIdp({ idp, armor, env }, 'alice', 'alice-sub', `FILE:${ccFile()}`);
    assert.equal(k.code, 0, k.out);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  it('the device-flow login earns "idp": accepted where idp is required, refused where hardened is', async () => {
    assert.ok(realm.log.some((l) => /kdc as_req .*client=alice@EXAMPLE\.TEST .*outcome=ISSUE .*preauth="idp: .*" authind=idp/.test(l)), realm.log.filter((l) => l.includes('alice')).join('\n'));
    const ok = await runTool('kvno', [`HTTP/federated.example.test@${REALM}`], env);
    assert.equal(ok.code, 0, ok.stderr);
    const refused = await runTool('kvno', [`HTTP/strong.example.test@${REALM}`], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /KDC policy rejects request/);
  });

  it('the Negotiate acceptor logs them (curl --negotiate), and ping returns them from the session', async () => {
    const r = await runTool('curl', ['-s', '-S', '--negotiate', '-u', ':', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-H', `Referer: ${realm.url}/dirid/`, '-H', 'Content-Type: application/json', '--data-binary', '{"method":"ping","params":[[],{}],"id":1}', `${realm.url}/dirid/json`], env);
    assert.equal(r.code, 0, r.stderr);
    const json = JSON.parse(r.stdout) as { result: { result: { principal: string; auth_indicators: string[] } } };
    assert.deepEqual(json.result.result, { principal: 'alice@EXAMPLE.TEST', auth_indicators: ['idp'] });
    assert.ok(realm.log.some((l) => /login method=negotiate principal=alice@EXAMPLE\.TEST outcome=ok auth_indicators=idp$/.test(l)), realm.log.filter((l) => l.includes('login')).join('\n'));
  });

  it('dirid -v ping shows them, also when the call rides on the session cookie', async () => {
    const conf = join(realm.dataDir, 'realm', 'default.conf');
    writeFileSync(conf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = ${realm.url}/dirid/xml`));
    const cliEnv = { ...env, XDG_CACHE_HOME: join(realm.dataDir, 'cache'), HOME: realm.dataDir };
    const negotiations = () => realm.log.filter((l) => /login method=negotiate principal=alice@/.test(l)).length;
    const before = negotiations();
    for (let i = 0; i < 2; i++) {
      // the first run authenticates with Negotiate (its schema call) and keeps the cookie; the second runs on the cookie
      const r = await runTool(process.execPath, [DIRID, '-c', conf, '-v', 'ping'], cliEnv);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^-+\ndirid server version \d+\.\d+\.\d+\. API version \d+\.\d+\.\n-+\n$/);
      assert.match(r.stderr, /^dirid: INFO: Authenticated as alice@EXAMPLE\.TEST, authentication indicators: idp$/m);
    }
    assert.ok(realm.log.filter((l) => /rpc request principal=alice@EXAMPLE\.TEST command=ping encoding=\w+ outcome=ok/.test(l)).length >= 2);
    assert.equal(negotiations(), before + 1, 'one Negotiate login (the schema call); both pings ran on its session cookie');
    // without -v, ping prints its one line and nothing else
    const quiet = await runTool(process.execPath, [DIRID, '-c', conf, 'ping'], cliEnv);
    assert.equal(quiet.stderr, '');
  });

  it('an admin whose ticket came from a bare password has none, and ping -v says so', async () => {
    const adminCc = `FILE:${join(realm.dataDir, 'admin.cc')}`;
    assert.equal((await runTool('kinit', ['-c', adminCc, 'admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const conf = join(realm.dataDir, 'realm', 'default.conf');
    const r = await runTool(process.execPath, [DIRID, '-c', conf, '-v', 'ping'], { ...env, KRB5CCNAME: adminCc, XDG_CACHE_HOME: join(realm.dataDir, 'cache-admin'), HOME: realm.dataDir });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /^dirid: INFO: Authenticated as admin@EXAMPLE\.TEST, authentication indicators: none$/m);
    assert.ok(realm.log.some((l) => /login method=negotiate principal=admin@EXAMPLE\.TEST outcome=ok auth_indicators=-$/.test(l)));
  });
});
