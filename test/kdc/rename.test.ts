/**
 * A renamed user (user-mod --rename) logs in under the new name with the
 * same password, through MIT kinit, and no longer under the old one: the
 * principal name follows the login, the keys keep their salt.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';

describe('a renamed user', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    realm = await startTestRealm();
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
  });
  after(async () => realm.stop());

  const kinit = (user: string, password: string) => runTool('kinit', ['-c', `FILE:${join(realm.dataDir, `${user}.cc`)}`, user], env, `${password}\n`);

  it('gets tickets under the new name with the old password, and none under the old name', async () => {
    await admin.call('user_add', ['carol'], { first: 'Carol', last: 'Test', password: 'Carol-pass-1' });
    assert.equal((await kinit('carol', 'Carol-pass-1')).code, 0);
    const r = await admin.call('user_mod', ['carol'], { rename: 'dave' });
    assert.equal(r.summary, 'Modified user "dave"');
    const shown = (await admin.call('user_show', ['dave'], { all: true })).result;
    assert.deepEqual(shown.krbprincipalname, [`dave@EXAMPLE.TEST`]);
    const k = await kinit('dave', 'Carol-pass-1');
    assert.equal(k.code, 0, k.stderr);
    const list = await runTool('klist', ['-c', `FILE:${join(realm.dataDir, 'dave.cc')}`], env);
    assert.match(list.stdout, new RegExp(`Default principal: dave@EXAMPLE.TEST`));
    const old = await kinit('carol', 'Carol-pass-1');
    assert.notEqual(old.code, 0);
    assert.match(old.stderr, /not found in Kerberos database/);
  });
});
