/**
 * `dirid join`'s enrolment against a real server (host_enroll): as an
 * administrator with the Kerberos ticket of KRB5CCNAME (Negotiate, the
 * server's answer authenticated) or a password, a missing host added and
 * its keys given again on the next call; with the host's one-time
 * password alone, once. The answer brings the realm's servers and CA; a
 * wrong password, a spent one-time password or no ticket is refused with
 * the server's words.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { enrolHost } from '../../src/cli/join-enrol.js';
import { RpcSession } from '../support/rpc-client.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { CliError } from '../../src/cli/errors.js';

describe('dirid join: the host enrolled through the API', () => {
  let realm: TestRealm;
  const saved = { KRB5_CONFIG: process.env.KRB5_CONFIG, KRB5CCNAME: process.env.KRB5CCNAME };
  before(async () => {
    realm = await startTestRealm();
    process.env.KRB5_CONFIG = join(realm.dataDir, 'realm', 'krb5.conf');
    process.env.KRB5CCNAME = `FILE:${join(realm.dataDir, 'admin.cc')}`;
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await realm?.stop();
  });

  const api = () => `${realm.url}/dirid/json`;
  const principals = (keytab: Buffer) => [...new Set(readKeytab(keytab).map((e) => `${e.components.join('/')}@${e.realm}`))];

  it("with the administrator's Kerberos ticket: a missing host added, its keys, the realm's servers and CA; new keys the next time", async () => {
    const k = await runTool('kinit', ['admin'], { KRB5_CONFIG: process.env.KRB5_CONFIG!, KRB5CCNAME: process.env.KRB5CCNAME! }, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
    const first = await enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'web.example.test', { kind: 'kerberos' });
    assert.deepEqual(principals(first.keytab), ['host/web.example.test@EXAMPLE.TEST']);
    assert.equal(first.realm, 'EXAMPLE.TEST');
    assert.equal(first.baseDn, 'dc=example,dc=test');
    assert.equal(first.servers[0]?.kdcPort, realm.server.kdcPort);
    assert.equal(first.servers[0]?.ldapPort, realm.server.ldapPort);
    assert.equal(first.caPem.trim(), realm.ca.trim());
    const again = await enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'web.example.test', { kind: 'kerberos' });
    assert.equal(again.kvno, first.kvno + 1);
  });

  it('with a password: the same; a wrong password is refused', async () => {
    const e = await enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'db.example.test', { kind: 'password', principal: 'admin', password: realm.adminPassword });
    assert.deepEqual(principals(e.keytab), ['host/db.example.test@EXAMPLE.TEST']);
    await assert.rejects(enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'db.example.test', { kind: 'password', principal: 'admin', password: 'not-the-password' }), (err: unknown) => err instanceof CliError && /password|credentials/i.test(err.message));
  });

  it("with the host's one-time password alone: once", async () => {
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    const added = (await admin.call('host_add', ['otp.example.test'], { random: true })) as { result: { randompassword?: string } };
    const otp = added.result.randompassword!;
    assert.ok(otp);
    const e = await enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'otp.example.test', { kind: 'otp', password: otp });
    assert.deepEqual(principals(e.keytab), ['host/otp.example.test@EXAMPLE.TEST']);
    await assert.rejects(enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'otp.example.test', { kind: 'otp', password: otp }), (err: unknown) => err instanceof CliError && /one-time password is wrong, used already or not set/.test(err.message));
  });

  it('without a ticket: "not authenticated"', async () => {
    process.env.KRB5CCNAME = `FILE:${join(realm.dataDir, 'none.cc')}`;
    await assert.rejects(enrolHost(api(), realm.ca, 'EXAMPLE.TEST', 'other.example.test', { kind: 'kerberos' }), (e: unknown) => e instanceof CliError && /not authenticated|kinit/i.test(e.message));
  });
});
