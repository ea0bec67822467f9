/**
 * Password policies through the API and the LDAP service (issue 32): the
 * global policy every realm has (pwpolicy-show and pwpolicy-mod without a
 * group, FreeIPA's figures and units) and group policies by priority,
 * nested groups included; each rule refused on every way a password is set
 * through the API (user-add, user-mod, passwd, own and another's) and LDAP
 * Password Modify, with the rule named; a password an administrator sets has expired at once (the API
 * login and an LDAP simple bind say so, `ldapwhoami -e ppolicy` prints
 * "Password expired") and its user replaces it at the first login through
 * the API's password change, while init's admin password stays valid;
 * lockout by the user's policy on the API login and LDAP simple binds, one
 * count for both; user-status and user-show --all telling which policy
 * applies, the failures, the last logins and until when the account is
 * locked.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, changeOwnPassword, grantRole, startAdminRealm, userSession, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';

describe('password policies', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let ldap: LdapTools;
  const logIn = (user: string, password: string) => new RpcSession(realm.url, realm.ca).login(user, password);
  const refused = (rule: RegExp) => (e: Error & { code?: number }) => e.code === 3009 && rule.test(e.message);
  const userDn = (login: string) => `uid=${login},cn=users,cn=accounts,dc=example,dc=test`;
  const simpleBind = (login: string, password: string, extra: string[] = []) => ldap.run('ldapwhoami', ['-x', '-ZZ', '-H', realm.ldapUrl, '-D', userDn(login), '-w', password, ...extra]);

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    ldap = ldapTools(realm);
  });
  after(async () => realm?.stop());

  it("pwpolicy-show without a group shows the global policy: FreeIPA's figures, passwords without expiry as before", async () => {
    const shown = await admin.call('pwpolicy_show', [], {});
    assert.equal(shown.value, 'global_policy');
    assert.deepEqual(shown.result, {
      cn: ['global_policy'],
      krbmaxpwdlife: [0],
      krbminpwdlife: [0],
      krbpwdhistorylength: [0],
      krbpwdmindiffchars: [0],
      krbpwdminlength: [8],
      krbpwdmaxfailure: [6],
      krbpwdfailurecountinterval: [60],
      krbpwdlockoutduration: [600],
    });
    const found = await admin.call('pwpolicy_find', [], {});
    assert.deepEqual(found.result.map((p: { cn: string[] }) => p.cn[0]), ['global_policy']);
  });

  it('pwpolicy-mod takes days and hours and stores seconds, as FreeIPA; the global policy has no priority and is not deleted', async () => {
    const r = await admin.call('pwpolicy_mod', [], { maxlife: 90, minlife: 1 });
    assert.deepEqual([r.result.krbmaxpwdlife, r.result.krbminpwdlife], [[90], [1]]);
    const raw = await admin.call('pwpolicy_show', ['global_policy'], { raw: true });
    assert.deepEqual([raw.result.krbmaxpwdlife, raw.result.krbminpwdlife], [['7776000'], ['3600']]);
    await assert.rejects(admin.call('pwpolicy_mod', [], { priority: 3 }), refused(/the global policy has no priority/));
    await assert.rejects(admin.call('pwpolicy_del', ['global_policy'], {}), refused(/cannot delete the global password policy/));
    await assert.rejects(admin.call('pwpolicy_add', ['global_policy'], { priority: 1 }), refused(/global_policy is the global policy/));
    await admin.call('pwpolicy_mod', [], { maxlife: 0, minlife: 0 });
  });

  it('a group policy needs its group and a unique priority, takes the global figures it is not given, and goes with its group', async () => {
    await assert.rejects(admin.call('pwpolicy_add', ['nogroup'], { priority: 1 }), (e: Error) => /nogroup: group not found/.test(e.message));
    await admin.call('group_add', ['temps'], {});
    await assert.rejects(admin.call('pwpolicy_add', ['temps'], {}), (e: Error & { code?: number }) => e.code === 3007);
    const added = await admin.call('pwpolicy_add', ['temps'], { priority: 10, minlength: 12 });
    assert.deepEqual([added.result.krbpwdminlength, added.result.cospriority, added.result.krbpwdmaxfailure], [[12], [10], [6]]);
    await admin.call('group_add', ['other'], {});
    await assert.rejects(admin.call('pwpolicy_add', ['other'], { priority: 10 }), refused(/priority must be a unique value \(10 already used by temps\)/));
    assert.deepEqual((await admin.call('pwpolicy_find', [], {})).result.map((p: { cn: string[] }) => p.cn[0]), ['global_policy', 'temps']);
    await assert.rejects(admin.call('group_mod', ['temps'], { rename: 'temporaries' }), refused(/has a password policy/));
    await admin.call('group_del', ['temps'], {});
    await assert.rejects(admin.call('pwpolicy_show', ['temps'], {}), (e: Error) => /temps: password policy not found/.test(e.message));
  });

  it('the lowest priority number among the groups of a user wins, nested groups included; user-status and user-show --all say which', async () => {
    await admin.call('group_add', ['crew'], {});
    await admin.call('group_add', ['devs'], {});
    await admin.call('group_add_member', ['crew'], { groups: ['devs'] });
    await admin.call('pwpolicy_add', ['crew'], { priority: 20, minlength: 10 });
    await admin.call('pwpolicy_add', ['devs'], { priority: 5, minlength: 14 });
    await addActiveUser(admin, 'pia', 'Pia-password-1234');
    await addActiveUser(admin, 'sam', 'Sam-password-1234');
    await admin.call('group_add_member', ['devs'], { users: ['pia'] });
    await admin.call('group_add_member', ['crew'], { users: ['sam'] });
    assert.deepEqual((await admin.call('user_status', ['pia'], {})).result.pwpolicy, ['devs']);
    assert.deepEqual((await admin.call('user_status', ['sam'], {})).result.pwpolicy, ['crew']);
    assert.deepEqual((await admin.call('user_show', ['admin'], { all: true })).result.pwpolicy, ['global_policy']);
    // each is held to its own policy's length
    await assert.rejects(admin.call('user_mod', ['pia'], { password: 'Pia-pass-123' }), refused(/^invalid 'password': must be at least 14 characters$/));
    await admin.call('user_mod', ['sam'], { password: 'Sam-pass-1234' });
    await assert.rejects(admin.call('user_mod', ['sam'], { password: 'Sam-pass1' }), refused(/at least 10 characters/));
    await admin.call('pwpolicy_mod', ['devs'], { priority: 30 });
    assert.deepEqual((await admin.call('user_status', ['pia'], {})).result.pwpolicy, ['crew'], 'staff (20) now wins over devs (30) for a member of both');
    await admin.call('pwpolicy_del', ['devs', 'crew'], {});
  });

  it('character classes, history and the minimum lifetime, on passwd and user-mod, own and by an administrator', async () => {
    await admin.call('pwpolicy_mod', [], { minclasses: 3, history: 2, minlife: 1 });
    try {
      await addActiveUser(admin, 'cleo', 'Cleo-pass-1234');
      const cleo = await userSession(realm, 'cleo', 'Cleo-pass-1234');
      const own = (password: string, current = 'Cleo-pass-1234') => cleo.call('passwd', ['cleo', password], { current_password: current });
      // the user's first change after the administrator's password was at once: now the minimum lifetime binds her
      await assert.rejects(own('Cleo-pass-5678'), refused(/^invalid 'password': may not change again before .*Z: the password policy's minimum lifetime is 1 hour$/));
      await admin.call('pwpolicy_mod', [], { minlife: 0 });
      await assert.rejects(own('cleopassword'), refused(/must mix at least 3 character classes .*\(it has 1\)/));
      await assert.rejects(own('Cleo-pass-1234'), refused(/must not be one of the last 2 passwords of this user/));
      await own('Cleo-pass-5678');
      const cleo2 = await userSession(realm, 'cleo', 'Cleo-pass-5678');
      await assert.rejects(cleo2.call('passwd', ['cleo', 'Cleo-pass-1234'], { current_password: 'Cleo-pass-5678' }), refused(/last 2 passwords/));
      // an administrator is held to the history too, not to the minimum lifetime
      await admin.call('pwpolicy_mod', [], { minlife: 5 });
      await assert.rejects(admin.call('passwd', ['cleo', 'Cleo-pass-5678'], {}), refused(/last 2 passwords/));
      await admin.call('user_mod', ['cleo'], { password: 'Cleo-pass-9abc' });
      const stored = await admin.call('user_show', ['cleo'], { all: true, raw: true });
      assert.equal(stored.result.passwordhistory, undefined, 'the history is a secret, never shown');
    } finally {
      await admin.call('pwpolicy_mod', [], { minclasses: 0, history: 0, minlife: 0 });
    }
  });

  it('LDAP Password Modify (ldappasswd) is held to the same policy, the rule named', async () => {
    await admin.call('group_add', ['ldapers'], {});
    await admin.call('pwpolicy_add', ['ldapers'], { priority: 40, minclasses: 4 });
    await addActiveUser(admin, 'lena', 'Lena-pass-1234');
    await admin.call('group_add_member', ['ldapers'], { users: ['lena'] });
    const passwd = (to: string) => ldap.run('ldappasswd', ['-x', '-ZZ', '-H', realm.ldapUrl, '-D', userDn('lena'), '-w', 'Lena-pass-1234', '-a', 'Lena-pass-1234', '-s', to]);
    const r = await passwd('lenapass5678');
    assert.notEqual(r.code, 0);
    assert.match(r.stdout + r.stderr, /Constraint violation \(19\)[\s\S]*invalid 'password': must mix at least 4 character classes .*\(it has 2\)/);
    const ok = await passwd('Lena-pass-5678');
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    await admin.call('pwpolicy_del', ['ldapers'], {});
  });

  it("a password an administrator sets has expired: the API login and an LDAP simple bind say so; the user chooses a new one at the first login; init's admin password stays valid", async () => {
    await admin.call('user_add', ['nora'], { first: 'Nora', last: 'New', password: 'Nora-temp-1234' });
    const status = await admin.call('user_status', ['nora'], {});
    assert.match(status.summary, /^User "nora": password expired at /);
    const login = await logIn('nora', 'Nora-temp-1234');
    assert.equal(login.status, 401);
    assert.equal(login.headers['x-dirid-rejection-reason'], 'password-expired');
    const bind = await simpleBind('nora', 'Nora-temp-1234', ['-e', 'ppolicy']);
    assert.notEqual(bind.code, 0);
    assert.match(bind.stderr, /Invalid credentials \(49\); Password expired/, bind.stderr);
    assert.match(bind.stderr, /password expired/);
    // the change: the old password is checked (a wrong one refused), the new one held to the rules
    assert.equal((await changeOwnPassword(admin, 'nora', 'not-the-password', 'Nora-mine-5678')).headers['x-dirid-pwchange-result'], 'invalid-password');
    const short = await changeOwnPassword(admin, 'nora', 'Nora-temp-1234', 'short');
    assert.equal(short.headers['x-dirid-pwchange-result'], 'policy-error');
    assert.equal(short.headers['x-dirid-pwchange-policy-error'], "invalid 'password': must be at least 8 characters");
    const ok = await changeOwnPassword(admin, 'nora', 'Nora-temp-1234', 'Nora-mine-5678');
    assert.equal(ok.headers['x-dirid-pwchange-result'], 'ok', ok.body);
    assert.equal((await logIn('nora', 'Nora-mine-5678')).status, 200);
    const bound = await simpleBind('nora', 'Nora-mine-5678');
    assert.equal(bound.code, 0, bound.stderr);
    assert.equal((await logIn('nora', 'Nora-temp-1234')).status, 401);
    // the same password set by user-mod of another user, or passwd LOGIN, has expired too
    await admin.call('passwd', ['nora', 'Nora-reset-9999'], {});
    assert.equal((await logIn('nora', 'Nora-reset-9999')).headers['x-dirid-rejection-reason'], 'password-expired');
    assert.equal((await logIn('admin', realm.adminPassword)).status, 200, "init's admin password has not expired");
    assert.equal((await admin.call('user_show', ['admin'], { all: true })).result.krbpasswordexpiration, undefined);
  });

  it('a password the user sets lives --maxlife days; LDAP binds that ask are warned within a week', async () => {
    await admin.call('pwpolicy_mod', [], { maxlife: 3 });
    try {
      await addActiveUser(admin, 'max', 'Max-pass-1234');
      const exp = (await admin.call('user_show', ['max'], { all: true })).result.krbpasswordexpiration[0] as string;
      const days = (Date.parse(exp.replace(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z')) - Date.now()) / 86400_000;
      assert.ok(days > 2.99 && days <= 3, `expires in ${days} days`);
      const bind = await simpleBind('max', 'Max-pass-1234', ['-e', 'ppolicy']);
      assert.equal(bind.code, 0, bind.stderr);
      assert.match(bind.stderr, /Password expires in \d+ seconds/, bind.stderr);
    } finally {
      await admin.call('pwpolicy_mod', [], { maxlife: 0 });
    }
  });

  it("lockout follows the user's policy on the API login and LDAP simple binds, one count; user-status tells the count, the last logins and until when", async () => {
    await admin.call('group_add', ['strict'], {});
    await admin.call('pwpolicy_add', ['strict'], { priority: 1, maxfail: 3, failinterval: 120, lockouttime: 900 });
    await addActiveUser(admin, 'lou', 'Lou-pass-12345');
    await admin.call('group_add_member', ['strict'], { users: ['lou'] });
    assert.equal((await logIn('lou', 'Lou-pass-12345')).status, 200);
    assert.equal((await logIn('lou', 'wrong-password')).status, 401);
    assert.equal((await simpleBind('lou', 'wrong-password')).code, 49);
    let status = await admin.call('user_status', ['lou'], {});
    assert.deepEqual(status.result.krbloginfailedcount, ['2']);
    assert.match(status.result.krblastfailedauth[0], /^\d{14}Z$/);
    assert.match(status.result.krblastsuccessfulauth[0], /^\d{14}Z$/);
    assert.equal(status.result.locked_until, undefined);
    assert.equal((await logIn('lou', 'wrong-password')).status, 401);
    const locked = await logIn('lou', 'Lou-pass-12345');
    assert.equal(locked.status, 401);
    assert.equal(locked.headers['x-dirid-rejection-reason'], 'user-locked');
    const bind = await simpleBind('lou', 'Lou-pass-12345', ['-e', 'ppolicy']);
    assert.match(bind.stderr, /Account locked/, bind.stderr);
    status = await admin.call('user_status', ['lou'], {});
    assert.match(status.summary, /^User "lou": account locked after too many failed logins, until /);
    const until = status.result.locked_until[0] as string;
    const last = status.result.krblastfailedauth[0] as string;
    const t = (g: string) => Date.parse(g.replace(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
    assert.equal(t(until) - t(last), 900_000, 'locked for the policy\'s 900 s after the last failure');
    await admin.call('user_unlock', ['lou'], {});
    assert.equal((await logIn('lou', 'Lou-pass-12345')).status, 200);
    // the global policy's 6 failures would not have locked anyone yet
    await addActiveUser(admin, 'gus', 'Gus-pass-12345');
    for (let i = 0; i < 3; i++) assert.equal((await logIn('gus', 'wrong-password')).status, 401);
    assert.equal((await logIn('gus', 'Gus-pass-12345')).status, 200);
  });

  it('written by administrators and holders of Password Policy Administrators; read by any user', async () => {
    await addActiveUser(admin, 'pat', 'Pat-pass-12345');
    await addActiveUser(admin, 'una', 'Una-pass-12345');
    const una = await userSession(realm, 'una', 'Una-pass-12345');
    assert.deepEqual((await una.call('pwpolicy_show', [], {})).result.krbpwdminlength, [8]);
    await assert.rejects(una.call('pwpolicy_mod', [], { minlength: 4 }), (e: Error & { code?: number }) => e.code === 2100);
    await grantRole(admin, 'policy keepers', 'Password Policy Administrators', { users: ['pat'] });
    const pat = await userSession(realm, 'pat', 'Pat-pass-12345');
    assert.deepEqual((await pat.call('pwpolicy_mod', [], { minlength: 9 })).result.krbpwdminlength, [9]);
    await admin.call('pwpolicy_mod', [], { minlength: 8 });
  });
});
