/**
 * Sudo rules, commands and command groups through the API (FreeIPA's
 * sudorule, sudocmd and sudocmdgroup), each command with what it returns
 * and refuses: members by kind and what failed, categories that exclude
 * members, a unique order, options, enable and disable, references kept
 * (a command in use is not deleted; a renamed user is followed; a deleted
 * one leaves), and who may write them: administrators and holders of the
 * Sudo Administrator privilege, a holder only for rules that let no one
 * act as a user or group holding more than the holder (framework/access.ts).
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantRole } from '../support/caller.js';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

const coded = (code: number, what?: RegExp) => (e: Error & { code?: number }) => e.code === code && (!what || what.test(e.message));

describe('sudo rules, commands and command groups', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let sudoAdmin: InProcessCaller;
  let plain: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    for (const [u, pw] of [['alice', 'Alice-pass-1'], ['bob', 'Bob-pass-123'], ['sudoer', 'Sudoer-pass-1'], ['plain', 'Plain-pass-12']]) await realm.addActiveUser(u, pw, { first: u, last: 'L' });
    await admin.call('group_add', ['ops']);
    await admin.call('group_add_member', ['ops'], { users: ['bob'] });
    await admin.call('host_add', ['web1.example.test']);
    await admin.call('host_add', ['web2.example.test']);
    await grantRole(admin, 'sudo-desk', 'Sudo Administrator', { users: ['sudoer'] });
    sudoAdmin = await realm.login('sudoer', 'Sudoer-pass-1');
    plain = await realm.login('plain', 'Plain-pass-12');
  });
  after(async () => realm.close());

  it('sudocmd-add, -show, -find, -mod and -del; a command is a full path and its arguments', async () => {
    const add = await admin.call('sudocmd_add', ['/usr/bin/systemctl restart nginx'], { description: 'restart the web server' });
    assert.equal(add.summary, 'Added Sudo Command "/usr/bin/systemctl restart nginx"');
    assert.deepEqual(add.result, { sudocmd: ['/usr/bin/systemctl restart nginx'], description: ['restart the web server'] });
    for (const c of ['/usr/bin/less', '/usr/bin/id', '/bin/su', 'sudoedit /etc/motd']) await admin.call('sudocmd_add', [c]);
    await assert.rejects(admin.call('sudocmd_add', ['less']), coded(3009, /invalid 'command': must be a full path \(or sudoedit\), then the arguments if any/));
    await assert.rejects(admin.call('sudocmd_add', ['/usr/bin/less']), coded(4002, /Sudo Command with name "\/usr\/bin\/less" already exists/));
    const found = await admin.call('sudocmd_find', ['usr/bin']);
    assert.deepEqual(found.result.map((e: { sudocmd: string[] }) => e.sudocmd[0]), ['/usr/bin/id', '/usr/bin/less', '/usr/bin/systemctl restart nginx']);
    assert.equal((await admin.call('sudocmd_mod', ['/usr/bin/id'], { description: 'who am I' })).result.description[0], 'who am I');
    await assert.rejects(admin.call('sudocmd_mod', ['/usr/bin/id'], { rename: '/usr/bin/x' }), coded(3004, /unknown option 'rename'/));
    await admin.call('sudocmd_del', ['sudoedit /etc/motd']);
    await assert.rejects(admin.call('sudocmd_show', ['sudoedit /etc/motd']), coded(4001));
  });

  it('sudocmdgroup-add, -add-member, -remove-member, -show, -find, -mod, -del', async () => {
    await admin.call('sudocmdgroup_add', ['viewers'], { description: 'pagers' });
    const added = await admin.call('sudocmdgroup_add_member', ['viewers'], { sudocmds: ['/usr/bin/less', '/usr/bin/nothing'] });
    assert.equal(added.completed, 1);
    assert.deepEqual(added.failed, { member: { sudocmd: [['/usr/bin/nothing', 'no such entry']] } });
    assert.deepEqual(added.result.member_sudocmd, ['/usr/bin/less']);
    assert.deepEqual((await admin.call('sudocmd_show', ['/usr/bin/less'])).result.memberof_sudocmdgroup, ['viewers']);
    await admin.call('sudocmdgroup_add_member', ['viewers'], { sudocmds: ['/usr/bin/id'] });
    const removed = await admin.call('sudocmdgroup_remove_member', ['viewers'], { sudocmds: ['/usr/bin/id'] });
    assert.deepEqual(removed.result.member_sudocmd, ['/usr/bin/less']);
    assert.equal((await admin.call('sudocmdgroup_find', ['view'])).count, 1);
    assert.equal((await admin.call('sudocmdgroup_mod', ['viewers'], { description: 'read files' })).result.description[0], 'read files');
    await admin.call('sudocmdgroup_add', ['spare']);
    await admin.call('sudocmdgroup_del', ['spare']);
  });

  it('sudorule-add, -show, -find, -mod, -del with categories and an order', async () => {
    const add = await admin.call('sudorule_add', ['web'], { description: 'web operators', order: 10 });
    assert.equal(add.summary, 'Added Sudo Rule "web"');
    assert.deepEqual(add.result, { cn: ['web'], description: ['web operators'], ipaenabledflag: [true], sudoorder: [10] });
    await assert.rejects(admin.call('sudorule_add', ['other'], { order: 10 }), coded(3009, /order must be a unique value \(10 already used by web\)/));
    await admin.call('sudorule_add', ['everyone'], { usercat: 'all', hostcat: 'all', cmdcat: 'all', runasusercat: 'all', runasgroupcat: 'all' });
    const all = (await admin.call('sudorule_show', ['everyone'])).result;
    assert.deepEqual([all.usercategory, all.hostcategory, all.cmdcategory, all.ipasudorunasusercategory, all.ipasudorunasgroupcategory], [['all'], ['all'], ['all'], ['all'], ['all']]);
    await assert.rejects(admin.call('sudorule_add', ['bad'], { usercat: 'some' }), coded(3009, /must be one of 'all'/));
    // a category back to none: the empty value
    assert.equal((await admin.call('sudorule_mod', ['everyone'], { runasgroupcat: '' })).result.ipasudorunasgroupcategory, undefined);
    assert.deepEqual((await admin.call('sudorule_find', [], { name: 'web' })).result.map((r: { cn: string[] }) => r.cn[0]), ['web']);
    assert.equal((await admin.call('sudorule_find', ['web ops'])).count, 0);
    const renamed = await admin.call('sudorule_mod', ['everyone'], { rename: 'all-things' });
    assert.equal(renamed.value, 'all-things');
    await admin.call('sudorule_del', ['all-things']);
    await assert.rejects(admin.call('sudorule_show', ['all-things']), coded(4001, /all-things: Sudo Rule not found/));
  });

  it('sudorule-add-user/-remove-user, -add-host/-remove-host, allow and deny commands, run-as users and groups', async () => {
    const users = await admin.call('sudorule_add_user', ['web'], { users: ['alice', 'ghost'], groups: ['ops'] });
    assert.equal(users.completed, 2);
    assert.deepEqual(users.failed, { memberuser: { user: [['ghost', 'no such entry']], group: [] } });
    assert.deepEqual([users.result.memberuser_user, users.result.memberuser_group], [['alice'], ['ops']]);
    const again = await admin.call('sudorule_add_user', ['web'], { users: ['alice'] });
    assert.deepEqual(again.failed.memberuser.user, [['alice', 'This entry is already a member']]);
    const hosts = await admin.call('sudorule_add_host', ['web'], { hosts: ['WEB1.example.test', 'web2.example.test'], hostgroups: ['nowhere'] });
    assert.equal(hosts.completed, 2);
    assert.deepEqual(hosts.result.memberhost_host, ['web1.example.test', 'web2.example.test']);
    assert.deepEqual(hosts.failed.memberhost.hostgroup, [['nowhere', 'no such entry']]);
    assert.deepEqual((await admin.call('sudorule_remove_host', ['web'], { hosts: ['web2.example.test'] })).result.memberhost_host, ['web1.example.test']);
    const allow = await admin.call('sudorule_add_allow_command', ['web'], { sudocmds: ['/usr/bin/systemctl restart nginx'], sudocmdgroups: ['viewers'] });
    assert.deepEqual([allow.result.memberallowcmd_sudocmd, allow.result.memberallowcmd_sudocmdgroup], [['/usr/bin/systemctl restart nginx'], ['viewers']]);
    const deny = await admin.call('sudorule_add_deny_command', ['web'], { sudocmds: ['/bin/su'] });
    assert.deepEqual(deny.result.memberdenycmd_sudocmd, ['/bin/su']);
    const runas = await admin.call('sudorule_add_runasuser', ['web'], { users: ['bob'], groups: ['ops'] });
    assert.deepEqual([runas.result.ipasudorunas_user, runas.result.ipasudorunas_group], [['bob'], ['ops']]);
    assert.deepEqual((await admin.call('sudorule_add_runasgroup', ['web'], { groups: ['ops'] })).result.ipasudorunasgroup_group, ['ops']);
    // each has its remove
    await admin.call('sudorule_add_deny_command', ['web'], { sudocmdgroups: ['viewers'] });
    assert.equal((await admin.call('sudorule_remove_deny_command', ['web'], { sudocmdgroups: ['viewers'] })).result.memberdenycmd_sudocmdgroup, undefined);
    await admin.call('sudorule_add_allow_command', ['web'], { sudocmds: ['/usr/bin/id'] });
    assert.deepEqual((await admin.call('sudorule_remove_allow_command', ['web'], { sudocmds: ['/usr/bin/id'] })).result.memberallowcmd_sudocmd, ['/usr/bin/systemctl restart nginx']);
    await admin.call('sudorule_add_user', ['web'], { users: ['plain'] });
    assert.deepEqual((await admin.call('sudorule_remove_user', ['web'], { users: ['plain'] })).result.memberuser_user, ['alice']);
    const gone = await admin.call('sudorule_remove_runasgroup', ['web'], { groups: ['ops', 'ops2'] });
    assert.deepEqual(gone.failed.ipasudorunasgroup.group, [['ops2', 'no such entry']]);
    await admin.call('sudorule_add_runasgroup', ['web'], { groups: ['ops'] });
    await admin.call('sudorule_add_runasuser', ['web'], { users: ['plain'] });
    assert.deepEqual((await admin.call('sudorule_remove_runasuser', ['web'], { users: ['plain'] })).result.ipasudorunas_user, ['bob']);
  });

  it("a category 'all' and members of its kind exclude each other", async () => {
    await assert.rejects(admin.call('sudorule_mod', ['web'], { usercat: 'all' }), coded(3005, /user category cannot be set to 'all' while there are allowed users/));
    await assert.rejects(admin.call('sudorule_mod', ['web'], { hostcat: 'all' }), coded(3005, /host category cannot be set to 'all' while there are allowed hosts/));
    await assert.rejects(admin.call('sudorule_mod', ['web'], { cmdcat: 'all' }), coded(3005, /command category cannot be set to 'all' while there are allow commands/));
    await admin.call('sudorule_add', ['wide'], { usercat: 'all', cmdcat: 'all', runasusercat: 'all' });
    await assert.rejects(admin.call('sudorule_add_user', ['wide'], { users: ['alice'] }), coded(3005, /users cannot be added when user category='all'/));
    await assert.rejects(admin.call('sudorule_add_allow_command', ['wide'], { sudocmds: ['/usr/bin/id'] }), coded(3005, /commands cannot be added when command category='all'/));
    await assert.rejects(admin.call('sudorule_add_runasuser', ['wide'], { users: ['bob'] }), coded(3005));
    await assert.rejects(admin.call('sudorule_mod', ['wide'], { addattr: `memberUser=uid=alice,cn=users,cn=accounts,dc=example,dc=test` }), coded(3005));
    // denied commands narrow command category all
    assert.deepEqual((await admin.call('sudorule_add_deny_command', ['wide'], { sudocmds: ['/bin/su'] })).result.memberdenycmd_sudocmd, ['/bin/su']);
  });

  it('sudorule-add-option and -remove-option; sudorule-enable and -disable', async () => {
    const opt = await admin.call('sudorule_add_option', ['web'], { sudooption: ['!authenticate'] });
    assert.equal(opt.summary, 'Added option "!authenticate" to Sudo Rule "web"');
    assert.deepEqual(opt.result.ipasudoopt, ['!authenticate']);
    await admin.call('sudorule_add_option', ['web'], { sudooption: ['env_keep+=LANG'] });
    await assert.rejects(admin.call('sudorule_add_option', ['web'], { sudooption: ['!authenticate'] }), coded(4002, /sudo option "!authenticate" is already in sudo rule "web"/));
    await assert.rejects(admin.call('sudorule_remove_option', ['web'], { sudooption: ['!requiretty'] }), coded(4022, /ipasudoopt does not contain '!requiretty'/));
    assert.deepEqual((await admin.call('sudorule_remove_option', ['web'], { sudooption: ['env_keep+=LANG'] })).result.ipasudoopt, ['!authenticate']);
    await assert.rejects(admin.call('sudorule_add_option', ['web'], {}), coded(3007));
    assert.equal((await admin.call('sudorule_disable', ['web'])).summary, 'Disabled Sudo Rule "web"');
    assert.deepEqual((await admin.call('sudorule_show', ['web'])).result.ipaenabledflag, [false]);
    await assert.rejects(admin.call('sudorule_disable', ['web']), coded(4010));
    assert.equal((await admin.call('sudorule_enable', ['web'])).summary, 'Enabled Sudo Rule "web"');
    await assert.rejects(admin.call('sudorule_enable', ['web']), coded(4009));
  });

  it('a command or command group a rule names is kept; a renamed user is followed, a deleted one leaves', async () => {
    await assert.rejects(admin.call('sudocmd_del', ['/bin/su']), coded(4210, /This entry is being referenced by other entries/));
    await assert.rejects(admin.call('sudocmdgroup_del', ['viewers']), coded(4210));
    await admin.call('user_mod', ['alice'], { rename: 'alicia' });
    assert.deepEqual((await admin.call('sudorule_show', ['web'])).result.memberuser_user, ['alicia']);
    await admin.call('group_mod', ['ops'], { rename: 'operators' });
    const r = (await admin.call('sudorule_show', ['web'])).result;
    assert.deepEqual([r.memberuser_group, r.ipasudorunas_group, r.ipasudorunasgroup_group], [['operators'], ['operators'], ['operators']]);
    await admin.call('user_del', ['alicia']);
    assert.equal((await admin.call('sudorule_show', ['web'])).result.memberuser_user, undefined);
    await realm.addActiveUser('alice', 'Alice-pass-1', { first: 'alice', last: 'L' });
  });

  it('anyone authenticated reads rules; only administrators and Sudo Administrators write them', async () => {
    assert.equal((await plain.call('sudorule_show', ['web'])).value, 'web');
    assert.ok((await plain.call('sudocmd_find', [])).count >= 4);
    await assert.rejects(plain.call('sudorule_add', ['mine']), coded(2100, /not allowed to perform 'sudorule-add'/));
    await assert.rejects(plain.call('sudorule_add_user', ['web'], { users: ['plain'] }), coded(2100));
    await assert.rejects(plain.call('sudocmd_add', ['/usr/bin/vim']), coded(2100));
    await assert.rejects(plain.call('sudocmdgroup_add', ['editors']), coded(2100));
    await sudoAdmin.call('sudocmd_add', ['/usr/bin/vim']);
    await sudoAdmin.call('sudocmdgroup_add', ['editors']);
    await sudoAdmin.call('sudocmdgroup_add_member', ['editors'], { sudocmds: ['/usr/bin/vim'] });
    await sudoAdmin.call('sudorule_add', ['editing'], { hostcat: 'all' });
    await sudoAdmin.call('sudorule_add_user', ['editing'], { users: ['plain', 'admin'] });
    await sudoAdmin.call('sudorule_add_allow_command', ['editing'], { sudocmdgroups: ['editors'] });
    await sudoAdmin.call('sudorule_add_runasuser', ['editing'], { users: ['bob'] });
    await sudoAdmin.call('sudorule_add_option', ['editing'], { sudooption: ['!authenticate'] });
    await sudoAdmin.call('sudorule_disable', ['editing']);
    await sudoAdmin.call('sudorule_enable', ['editing']);
    assert.equal((await sudoAdmin.call('sudorule_show', ['editing'])).result.memberuser_user.length, 2);
  });

  it('a Sudo Administrator lets no one act as a user or group that holds more, and does not change a rule that does', async () => {
    await assert.rejects(sudoAdmin.call('sudorule_add_runasuser', ['editing'], { users: ['admin'] }), coded(2100, /user "admin" holds administrator rights \(the admins group\): only administrators may let others act as it/));
    await assert.rejects(sudoAdmin.call('sudorule_add_runasgroup', ['editing'], { groups: ['admins'] }), coded(2100, /group "admins" holds administrator rights/));
    // a group stands for its members: running as any member of it runs as admin too
    await admin.call('group_add', ['mixed']);
    await admin.call('group_add_member', ['mixed'], { users: ['plain', 'admin'] });
    await assert.rejects(sudoAdmin.call('sudorule_add_runasuser', ['editing'], { groups: ['mixed'] }), coded(2100, /group "mixed" has the member user "admin", who holds administrator rights/));
    await assert.rejects(sudoAdmin.call('sudorule_mod', ['editing'], { runasusercat: 'all' }), coded(2100, /only administrators may give the right to act as any user/));
    await assert.rejects(sudoAdmin.call('sudorule_add', ['as-anyone'], { runasgroupcat: 'all' }), coded(2100, /only administrators may give the right to act as any group/));
    await assert.rejects(
      sudoAdmin.call('sudorule_mod', ['editing'], { addattr: 'ipaSudoRunAs=uid=admin,cn=users,cn=accounts,dc=example,dc=test' }),
      coded(2100, /only administrators may give the right to act as user "admin", which holds administrator rights/),
    );
    // a rule an administrator made to run as admin is beyond the delegate
    await admin.call('sudorule_add', ['as-admin']);
    await admin.call('sudorule_add_runasuser', ['as-admin'], { users: ['admin'] });
    const beyond = /Sudo Rule "as-admin" holds the right to act as user "admin", which holds administrator rights \(the admins group\): only administrators may change it/;
    await assert.rejects(sudoAdmin.call('sudorule_add_user', ['as-admin'], { users: ['plain'] }), coded(2100, beyond));
    await assert.rejects(sudoAdmin.call('sudorule_mod', ['as-admin'], { description: 'x' }), coded(2100, beyond));
    await assert.rejects(sudoAdmin.call('sudorule_del', ['as-admin']), coded(2100, beyond));
    await assert.rejects(sudoAdmin.call('sudorule_enable', ['as-admin']), coded(2100, beyond));
    const rights = (await sudoAdmin.call('sudorule_show', ['as-admin'], { all: true, rights: true })).result.attributelevelrights;
    assert.doesNotMatch(rights.cn, /w/);
    assert.match((await sudoAdmin.call('sudorule_show', ['editing'], { all: true, rights: true })).result.attributelevelrights.cn, /w/);
    // administrators keep every power
    await admin.call('sudorule_add_runasgroup', ['as-admin'], { groups: ['admins'] });
    await admin.call('sudorule_mod', ['as-admin'], { description: 'runs as the administrators' });
    await admin.call('sudorule_del', ['as-admin']);
  });

  it('a User Administrator or Group Administrator does not write sudo rules', async () => {
    await realm.addActiveUser('helpdesk', 'Helpdesk-pass-1', { first: 'h', last: 'd' });
    await grantRole(admin, 'help', 'User Administrators', { users: ['helpdesk'] });
    const helpdesk = await realm.login('helpdesk', 'Helpdesk-pass-1');
    await assert.rejects(helpdesk.call('sudorule_add', ['x']), coded(2100));
    await assert.rejects(helpdesk.call('sudocmd_add', ['/usr/bin/x']), coded(2100));
  });
});
