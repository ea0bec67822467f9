/**
 * A delegate cannot hand out what POSIX numbers give on hosts
 * (framework/access.ts): a user's gidNumber is its primary group on every
 * host, its uidNumber who it is there, a group's gidNumber what its members
 * get, and a home directory is made at the first login, owned by the user.
 * uidNumber, gidNumber and objectClass are administrator-only through
 * --setattr/--addattr/--delattr; through --uid, --gidnumber, --gid and
 * --homedir a delegate gives only numbers of the realm's ID range, a primary
 * group that is the user's own private group or a group holding nothing
 * beyond the delegate, and a home of its own under /home. An entry whose
 * numbers give it more (a number outside the range, a primary group that
 * holds more) is beyond the delegate altogether. Administrators keep every
 * power.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const BASE = 600_000;
const ADMINS_GID = BASE;
const ADMIN_UID = BASE + 1;

/** Refused with ACIError (2100), the message matching `what`. */
async function refused(p: Promise<unknown>, what: RegExp): Promise<void> {
  const e = await rpcError(p);
  assert.equal(e.code, 2100, e.message);
  assert.match(e.message, what);
}

describe('a delegate cannot hand out privileged groups through POSIX ids', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let users: InProcessCaller;
  let groups: InProcessCaller;
  const show = async (cmd: string, name: string): Promise<Record<string, unknown>> => (await admin.call(cmd, [name], { all: true })).result;

  before(async () => {
    ({ realm, admin } = await openAdminRealm({ idStart: BASE }));
    await admin.call('user_add', ['victim'], { first: 'V', last: 'V' });
    await admin.call('user_add', ['other'], { first: 'O', last: 'O' });
    await admin.call('group_add', ['crew']);
    // numbers an administrator gave by hand: a host's sudo group (27 on Debian), a host's first local user (1000)
    await admin.call('group_add', ['hostsudo'], { gid: 27 });
    await admin.call('user_add', ['legacy'], { first: 'L', last: 'L', uid: 1000, gidnumber: 1000 });
    // a service account whose primary group an administrator made admins
    await admin.call('user_add', ['svc'], { first: 'S', last: 'S', gidnumber: ADMINS_GID });
    users = await realm.delegate('uadm', 'Uadm-pass-123', 'helpdesk', 'User Administrators');
    groups = await realm.delegate('gadm', 'Gadm-pass-123', 'groupdesk', 'Group Administrators');
  });
  after(async () => realm.close());

  it("a User Administrator may not name uidNumber, gidNumber or objectClass in --setattr/--addattr/--delattr, on anyone, themselves included", async () => {
    for (const target of ['uadm', 'victim']) {
      await refused(users.call('user_mod', [target], { setattr: [`gidNumber=${ADMINS_GID}`] }), /only administrators may change 'gidNumber'/);
      await refused(users.call('user_mod', [target], { delattr: ['gidNumber'], addattr: [`gidNumber=${ADMINS_GID}`] }), /only administrators may change 'gidNumber'/);
      await refused(users.call('user_mod', [target], { setattr: [`uidNumber=${ADMIN_UID + 100}`] }), /only administrators may change 'uidNumber'/);
    }
    await refused(users.call('user_add', ['sneaky'], { first: 'S', last: 'S', setattr: [`gidNumber=${ADMINS_GID}`] }), /only administrators may change 'gidNumber'/);
    // a user made a posixGroup is a group on hosts, named by its cn
    await refused(users.call('user_mod', ['victim'], { addattr: ['objectClass=posixGroup'], setattr: ['cn=sudo'] }), /only administrators may change 'objectClass'/);
    const u = await show('user_show', 'uadm');
    assert.deepEqual(u.gidnumber, u.uidnumber, 'uadm keeps its private group');
    assert.equal((await admin.call('user_find', [], { gidnumber: ADMINS_GID })).count, 1, 'only svc, as the administrator made it');
  });

  it("a User Administrator may not make admins, a group holding a privilege they lack, or another user's private group a user's primary group", async () => {
    await refused(users.call('user_mod', ['uadm'], { gidnumber: ADMINS_GID }), /group "admins" holds administrator rights \(the admins group\): only administrators may make it a user's primary group/);
    await refused(users.call('user_mod', ['victim'], { gidnumber: ADMINS_GID }), /group "admins" holds administrator rights/);
    await refused(users.call('user_add', ['newbie'], { first: 'N', last: 'N', gidnumber: ADMINS_GID }), /group "admins" holds administrator rights/);
    await refused(users.call('user_mod', ['victim'], { gidnumber: ADMIN_UID }), new RegExp(`GID ${ADMIN_UID} is user "admin"'s private group: only administrators may make it another user's primary group`));
    const otherUid = (await show('user_show', 'other')).uidnumber as number[];
    await refused(users.call('user_mod', ['victim'], { gidnumber: otherUid[0]! }), /user "other"'s private group/);
    // a host's own group, and a number no group has
    await refused(users.call('user_mod', ['victim'], { gidnumber: 27 }), /group "hostsudo" holds GID 27, outside the realm's ID range \(600000-799999\)/);
    await refused(users.call('user_mod', ['victim'], { gidnumber: BASE + 9000 }), /no group has GID 609000/);
    const v = await show('user_show', 'victim');
    assert.deepEqual(v.gidnumber, v.uidnumber, 'victim keeps its private group');
  });

  it("a User Administrator may not give a UID outside the realm's range (root's, a host's local user's)", async () => {
    await refused(users.call('user_add', ['hostuser'], { first: 'H', last: 'U', uid: 1000 + 1 }), /only administrators may give UID 1001, outside the realm's ID range \(600000-799999\)/);
    await refused(users.call('user_mod', ['victim'], { uid: 1, gidnumber: 1 }), /only administrators may give UID 1, outside the realm's ID range/);
  });

  it("a User Administrator may not put a home in another user's home, nor outside /home", async () => {
    await refused(users.call('user_mod', ['victim'], { homedir: '/home/admin' }), /\/home\/admin is the home directory of user "admin": only administrators may give it to another user/);
    for (const dir of ['/home/admin/.config', '/root/.config/systemd', '/etc/systemd/system/sshd.service.d', '/home/..', '/home/x/']) {
      await refused(users.call('user_mod', ['victim'], { homedir: dir }), /only administrators may give a home directory other than \/home\/NAME/);
    }
    await refused(users.call('user_add', ['intruder'], { first: 'I', last: 'I', homedir: '/home/other' }), /home directory of user "other"/);
    assert.deepEqual((await show('user_show', 'victim')).homedirectory, ['/home/victim']);
  });

  it('a User Administrator may not change a user whose numbers give it more: a primary group admins, a UID outside the range', async () => {
    await refused(users.call('passwd', ['svc', 'Taken-over-1']), /user "svc" holds administrator rights \(the admins group\) through its primary group, group "admins": only administrators may change it/);
    await refused(users.call('user_mod', ['svc'], { disabled: true }), /user "svc" holds administrator rights/);
    await refused(users.call('passwd', ['legacy', 'Taken-over-1']), /user "legacy" holds UID 1000, outside the realm's ID range/);
    const rights = await users.call('user_show', ['svc'], { all: true, rights: true });
    assert.equal(rights.result.attributelevelrights.givenname, 'rsc');
  });

  it('a User Administrator still gives numbers of the range, a plain group as primary group, and a home of its own', async () => {
    const crew = ((await show('group_show', 'crew')).gidnumber as number[])[0]!;
    await users.call('user_mod', ['victim'], { gidnumber: crew, homedir: '/home/victor' });
    await users.call('user_add', ['newbie'], { first: 'N', last: 'N', uid: BASE + 500 });
    const n = await show('user_show', 'newbie');
    assert.deepEqual([n.uidnumber, n.gidnumber, n.homedirectory], [[BASE + 500], [BASE + 500], ['/home/newbie']]);
    await users.call('user_mod', ['newbie'], { uid: BASE + 501, gidnumber: BASE + 501 });
    await users.call('passwd', ['victim', 'Victim-pass-1']);
  });

  it("a Group Administrator may not give a GID outside the realm's range, nor name gidNumber, nor change a group whose GID is a host's", async () => {
    await refused(groups.call('group_add', ['wheel2'], { gid: 10 }), /only administrators may give GID 10, outside the realm's ID range/);
    await refused(groups.call('group_mod', ['crew'], { gid: 26 }), /only administrators may give GID 26/);
    await refused(groups.call('group_mod', ['crew'], { setattr: ['gidNumber=4'] }), /only administrators may change 'gidNumber'/);
    await refused(groups.call('group_add_member', ['hostsudo'], { users: ['gadm'] }), /group "hostsudo" holds GID 27, outside the realm's ID range/);
    await groups.call('group_add', ['team'], { gid: BASE + 600 });
    await groups.call('group_add_member', ['crew'], { users: ['gadm'] });
    assert.deepEqual((await show('group_show', 'team')).gidnumber, [BASE + 600]);
  });

  it('administrators keep every power', async () => {
    await admin.call('user_mod', ['victim'], { setattr: [`gidNumber=${ADMINS_GID}`] });
    await admin.call('user_mod', ['victim'], { homedir: '/srv/victim', gidnumber: ADMIN_UID });
    await admin.call('user_add', ['local'], { first: 'L', last: 'L', uid: 1002, gidnumber: 27 });
    await admin.call('group_mod', ['team'], { gid: 11 });
    await admin.call('passwd', ['svc', 'Svc-pass-1234']);
    await admin.call('group_add_member', ['hostsudo'], { users: ['other'] });
  });

});
