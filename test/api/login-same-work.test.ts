/**
 * A password login does not tell who exists by the time it takes: the
 * password login rule (objects/login.ts) computes one scrypt with the
 * parameters of a stored password for every attempt, whether the user
 * exists and the password is wrong, or the user is unknown, has no
 * password, or may not log in (disabled, locked, expired). Counted on the
 * server's own scrypt calls (node:crypto, watched in this process, where
 * the test realm runs), through the API's login_password and the LDAP
 * service's simple bind (ldapwhoami over LDAPS).
 */
import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';
import { DEFAULT_LOCKOUT } from '../../src/account/state.js';

const PAST = '20000101000000Z';
const USERS = 'cn=users,cn=accounts,dc=example,dc=test';

/** The cost parameters of one scrypt call: what a stored password's check spends. */
type Work = { N: number; r: number; p: number; keylen: number };

describe('every password login costs the same hash work', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  let scrypt: ReturnType<typeof mock.method>;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    const user = (login: string, options: Record<string, unknown>) => admin.call('user_add', [login], { first: login, last: 'Test', ...options } as never);
    await addActiveUser(admin, 'wendy', 'Wendy-pass-1');
    await user('nopass', {});
    await user('dora', { password: 'Dora-pass-12', disabled: true });
    await user('erin', { password: 'Erin-pass-12' });
    await admin.call('user_mod', ['erin'], { setattr: [`krbPrincipalExpiration=${PAST}`] });
    await user('lara', { password: 'Lara-pass-12' });
    for (let i = 0; i < DEFAULT_LOCKOUT.maxFailures; i++) await new RpcSession(realm.url, realm.ca).login('lara', 'not-her-password');
    // the server's scrypt calls from here on (the realm runs in this process)
    scrypt = mock.method(crypto, 'scrypt');
    syncBuiltinESMExports();
  });
  after(async () => {
    scrypt?.mock.restore();
    syncBuiltinESMExports();
    await realm?.stop();
  });

  /** The scrypt work `attempt` made the server do. */
  async function workOf(attempt: () => Promise<unknown>): Promise<Work[]> {
    const before = scrypt.mock.callCount();
    await attempt();
    return scrypt.mock.calls.slice(before).map((c) => {
      const [, , keylen, o] = c.arguments as [unknown, unknown, number, { N: number; r: number; p: number }];
      return { N: o.N, r: o.r, p: o.p, keylen };
    });
  }

  const login = async (user: string, password: string, status: number, message: RegExp) => {
    const r = await new RpcSession(realm.url, realm.ca).login(user, password);
    assert.equal(r.status, status, `${user}: ${r.body}`);
    assert.match(r.body, message);
  };
  const bind = async (login: string, password: string, code: number) => {
    const r = await tools.run('ldapwhoami', ['-x', '-H', realm.ldapsUrl, '-D', `uid=${login},${USERS}`, '-w', password]);
    assert.equal(r.code, code, `${login}: ${r.stderr}`);
  };

  it('login_password: an unknown user, one without a password, a disabled, an expired and a locked one cost what a wrong password costs', async () => {
    const wrong = await workOf(() => login('wendy', 'Not-her-pass-1', 401, /invalid user name or password/));
    assert.equal(wrong.length, 1, 'a wrong password is one scrypt');
    const right = await workOf(() => login('wendy', 'Wendy-pass-1', 200, /Authenticated as wendy@EXAMPLE\.TEST/));
    assert.deepEqual(right, wrong);
    const cases: [string, string, RegExp][] = [
      ['nobody', 'unknown user', /invalid user name or password/],
      ['nobody@EXAMPLE.TEST', 'unknown user, with the realm', /invalid user name or password/],
      ['HTTP/localhost', 'not a user name', /invalid user name or password/],
      ['nopass', 'a user without a password', /invalid user name or password/],
      ['dora', 'a disabled user', /disabled/i],
      ['erin', 'an expired user', /expired/i],
      ['lara', 'a locked user', /locked/i],
    ];
    for (const [user, what, message] of cases) {
      assert.deepEqual(await workOf(() => login(user, 'Some-pass-123', 401, message)), wrong, what);
    }
  });

  it('the LDAP simple bind: an unknown user, one without a password and a disabled one cost what a wrong password costs', async () => {
    const wrong = await workOf(() => bind('wendy', 'Not-her-pass-2', 49));
    assert.equal(wrong.length, 1);
    for (const [user, code] of [['nobody', 49], ['nopass', 49], ['dora', 53]] as const) assert.deepEqual(await workOf(() => bind(user, 'Some-pass-123', code)), wrong, user);
  });
});
