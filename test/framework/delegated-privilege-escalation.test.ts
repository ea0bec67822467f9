/**
 * A delegated privilege stays what it says and no more. A holder of "User
 * Administrators" may not set the password of a member of admins, disable
 * one, or put another principal's name (krbPrincipalName, e.g. the realm's
 * krbtgt/REALM) on a user, which leaves that name on two entries and the KDC
 * unable to find either; a holder of "Group Administrators" may not change
 * the membership of admins. Each of these would make the delegate an
 * administrator or take the realm's KDC down. FreeIPA's matching permissions
 * exclude the admins group for the same reason.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

const denied = (e: Error & { code?: number }) => e.code === 2100 || e.code === 3009;

describe('delegated privileges do not reach the administrators', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let users: InProcessCaller;
  let groups: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    await admin.call('user_add', ['victim'], { first: 'V', last: 'V' });
    users = await realm.delegate('uadm', 'Uadm-pass-123', 'helpdesk', 'User Administrators');
    groups = await realm.delegate('gadm', 'Gadm-pass-123', 'groupdesk', 'Group Administrators');
  });
  after(async () => realm.close());

  it('a User Administrator still manages ordinary users', async () => {
    await users.call('user_mod', ['victim'], { first: 'Victor' });
  });

  it("a User Administrator may not set an administrator's password", async () => {
    await assert.rejects(users.call('passwd', ['admin', 'Taken-over-1']), denied);
  });

  it('a User Administrator may not disable an administrator', async () => {
    await assert.rejects(users.call('user_mod', ['admin'], { disabled: true }), denied);
  });

  it("a User Administrator may not give a user another principal's name", async () => {
    await assert.rejects(users.call('user_mod', ['victim'], { addattr: ['krbPrincipalName=krbtgt/EXAMPLE.TEST@EXAMPLE.TEST'] }), denied);
    await assert.rejects(users.call('user_mod', ['victim'], { setattr: ['krbPrincipalName=HTTP/localhost@EXAMPLE.TEST'] }), denied);
  });

  it('a Group Administrator may not add members to admins', async () => {
    await assert.rejects(groups.call('group_add_member', ['admins'], { users: ['gadm'] }), denied);
    const shown = await admin.call('group_show', ['admins']);
    assert.deepEqual(shown.result.member_user, ['admin']);
  });
});
