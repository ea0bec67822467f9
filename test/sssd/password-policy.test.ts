/**
 * Password policies as a host of the realm meets them through pam_sss
 * (issue 32; the sssd.conf dirid-server writes, in a private namespace:
 * test/support/sssd.ts, pamtester driving every PAM phase): a password an
 * administrator set has expired, so the first login is told to change it
 * and chauthtok changes it through the password service, held to the
 * user's policy (a refused password is told with the rule); a password
 * that expires within a week is warned of at login, from the expiry the KDC
 * publishes in its reply (SSSD's default pwd_expiration_warning, 7 days);
 * failed passwords lock the account at the user's policy's maximum.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { answers, sssdHost, typePassword as password, type SssdHost } from '../support/sssd.js';


describe('password policies on a host, through pam_sss', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let host: SssdHost;

  before(async () => {
    ({ realm, admin } = await startAdminRealm({ idStart: 720_000 }));
    const data = join(realm.dataDir, 'realm');
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: data,
      hostPrincipal: 'host/localhost@EXAMPLE.TEST',
      users: [],
      caFile: join(data, 'ca.crt'),
      sssdConf: ({ keytab, caFile, ccDir }) =>
        readFileSync(join(data, 'sssd.conf'), 'utf8')
          .replaceAll('/etc/krb5.keytab', keytab)
          .replaceAll('/etc/dirid/ca.crt', caFile)
          .replace(/^(\[domain\/[^\]]+\])$/m, `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\nentry_cache_timeout = 2\ndebug_level = 6`),
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
  });

  it("an administrator's password has expired: the first login is told so, and chauthtok changes it, held to the policy", async () => {
    await admin.call('pwpolicy_mod', [], { minlength: 12 });
    try {
      await admin.call('user_add', ['tom'], { first: 'Tom', last: 'Host', password: 'Tom-temp-123456' });
      const told = await host.pam('tom', ['authenticate', 'acct_mgmt'], password('Tom-temp-123456'));
      assert.match(told.out, /successfully authenticated[\s\S]*Password expired\. Change your password now\./, told.out);
      const short = await host.pam(
        'tom',
        ['authenticate', 'chauthtok'],
        answers([
          [/Password: ?$/m, 'Tom-temp-123456\n'],
          [/Current Password: ?$/m, 'Tom-temp-123456\n'],
          [/New Password: ?$/m, 'Tom-new-1\n'],
          [/Reenter new Password: ?$/m, 'Tom-new-1\n'],
        ]),
      );
      assert.match(short.out, /must be at least 12 characters/, `${short.out}\n${short.sssdLog.slice(-3000)}`);
      assert.doesNotMatch(short.out, /authentication token altered successfully/);
      const changed = await host.pam(
        'tom',
        ['authenticate', 'chauthtok'],
        answers([
          [/Password: ?$/m, 'Tom-temp-123456\n'],
          [/Current Password: ?$/m, 'Tom-temp-123456\n'],
          [/New Password: ?$/m, 'Tom-mine-123456\n'],
          [/Reenter new Password: ?$/m, 'Tom-mine-123456\n'],
        ]),
      );
      assert.match(changed.out, /authentication token altered successfully/, changed.out);
      const after = await host.pam('tom', ['authenticate', 'acct_mgmt'], password('Tom-mine-123456'));
      assert.match(after.out, /successfully authenticated[\s\S]*account management done/, after.out);
    } finally {
      await admin.call('pwpolicy_mod', [], { minlength: 8 });
    }
  });

  it('a password that expires within a week is warned of at login', async () => {
    await admin.call('pwpolicy_mod', [], { maxlife: 3 });
    try {
      await addActiveUser(admin, 'val', 'Val-pass-12345', { first: 'Val', last: 'Host' });
      const r = await host.pam('val', ['authenticate'], password('Val-pass-12345'));
      assert.match(r.out, /Your password will expire in [23] day\(s\)\./, `${r.out}\n${r.sssdLog.slice(-3000)}`);
      assert.match(r.out, /successfully authenticated/);
    } finally {
      await admin.call('pwpolicy_mod', [], { maxlife: 0 });
    }
    // none for a password far from its expiry
    await addActiveUser(admin, 'wil', 'Wil-pass-12345', { first: 'Wil', last: 'Host' });
    const quiet = await host.pam('wil', ['authenticate'], password('Wil-pass-12345'));
    assert.match(quiet.out, /successfully authenticated/, quiet.out);
    assert.doesNotMatch(quiet.out, /will expire/);
  });

  it("failed passwords lock the account at the user's policy's maximum", async () => {
    await admin.call('group_add', ['hostlock'], {});
    await admin.call('pwpolicy_add', ['hostlock'], { priority: 1, maxfail: 2 });
    await addActiveUser(admin, 'liz', 'Liz-pass-12345', { first: 'Liz', last: 'Host' });
    await admin.call('group_add_member', ['hostlock'], { users: ['liz'] });
    for (let i = 0; i < 2; i++) assert.match((await host.pam('liz', ['authenticate'], password(`wrong-${i}-password`))).out, /Authentication failure/);
    const r = await host.pam('liz', ['authenticate'], password('Liz-pass-12345'));
    assert.match(r.out, /Permission denied/, r.out);
    assert.ok(realm.log.some((l) => /KDC_ERR_CLIENT_REVOKED reason="client liz@EXAMPLE\.TEST: account locked/.test(l)));
  });
});
