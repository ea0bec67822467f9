/**
 * passwd's current_password: changing one's own password over the API
 * takes the current one, checked by the password login rule (objects/login.ts):
 * missing, it is required; wrong, it is refused with a reason that says so
 * and counted like a failed login (the realm's lockout included); right, the
 * change goes through. An administrator's own password is no exception;
 * another user's password set by an administrator needs none, and has
 * expired: its user chooses a new one at the first login.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, ADMIN_PASSWORD, changeOwnPassword, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

describe("passwd's current password", () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let carol: RpcSession;
  const failures = async () => (await admin.call('user_show', ['carol'], { all: true })).result.krbloginfailedcount as string[] | undefined;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await addActiveUser(admin, 'carol', 'Carol-pass-1', { first: 'C', last: 'C' });
    carol = new RpcSession(realm.url, realm.ca);
    assert.equal((await carol.login('carol', 'Carol-pass-1')).status, 200);
  });
  after(async () => realm.stop());

  it('missing: required', async () => {
    await assert.rejects(carol.call('passwd', [null, 'Carol-pass-2']), (e: Error & { code?: number }) => e.code === 3007 && /'current_password' is required/.test(e.message));
  });

  it('wrong: refused as such and counted as a failed login; the password stays', async () => {
    await assert.rejects(
      carol.call('passwd', ['carol', 'Carol-pass-2'], { current_password: 'Carol-wrong-1' }),
      (e: Error & { code?: number }) => e.code === 2100 && e.message === 'Insufficient access: the current password is wrong',
    );
    assert.deepEqual(await failures(), ['1']);
    assert.equal((await new RpcSession(realm.url, realm.ca).login('carol', 'Carol-pass-1')).status, 200);
    assert.deepEqual(await failures(), ['0'], 'the right password resets the count');
  });

  it('right: changed, and the new password logs in', async () => {
    const r = await carol.call('passwd', [null, 'Carol-pass-2'], { current_password: 'Carol-pass-1' });
    assert.equal(r.summary, 'Changed password for "carol@EXAMPLE.TEST"');
    assert.equal((await new RpcSession(realm.url, realm.ca).login('carol', 'Carol-pass-2')).status, 200);
    assert.notEqual((await new RpcSession(realm.url, realm.ca).login('carol', 'Carol-pass-1')).status, 200);
  });

  it("an administrator's own password needs the current one too; another user's does not", async () => {
    await assert.rejects(admin.call('passwd', ['admin', 'Admin-pass-new1']), (e: Error & { code?: number }) => e.code === 3007);
    await admin.call('passwd', ['admin', 'Admin-pass-new1'], { current_password: ADMIN_PASSWORD });
    // the change ended every session of admin's, this one too (docs/access.md): a new login
    assert.equal((await admin.login('admin', 'Admin-pass-new1')).status, 200);
    await admin.call('passwd', ['carol', 'Carol-pass-3']);
    const expired = await new RpcSession(realm.url, realm.ca).login('carol', 'Carol-pass-3');
    assert.equal(expired.headers['x-dirid-rejection-reason'], 'password-expired');
    assert.equal((await changeOwnPassword(admin, 'carol', 'Carol-pass-3', 'Carol-pass-4')).headers['x-dirid-pwchange-result'], 'ok');
    assert.equal((await new RpcSession(realm.url, realm.ca).login('carol', 'Carol-pass-4')).status, 200);
  });
});
