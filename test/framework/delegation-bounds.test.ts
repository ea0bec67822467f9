/**
 * How far a delegated privilege reaches (framework/access.ts mayActOn): a
 * delegate writes only entries that hold no more than the delegate. A
 * holder of User Administrators may not rename, delete, unlock or set the
 * password of a member of admins (nested membership included), nor of a
 * user whose roles grant a privilege the holder lacks; a holder of Group
 * Administrators may not remove members from admins, add them through
 * --addattr member=, rename or delete it, nor change a group that grants a
 * privilege the holder lacks. --rights says so. Administrators keep every
 * power, and the password of a user changed by someone else needs no
 * current password. In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantRole } from '../support/caller.js';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

const aci = (what: RegExp) => (e: Error & { code?: number }) => e.code === 2100 && what.test(e.message);

describe('delegation reaches no one who holds more', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let users: InProcessCaller;
  let groups: InProcessCaller;
  const groupDn = (name: string) => `cn=${name},cn=groups,cn=accounts,dc=example,dc=test`;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    for (const [login, password] of [['uadm', 'Uadm-pass-123'], ['gadm', 'Gadm-pass-123'], ['nested', 'Nested-pass-1'], ['idpadm', 'Idpadm-pass-1'], ['plain', 'Plain-pass-12']]) {
      await realm.addActiveUser(login, password, { first: 'F', last: 'L' });
    }
    // nested is an administrator through a group inside admins
    await admin.call('group_add', ['ops'], {});
    await admin.call('group_add_member', ['ops'], { users: ['nested'] });
    await admin.call('group_add_member', ['admins'], { groups: ['ops'] });
    // idpadm holds IdP Administrators through the group idpers
    await admin.call('group_add', ['idpers'], {});
    await admin.call('group_add_member', ['idpers'], { users: ['idpadm'] });
    await grantRole(admin, 'idp-role', 'IdP Administrators', { groups: ['idpers'] });
    await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
    await grantRole(admin, 'groupdesk', 'Group Administrators', { users: ['gadm'] });
    await admin.call('group_add', ['plainers'], {});
    users = await realm.login('uadm', 'Uadm-pass-123');
    groups = await realm.login('gadm', 'Gadm-pass-123');
  });
  after(async () => realm.close());

  it('a User Administrator may not rename, delete or unlock a member of admins, nor set its password', async () => {
    const admins = /user "admin" holds administrator rights \(the admins group\): only administrators may change it/;
    await assert.rejects(users.call('user_mod', ['admin'], { rename: 'boss' }), aci(admins));
    await assert.rejects(users.call('user_del', ['admin']), aci(admins));
    await assert.rejects(users.call('user_unlock', ['admin']), aci(admins));
    await assert.rejects(users.call('passwd', ['nested', 'Taken-over-1']), aci(/user "nested" holds administrator rights/));
    await assert.rejects(users.call('user_mod', ['nested'], { first: 'X' }), aci(/user "nested"/));
    assert.equal((await admin.call('user_show', ['admin'])).value, 'admin');
  });

  it('a User Administrator may not change a user holding a privilege they lack; they may change one holding only theirs', async () => {
    await assert.rejects(users.call('passwd', ['idpadm', 'Taken-over-1']), aci(/user "idpadm" holds a privilege you do not hold \("idp administrators"\)/));
    await assert.rejects(users.call('user_mod', ['idpadm'], { disabled: true }), aci(/user "idpadm"/));
    await users.call('passwd', ['plain', 'Plain-pass-new1']);
    await users.call('user_mod', ['plain'], { disabled: true });
    await users.call('user_unlock', ['plain']);
  });

  it('--rights shows no write rights on what the delegate may not change', async () => {
    const onAdmin = await users.call('user_show', ['admin'], { all: true, rights: true });
    assert.equal(onAdmin.result.attributelevelrights.givenname, 'rsc');
    const onPlain = await users.call('user_show', ['plain'], { all: true, rights: true });
    assert.equal(onPlain.result.attributelevelrights.givenname, 'rscwo');
  });

  it('a Group Administrator may not remove members from admins, add them through --addattr, rename or delete it', async () => {
    const admins = /group "admins" holds administrator rights/;
    await assert.rejects(groups.call('group_remove_member', ['admins'], { users: ['admin'] }), aci(admins));
    await assert.rejects(groups.call('group_mod', ['admins'], { addattr: [`member=uid=gadm,cn=users,cn=accounts,dc=example,dc=test`] }), aci(admins));
    await assert.rejects(groups.call('group_mod', ['admins'], { rename: 'admins2' }), aci(admins));
    await assert.rejects(groups.call('group_del', ['admins']), aci(admins));
    // a group inside admins makes its members administrators too
    await assert.rejects(groups.call('group_add_member', ['ops'], { users: ['gadm'] }), aci(/group "ops" holds administrator rights/));
    const shown = await admin.call('group_show', ['admins']);
    assert.deepEqual(shown.result.member_user, ['admin']);
    assert.deepEqual(shown.result.member_group, ['ops']);
  });

  it('a Group Administrator may not join a group granting a privilege they lack, and still manages plain groups', async () => {
    await assert.rejects(groups.call('group_add_member', ['idpers'], { users: ['gadm'] }), aci(/group "idpers" holds a privilege you do not hold \("idp administrators"\)/));
    await groups.call('group_add_member', ['plainers'], { users: ['gadm', 'plain'] });
    await groups.call('group_mod', ['plainers'], { addattr: [`member=${groupDn('idpers')}`] });
    await groups.call('group_remove_member', ['plainers'], { users: ['gadm'] });
  });

  it('administrators keep every power, and set no current password for another user', async () => {
    await admin.call('passwd', ['nested', 'Nested-pass-2']);
    await admin.call('group_add_member', ['idpers'], { users: ['plain'] });
    await admin.call('user_mod', ['idpadm'], { disabled: true });
    await admin.call('user_mod', ['idpadm'], { disabled: false });
  });
});
