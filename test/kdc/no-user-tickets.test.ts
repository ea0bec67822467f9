/**
 * No ticket is sealed with a key derived from a password ("Kerberoasting"):
 * MIT kvno (TGS) and kinit -S (AS) naming a user as the server are refused
 * with MUST_USE_USER2USER, a user's own name too, and so is a principal that
 * is no service, host or principal of the realm; while kvno of a service
 * and of a host, kinit's TGT, kinit -S kadmin/changepw and MIT kpasswd keep
 * working.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import type { RpcSession } from '../support/rpc-client.js';
import { newRandomKeys } from '../../src/account/keys.js';

const USER2USER_ONLY = /Server principal valid for user2user only/;

describe('tickets are issued for services, hosts and the realm only', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'none.cc')}` };
    await addActiveUser(admin, 'carol', 'Carol-pass-1', { first: 'Carol', last: 'C' });
    await admin.call('service_add', ['HTTP/web.example.test'], { force: true });
    await admin.call('host_add', ['client1.example.test']);
  });
  after(async () => realm.stop());

  const cc = (name: string) => `FILE:${join(realm.dataDir, `${name}.cc`)}`;
  const kvno = (ccName: string, service: string) => runTool('kvno', ['-c', cc(ccName), service], env);
  const klist = (ccName: string) => runTool('klist', ['-c', cc(ccName)], env);
  const logged = (re: RegExp) => realm.log.some((l) => re.test(l));

  it('kinit gets a user a TGT; kvno of a user (another one or oneself) is refused and caches nothing', async () => {
    const k = await runTool('kinit', ['-c', cc('carol'), 'carol'], env, 'Carol-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    assert.match((await klist('carol')).stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
    for (const user of ['admin', 'admin@EXAMPLE.TEST', 'carol']) {
      const v = await kvno('carol', user);
      assert.notEqual(v.code, 0, `kvno ${user}: ${v.stdout}`);
      assert.match(v.stderr, USER2USER_ONLY);
    }
    assert.doesNotMatch((await klist('carol')).stdout, /^\S+\s+\S+\s+\S+\s+\S+\s+(admin|carol)@EXAMPLE\.TEST$/m);
    assert.ok(logged(/kdc tgs_req transport=udp client=carol@EXAMPLE\.TEST server=admin@EXAMPLE\.TEST outcome=KDC_ERR_MUST_USE_USER2USER reason="admin@EXAMPLE\.TEST is a user: no ticket is issued for it"/));
  });

  it('kinit -S naming a user (AS) is refused, before any password is asked for', async () => {
    const k = await runTool('kinit', ['-c', cc('carol-as'), '-S', 'admin@EXAMPLE.TEST', 'carol'], env, 'Carol-pass-1\n');
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, USER2USER_ONLY);
    assert.doesNotMatch(k.stdout, /Password for/);
    assert.ok(logged(/kdc as_req transport=udp client=carol@EXAMPLE\.TEST server=admin@EXAMPLE\.TEST outcome=KDC_ERR_MUST_USE_USER2USER/));
  });

  it('a principal that is no service, host or principal of the realm is refused too', async () => {
    const name = 'nfs/stray.example.test@EXAMPLE.TEST';
    await realm.server.dir.batch([
      { kind: 'add', dn: `krbPrincipalName=${name},cn=etc,dc=example,dc=test`, attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: newRandomKeys() } },
    ]);
    const v = await kvno('carol', name);
    assert.notEqual(v.code, 0);
    assert.match(v.stderr, USER2USER_ONLY);
    assert.ok(logged(/server=nfs\/stray\.example\.test@EXAMPLE\.TEST outcome=KDC_ERR_MUST_USE_USER2USER reason="nfs\/stray\.example\.test@EXAMPLE\.TEST is no service, host or principal of the realm/));
  });

  it('kvno of a service, of a host and of the server\'s HTTP/ still works, and kinit -S of a service', async () => {
    for (const service of ['HTTP/web.example.test', 'host/client1.example.test', 'HTTP/localhost', 'host/localhost']) {
      const v = await kvno('carol', service);
      assert.equal(v.code, 0, `${service}: ${v.stderr}`);
      assert.match(v.stdout, new RegExp(`${service.replace(/\./g, '\\.')}@EXAMPLE\\.TEST: kvno = \\d+`));
    }
    const k = await runTool('kinit', ['-c', cc('carol-web'), '-S', 'HTTP/web.example.test', 'carol'], env, 'Carol-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    assert.match((await klist('carol-web')).stdout, /HTTP\/web\.example\.test@EXAMPLE\.TEST/);
  });

  it('kinit -S kadmin/changepw and MIT kpasswd still work (the password service\'s ticket comes from AS)', async () => {
    const k = await runTool('kinit', ['-c', cc('carol-changepw'), '-S', 'kadmin/changepw', 'carol'], env, 'Carol-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    assert.match((await klist('carol-changepw')).stdout, /kadmin\/changepw@EXAMPLE\.TEST/);
    const p = await runTool('kpasswd', ['carol'], env, 'Carol-pass-1\nCarol-new-234\nCarol-new-234\n');
    assert.equal(p.code, 0, p.stdout + p.stderr);
    assert.match(p.stdout, /Password changed\./);
    assert.equal((await runTool('kinit', ['-c', cc('carol'), 'carol'], env, 'Carol-new-234\n')).code, 0);
  });
});
