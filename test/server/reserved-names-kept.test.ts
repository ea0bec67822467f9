/**
 * A realm that holds a name hosts reserve (objects/posix.ts
 * checkHostReservedName: a user "sudo", a group "wheel"), stored by a
 * release made before the rule, starts and keeps it: the entries are shown,
 * changed and renamed away, the user logs in, and a name is not renamed
 * back. The rule itself is test/objects/host-reserved-names.test.ts's.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, changeOwnPassword } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { reservedName as reserved } from '../support/expect.js';
import { startServer, type RunningServer } from '../../src/server/start.js';

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
    // an administrator's password has expired at once: the user chooses its own at the first login
    await session.call('passwd', ['sudo', 'Sudo-temp-1234']);
    assert.equal((await changeOwnPassword(session, 'sudo', 'Sudo-temp-1234', 'Sudo-pass-1234')).headers['x-dirid-pwchange-result'], 'ok');
    await session.call('group_mod', ['wheel'], { description: 'kept' });
    const own = new RpcSession(`https://localhost:${server.httpsPort}`, realm.ca);
    assert.equal((await own.login('sudo', 'Sudo-pass-1234')).status, 200, 'the user logs in as before');
    await session.call('user_mod', ['sudo'], { rename: 'formersudo' });
    await session.call('group_mod', ['wheel'], { rename: 'formerwheel' });
    await reserved(session.call('user_mod', ['formersudo'], { rename: 'sudo' }), 'rename', 'sudo', /system group "sudo"/);
    await reserved(session.call('group_mod', ['formerwheel'], { rename: 'wheel' }), 'rename', 'wheel', /give root to/);
  });
});
