/**
 * What a host administrator sees of password users on a host of the realm
 * (the sssd.conf dirid-server writes, in a private namespace:
 * test/support/sssd.ts), through every PAM phase of pam_sss: a wrong then a
 * right password, a password expired at the KDC changed through pam_sss's
 * chauthtok (our password service), a disabled and a locked account, group
 * memberships (nested ones included) and their changes once SSSD's cache
 * has expired, and a renamed user. The host also asks the LDAP service
 * whether an account is disabled (nsAccountLock, SSSD's `rhds` expiry
 * policy), which is what stops a login that never runs pam_authenticate
 * (an SSH key).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { answers, sssdHost, typePassword as password, type SssdHost } from '../support/sssd.js';

const BASE = 710_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a host administrator: password users through every PAM phase of pam_sss', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let host: SssdHost;

  before(async () => {
    ({ realm, admin } = await startAdminRealm({ idStart: BASE }));
    for (const u of ['alice', 'bob', 'carl', 'dave', 'eve']) await addActiveUser(admin, u, `${u}-Pw-1234`, { first: u, last: 'Host' });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add', ['ops']);
    await admin.call('group_add', ['all']);
    await admin.call('group_add_member', ['devs'], { users: ['alice', 'eve'] });
    await admin.call('group_add_member', ['ops'], { users: ['alice'] });
    await admin.call('group_add_member', ['all'], { groups: ['devs'] });
    const data = join(realm.dataDir, 'realm');
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: data,
      hostPrincipal: 'host/localhost@EXAMPLE.TEST',
      users: [],
      caFile: join(data, 'ca.crt'),
      sssdConf: ({ keytab, caFile, ccDir }) =>
        readFileSync(join(data, 'sssd.conf'), 'utf8')
          .replaceAll(join(data, 'host.keytab'), keytab)
          .replaceAll(join(data, 'ca.crt'), caFile)
          .replace(
            /^(\[domain\/[^\]]+\])$/m,
            // a short cache, so that changes in dirid are seen within the test (the account check is the written file's own)
            `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\nentry_cache_timeout = 2\ndebug_level = 6`,
          ),
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
  });

  const kdcLines = (user: string) => realm.log.filter((l) => l.includes(`client=${user}@`)).join('\n');

  it('a wrong password fails; the right one passes authenticate, acct_mgmt and the session', async () => {
    const wrong = await host.pam('alice', ['authenticate'], password('not-her-password'));
    assert.match(wrong.out, /Authentication failure/, wrong.out);
    const right = await host.pam('alice', ['authenticate', 'acct_mgmt', 'open_session', 'close_session'], password('alice-Pw-1234'));
    assert.match(right.out, /successfully authenticated[\s\S]*account management done[\s\S]*successfully opened a session[\s\S]*session has successfully been closed/, `${right.out}\n${right.sssdLog.slice(-4000)}`);
  });

  it('a user added without a password: "Authentication failure", not a "System error"', async () => {
    await admin.call('user_add', ['nopw'], { first: 'No', last: 'Password' });
    const r = await host.pam('nopw', ['authenticate'], password('anything-1234'));
    assert.match(r.out, /Authentication failure/, `${r.out}\n${r.sssdLog.slice(-3000)}`);
    assert.doesNotMatch(r.out, /System error/);
  });

  it('a password expired at the KDC: acct_mgmt asks for a new one, chauthtok changes it through the password service', async () => {
    await admin.call('user_mod', ['bob'], { setattr: ['krbPasswordExpiration=20200101000000Z'] });
    const told = await host.pam('bob', ['authenticate', 'acct_mgmt'], password('bob-Pw-1234'));
    assert.match(told.out, /successfully authenticated[\s\S]*Password expired\. Change your password now\./, told.out);
    const changed = await host.pam(
      'bob',
      ['authenticate', 'chauthtok'],
      answers([
        [/Password: ?$/m, 'bob-Pw-1234\n'],
        [/Current Password: ?$/m, 'bob-Pw-1234\n'],
        [/New Password: ?$/m, 'bob-New-5678\n'],
        [/Reenter new Password: ?$/m, 'bob-New-5678\n'],
      ]),
    );
    assert.match(changed.out, /authentication token altered successfully/, `${changed.out}\n${kdcLines('bob')}`);
    assert.ok(realm.log.some((l) => /kpasswd chpw .*client=bob@EXAMPLE\.TEST .*outcome=SUCCESS/.test(l)), realm.log.filter((l) => l.includes('kpasswd')).join('\n'));
    const after = await host.pam('bob', ['authenticate', 'acct_mgmt'], password('bob-New-5678'));
    assert.match(after.out, /successfully authenticated[\s\S]*account management done/, after.out);
    const old = await host.pam('bob', ['authenticate'], password('bob-Pw-1234'));
    assert.match(old.out, /Authentication failure/, old.out);
  });

  it('a disabled user is refused at authenticate (the KDC) and at acct_mgmt alone (nsAccountLock over LDAP)', async () => {
    const before = await host.pam('dave', ['acct_mgmt'], () => {});
    assert.match(before.out, /account management done/, before.out);
    await admin.call('user_mod', ['dave'], { disabled: true });
    await sleep(2500);
    const auth = await host.pam('dave', ['authenticate'], password('dave-Pw-1234'));
    assert.match(auth.out, /Permission denied/, auth.out);
    assert.match(kdcLines('dave'), /KDC_ERR_CLIENT_REVOKED reason="client dave@EXAMPLE\.TEST: account disabled"/);
    const acct = await host.pam('dave', ['acct_mgmt'], () => {});
    assert.match(acct.out, /Permission denied/, `${acct.out}\n${acct.sssdLog.slice(-4000)}`);
  });

  it('a user locked out by failed passwords is refused even with the right one', async () => {
    for (let i = 0; i < 6; i++) {
      const r = await host.pam('carl', ['authenticate'], password(`wrong-${i}-password`));
      assert.match(r.out, /Authentication failure/, r.out);
    }
    const r = await host.pam('carl', ['authenticate'], password('carl-Pw-1234'));
    assert.match(r.out, /Permission denied/, r.out);
    assert.match(kdcLines('carl'), /KDC_ERR_CLIENT_REVOKED reason="client carl@EXAMPLE\.TEST: account locked/);
  });

  it('id shows every group, nested ones included, and a removal once the cache has expired', async () => {
    const r = await host.exec('id alice; getent group all');
    assert.match(r.out, /uid=710002\(alice\) gid=710002\(alice\) groups=/, `${r.out}\n${r.sssdLog.slice(-4000)}`);
    const groups = (out: string) => (/groups=(\S+)/.exec(out)?.[1] ?? '').split(',').map((g) => g.replace(/^\d+\(|\)$/g, '')).sort();
    assert.deepEqual(groups(r.out), ['alice', 'all', 'devs', 'ops']);
    assert.match(r.out, /^all:\*:\d+:(alice,eve|eve,alice)\r?$/m, r.out);
    await admin.call('group_remove_member', ['ops'], { users: ['alice'] });
    await sleep(2500);
    const later = await host.exec('id alice');
    assert.deepEqual(groups(later.out), ['alice', 'all', 'devs'], later.out);
  });

  it('a renamed user resolves and logs in under the new name only, with the same uid', async () => {
    await admin.call('user_mod', ['eve'], { rename: 'evelyn' });
    await sleep(2500);
    const r = await host.exec('getent passwd eve || echo "eve: rc=$?"; getent passwd evelyn; getent group devs');
    assert.match(r.out, /^eve: rc=2\r?$/m, r.out);
    assert.match(r.out, /^evelyn:\*:710006:710006:/m, r.out);
    assert.match(r.out, /^devs:\*:\d+:(alice,evelyn|evelyn,alice)\r?$/m, r.out);
    const login = await host.pam('evelyn', ['authenticate', 'acct_mgmt'], password('eve-Pw-1234'));
    assert.match(login.out, /successfully authenticated[\s\S]*account management done/, login.out);
    const old = await host.pam('eve', ['authenticate'], password('eve-Pw-1234'));
    assert.match(old.out, /User not known to the underlying authentication module/, old.out);
  });
});
