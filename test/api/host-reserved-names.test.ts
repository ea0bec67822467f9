/**
 * Names hosts give a meaning of their own (objects/posix.ts
 * checkHostReservedName, docs/access.md): sudoers matches `%sudo` by group
 * name, hosts give each user a private group named after its login, and MIT's
 * default aname_to_lname makes `root@REALM` the local root. No one, an
 * administrator included, gives a user's login or a group's name that is a
 * system user or group of Debian's base-passwd, `wheel` or `admin`, on add
 * or rename; nor a principal alias naming a host's system user. A realm that
 * holds such a name already (made before the rule) starts and keeps it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { grantRole, startAdminRealm, userSession, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';
import { startServer, type RunningServer } from '../../src/server/start.js';

/** Refused with ValidationError (3009) naming `option` and the rule. */
async function reserved(p: Promise<unknown>, option: string, name: string, why: RegExp): Promise<void> {
  const e = await rpcError(p);
  assert.equal(e.code, 3009, e.message);
  assert.match(e.message, new RegExp(`^invalid '${option}': "${name}" is a name hosts reserve \\(`));
  assert.match(e.message, why);
  assert.match(e.message, /a user or group of that name would get its rights on hosts; choose another$/);
}

describe('names hosts give a meaning of their own', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let users: RpcSession;
  let groups: RpcSession;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await admin.call('user_add', ['uadm'], { first: 'U', last: 'A', password: 'Uadm-pass-123' });
    await admin.call('user_add', ['gadm'], { first: 'G', last: 'A', password: 'Gadm-pass-123' });
    await admin.call('user_add', ['alice'], { first: 'A', last: 'L' });
    await admin.call('group_add', ['team']);
    await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
    await grantRole(admin, 'groupdesk', 'Group Administrators', { users: ['gadm'] });
    users = await userSession(realm, 'uadm', 'Uadm-pass-123');
    groups = await userSession(realm, 'gadm', 'Gadm-pass-123');
  });
  after(async () => realm.stop());

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

describe('a realm made before the rule keeps the names it holds', () => {
  let dataDir: string;
  let server: RunningServer | undefined;

  after(async () => {
    await server?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, and its user "sudo" and group "wheel" are shown, changed and renamed away, not back', async () => {
    const { realm, admin } = await startAdminRealm();
    dataDir = realm.dataDir;
    await admin.call('user_add', ['oldsudo'], { first: 'O', last: 'S', password: 'Oldsudo-pass-1' });
    await admin.call('group_add', ['oldwheel']);
    await admin.call('group_add_member', ['oldwheel'], { users: ['oldsudo'] });
    // as a release without the rule stored them
    const dir = realm.server.dir;
    const users = `cn=users,cn=accounts,${dir.baseDn}`;
    const groupsDn = `cn=groups,cn=accounts,${dir.baseDn}`;
    await dir.batch([
      { kind: 'modify', dn: `uid=oldsudo,${users}`, mods: [{ op: 'replace', attr: 'krbPrincipalName', values: ['sudo@EXAMPLE.TEST'] }] },
      { kind: 'rename', dn: `uid=oldsudo,${users}`, newRdn: 'uid=sudo' },
      { kind: 'rename', dn: `cn=oldwheel,${groupsDn}`, newRdn: 'cn=wheel' },
    ]);
    await realm.server.stop();

    const log: string[] = [];
    server = await startServer({ dataDir: join(dataDir, 'realm'), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => log.push(l) });
    const session = new RpcSession(`https://localhost:${server.httpsPort}`, realm.ca);
    assert.equal((await session.login('admin', realm.adminPassword)).status, 200);
    assert.deepEqual((await session.call('group_show', ['wheel'])).result.member_user, ['sudo']);
    await session.call('user_mod', ['sudo'], { first: 'Still' });
    await session.call('passwd', ['sudo', 'Sudo-pass-1234']);
    await session.call('group_mod', ['wheel'], { description: 'kept' });
    const own = new RpcSession(`https://localhost:${server.httpsPort}`, realm.ca);
    assert.equal((await own.login('sudo', 'Sudo-pass-1234')).status, 200, 'the user logs in as before');
    await session.call('user_mod', ['sudo'], { rename: 'formersudo' });
    await session.call('group_mod', ['wheel'], { rename: 'formerwheel' });
    await reserved(session.call('user_mod', ['formersudo'], { rename: 'sudo' }), 'rename', 'sudo', /system group "sudo"/);
    await reserved(session.call('group_mod', ['formerwheel'], { rename: 'wheel' }), 'rename', 'wheel', /give root to/);
  });
});
