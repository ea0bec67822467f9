/**
 * Password policies as MIT's tools meet them (issue 32): a password an
 * administrator sets has expired, and MIT kinit asks for a new one at the
 * first login, which the policy holds to its rules (a refused one is told
 * with the rule, and kinit asks again); MIT kpasswd is refused with the rule
 * a password breaks (length, classes, history, minimum lifetime); a password
 * the user set expires after --maxlife days and MIT kinit and `dirid kinit`
 * warn within a week; failed passwords lock the account at the KDC after
 * the user's policy's maximum, counted across the API login too; `dirid
 * kinit` says when a password has expired.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, cliClient, startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { RpcSession as Session } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('password policies through MIT kinit and kpasswd', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
  });
  after(async () => realm?.stop());

  const ccache = (user: string) => `FILE:${join(realm.dataDir, `${user}.cc`)}`;
  const kinit = (user: string, input: string) => runTool('kinit', ['-c', ccache(user), user], env, input);
  const kpasswd = (user: string, input: string) => runTool('kpasswd', [user], { ...env, KRB5CCNAME: ccache(`${user}-kpasswd`) }, input);

  it('a password an administrator set: MIT kinit says it expired and asks for a new one, held to the policy, then logs in', async () => {
    await admin.call('pwpolicy_mod', [], { minlength: 10, maxlife: 30 });
    try {
      await admin.call('user_add', ['kim'], { first: 'Kim', last: 'Test', password: 'Kim-temp-12345' });
      const k = await kinit('kim', 'Kim-temp-12345\nKim-new-1\nKim-new-1\nKim-new-12345\nKim-new-12345\n');
      assert.equal(k.code, 0, k.stdout + k.stderr);
      assert.match(k.stdout, /Password expired\.  You must change it now\./);
      assert.match(k.stdout, /Password change rejected: invalid 'password': must be at least 10 characters\.  Please try again\./);
      assert.match((await runTool('klist', ['-c', ccache('kim')], env)).stdout, /Default principal: kim@EXAMPLE\.TEST[\s\S]*krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
      // the password she chose is hers: not expired, it lives the policy's 30 days
      const again = await kinit('kim', 'Kim-new-12345\n');
      assert.equal(again.code, 0, again.stdout + again.stderr);
      assert.doesNotMatch(again.stdout, /expire/i);
      const status = await admin.call('user_status', ['kim'], {});
      assert.equal(status.summary, 'User "kim": may log in');
      const exp = status.result.krbpasswordexpiration[0] as string;
      const days = (Date.parse(exp.replace(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z')) - Date.now()) / 86400_000;
      assert.ok(days > 29.9 && days <= 30, `${days} days`);
    } finally {
      await admin.call('pwpolicy_mod', [], { minlength: 8, maxlife: 0 });
    }
  });

  it('MIT kpasswd is refused with the rule the password breaks: classes, history, minimum lifetime', async () => {
    await admin.call('group_add', ['kp'], {});
    await admin.call('pwpolicy_add', ['kp'], { priority: 1, minclasses: 3, history: 3 });
    await addActiveUser(admin, 'kai', 'Kai-pass-12345');
    await admin.call('group_add_member', ['kp'], { users: ['kai'] });
    const rejected = async (input: string, rule: RegExp) => {
      const r = await kpasswd('kai', input);
      assert.notEqual(r.code, 0, r.stdout);
      assert.match(r.stdout, rule, r.stdout + r.stderr);
    };
    await rejected('Kai-pass-12345\nkaipassword\nkaipassword\n', /^Password change rejected: invalid 'password': must mix at least 3 character classes of .* \(it has 1\)$/m);
    await rejected('Kai-pass-12345\nKai-pass-12345\nKai-pass-12345\n', /^Password change rejected: invalid 'password': must not be one of the last 3 passwords of this user$/m);
    const ok = await kpasswd('kai', 'Kai-pass-12345\nKai-pass-67890\nKai-pass-67890\n');
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    await admin.call('pwpolicy_mod', ['kp'], { minlife: 2 });
    await rejected('Kai-pass-67890\nKai-pass-abcde\nKai-pass-abcde\n', /^Password change rejected: invalid 'password': may not change again before .*Z: the password policy's minimum lifetime is 2 hours$/m);
    // the temporary password the administrator set is remembered too
    await admin.call('pwpolicy_mod', ['kp'], { minlife: 0 });
    const temporary = await kpasswd('kai', 'Kai-pass-67890\nKai-pass-12345\nKai-pass-12345\n');
    assert.match(temporary.stdout, /last 3 passwords/, temporary.stdout);
  });

  it('a password that expires within a week: MIT kinit and dirid kinit warn', async () => {
    await admin.call('pwpolicy_mod', [], { maxlife: 3 });
    try {
      await addActiveUser(admin, 'wes', 'Wes-pass-12345');
      const k = await kinit('wes', 'Wes-pass-12345\n');
      assert.equal(k.code, 0, k.stderr);
      assert.match(k.stdout, /Warning: Your password will expire in [23] days on /, k.stdout);
      const { conf, env: cliEnv } = cliClient(realm, { KRB5CCNAME: ccache('wes-dirid') });
      const d = await runTool(process.execPath, [DIRID, '-c', conf, 'kinit', 'wes'], cliEnv, 'Wes-pass-12345\n');
      assert.equal(d.code, 0, d.stderr);
      assert.match(d.stdout, /^Warning: Your password will expire in [23] days on /m, d.stdout);
    } finally {
      await admin.call('pwpolicy_mod', [], { maxlife: 0 });
    }
    // a password without expiry, or far from it: no warning
    await addActiveUser(admin, 'ned', 'Ned-pass-12345');
    assert.doesNotMatch((await kinit('ned', 'Ned-pass-12345\n')).stdout, /Warning/);
    // one an administrator set has expired: dirid kinit says so, and where a new one is chosen
    await admin.call('passwd', ['ned', 'Ned-reset-12345']);
    const { conf, env: cliEnv } = cliClient(realm, { KRB5CCNAME: ccache('ned-dirid') });
    const expired = await runTool(process.execPath, [DIRID, '-c', conf, 'kinit', 'ned'], cliEnv, 'Ned-reset-12345\n');
    assert.equal(expired.code, 1);
    assert.match(expired.stderr, /Password has expired \(choose a new one: kpasswd, or MIT kinit, asks for it\) while getting initial credentials/, expired.stderr);
  });

  it("failed passwords lock the account at the user's policy's maximum, counted by the KDC and the API alike", async () => {
    await admin.call('group_add', ['locky'], {});
    await admin.call('pwpolicy_add', ['locky'], { priority: 2, maxfail: 3, lockouttime: 120 });
    await addActiveUser(admin, 'lee', 'Lee-pass-12345');
    await admin.call('group_add_member', ['locky'], { users: ['lee'] });
    for (let i = 0; i < 2; i++) assert.match((await kinit('lee', 'wrong-password\n')).stderr, /Password incorrect/);
    assert.equal((await new Session(realm.url, realm.ca).login('lee', 'wrong-password')).status, 401);
    const k = await kinit('lee', 'Lee-pass-12345\n');
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Client's credentials have been revoked/);
    assert.ok(realm.log.some((l) => /kdc as_req .*client=lee@EXAMPLE\.TEST .*KDC_ERR_CLIENT_REVOKED reason="client lee@EXAMPLE\.TEST: account locked after too many failed logins, until /.test(l)));
    const status = await admin.call('user_status', ['lee'], {});
    assert.deepEqual(status.result.krbloginfailedcount, ['3']);
    assert.ok(status.result.locked_until);
  });
});
