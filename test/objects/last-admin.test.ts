/**
 * The realm keeps an administrator (objects/last-admin.ts): no command
 * disables, deletes or removes from admins its last enabled member user,
 * directly or through a nested group, as FreeIPA refuses it
 * (LastMemberError, 4308); the admins group is neither deleted nor renamed
 * (ProtectedEntryError, 4309). With another enabled administrator, each of
 * these works.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const USERS = 'cn=users,cn=accounts,dc=example,dc=test';
const GROUPS = 'cn=groups,cn=accounts,dc=example,dc=test';

/** Refused with LastMemberError (4308), naming `key`. */
async function last(p: Promise<unknown>, key: string): Promise<void> {
  const e = await rpcError(p);
  assert.equal(e.code, 4308, e.message);
  assert.equal(e.message, `${key} cannot be deleted or disabled because it is the last member of group admins`);
}

describe('the last administrator', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let carol: InProcessCaller;
  const enabled = async (login: string): Promise<boolean> => (await carol.call('user_show', [login])).result.nsaccountlock?.[0] !== true;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    await realm.addActiveUser('carol', 'Carol-pass-123', { first: 'C', last: 'C' });
    await admin.call('user_add', ['dan'], { first: 'D', last: 'D' });
    await admin.call('group_add', ['ops']);
  });
  after(async () => realm.close());

  it('the only enabled member of admins is not disabled, deleted or removed from it, by any command', async () => {
    await last(admin.call('user_disable', ['admin']), 'admin');
    await last(admin.call('user_mod', ['admin'], { disabled: true }), 'admin');
    await last(admin.call('user_mod', ['admin'], { setattr: ['nsAccountLock=TRUE'] }), 'admin');
    await last(admin.call('user_del', ['admin']), 'admin');
    await last(admin.call('group_remove_member', ['admins'], { users: ['admin'] }), 'admin');
    await last(admin.call('group_mod', ['admins'], { delattr: [`member=uid=admin,${USERS}`] }), 'admin');
    // a disabled member is no administrator
    await admin.call('user_mod', ['dan'], { disabled: true });
    await admin.call('group_add_member', ['admins'], { users: ['dan'] });
    await last(admin.call('user_disable', ['admin']), 'admin');
    await last(admin.call('group_mod', ['admins'], { setattr: [`member=uid=dan,${USERS}`] }), 'admin');
    assert.deepEqual((await admin.call('group_show', ['admins'])).result.member_user, ['admin', 'dan']);
    await admin.call('group_remove_member', ['admins'], { users: ['dan'] });
  });

  it('through a nested group: its last enabled member is kept too, and a delete of several names counts them all', async () => {
    await admin.call('group_add_member', ['ops'], { users: ['carol'] });
    await admin.call('group_add_member', ['admins'], { groups: ['ops'] });
    carol = await realm.login('carol', 'Carol-pass-123');
    await last(admin.call('user_del', ['admin', 'carol']), 'carol');
    assert.equal((await carol.call('user_find', [], { pkey_only: true })).count, 3, 'nothing was deleted');
    // with carol enabled, admin may be disabled
    await carol.call('user_disable', ['admin']);
    await last(carol.call('user_disable', ['carol']), 'carol');
    await last(carol.call('user_mod', ['carol'], { disabled: true }), 'carol');
    await last(carol.call('user_del', ['carol']), 'carol');
    await last(carol.call('group_remove_member', ['ops'], { users: ['carol'] }), 'carol');
    await last(carol.call('group_mod', ['ops'], { delattr: [`member=uid=carol,${USERS}`] }), 'carol');
    await last(carol.call('group_remove_member', ['admins'], { groups: ['ops'] }), 'ops');
    await last(carol.call('group_mod', ['admins'], { delattr: [`member=cn=ops,${GROUPS}`] }), 'ops');
    await last(carol.call('group_del', ['ops']), 'ops');
    assert.equal(await enabled('carol'), true);
    assert.equal(await enabled('admin'), false);
  });

  it('admins is neither deleted nor renamed', async () => {
    for (const p of [carol.call('group_del', ['admins']), carol.call('group_mod', ['admins'], { rename: 'admins2' })]) {
      const e = await rpcError(p);
      assert.equal(e.code, 4309, e.message);
      assert.equal(e.message, "group admins cannot be deleted/modified: privileged group: its members are the realm's administrators");
    }
  });

  it('with another enabled administrator, each works', async () => {
    await carol.call('user_enable', ['admin']);
    admin = await realm.login('admin', realm.adminPassword);
    await carol.call('user_disable', ['carol']);
    await admin.call('user_enable', ['carol']);
    await admin.call('group_remove_member', ['ops'], { users: ['carol'] });
    await admin.call('group_add_member', ['ops'], { users: ['carol'] });
    await admin.call('group_remove_member', ['admins'], { groups: ['ops'] });
    assert.deepEqual((await admin.call('group_show', ['admins'])).result.member_user, ['admin']);
  });
});
