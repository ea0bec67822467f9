/**
 * user-disable and user-enable (src/objects/user-disable.ts), FreeIPA's
 * commands: a disabled user may not log in until enabled again; disabling a
 * disabled account or enabling an enabled one is refused in FreeIPA's
 * words; and they follow the delegation rule as user-mod does (a User
 * Administrator reaches only users who hold no more than they do; anyone
 * else may not run them).
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantRole } from '../support/caller.js';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

const refusedWith = (code: number, message: RegExp | string) => (e: Error & { code?: number }) =>
  e.code === code && (typeof message === 'string' ? e.message === message : message.test(e.message));

describe('user-disable and user-enable', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let helpdesk: InProcessCaller;
  let plain: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    for (const [login, password] of [['carol', 'Carol-pass-123'], ['uadm', 'Uadm-pass-123'], ['idpadm', 'Idpadm-pass-1'], ['plain', 'Plain-pass-12']]) {
      await realm.addActiveUser(login, password, { first: 'F', last: 'L' });
    }
    await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
    await grantRole(admin, 'idp-role', 'IdP Administrators', { users: ['idpadm'] });
    helpdesk = await realm.login('uadm', 'Uadm-pass-123');
    plain = await realm.login('plain', 'Plain-pass-12');
  });
  after(async () => realm.close());

  /** whether the password login every transport runs (objects/login.ts) lets `login` in */
  const logsIn = (login: string, password: string) => realm.logsIn(login, password);

  it('an administrator disables a user, who may then not log in, and enables them again', async () => {
    assert.equal(await logsIn('carol', 'Carol-pass-123'), true);
    const off = await admin.call('user_disable', ['carol']);
    assert.deepEqual(off, { result: true, value: 'carol', summary: 'Disabled user account "carol"' });
    assert.deepEqual((await admin.call('user_show', ['carol'])).result.nsaccountlock, [true]);
    assert.equal(await logsIn('carol', 'Carol-pass-123'), false);
    await assert.rejects(admin.call('user_disable', ['carol']), refusedWith(4010, 'This entry is already disabled'));

    const on = await admin.call('user_enable', ['carol']);
    assert.deepEqual(on, { result: true, value: 'carol', summary: 'Enabled user account "carol"' });
    assert.equal((await admin.call('user_show', ['carol'])).result.nsaccountlock, undefined);
    assert.equal(await logsIn('carol', 'Carol-pass-123'), true);
    await assert.rejects(admin.call('user_enable', ['carol']), refusedWith(4009, 'This entry is already enabled'));
    await assert.rejects(admin.call('user_disable', ['nosuch']), refusedWith(4001, 'nosuch: user not found'));
  });

  it('a User Administrator disables and enables an ordinary user, but not an administrator nor a user holding a privilege they lack', async () => {
    await helpdesk.call('user_disable', ['carol']);
    await helpdesk.call('user_enable', ['carol']);
    await assert.rejects(helpdesk.call('user_disable', ['admin']), refusedWith(2100, /user "admin" holds administrator rights \(the admins group\): only administrators may change it/));
    await assert.rejects(helpdesk.call('user_disable', ['idpadm']), refusedWith(2100, /user "idpadm" holds a privilege you do not hold \("idp administrators"\)/));
    assert.equal(await logsIn('admin', realm.adminPassword), true);
  });

  it('anyone else may not run them', async () => {
    await assert.rejects(plain.call('user_disable', ['carol']), refusedWith(2100, "Insufficient access: not allowed to perform 'user-disable'"));
    await assert.rejects(plain.call('user_enable', ['carol']), refusedWith(2100, "Insufficient access: not allowed to perform 'user-enable'"));
    assert.equal(await logsIn('carol', 'Carol-pass-123'), true);
  });
});
