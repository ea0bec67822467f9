/**
 * Two servers of one realm on one PostgreSQL database (docs/servers.md):
 * `init --database` makes the first, `replica-prepare` the second, and
 * then either answers any command and sees what the other wrote; a
 * password changed through one is what the other's KDC checks at once (its
 * principal cache heard the write); the client files name both servers;
 * and with the first server stopped, MIT kinit and kvno keep working
 * through the second, and the dirid client fails over to it through DNS
 * SRV. The first server's API and LDAP accept tickets for the second's
 * HTTP/ and ldap/, which it reads from the directory after it started.
 * The host names one.example.test and two.example.test resolve to
 * 127.0.0.1 for the tools through a private /etc/hosts (a mount namespace
 * per command), never the machine's own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { prepareReplica } from '../../src/server/replica.js';
import { startServer, type RunningServer } from '../../src/server/start.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';
import { startSrvDns } from '../support/srv-dns.js';
import { createDatabase, startPostgres, stopPostgres } from '../support/postgres.js';
import { httpsPost, RpcSession, testHosts } from '../support/rpc-client.js';
import { addActiveUser } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { asReqBody, asWithKeys, asWithPassword, tgsExchange } from '../../src/kerberos/client.js';
import { makeApReq } from '../../src/kerberos/ap-exchange.js';
import { encodeGssChecksum, encodeKrb5Token, GssFlag, Oid, TokId } from '../../src/kerberos/asn1/gss.js';
import { encodeNegTokenInit } from '../../src/kerberos/asn1/spnego.js';
import { armoredAsReq, parseIdpChallenge, processArmored } from '../../src/kerberos/fast-client.js';
import { PaType } from '../../src/kerberos/iana.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { sendUdp } from '../../src/kerberos/transport.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
const PASSWORD = 'Admin-pass-1';

describe('two servers on one PostgreSQL database', () => {
  let tmp: string;
  let one: RunningServer;
  let two: RunningServer;
  let oneStopped = false;
  let idp: TestIdp;
  const d1 = () => join(tmp, 'one');
  const d2 = () => join(tmp, 'two');
  const hosts = () => join(tmp, 'hosts');
  /** a tool with the test's /etc/hosts, in a mount namespace of its own */
  const tool = (cmd: string, args: string[], env: NodeJS.ProcessEnv, input?: string): Promise<ToolResult> =>
    runTool('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', hosts(), cmd, ...args], env, input);
  const env = (): NodeJS.ProcessEnv => ({ KRB5_CONFIG: join(d2(), 'krb5.conf') });
  const session = async (server: RunningServer, host: string) => {
    const s = new RpcSession(`https://${host}:${server.httpsPort}`, readFileSync(join(d1(), 'ca.crt'), 'utf8'));
    const r = await s.login('admin', PASSWORD);
    assert.equal(r.status, 200, r.body);
    return s;
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-servers-'));
    writeFileSync(hosts(), '127.0.0.1 localhost one.example.test two.example.test\n');
    testHosts.set('one.example.test', '127.0.0.1').set('two.example.test', '127.0.0.1');
    idp = await startTestIdp({ accounts: ['flo-sub'] });
    writeFileSync(join(tmp, 'idp-ca.pem'), idp.caPem);
    const database = await createDatabase(await startPostgres(), 'realm');
    await initRealm({ dataDir: d1(), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'one.example.test', adminPassword: PASSWORD, database });
    const ports = { listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {}, idpCaFile: join(tmp, 'idp-ca.pem') };
    one = await startServer({ dataDir: d1(), ...ports });
    await prepareReplica({ dataDir: d1(), hostname: 'two.example.test', out: d2() });
    two = await startServer({ dataDir: d2(), ...ports });
  });
  after(async () => {
    if (!oneStopped) await one?.stop();
    await two?.stop();
    await idp?.stop();
    stopPostgres();
    testHosts.clear();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('init refuses a database that already holds the realm', async () => {
    const conf = readFileSync(join(d1(), 'server.conf'), 'utf8');
    const database = /^database = (.*)$/m.exec(conf)?.[1];
    assert.ok(database, 'server.conf names the database');
    assert.equal(statSync(join(d1(), 'server.conf')).mode & 0o777, 0o600);
    await assert.rejects(initRealm({ dataDir: join(tmp, 'again'), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'one.example.test', adminPassword: PASSWORD, database }), /already holds a realm/);
  });

  it('prepares the second server: its keys, certificate, master key and client files naming both', async () => {
    assert.equal(statSync(join(d2(), 'master.key')).mode & 0o777, 0o600);
    assert.deepEqual(readFileSync(join(d2(), 'master.key')), readFileSync(join(d1(), 'master.key')));
    const keytab = await runTool('klist', ['-k', join(d2(), 'host.keytab')], {});
    assert.match(keytab.stdout, /host\/two\.example\.test@EXAMPLE\.TEST/);
    const verify = await runTool('openssl', ['verify', '-CAfile', join(d1(), 'ca.crt'), join(d2(), 'server.crt')], {});
    assert.match(verify.stdout, /OK/, verify.stderr);
    const subject = await runTool('openssl', ['x509', '-noout', '-ext', 'subjectAltName', '-in', join(d2(), 'server.crt')], {});
    assert.match(subject.stdout, /DNS:two\.example\.test/);
    const kdcCert = await runTool('openssl', ['verify', '-CAfile', join(d1(), 'ca.crt'), join(d2(), 'kdc.crt')], {});
    assert.match(kdcCert.stdout, /OK/, kdcCert.stderr);
    const krb5 = readFileSync(join(d2(), 'krb5.conf'), 'utf8');
    assert.match(krb5, new RegExp(`kdc = two\\.example\\.test:${two.kdcPort}\\n  kdc = one\\.example\\.test:${one.kdcPort}\\n`));
    const zone = readFileSync(join(d2(), 'dns-srv.zone'), 'utf8');
    for (const [server, host] of [[one, 'one'], [two, 'two']] as const) {
      assert.match(zone, new RegExp(`_kerberos\\._udp +3600 IN SRV 0 100 +${server.kdcPort} ${host}\\.example\\.test\\.`));
      assert.match(zone, new RegExp(`_dirid\\._tcp +3600 IN SRV 0 100 +${server.httpsPort} ${host}\\.example\\.test\\.`));
    }
    await assert.rejects(prepareReplica({ dataDir: d1(), hostname: 'two.example.test', out: join(tmp, 'three') }), /already a server or host/);
    // a service already named for the new server's host: refused in words, before any entry is written
    const admin = await session(one, 'one.example.test');
    await admin.call('service_add', ['HTTP/three.example.test'], { force: true });
    await assert.rejects(
      prepareReplica({ dataDir: d1(), hostname: 'three.example.test', out: join(tmp, 'three') }),
      /HTTP\/three\.example\.test@EXAMPLE\.TEST already exists in the realm .*another --hostname/,
    );
    await assert.rejects(admin.call('host_show', ['three.example.test']), /not found/i, 'no host entry left behind');
    await admin.call('service_del', ['HTTP/three.example.test']);
  });

  it('answers any command at either server, each seeing what the other wrote', async () => {
    const a = await session(one, 'one.example.test');
    const b = await session(two, 'two.example.test');
    await b.call('idp_add', ['corp'], { provider: 'keycloak', organization: 'main', base_url: 'kc.example.test', client_id: 'dirid', secret: 'Corp-secret-1' });
    assert.deepEqual((await a.call('idp_show', ['corp'])).result.cn, ['corp']);
    await addActiveUser(a, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'Liddell' });
    assert.deepEqual((await b.call('user_show', ['alice'])).result.uid, ['alice']);
    await b.call('user_mod', ['alice'], { email: ['alice@example.test'] });
    assert.deepEqual((await a.call('user_show', ['alice'])).result.mail, ['alice@example.test']);
    for (const s of [a, b]) assert.match((await s.call('ping')).summary, /server version/);
  });

  it('adds users concurrently through both servers, each with a uidNumber of its own', async () => {
    const a = await session(one, 'one.example.test');
    const b = await session(two, 'two.example.test');
    const names = Array.from({ length: 24 }, (_, i) => `many${i}`);
    await Promise.all(names.map((n, i) => (i % 2 ? a : b).call('user_add', [n], { first: 'Many', last: String(i) })));
    const uids = await Promise.all(names.map(async (n) => (await a.call('user_show', [n])).result.uidnumber[0] as string));
    assert.equal(new Set(uids).size, names.length, `distinct uidNumbers: ${uids.join(' ')}`);
  });

  it("a password set through one server is the one the other's KDC checks at once", async () => {
    const kinit = (password: string) => tool('kinit', ['-c', `FILE:${join(tmp, 'bob.cc')}`, 'bob'], { KRB5_CONFIG: join(tmp, 'krb5-two-only.conf') }, `${password}\n`);
    // the second server's KDC alone
    writeFileSync(join(tmp, 'krb5-two-only.conf'), readFileSync(join(d2(), 'krb5.conf'), 'utf8').replace(/^ *kdc = one\.example\.test:\d+\n/m, ''));
    const a = await session(one, 'one.example.test');
    await addActiveUser(a, 'bob', 'Bob-pass-old1', { first: 'Bob', last: 'Test' });
    const first = await kinit('Bob-pass-old1');
    assert.equal(first.code, 0, first.stderr);
    await a.call('passwd', ['bob', 'Bob-pass-new1']);
    // the administrator's password has expired: the second server's KDC says so for the new one (the keys match), not the old
    const again = await kinit('Bob-pass-new1');
    assert.notEqual(again.code, 0);
    assert.match(again.stdout, /Password expired\.  You must change it now\./, again.stdout + again.stderr);
    const old = await kinit('Bob-pass-old1');
    assert.notEqual(old.code, 0);
    assert.match(old.stderr, /Password incorrect/);
  });

  it("a device-flow login started at one server's KDC completes at the other's: the cookie and the flow travel between them", async () => {
    const a = await session(one, 'one.example.test');
    await a.call('idp_add', ['flows'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid' });
    await a.call('user_add', ['flo'], { first: 'Flo', last: 'Flow' });
    await a.call('user_mod', ['flo'], { user_auth_type: ['idp'], idp: 'flows', idp_user_id: 'flo-sub' });
    const kdcOf = (server: RunningServer) => (m: Buffer) => sendUdp({ host: '127.0.0.1', port: server.kdcPort }, m, [2000, 4000, 12000]);
    const hostKeys = readKeytab(readFileSync(join(d1(), 'host.keytab'))).map((k) => ({ etype: k.etype, value: k.key }));
    const armor = await asWithKeys(kdcOf(one), { nameType: 3, nameString: ['host', 'one.example.test'] }, 'EXAMPLE.TEST', hostKeys);
    const flo = { nameType: 1, nameString: ['flo'] };
    // the challenge from the first server
    let body = asReqBody(flo, 'EXAMPLE.TEST', {});
    let req = armoredAsReq(armor, body, []);
    const first = processArmored(await kdcOf(one)(req.msg), req, body, req.armorKey);
    assert.equal(first.kind, 'error');
    const challenge = first.padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
    const cookie = first.padata.find((p) => p.type === PaType.FX_COOKIE);
    assert.ok(challenge && cookie, 'the first server asks for the device flow, with its cookie');
    await idp.approveDevice(parseIdpChallenge(challenge.value).user_code, 'flo-sub');
    // the answer to the second server
    body = asReqBody(flo, 'EXAMPLE.TEST', {});
    req = armoredAsReq(armor, body, [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie]);
    const answer = processArmored(await kdcOf(two)(req.msg), req, body, req.armorKey);
    assert.equal(answer.kind, 'rep', answer.kind === 'error' ? `KRB-ERROR ${answer.error.errorCode}: ${answer.error.eText ?? ''}` : '');
    if (answer.kind === 'rep') assert.deepEqual(answer.creds.client.nameString, ['flo']);
  });

  it("the first server's API and LDAP accept tickets for the second server's HTTP/ and ldap/, recorded after the first started", async () => {
    // the first server's API, given a ticket for HTTP/two: its names were read from the directory at the first such ticket
    const send = (m: Buffer) => sendUdp({ host: '127.0.0.1', port: one.kdcPort }, m);
    const tgt = await asWithPassword(send, { nameType: 1, nameString: ['alice'] }, 'EXAMPLE.TEST', 'Alice-pass-1');
    const svc = await tgsExchange(send, tgt, { nameType: 3, nameString: ['HTTP', 'two.example.test'] });
    const { apReq } = makeApReq({ ticket: svc.ticket, sessionKey: svc.sessionKey, client: svc.client, crealm: svc.crealm, checksum: { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: GssFlag.MUTUAL }) }, mutual: true });
    const token = encodeNegTokenInit({ mechTypes: [Oid.KRB5], mechToken: encodeKrb5Token(TokId.AP_REQ, apReq) }).toString('base64');
    const url = `https://one.example.test:${one.httpsPort}`;
    const r = await httpsPost(`${url}/dirid/json`, readFileSync(join(d1(), 'ca.crt'), 'utf8'), '{"method":"ping","params":[[],{}],"id":1}', { 'Content-Type': 'application/json', Referer: `${url}/dirid/`, Authorization: `Negotiate ${token}` });
    assert.equal(r.status, 200, r.body);
    assert.match(r.body, /"principal":"alice@EXAMPLE.TEST"/);
    // MIT's ldapwhoami reaching the first server's LDAP port as two.example.test asks for ldap/two
    const cc = `FILE:${join(tmp, 'alice-ldap.cc')}`;
    assert.equal((await tool('kinit', ['-c', cc, 'alice'], env(), 'Alice-pass-1\n')).code, 0);
    const w = await tool('ldapwhoami', ['-Q', '-N', '-Y', 'GSSAPI', '-H', `ldap://two.example.test:${one.ldapPort}`], { ...env(), KRB5CCNAME: cc, HOME: tmp });
    assert.equal(w.code, 0, w.stderr);
    assert.equal(w.stdout.trim(), 'dn:uid=alice,cn=users,cn=accounts,dc=example,dc=test');
  });

  it('keeps Kerberos and the API working through the second server when the first stops', async () => {
    const cc = `FILE:${join(tmp, 'alice.cc')}`;
    await one.stop();
    oneStopped = true;
    const k = await tool('kinit', ['-c', cc, 'alice'], env(), 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const v = await tool('kvno', ['-c', cc, 'HTTP/two.example.test'], env());
    assert.equal(v.code, 0, v.stderr);
    // anonymous PKINIT with the second server's own KDC certificate
    const anon = await tool('kinit', ['-n', '-c', `FILE:${join(tmp, 'anon.cc')}`], env());
    assert.equal(anon.code, 0, anon.stderr);
    // the client's configured server is the stopped one; DNS SRV names the second
    const dns = await startSrvDns([{ name: '_dirid._tcp.example.test', target: 'two.example.test', port: two.httpsPort }]);
    try {
      const conf = join(tmp, 'client.conf');
      writeFileSync(conf, readFileSync(join(d2(), 'default.conf'), 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = https://one.example.test:${one.httpsPort}/dirid/xml`));
      mkdirSync(join(tmp, 'cache'), { recursive: true });
      const r = await tool(process.execPath, [DIRID, '-c', conf, '-v', 'ping'], { ...env(), KRB5CCNAME: cc, DIRID_DNS_SERVER: dns.server, XDG_CACHE_HOME: join(tmp, 'cache') });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`Connection to https://one\\.example\\.test:${one.httpsPort}/dirid/xml failed`));
      assert.match(r.stderr, new RegExp(`trying https://two\\.example\\.test:${two.httpsPort}/dirid/xml`));
      assert.match(r.stdout, /dirid server version/);
      const find = await tool(process.execPath, [DIRID, '-c', conf, 'user-find', 'alice'], { ...env(), KRB5CCNAME: cc, DIRID_DNS_SERVER: dns.server, XDG_CACHE_HOME: join(tmp, 'cache') });
      assert.equal(find.code, 0, find.stderr);
      assert.match(find.stdout, /User login: alice/);
      const idps = await tool(process.execPath, [DIRID, '-c', conf, 'idp-find'], { ...env(), KRB5CCNAME: cc, DIRID_DNS_SERVER: dns.server, XDG_CACHE_HOME: join(tmp, 'cache') });
      assert.equal(idps.code, 0, idps.stderr);
      assert.match(idps.stdout, /IdP reference name: corp/);
    } finally {
      dns.stop();
    }
  });
});
