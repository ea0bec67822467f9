/**
 * Changing one's own password over the API asks for the current one, as
 * FreeIPA's passwd does (its current_password): a session cookie or a ticket
 * cache left behind (a forwarded TGT, an unlocked console) must not be enough
 * to take the account over. The password service on 464 asks the same of
 * Kerberos clients through the INITIAL flag (docs/kpasswd.md).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

describe('passwd of one\'s own password', () => {
  let realm: TestRealm;
  let bob: RpcSession;

  before(async () => {
    let admin: RpcSession;
    ({ realm, admin } = await startAdminRealm());
    await addActiveUser(admin, 'bob', 'Bob-pass-123', { first: 'B', last: 'B' });
    bob = new RpcSession(realm.url, realm.ca);
    assert.equal((await bob.login('bob', 'Bob-pass-123')).status, 200);
  });
  after(async () => realm.stop());

  it('is refused without the current password, and the old password still logs in', async () => {
    await assert.rejects(bob.call('passwd', ['bob', 'Stolen-pw-99']));
    const again = new RpcSession(realm.url, realm.ca);
    assert.equal((await again.login('bob', 'Bob-pass-123')).status, 200);
  });
});
