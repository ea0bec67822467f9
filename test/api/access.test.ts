/**
 * The authorization matrix (specification §5.1, §5.2, §7): anonymous callers,
 * ordinary users, users holding the delegated "IdP Administrators" privilege
 * through a role, and admins; sessions; Negotiate endpoints before Kerberos.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';

describe('authorization matrix', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let user: RpcSession;
  let delegate: RpcSession;
  const idpOpts = { client_id: 'c', secret: 'matrix-secret-77', auth_uri: 'https://m.example/a', token_uri: 'https://m.example/t' };

  const err = rpcError;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await addActiveUser(admin, 'ursula', 'Ursula-pass-1', { first: 'Ursula', last: 'User' });
    await addActiveUser(admin, 'dana', 'Dana-pass-123', { first: 'Dana', last: 'Delegate' });
    await admin.call('group_add', ['idp-admins'], { description: 'people who manage IdPs' });
    const gm = await admin.call('group_add_member', ['idp-admins'], { users: ['dana', 'nobody'] });
    assert.equal(gm.completed, 1);
    assert.deepEqual(gm.failed.member.user, [['nobody', 'no such entry']]);
    await admin.call('role_add', ['IdP managers'], { description: 'delegated IdP management' });
    const rp = await admin.call('role_add_privilege', ['IdP managers'], { privileges: ['IdP Administrators'] });
    assert.equal(rp.completed, 1);
    const rm = await admin.call('role_add_member', ['IdP managers'], { groups: ['idp-admins'] });
    assert.equal(rm.completed, 1);
    const shown = await admin.call('role_show', ['IdP managers']);
    assert.deepEqual(shown.result.privilege, ['IdP Administrators']);
    assert.deepEqual(shown.result.member_group, ['idp-admins']);
    await admin.call('idp_add', ['existing'], idpOpts);
    user = new RpcSession(realm.url, realm.ca);
    assert.equal((await user.login('ursula', 'Ursula-pass-1')).status, 200);
    delegate = new RpcSession(realm.url, realm.ca);
    assert.equal((await delegate.login('dana@EXAMPLE.TEST', 'Dana-pass-123')).status, 200);
  });
  after(async () => realm.stop());

  it('anonymous: every call fails with "Insufficient access: not authenticated"', async () => {
    const anon = new RpcSession(realm.url, realm.ca);
    for (const method of ['ping', 'idp_find', 'idp_add', 'user_show']) {
      const r = await anon.raw(method, method === 'user_show' ? ['admin'] : []);
      assert.equal(r.status, 401);
      assert.equal(r.response.error?.message, 'Insufficient access: not authenticated');
      assert.equal(r.response.error?.code, 1001);
    }
    const forged = new RpcSession(realm.url, realm.ca);
    forged.cookie = 'dirid_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    assert.equal((await forged.raw('ping')).status, 401);
  });

  it('wrong passwords and disabled users get no session', async () => {
    const s = new RpcSession(realm.url, realm.ca);
    assert.equal((await s.login('ursula', 'wrong')).status, 401);
    assert.equal((await s.login('nobody', 'whatever1')).status, 401);
    assert.equal(s.cookie, null);
  });

  it('the Negotiate endpoints answer 401 with WWW-Authenticate: Negotiate', async () => {
    for (const enc of ['json', 'xml'] as const) {
      const s = new RpcSession(realm.url, realm.ca, enc);
      s.cookie = admin.cookie;
      const r = await s.raw('ping', [], {}, `/dirid/${enc}`);
      assert.equal(r.status, 401);
      assert.equal(r.http.headers['www-authenticate'], 'Negotiate');
      assert.equal(r.response.error?.message, 'Insufficient access: not authenticated');
    }
  });

  it('ordinary users read references (never the secret) but may not manage them', async () => {
    const shown = await user.call('idp_show', ['existing'], { all: true, raw: true });
    assert.ok(!JSON.stringify(shown).includes('matrix-secret-77'));
    const rights = await user.call('idp_show', ['existing'], { all: true, rights: true });
    assert.equal(rights.result.attributelevelrights.diridpclientid, 'rsc');
    assert.equal((await user.call('idp_find')).count, 1);
    for (const [m, a, o] of [
      ['idp_add', ['mine'], idpOpts],
      ['idp_mod', ['existing'], { scope: 'openid' }],
      ['idp_del', ['existing'], {}],
      ['user_mod', ['ursula'], { idp: 'existing', idp_user_id: 'u' }],
    ] as const) {
      const e = await err(user.call(m, [...a], { ...o }));
      assert.equal(e.code, 2100, m);
      assert.match(e.message, /^Insufficient access/);
    }
    assert.match((await user.call('ping')).summary, /^dirid server version \d+\.\d+\.\d+\. API version \d+\.\d+\.$/);
  });

  it('a delegated user manages IdP references and nothing else', async () => {
    const added = await delegate.call('idp_add', ['delegated'], idpOpts);
    assert.equal(added.summary, 'Added IdP reference "delegated"');
    await delegate.call('idp_mod', ['delegated'], { scope: 'openid' });
    await delegate.call('idp_del', ['delegated']);
    const e = await err(delegate.call('user_add', ['eve'], { first: 'E', last: 'V' }));
    assert.equal(e.code, 2100);
    const g = await err(delegate.call('role_add_member', ['IdP managers'], { users: ['ursula'] }));
    assert.equal(g.code, 2100);
  });

  it('removing the delegation takes the right away', async () => {
    await admin.call('group_remove_member', ['idp-admins'], { users: ['dana'] });
    const e = await err(delegate.call('idp_add', ['late'], idpOpts));
    assert.equal(e.code, 2100);
  });

  it('a disabled account loses its session at once', async () => {
    const temp = new RpcSession(realm.url, realm.ca);
    await addActiveUser(admin, 'tess', 'Tess-pass-123', { first: 'Tess', last: 'T' });
    assert.equal((await temp.login('tess', 'Tess-pass-123')).status, 200);
    assert.equal((await temp.raw('ping')).status, 200);
    await admin.call('user_mod', ['tess'], { disabled: true });
    const r = await temp.raw('ping');
    assert.equal(r.status, 401);
    assert.equal(r.response.error?.message, 'Insufficient access: account disabled');
    await admin.call('user_del', ['tess']);
  });

  it('admins can do everything, and every call is logged as one line without values', async () => {
    await admin.call('idp_add', ['adm'], idpOpts);
    const line = realm.log.find((l) => / rpc request principal=admin@EXAMPLE.TEST command=idp_add .*outcome=ok duration_ms=\d/.test(l));
    assert.ok(line, realm.log.join('\n'));
    const denied = realm.log.find((l) => /principal=ursula@EXAMPLE.TEST command=idp_add .*outcome=ACIError\(2100\)/.test(l));
    assert.ok(denied);
    for (const l of realm.log) {
      assert.ok(!l.includes('matrix-secret-77'), l);
      assert.ok(!l.includes('Ursula-pass-1') && !l.includes('Dana-pass-123'), l);
    }
  });
});
