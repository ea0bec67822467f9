/**
 * An X-mod option given an empty value removes what it sets (`--email=`,
 * "" or [] on the wire), as FreeIPA's commands do; a required attribute is
 * refused instead, a secret or a flag never takes an empty value, and an
 * add keeps refusing empty values. Through the API and the `dirid` CLI.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';
import { runTool } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('an empty value clears an X-mod option', () => {
  let realm: TestRealm;
  let admin: RpcSession;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await admin.call('idp_add', ['corp'], { client_id: 'c', secret: 'mod-clear-secret', auth_uri: 'https://idp.example.test/auth', token_uri: 'https://idp.example.test/token', scope: 'openid email' });
    await admin.call('user_add', ['clara'], { first: 'Clara', last: 'Clear', email: 'clara@example.test', shell: '/bin/zsh' });
  });
  after(async () => realm.stop());

  const show = async (name: string) => (await admin.call('user_show', [name], { all: true, raw: true })).result as Record<string, string[] | undefined>;

  it('removes an optional attribute, given "" or [] over the wire', async () => {
    await admin.call('user_mod', ['clara'], { email: '' });
    assert.equal((await show('clara')).mail, undefined);
    await admin.call('idp_mod', ['corp'], { scope: [] });
    assert.equal(((await admin.call('idp_show', ['corp'], { all: true, raw: true })).result as Record<string, unknown>).diridpscope, undefined);
  });

  it('refuses to empty a required attribute, a secret or a flag, and an add with an empty value', async () => {
    const e = await rpcError(admin.call('user_mod', ['clara'], { first: '' }));
    assert.equal([e.code, e.message].join(' '), "3007 'first' is required");
    assert.deepEqual((await show('clara')).givenname, ['Clara']);
    assert.match((await rpcError(admin.call('idp_mod', ['corp'], { secret: '' }))).message, /must not be empty/);
    assert.match((await rpcError(admin.call('user_add', ['cleo'], { first: 'Cleo', last: 'C', email: '' }))).message, /invalid 'email': must not be empty/);
  });

  it('unlinks a user with --idp= --idp-user-id= from the dirid CLI, and clears --shell=', async () => {
    await admin.call('user_mod', ['clara'], { user_auth_type: ['idp'], idp: 'corp', idp_user_id: 'clara-sub' });
    const env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'admin-clear.cc')}`, XDG_CACHE_HOME: join(realm.dataDir, 'cache-clear') };
    assert.equal((await runTool('kinit', ['admin'], { ...process.env, ...env }, `${realm.adminPassword}\n`)).code, 0);
    const conf = join(realm.dataDir, 'realm', 'default.conf');
    const r = await runTool(process.execPath, [DIRID, '-c', conf, 'user-mod', 'clara', '--user-auth-type=password', '--idp=', '--idp-user-id=', '--shell='], { ...process.env, ...env });
    assert.equal(r.code, 0, r.stderr);
    const u = await show('clara');
    assert.deepEqual([u.diridpconfiglink, u.diridpsub, u.loginshell, u.diruserauthtype], [undefined, undefined, undefined, ['password']]);
    assert.ok(!(u.objectclass ?? []).map((c) => c.toLowerCase()).includes('diridpuser'), 'the link object class leaves with the link');
  });
});
