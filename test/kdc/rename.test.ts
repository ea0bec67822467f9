/**
 * A renamed user (user-mod --rename) gets the new principal and keeps the
 * old one as an alias, as FreeIPA does (issue 32 item 6): MIT kinit takes
 * the same password under the new name (the keys keep the salt of the old
 * one, which the KDC sends in ETYPE-INFO2) and under the old one, a keytab
 * and a TGT made under the old name keep working, and once an
 * administrator removes the alias the old name is unknown.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import type { RpcSession } from '../support/rpc-client.js';

describe('a renamed user', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
  });
  after(async () => realm?.stop());

  const cc = (name: string) => `FILE:${join(realm.dataDir, `${name}.cc`)}`;
  const kinit = (user: string, password: string, cache = user) => runTool('kinit', ['-c', cc(cache), user], env, `${password}\n`);

  it('logs in under the new name with the same password, and under the old one, an alias, until an administrator removes it', async () => {
    await addActiveUser(admin, 'carol', 'Carol-pass-1');
    const keytab = join(realm.dataDir, 'carol.keytab');
    const kt = await runTool('ktutil', [], env, `add_entry -password -p carol@EXAMPLE.TEST -k 2 -e aes256-cts-hmac-sha1-96\nCarol-pass-1\nwrite_kt ${keytab}\nquit\n`);
    assert.equal(kt.code, 0, kt.stdout + kt.stderr);
    assert.equal((await kinit('carol', 'Carol-pass-1', 'before')).code, 0);

    const r = await admin.call('user_mod', ['carol'], { rename: 'dave' });
    assert.equal(r.summary, 'Modified user "dave"');
    const shown = (await admin.call('user_show', ['dave'], { all: true })).result;
    assert.deepEqual(shown.krbprincipalname, ['dave@EXAMPLE.TEST', 'carol@EXAMPLE.TEST']);

    const k = await kinit('dave', 'Carol-pass-1');
    assert.equal(k.code, 0, k.stderr);
    assert.match((await runTool('klist', ['-c', cc('dave')], env)).stdout, /Default principal: dave@EXAMPLE\.TEST/);
    const old = await kinit('carol', 'Carol-pass-1');
    assert.equal(old.code, 0, old.stderr);
    const fromKeytab = await runTool('kinit', ['-k', '-t', keytab, '-c', cc('keytab'), 'carol@EXAMPLE.TEST'], env);
    assert.equal(fromKeytab.code, 0, fromKeytab.stderr);
    // a TGT got under the old name before the rename still gets service tickets
    const kvno = await runTool('kvno', ['-c', cc('before'), 'host/localhost'], env);
    assert.equal(kvno.code, 0, kvno.stderr);

    await admin.call('user_mod', ['dave'], { delattr: ['krbprincipalname=carol@EXAMPLE.TEST'] });
    const gone = await kinit('carol', 'Carol-pass-1');
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /not found in Kerberos database/);
    assert.equal((await kinit('dave', 'Carol-pass-1')).code, 0);
  });

  it('a new user may not take a name a renamed user keeps as an alias', async () => {
    await addActiveUser(admin, 'erin', 'Erin-pass-1');
    await admin.call('user_mod', ['erin'], { rename: 'erica' });
    await assert.rejects(admin.call('user_add', ['erin'], { first: 'Other', last: 'Erin' }), /principal name "erin@EXAMPLE\.TEST" is already held by user "erica"/);
  });
});
