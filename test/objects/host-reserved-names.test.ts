/**
 * Names hosts give a meaning of their own (objects/posix.ts
 * checkHostReservedName, docs/access.md): sudoers matches `%sudo` by group
 * name, hosts give each user a private group named after its login, and MIT's
 * default aname_to_lname makes `root@REALM` the local root. No one, an
 * administrator included, gives a user's login or a group's name that is a
 * system user or group of Debian's base-passwd, `wheel` or `admin`, on add
 * or rename; nor a principal alias naming a host's system user. In process
 * (test/support/in-process.ts); that a realm holding such a name already
 * (made before the rule) starts and keeps it is
 * test/server/reserved-names-kept.test.ts's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { reservedName as reserved, rpcError } from '../support/expect.js';

describe('names hosts give a meaning of their own', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let users: InProcessCaller;
  let groups: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    await admin.call('user_add', ['alice'], { first: 'A', last: 'L' });
    await admin.call('group_add', ['team']);
    users = await realm.delegate('uadm', 'Uadm-pass-123', 'helpdesk', 'User Administrators');
    groups = await realm.delegate('gadm', 'Gadm-pass-123', 'groupdesk', 'Group Administrators');
  });
  after(async () => realm.close());

  it("a User Administrator may not add or rename a user to a host's system user or group (its private group would be that group)", async () => {
    await reserved(users.call('user_add', ['root'], { first: 'R', last: 'R' }), 'login', 'root', /Debian's system user and group "root"/);
    await reserved(users.call('user_add', ['sudo'], { first: 'S', last: 'S' }), 'login', 'sudo', /Debian's system group "sudo"/);
    await reserved(users.call('user_add', ['wheel'], { first: 'W', last: 'W' }), 'login', 'wheel', /the group Fedora, RHEL and the BSDs give root to/);
    await reserved(users.call('user_add', ['adm'], { first: 'A', last: 'A' }), 'login', 'adm', /Debian's system group "adm"/);
    await reserved(users.call('user_add', ['nobody'], { first: 'N', last: 'N' }), 'login', 'nobody', /Debian's system user "nobody"/);
    await reserved(users.call('user_mod', ['alice'], { rename: 'root' }), 'rename', 'root', /system user and group "root"/);
    await reserved(users.call('user_mod', ['alice'], { rename: 'staff' }), 'rename', 'staff', /system group "staff"/);
    assert.equal((await admin.call('user_find', [], { pkey_only: true })).count, 4, 'admin, uadm, gadm, alice: nothing was added');
  });

  it("a Group Administrator may not add or rename a group to sudo, wheel, adm, admin or another host's name, in any letter case", async () => {
    for (const name of ['sudo', 'wheel', 'adm', 'admin', 'Sudo', 'WHEEL', 'shadow', 'sync']) {
      await reserved(groups.call('group_add', [name]), 'name', name, /Debian's system (group|user) "|gives? root to/);
    }
    await reserved(groups.call('group_mod', ['team'], { rename: 'sudo' }), 'rename', 'sudo', /Debian's system group "sudo"/);
    await reserved(groups.call('group_mod', ['team'], { rename: 'admin' }), 'rename', 'admin', /the group Ubuntu's sudoers gives root to/);
    assert.deepEqual((await admin.call('group_find', [], { pkey_only: true })).result.map((g: { cn: string[] }) => g.cn[0]).sort(), ['admins', 'team']);
  });

  it('administrators are refused too, and may not give a user the principal alias root@REALM', async () => {
    await reserved(admin.call('user_add', ['root'], { first: 'R', last: 'R' }), 'login', 'root', /system user and group "root"/);
    await reserved(admin.call('group_add', ['wheel']), 'name', 'wheel', /give root to/);
    await reserved(admin.call('group_add', ['sudo'], { gid: 27 }), 'name', 'sudo', /system group "sudo"/);
    await reserved(admin.call('user_mod', ['admin'], { rename: 'root' }), 'rename', 'root', /system user and group "root"/);
    const alias = await rpcError(admin.call('user_mod', ['alice'], { addattr: ['krbPrincipalName=root@EXAMPLE.TEST'] }));
    assert.equal(alias.code, 3009, alias.message);
    assert.match(alias.message, /invalid 'krbPrincipalName': "root@EXAMPLE.TEST" names "root", Debian's system user "root": MIT Kerberos maps it to that local user on hosts/);
    // other names still work, and the realm's own admin user keeps its name
    await admin.call('user_mod', ['alice'], { addattr: ['krbPrincipalName=alice.l@EXAMPLE.TEST'] });
    await groups.call('group_add', ['sudoers-web']);
    await users.call('user_add', ['rooty'], { first: 'R', last: 'R' });
    await admin.call('user_mod', ['admin'], { first: 'Realm' });
  });
});
