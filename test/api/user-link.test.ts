/**
 * Linking users to IdP references (specification §2.3, §3 link rows, §4.6,
 * §7 single-value and referenced-entry errors) over both encodings.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';

for (const encoding of ['json', 'xml'] as const) {
  describe(`user links over ${encoding.toUpperCase()}-RPC`, () => {
    let realm: TestRealm;
    let admin: RpcSession;
    const code = rpcError;

    before(async () => {
      ({ realm, admin } = await startAdminRealm({}, encoding));
      for (const name of ['keycloak', 'other']) {
        await admin.call('idp_add', [name], { provider: 'keycloak', organization: 'main', base_url: `${name}.example.test`, client_id: 'c', secret: 's3cret' });
      }
      const u = await admin.call('user_add', ['alice'], { first: 'Alice', last: 'Liddell', email: ['alice@example.test'], password: 'Alice-pass-1' });
      assert.equal(u.summary, 'Added user "alice"');
      assert.deepEqual(u.result.uid, ['alice']);
    });
    after(async () => realm.stop());

    it('links a user: object class dirIdpUser, dirIdpSub and dirIdpConfigLink', async () => {
      const r = await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'keycloak', idp_user_id: 'alice@example.test' });
      assert.equal(r.summary, 'Modified user "alice"');
      assert.deepEqual(r.result.diridpconfiglink, ['keycloak']);
      assert.deepEqual(r.result.diridpsub, ['alice@example.test']);
      assert.deepEqual(r.result.diruserauthtype, ['idp']);
      const all = (await admin.call('user_show', ['alice'], { all: true })).result;
      assert.ok((all.objectclass as string[]).includes('dirIdpUser'));
      assert.deepEqual(all.diridpconfiglink, ['keycloak']);
      const raw = (await admin.call('user_show', ['alice'], { all: true, raw: true })).result;
      assert.deepEqual(raw.diridpconfiglink, ['cn=keycloak,cn=idp,dc=example,dc=test']);
      assert.equal(raw.userpassword, undefined);
    });

    it('refuses a link to an unknown reference, naming it', async () => {
      const e = await code(admin.call('user_mod', ['alice'], { idp: 'nope', idp_user_id: 'x' }));
      assert.equal(e.code, 4001);
      assert.equal(e.message, 'nope: IdP reference not found');
    });

    it('refuses a second link: the attributes are single-valued', async () => {
      const e = await code(admin.call('user_mod', ['alice'], { idp: 'other', idp_user_id: 'alice@example.test' }));
      assert.equal(e.code, 4305);
      assert.equal(e.message, 'dirIdpConfigLink: Only one value allowed.');
      const again = await code(admin.call('user_mod', ['alice'], { addattr: ['dirIdpConfigLink=other'] }));
      assert.equal(again.code, 4305);
      const shown = (await admin.call('user_show', ['alice'])).result;
      assert.deepEqual(shown.diridpconfiglink, ['keycloak'], 'unchanged');
    });

    it('refuses to delete a reference a user links to, changing nothing', async () => {
      const e = await code(admin.call('idp_del', ['keycloak']));
      assert.equal(e.code, 4210);
      assert.equal(e.message, 'This entry is being referenced by other entries: IdP reference "keycloak" is still linked to user alice; change that with user-mod first');
      assert.equal((await admin.call('idp_show', ['keycloak'])).value, 'keycloak');
      assert.deepEqual((await admin.call('user_show', ['alice'])).result.diridpconfiglink, ['keycloak']);
    });

    it('follows a rename of the linked reference', async () => {
      await admin.call('idp_mod', ['keycloak'], { rename: 'kc' });
      assert.deepEqual((await admin.call('user_show', ['alice'])).result.diridpconfiglink, ['kc']);
      const found = await admin.call('user_find', [], { idp: 'kc' });
      assert.equal(found.count, 1);
    });

    it('unlinks with --user-auth-type=password and --delattr, then links again', async () => {
      const r = await admin.call('user_mod', ['alice'], {
        user_auth_type: ['password'],
        delattr: ['dirIdpConfigLink=kc', 'dirIdpSub=alice@example.test'],
      });
      assert.equal(r.result.diridpconfiglink, undefined);
      assert.equal(r.result.diridpsub, undefined);
      assert.deepEqual(r.result.diruserauthtype, ['password']);
      await admin.call('idp_del', ['kc']);
      const relinked = await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'other', idp_user_id: 'A-123' });
      assert.deepEqual(relinked.result.diridpconfiglink, ['other']);
      const byDn = await admin.call('user_mod', ['alice'], {
        delattr: ['dirIdpConfigLink=cn=other,cn=idp,dc=example,dc=test', 'dirIdpSub=A-123'],
      });
      assert.equal(byDn.result.diridpconfiglink, undefined);
    });

    it('needs both halves of a link', async () => {
      assert.equal((await code(admin.call('user_mod', ['alice'], { idp: 'other' }))).message, "'idp_user_id' is required");
      assert.equal((await code(admin.call('user_mod', ['alice'], { idp_user_id: 'x' }))).message, "'idp' is required");
      assert.equal((await code(admin.call('user_mod', ['alice'], { user_auth_type: ['otp'] }))).code, 3009);
    });

    it('finds, disables and deletes users', async () => {
      await admin.call('user_add', ['bob'], { first: 'Bob', last: 'Builder' });
      const found = await admin.call('user_find', ['builder']);
      assert.equal(found.count, 1);
      assert.equal(found.summary, '1 user matched');
      const d = await admin.call('user_mod', ['bob'], { disabled: true });
      assert.deepEqual(d.result.nsaccountlock, [true]);
      assert.equal((await admin.call('user_del', ['bob'])).summary, 'Deleted user "bob"');
      assert.equal((await code(admin.call('user_show', ['bob']))).message, 'bob: user not found');
      assert.equal((await code(admin.call('user_add', ['Bad Name'], { first: 'a', last: 'b' }))).code, 3009);
      assert.equal((await code(admin.call('user_add', ['carol'], { first: 'Carol' }))).message, "'last' is required");
    });
  });
}
