/**
 * Kerberos-authenticated API (HTTP Negotiate with SPNEGO): curl --negotiate
 * with a ticket from MIT kinit, the session login, mutual authentication,
 * replayed tokens, and callers without tickets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { httpsPost, RpcSession } from '../support/rpc-client.js';
import { asWithPassword, tgsExchange } from '../../src/kerberos/client.js';
import { sendUdp } from '../../src/kerberos/transport.js';
import { makeApReq, verifyApRep } from '../../src/kerberos/ap-exchange.js';
import { decodeKrb5Token, encodeGssChecksum, encodeKrb5Token, GssFlag, Oid, TokId } from '../../src/kerberos/asn1/gss.js';
import { decodeNegTokenResp, encodeNegTokenInit } from '../../src/kerberos/asn1/spnego.js';

describe('Negotiate (SPNEGO) on the API', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  const body = '{"method":"ping","params":[[],{}],"id":7}';
  before(async () => {
    realm = await startTestRealm();
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'cc')}` };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await addActiveUser(admin, 'bob', 'Bob-password-1', { first: 'Bob', last: 'B' });
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
  });
  after(async () => realm.stop());

  const curl = (path: string, extra: string[] = [], e = env) =>
    runTool('curl', ['-s', '-S', '-i', '--negotiate', '-u', ':', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-H', `Referer: ${realm.url}/dirid/`, '-H', 'Content-Type: application/json', '--data-binary', body, ...extra, `${realm.url}${path}`], e);

  it('curl --negotiate with a ticket from MIT kinit calls ping', async () => {
    const r = await curl('/dirid/json');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^HTTP\/1\.1 200/m);
    assert.match(r.stdout, /WWW-Authenticate: Negotiate [A-Za-z0-9+/=]+/, 'mutual authentication token');
    const json = JSON.parse(r.stdout.slice(r.stdout.indexOf('\r\n\r\n') + 4)) as { result: { summary: string }; principal: string };
    assert.equal(json.principal, 'admin@EXAMPLE.TEST');
    assert.match(json.result.summary, /^dirid server version \d+\.\d+\.\d+\. API version \d+\.\d+\.$/);
    assert.ok(realm.log.some((l) => /rpc request principal=admin@EXAMPLE.TEST command=ping encoding=json outcome=ok/.test(l)));
  });

  it('login_kerberos gives a session cookie the session endpoints accept', async () => {
    const r = await curl('/dirid/session/login_kerberos', ['-c', join(realm.dataDir, 'cookies.txt')]);
    assert.match(r.stdout, /^HTTP\/1\.1 200/m);
    assert.match(r.stdout, /Set-Cookie: dirid_session=[^;]+; Path=\/dirid; Max-Age=\d+; Secure; HttpOnly; SameSite=Strict/);
    const s = await runTool('curl', ['-s', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-b', join(realm.dataDir, 'cookies.txt'), '-H', `Referer: ${realm.url}/dirid/`, '--data-binary', body, `${realm.url}/dirid/session/json`], env);
    assert.match(s.stdout, /"principal":"admin@EXAMPLE.TEST"/);
  });

  it('without a ticket the answer is 401 and "Insufficient access: not authenticated"', async () => {
    const r = await curl('/dirid/json', [], { ...env, KRB5CCNAME: `FILE:${join(realm.dataDir, 'no-such-cc')}` });
    assert.match(r.stdout, /^HTTP\/1\.1 401/m);
    assert.match(r.stdout, /WWW-Authenticate: Negotiate\r?\n/);
    assert.match(r.stdout, /"message":"Insufficient access: not authenticated"/);
  });

  it('verifies mutual authentication and refuses a replayed token', async () => {
    const send = (m: Buffer) => sendUdp({ host: '127.0.0.1', port: realm.server.kdcPort }, m);
    const tgt = await asWithPassword(send, { nameType: 1, nameString: ['bob'] }, 'EXAMPLE.TEST', 'Bob-password-1');
    const svc = await tgsExchange(send, tgt, { nameType: 2, nameString: ['HTTP', 'localhost'] });
    const { apReq, ctime, cusec } = makeApReq({
      ticket: svc.ticket,
      sessionKey: svc.sessionKey,
      client: svc.client,
      crealm: svc.crealm,
      checksum: { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: GssFlag.MUTUAL | GssFlag.INTEG }) },
      mutual: true,
    });
    const token = encodeNegTokenInit({ mechTypes: [Oid.KRB5], mechToken: encodeKrb5Token(TokId.AP_REQ, apReq) }).toString('base64');
    const headers = { 'Content-Type': 'application/json', Referer: `${realm.url}/dirid/`, Authorization: `Negotiate ${token}` };
    const first = await httpsPost(`${realm.url}/dirid/json`, realm.ca, body, headers);
    assert.equal(first.status, 200);
    assert.match(first.body, /"principal":"bob@EXAMPLE.TEST"/);
    const resp = decodeNegTokenResp(Buffer.from(String(first.headers['www-authenticate']).slice('Negotiate '.length), 'base64'));
    assert.equal(resp.negState, 0);
    const rep = decodeKrb5Token(resp.responseToken!);
    assert.equal(rep.tokId, TokId.AP_REP);
    verifyApRep(rep.message, svc.sessionKey, ctime, cusec);
    const again = await httpsPost(`${realm.url}/dirid/json`, realm.ca, body, headers);
    assert.equal(again.status, 401, 'a replayed token is refused');
    assert.ok(realm.log.some((l) => /login method=negotiate outcome=denied reason=".*replay/.test(l)));
    const garbage = await httpsPost(`${realm.url}/dirid/json`, realm.ca, body, { ...headers, Authorization: 'Negotiate YWJjZGVm' });
    assert.equal(garbage.status, 401);
  });
});
