/**
 * A session ends when the password changes (issue 27 item 4;
 * account/state.ts, rpc/session.ts): a session cookie issued before the
 * user's password was set by an administrator or a User Administrator, or
 * changed by the user (through that very session too), before the account
 * was disabled (also once it is enabled again), renamed (also once it has
 * its name back) or deleted (also once another user has its name), is
 * refused at its next use with 401 NotAuthenticated, over real HTTPS
 * requests; the password changed with MIT kpasswd (the password service)
 * and OpenLDAP's ldappasswd (Password Modify) too. A fresh login works (after a
 * reset, once the user has replaced the expired password); changes that are none of these (a name, an
 * unlock) leave the session alone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, changeOwnPassword, grantRole, startAdminRealm, userSession, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { ldapTools } from '../support/ldap-tools.js';

describe('a session ends when the password changes, the account is disabled, renamed or deleted', () => {
  let realm: TestRealm;
  let admin: RpcSession;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await addActiveUser(admin, 'uadm', 'Uadm-pass-123', { first: 'U', last: 'A' });
    await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
  });
  after(async () => realm.stop());

  /** A user made now, logged in, and a copy of its cookie (as one taken from the browser). */
  async function loggedIn(login: string, password: string): Promise<{ session: RpcSession; copy: RpcSession }> {
    await addActiveUser(admin, login, password, { first: 'F', last: 'L' });
    const session = await userSession(realm, login, password);
    const copy = new RpcSession(realm.url, realm.ca);
    copy.cookie = session.cookie;
    assert.equal((await copy.raw('ping')).status, 200, 'the copy works before');
    return { session, copy };
  }

  /** The first login after an administrator set the password: the user replaces it, then logs in with their own. */
  async function firstLogin(login: string, temporary: string, own: string): Promise<RpcSession> {
    assert.equal((await changeOwnPassword(admin, login, temporary, own)).headers['x-dirid-pwchange-result'], 'ok');
    return userSession(realm, login, own);
  }

  /** The cookie is refused at its next use: 401 NotAuthenticated, no command run. */
  async function ended(s: RpcSession, why = /the password changed, or the account was disabled or renamed, since the session began/): Promise<void> {
    const since = realm.log.length;
    const r = await s.raw('user_find');
    assert.equal(r.status, 401, r.http.body);
    assert.equal(r.response.error?.name, 'NotAuthenticated');
    assert.equal(r.response.error?.code, 1001);
    assert.equal(r.response.result, null);
    const line = realm.log.slice(since).find((l) => / login method=session principal=.* outcome=denied /.test(l));
    assert.ok(line, realm.log.slice(since).join('\n'));
    assert.match(line, why);
  }

  it("an administrator's reset ends the user's sessions; the new password opens a new one", async () => {
    const { session, copy } = await loggedIn('reset', 'Reset-pass-01');
    await admin.call('passwd', ['reset', 'Reset-pass-02']);
    await ended(copy);
    await ended(session);
    // the administrator's password has expired: the user chooses a new one at the first login
    const fresh = await firstLogin('reset', 'Reset-pass-02', 'Reset-pass-03');
    assert.equal((await fresh.raw('ping')).status, 200);
  });

  it("a User Administrator's reset, and user-mod --password, end them too", async () => {
    const uadm = await userSession(realm, 'uadm', 'Uadm-pass-123');
    const a = await loggedIn('helped', 'Helped-pass-1');
    await uadm.call('passwd', ['helped', 'Helped-pass-2']);
    await ended(a.copy);
    const b = await firstLogin('helped', 'Helped-pass-2', 'Helped-pass-2a');
    await admin.call('user_mod', ['helped'], { password: 'Helped-pass-3' });
    await ended(b);
    // the stamp is the server's: set back by a delegate, it would bring the ended session back
    const stamp = (await admin.call('user_show', ['helped'], { all: true })).result.dirsecuritystamp as string[];
    await assert.rejects(uadm.call('user_mod', ['helped'], { setattr: [`dirSecurityStamp=${stamp[0]}x`] }), (e: Error & { code?: number }) => e.code === 2100 && /only administrators may change 'dirSecurityStamp'/.test(e.message));
  });

  it('changing one\'s own password ends every session of the user, the one that changed it included', async () => {
    const { session, copy } = await loggedIn('own', 'Own-pass-0001');
    await session.call('passwd', [null, 'Own-pass-0002'], { current_password: 'Own-pass-0001' });
    await ended(copy);
    await ended(session);
    assert.equal((await new RpcSession(realm.url, realm.ca).login('own', 'Own-pass-0002')).status, 200);
  });

  it('a password changed through the password service (MIT kpasswd) or LDAP Password Modify (ldappasswd) ends them too', async () => {
    const k = await loggedIn('viakpw', 'Viakpw-pass-1');
    const env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'none.cc')}` };
    const kpw = await runTool('kpasswd', ['viakpw'], env, 'Viakpw-pass-1\nViakpw-pass-2\nViakpw-pass-2\n');
    assert.equal(kpw.code, 0, kpw.stdout + kpw.stderr);
    await ended(k.copy);
    const l = await loggedIn('vialdap', 'Vialdap-pass-1');
    const dn = 'uid=vialdap,cn=users,cn=accounts,dc=example,dc=test';
    const lp = await ldapTools(realm).run('ldappasswd', ['-x', '-H', realm.ldapsUrl, '-D', dn, '-w', 'Vialdap-pass-1', '-a', 'Vialdap-pass-1', '-s', 'Vialdap-pass-2']);
    assert.equal(lp.code, 0, lp.stdout + lp.stderr);
    await ended(l.copy);
  });

  it('disabling ends the sessions for good: refused while disabled, and still once enabled again', async () => {
    const { copy } = await loggedIn('dis', 'Dis-pass-0001');
    await admin.call('user_mod', ['dis'], { disabled: true });
    const r = await copy.raw('ping');
    assert.equal(r.status, 401);
    assert.equal(r.response.error?.name, 'AccountDisabled');
    await admin.call('user_mod', ['dis'], { disabled: false });
    await ended(copy);
    const viaSetattr = await userSession(realm, 'dis', 'Dis-pass-0001');
    await admin.call('user_mod', ['dis'], { setattr: ['nsAccountLock=TRUE'] });
    await admin.call('user_mod', ['dis'], { setattr: ['nsAccountLock=FALSE'] });
    await ended(viaSetattr);
  });

  it('a rename ends the sessions, also once the user has its old name back', async () => {
    const { copy } = await loggedIn('ren', 'Ren-pass-0001');
    await admin.call('user_mod', ['ren'], { rename: 'ren2' });
    await ended(copy, /the account no longer exists/);
    await admin.call('user_mod', ['ren2'], { rename: 'ren' });
    await ended(copy);
  });

  it('a deleted user\'s cookie is not the session of another user made under its name', async () => {
    const { copy } = await loggedIn('gone', 'Gone-pass-0001');
    await admin.call('user_del', ['gone']);
    await ended(copy, /the account no longer exists/);
    await addActiveUser(admin, 'gone', 'Gone-pass-0002', { first: 'New', last: 'Gone' });
    await ended(copy, /the account was deleted and another made under its name/);
  });

  it('other changes leave the session alone', async () => {
    const { copy } = await loggedIn('kept', 'Kept-pass-0001');
    await admin.call('user_mod', ['kept'], { first: 'Kept', email: ['kept@example.test'] });
    await admin.call('user_unlock', ['kept']);
    await admin.call('user_mod', ['kept'], { disabled: false });
    const r = await copy.raw('user_show', ['kept']);
    assert.equal(r.status, 200, r.http.body);
    assert.equal(r.response.error, null);
  });
});
