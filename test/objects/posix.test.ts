/**
 * POSIX identities (objects/posix.ts): users and groups get numbers from the
 * realm's ID range chosen at init, with the defaults hosts need; numbers
 * given by hand are checked against every user and group; concurrent adds
 * never share a number; non-POSIX groups have none until `--posix`; IdP
 * users have a POSIX identity too. In process (test/support/in-process.ts);
 * that init refuses an unusable range is test/server/init-failures.test.ts's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const BASE = 500_000;

describe('POSIX identities', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  const show = async (cmd: string, name: string): Promise<Record<string, unknown>> => (await admin.call(cmd, [name], { all: true })).result;

  before(async () => {
    ({ realm, admin } = await openAdminRealm({ idStart: BASE }));
  });
  after(async () => realm.close());

  it('init gives the admins group the first ID of the range and admin the second', async () => {
    assert.deepEqual((await show('group_show', 'admins')).gidnumber, [BASE]);
    const a = await show('user_show', 'admin');
    assert.deepEqual(a.uidnumber, [BASE + 1]);
    assert.deepEqual(a.gidnumber, [BASE + 1]);
    assert.deepEqual(a.homedirectory, ['/home/admin']);
  });

  it('user-add assigns uid, a private group gid equal to it, home, shell and gecos; user-show shows them', async () => {
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'Liddell' });
    const a = await show('user_show', 'alice');
    assert.deepEqual(a.uidnumber, [BASE + 2]);
    assert.deepEqual(a.gidnumber, [BASE + 2]);
    assert.deepEqual(a.homedirectory, ['/home/alice']);
    assert.deepEqual(a.loginshell, ['/bin/bash']);
    assert.deepEqual(a.gecos, ['Alice Liddell']);
    assert.ok((a.objectclass as string[]).includes('posixAccount'));
    // shown without --all too
    const plain = (await admin.call('user_show', ['alice'])).result;
    assert.deepEqual(plain.uidnumber, [BASE + 2]);
  });

  it('values given by hand are kept; an automatic number skips one taken by hand', async () => {
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'B', uid: BASE + 4, gidnumber: BASE, homedir: '/srv/bob', shell: '/bin/zsh', gecos: 'Bob,room 1' });
    const b = await show('user_show', 'bob');
    assert.deepEqual([b.uidnumber, b.gidnumber, b.homedirectory, b.loginshell, b.gecos], [[BASE + 4], [BASE], ['/srv/bob'], ['/bin/zsh'], ['Bob,room 1']]);
    await admin.call('group_add', ['crew']);
    assert.deepEqual((await show('group_show', 'crew')).gidnumber, [BASE + 3]);
    await admin.call('user_add', ['carol'], { first: 'Carol', last: 'C' });
    assert.deepEqual((await show('user_show', 'carol')).uidnumber, [BASE + 5], 'the counter skips the UID bob was given');
  });

  it('a number held by a user or a group is refused, on add and on mod, naming the holder', async () => {
    const dupUid = await rpcError(admin.call('user_add', ['dave'], { first: 'D', last: 'D', uid: BASE + 2 }));
    assert.equal(dupUid.code, 4002);
    assert.match(dupUid.message, /UID 500002 is already used by user "alice"/);
    // alice's private group has gid = her uid: no group may take it
    assert.match((await rpcError(admin.call('group_add', ['g1'], { gid: BASE + 2 }))).message, /GID 500002 is already used by user "alice"/);
    assert.match((await rpcError(admin.call('user_add', ['erin'], { first: 'E', last: 'E', uid: BASE + 3 }))).message, /UID 500003 is already used by group "crew"/);
    assert.match((await rpcError(admin.call('user_mod', ['carol'], { uid: BASE + 2 }))).message, /already used by user "alice"/);
    assert.match((await rpcError(admin.call('group_mod', ['crew'], { gid: BASE }))).message, /already used by group "admins"/);
    // keeping one's own number is no conflict
    await admin.call('user_mod', ['alice'], { uid: BASE + 2, shell: '/bin/sh' });
    assert.deepEqual((await show('user_show', 'alice')).loginshell, ['/bin/sh']);
  });

  it("a group may not take a user's login, nor a user a group's name: hosts give each user a private group of that name", async () => {
    const group = await rpcError(admin.call('group_add', ['alice']));
    assert.equal(group.code, 4002);
    assert.match(group.message, /user "alice" exists, and hosts give every user a private group named after the login: choose another group name/);
    assert.match((await rpcError(admin.call('user_add', ['crew'], { first: 'S', last: 'S' }))).message, /group "crew" exists, and hosts would give the user a private group of that name/);
    assert.match((await rpcError(admin.call('group_add', ['Alice']))).message, /user "Alice" exists/, 'names compare as the directory compares them');
    assert.match((await rpcError(admin.call('group_mod', ['crew'], { rename: 'alice' }))).message, /user "alice" exists/);
    assert.match((await rpcError(admin.call('user_mod', ['carol'], { rename: 'crew' }))).message, /group "crew" exists/);
    await assert.rejects(admin.call('group_show', ['alice']));
  });

  it('bad values get a clear error', async () => {
    assert.equal((await rpcError(admin.call('user_add', ['x1'], { first: 'X', last: 'X', homedir: 'relative/home' }))).code, 3009);
    assert.equal((await rpcError(admin.call('user_add', ['x2'], { first: 'X', last: 'X', shell: '/bin/sh -c' }))).code, 3009);
    assert.equal((await rpcError(admin.call('user_add', ['x3'], { first: 'X', last: 'X', gecos: 'a:b' }))).code, 3009);
    assert.equal((await rpcError(admin.call('user_add', ['x4'], { first: 'X', last: 'X', uid: 0 }))).code, 3009);
  });

  it('non-POSIX groups have no GID until group-mod --posix gives them one', async () => {
    await admin.call('group_add', ['web'], { nonposix: true });
    const w = await show('group_show', 'web');
    assert.equal(w.gidnumber, undefined);
    assert.ok(!(w.objectclass as string[]).includes('posixGroup'));
    assert.equal((await rpcError(admin.call('group_mod', ['web'], { gid: BASE + 100 }))).code, 3009);
    assert.equal((await rpcError(admin.call('group_add', ['web2'], { nonposix: true, gid: BASE + 100 }))).code, 3005);
    await admin.call('group_mod', ['web'], { posix: true });
    const after = await show('group_show', 'web');
    assert.equal((after.gidnumber as number[]).length, 1);
    assert.ok((after.objectclass as string[]).includes('posixGroup'));
    assert.equal((await rpcError(admin.call('group_mod', ['web'], { posix: true }))).code, 3009);
  });

  it('members are RFC 2307bis member DNs', async () => {
    await admin.call('group_add_member', ['crew'], { users: ['alice'] });
    const s = await show('group_show', 'crew');
    assert.deepEqual(s.member, ['uid=alice,cn=users,cn=accounts,dc=example,dc=test']);
  });

  it('IdP-linked users have a POSIX identity too', async () => {
    await admin.call('idp_add', ['kc'], { provider: 'keycloak', organization: 'main', base_url: 'kc.example.test', client_id: 'c', secret: 's3cret-value' });
    await admin.call('user_add', ['frank'], { first: 'F', last: 'F', user_auth_type: ['idp'], idp: 'kc', idp_user_id: 'frank@example.test' });
    const f = await show('user_show', 'frank');
    assert.equal(typeof (f.uidnumber as number[])[0], 'number');
    assert.deepEqual(f.gidnumber, f.uidnumber);
    assert.deepEqual(f.homedirectory, ['/home/frank']);
  });

  it('twenty concurrent user-adds get twenty different numbers', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `par${i}`);
    await Promise.all(names.map((n) => admin.call('user_add', [n], { first: 'P', last: n })));
    const uids = await Promise.all(names.map(async (n) => (await show('user_show', n)).uidnumber as number[]));
    assert.equal(new Set(uids.map((u) => u[0])).size, 20);
  });
});
