/**
 * Host groups, HBAC services and service groups, HBAC rules and hbactest
 * through the API (docs/hbac.md), as FreeIPA's commands of the same names
 * behave: every command, nested host groups, categories that exclude
 * members of their kind, enable and disable, the realm's built-in
 * services, groups and rules (allow_all and allow_systemd-user, enabled),
 * and who may manage them: administrators, holders of "HBAC Administrator"
 * (rules, services, service groups) and of "Host Group Administrators"
 * (host groups), within the delegation bounds of docs/access.md; anyone
 * authenticated may read them and ask hbactest.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantRole } from '../support/caller.js';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

type Coded = Error & { code?: number };
const code = (n: number, what?: RegExp) => (e: Coded) => e.code === n && (!what || what.test(e.message));

describe('host-based access control through the API', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    for (const u of ['alice', 'bob', 'hbacadm', 'hgadm', 'plain', 'gadm']) await realm.addActiveUser(u, `${u}-Pass-1234`, { first: u, last: 'L' });
    for (const h of ['web1.example.test', 'web2.example.test', 'db1.example.test']) await admin.call('host_add', [h]);
    await admin.call('group_add', ['devs']);
    await admin.call('group_add_member', ['devs'], { users: ['alice'] });
  });
  after(async () => realm.close());

  it('a new realm has the usual PAM services, the service groups Sudo and ftp, and allow_all and allow_systemd-user enabled', async () => {
    const services = (await admin.call('hbacsvc_find', [])).result.map((s: { cn: string[] }) => s.cn[0]);
    for (const s of ['sshd', 'login', 'su', 'su-l', 'sudo', 'sudo-i', 'gdm', 'gdm-password', 'systemd-user', 'cron', 'crond']) assert.ok(services.includes(s), s);
    assert.deepEqual((await admin.call('hbacsvcgroup_show', ['Sudo'])).result.member_hbacsvc, ['sudo', 'sudo-i']);
    const all = (await admin.call('hbacrule_show', ['allow_all'])).result;
    assert.deepEqual([all.usercategory, all.hostcategory, all.servicecategory, all.ipaenabledflag], [['all'], ['all'], ['all'], [true]]);
    const systemd = (await admin.call('hbacrule_show', ['allow_systemd-user'])).result;
    assert.deepEqual([systemd.usercategory, systemd.hostcategory, systemd.memberservice_hbacsvc, systemd.ipaenabledflag], [['all'], ['all'], ['systemd-user'], [true]]);
    const privileges = (await admin.call('privilege_find', [])).result.map((p: { cn: string[] }) => p.cn[0]);
    assert.ok(privileges.includes('HBAC Administrator') && privileges.includes('Host Group Administrators'), privileges.join());
  });

  it('hostgroup-add/show/find/mod/del and members: hosts and nested host groups', async () => {
    const added = await admin.call('hostgroup_add', ['WebServers'], { description: 'Web servers' });
    assert.equal(added.value, 'webservers');
    assert.equal(added.summary, 'Added host group "webservers"');
    await admin.call('hostgroup_add', ['frontends']);
    let r = await admin.call('hostgroup_add_member', ['webservers'], { hosts: ['web1.example.test', 'WEB2.example.test', 'nowhere.example.test'], hostgroups: ['frontends'] });
    assert.equal(r.completed, 3);
    assert.deepEqual(r.failed, { member: { host: [['nowhere.example.test', 'no such entry']], hostgroup: [] } });
    assert.deepEqual(r.result.member_host, ['web1.example.test', 'web2.example.test']);
    assert.deepEqual(r.result.member_hostgroup, ['frontends']);
    r = await admin.call('hostgroup_add_member', ['webservers'], { hosts: ['web1.example.test'], hostgroups: ['webservers'] });
    assert.deepEqual(r.failed.member, { host: [['web1.example.test', 'This entry is already a member']], hostgroup: [['webservers', 'A group may not be a member of itself']] });
    assert.equal((await admin.call('hostgroup_find', ['web'])).count, 1);
    assert.equal((await admin.call('hostgroup_mod', ['webservers'], { description: 'All web servers' })).result.description[0], 'All web servers');
    r = await admin.call('hostgroup_remove_member', ['webservers'], { hosts: ['web2.example.test'] });
    assert.deepEqual(r.result.member_host, ['web1.example.test']);
    await admin.call('hostgroup_add_member', ['frontends'], { hosts: ['web2.example.test'] });
    await admin.call('hostgroup_add', ['spare']);
    await admin.call('hostgroup_del', ['spare']);
    await assert.rejects(admin.call('hostgroup_show', ['spare']), code(4001, /spare: host group not found/));
    await assert.rejects(admin.call('hostgroup_add', ['bad name!']), code(3009));
  });

  it('hbacsvc-add/show/find/mod/del, and hbacsvcgroup members', async () => {
    assert.equal((await admin.call('hbacsvc_add', ['Polkit-1'], { description: 'polkit' })).value, 'polkit-1');
    assert.equal((await admin.call('hbacsvc_mod', ['polkit-1'], { description: 'PolicyKit' })).result.description[0], 'PolicyKit');
    assert.equal((await admin.call('hbacsvc_find', [], { service: 'polkit-1' })).count, 1);
    await admin.call('hbacsvcgroup_add', ['desktop'], { description: 'Desktop logins' });
    const r = await admin.call('hbacsvcgroup_add_member', ['desktop'], { hbacsvcs: ['gdm', 'gdm-password', 'polkit-1'] });
    assert.deepEqual(r.result.member_hbacsvc, ['gdm', 'gdm-password', 'polkit-1']);
    // a deleted service leaves the groups that held it
    await admin.call('hbacsvc_del', ['polkit-1']);
    assert.deepEqual((await admin.call('hbacsvcgroup_show', ['desktop'])).result.member_hbacsvc, ['gdm', 'gdm-password']);
    await admin.call('hbacsvcgroup_remove_member', ['desktop'], { hbacsvcs: ['gdm'] });
    assert.deepEqual((await admin.call('hbacsvcgroup_show', ['desktop'])).result.member_hbacsvc, ['gdm-password']);
    await admin.call('hbacsvcgroup_del', ['desktop']);
  });

  it('hbacrule-add/show/find/mod/del, members of each kind, and categories that exclude members', async () => {
    const added = await admin.call('hbacrule_add', ['devs_ssh_web'], { description: 'Developers on web servers' });
    assert.equal(added.summary, 'Added HBAC rule "devs_ssh_web"');
    assert.deepEqual(added.result.ipaenabledflag, [true]);
    let r = await admin.call('hbacrule_add_user', ['devs_ssh_web'], { users: ['bob'], groups: ['devs'] });
    assert.deepEqual([r.result.memberuser_user, r.result.memberuser_group, r.completed], [['bob'], ['devs'], 2]);
    r = await admin.call('hbacrule_add_host', ['devs_ssh_web'], { hostgroups: ['webservers'], hosts: ['db1.example.test'] });
    assert.deepEqual([r.result.memberhost_host, r.result.memberhost_hostgroup], [['db1.example.test'], ['webservers']]);
    r = await admin.call('hbacrule_add_service', ['devs_ssh_web'], { hbacsvcs: ['sshd'], hbacsvcgroups: ['Sudo'] });
    assert.deepEqual([r.result.memberservice_hbacsvc, r.result.memberservice_hbacsvcgroup], [['sshd'], ['Sudo']]);
    r = await admin.call('hbacrule_add_service', ['devs_ssh_web'], { hbacsvcs: ['sshd', 'no-such'] });
    assert.deepEqual(r.failed, { memberservice: { hbacsvc: [['sshd', 'This entry is already a member'], ['no-such', 'no such entry']], hbacsvcgroup: [] } });
    r = await admin.call('hbacrule_remove_host', ['devs_ssh_web'], { hosts: ['db1.example.test'] });
    assert.equal(r.result.memberhost_host, undefined);
    r = await admin.call('hbacrule_remove_service', ['devs_ssh_web'], { hbacsvcgroups: ['Sudo'] });
    assert.equal(r.result.memberservice_hbacsvcgroup, undefined);
    r = await admin.call('hbacrule_remove_user', ['devs_ssh_web'], { users: ['bob'] });
    assert.deepEqual([r.result.memberuser_user, r.result.memberuser_group], [undefined, ['devs']]);
    // a category `all` and members of its kind exclude each other, as in FreeIPA
    await assert.rejects(admin.call('hbacrule_mod', ['devs_ssh_web'], { usercat: 'all' }), code(3005, /user category cannot be set to 'all' while there are allowed users/));
    await admin.call('hbacrule_add', ['any_su'], { usercat: 'all', hostcat: 'all' });
    await assert.rejects(admin.call('hbacrule_add_user', ['any_su'], { users: ['bob'] }), code(3005, /users cannot be added when user category='all'/));
    await assert.rejects(admin.call('hbacrule_add_host', ['any_su'], { hosts: ['web1.example.test'] }), code(3005, /hosts cannot be added when host category='all'/));
    await assert.rejects(admin.call('hbacrule_add', ['bad'], { usercat: 'some' }), code(3009, /must be one of 'all'/));
    await admin.call('hbacrule_add_service', ['any_su'], { hbacsvcs: ['su'] });
    await assert.rejects(admin.call('hbacrule_mod', ['any_su'], { servicecat: 'all' }), code(3005, /service category cannot be set to 'all' while there are allowed services/));
    // clearing the category makes room for members again
    await admin.call('hbacrule_mod', ['any_su'], { usercat: '' });
    await admin.call('hbacrule_add_user', ['any_su'], { users: ['bob'] });
    assert.deepEqual((await admin.call('hbacrule_show', ['any_su'])).result.memberuser_user, ['bob']);
    assert.equal((await admin.call('hbacrule_find', [], { enabled: true })).count, 4);
    await admin.call('hbacrule_del', ['any_su']);
    await assert.rejects(admin.call('hbacrule_show', ['any_su']), code(4001, /any_su: HBAC rule not found/));
  });

  it('hbacrule-disable and -enable; doing it twice says so', async () => {
    assert.equal((await admin.call('hbacrule_disable', ['devs_ssh_web'])).summary, 'Disabled HBAC rule "devs_ssh_web"');
    assert.deepEqual((await admin.call('hbacrule_show', ['devs_ssh_web'])).result.ipaenabledflag, [false]);
    await assert.rejects(admin.call('hbacrule_disable', ['devs_ssh_web']), code(4010));
    assert.equal((await admin.call('hbacrule_enable', ['devs_ssh_web'])).summary, 'Enabled HBAC rule "devs_ssh_web"');
    await assert.rejects(admin.call('hbacrule_enable', ['devs_ssh_web']), code(4009));
  });

  it('hbactest: allowed by allow_all, then, with it disabled, only as the rules say, with the rules that matched', async () => {
    const t = (user: string, host: string, service: string, rules?: string[]) => admin.call('hbactest', [], { user, host, service, ...(rules ? { rules } : {}) });
    let r = await t('bob', 'db1.example.test', 'sshd');
    assert.deepEqual([r.value, r.summary, r.result.matched], [true, 'Access granted: True', ['allow_all']]);
    await admin.call('hbacrule_disable', ['allow_all']);
    // alice through devs, web2 through frontends inside webservers
    r = await t('alice', 'WEB2.example.test', 'sshd');
    assert.deepEqual([r.value, r.result.matched], [true, ['devs_ssh_web']]);
    r = await t('alice', 'db1.example.test', 'sshd');
    assert.deepEqual([r.value, r.summary, r.result.matched], [false, 'Access granted: False', []]);
    assert.deepEqual(r.result.notmatched, ['allow_systemd-user', 'devs_ssh_web']);
    assert.equal((await t('bob', 'web1.example.test', 'sshd')).value, false);
    assert.equal((await t('bob', 'web1.example.test', 'systemd-user')).value, true);
    // --rules tests those rules, enabled or not
    r = await t('bob', 'db1.example.test', 'sshd', ['allow_all']);
    assert.deepEqual([r.value, r.result.matched], [true, ['allow_all']]);
    await assert.rejects(t('bob', 'db1.example.test', 'sshd', ['nope']), code(4001, /nope: HBAC rule not found/));
    await assert.rejects(t('nobody', 'db1.example.test', 'sshd'), code(4001, /nobody: user not found/));
    await assert.rejects(t('bob', 'ghost.example.test', 'sshd'), code(4001, /ghost\.example\.test: host not found/));
    await assert.rejects(t('bob', 'db1.example.test', 'ss hd'), code(3009));
    await assert.rejects(admin.call('hbactest', [], { user: 'bob', host: 'db1.example.test' }), code(3007, /'service' is required/));
    await admin.call('hbacrule_enable', ['allow_all']);
  });

  it('who may manage them: HBAC Administrator rules and services, Host Group Administrators host groups, anyone reads and tests', async () => {
    await grantRole(admin, 'access-desk', 'HBAC Administrator', { users: ['hbacadm'] });
    await grantRole(admin, 'hostgroup-desk', 'Host Group Administrators', { users: ['hgadm'] });
    const hbacadm = await realm.login('hbacadm', 'hbacadm-Pass-1234');
    const hgadm = await realm.login('hgadm', 'hgadm-Pass-1234');
    const plain = await realm.login('plain', 'plain-Pass-1234');
    await hbacadm.call('hbacrule_add', ['delegated'], { usercat: 'all' });
    await hbacadm.call('hbacrule_add_host', ['delegated'], { hostgroups: ['webservers'] });
    await hbacadm.call('hbacrule_add_service', ['delegated'], { hbacsvcs: ['login'] });
    await hbacadm.call('hbacrule_disable', ['allow_all']);
    await hbacadm.call('hbacrule_enable', ['allow_all']);
    await hbacadm.call('hbacsvc_add', ['xrdp']);
    await hbacadm.call('hbacsvcgroup_add_member', ['ftp'], { hbacsvcs: ['xrdp'] });
    await hbacadm.call('hbacsvcgroup_remove_member', ['ftp'], { hbacsvcs: ['xrdp'] });
    await hbacadm.call('hbacsvc_del', ['xrdp']);
    await assert.rejects(hbacadm.call('hostgroup_add_member', ['webservers'], { hosts: ['db1.example.test'] }), code(2100, /not allowed to perform 'hostgroup-add-member'/));
    await hgadm.call('hostgroup_add_member', ['webservers'], { hosts: ['db1.example.test'] });
    await hgadm.call('hostgroup_remove_member', ['webservers'], { hosts: ['db1.example.test'] });
    await assert.rejects(hgadm.call('hbacrule_disable', ['allow_all']), code(2100, /not allowed to perform 'hbacrule-disable'/));
    const refused: Array<[string, string[], Record<string, string[]>]> = [
      ['hbacrule_add', ['mine'], {}],
      ['hbacrule_disable', ['allow_all'], {}],
      ['hbacrule_add_user', ['delegated'], { users: ['plain'] }],
      ['hbacsvc_add', ['mine'], {}],
      ['hbacsvcgroup_add_member', ['Sudo'], { hbacsvcs: ['login'] }],
      ['hostgroup_add', ['mine'], {}],
    ];
    for (const [cmd, args, opts] of refused) await assert.rejects(plain.call(cmd, args, opts), code(2100), cmd);
    assert.ok((await plain.call('hbacrule_find', [])).count >= 3);
    assert.equal((await plain.call('hbactest', [], { user: 'plain', host: 'web1.example.test', service: 'login' })).value, true);
    // the new privileges count among what a delegate may not reach: a Group Administrator without
    // "HBAC Administrator" may not change the members of a group whose role grants it
    await admin.call('group_add', ['access-team']);
    await grantRole(admin, 'access-team-role', 'HBAC Administrator', { groups: ['access-team'] });
    await grantRole(admin, 'groupdesk', 'Group Administrators', { users: ['gadm'] });
    const gadm = await realm.login('gadm', 'gadm-Pass-1234');
    await assert.rejects(gadm.call('group_add_member', ['access-team'], { users: ['gadm'] }), code(2100, /holds a privilege you do not hold \("hbac administrator"\)/));
  });

  it('deleting a host, a host group or a user drops it from the rules', async () => {
    await admin.call('hbacrule_add', ['gone'], { servicecat: 'all' });
    await admin.call('user_add', ['temp'], { first: 't', last: 't' });
    await admin.call('host_add', ['temp.example.test']);
    await admin.call('hostgroup_add', ['tempgroup']);
    await admin.call('hbacrule_add_user', ['gone'], { users: ['temp'] });
    await admin.call('hbacrule_add_host', ['gone'], { hosts: ['temp.example.test'], hostgroups: ['tempgroup'] });
    await admin.call('user_del', ['temp']);
    await admin.call('host_del', ['temp.example.test']);
    await admin.call('hostgroup_del', ['tempgroup']);
    const r = (await admin.call('hbacrule_show', ['gone'])).result;
    assert.deepEqual([r.memberuser_user, r.memberhost_host, r.memberhost_hostgroup], [undefined, undefined, undefined]);
  });
});
