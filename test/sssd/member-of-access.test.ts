/**
 * `ldap_access_filter = (memberOf=…)` on a host (docs/ldap.md "memberOf"):
 * SSSD (Debian's 2.8) with the sssd.conf dirid-server writes, its access
 * order narrowed to `filter` and its filter to membership of `devs`, in a
 * private namespace (test/support/sssd.ts). PAM's account phase (pamtester
 * acct_mgmt) lets in alice, a member of devs through ops, and refuses bob,
 * who is in no group.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { sssdHost, type SssdHost } from '../support/sssd.js';

const FQDN = 'web1.example.test';
const DEVS = 'cn=devs,cn=groups,cn=accounts,dc=example,dc=test';

function outcomes(out: string): string[] {
  return [...out.matchAll(/^acct (\S+) rc=(\d+)\r?$/gm)].map((m) => `${m[1]} ${m[2] === '0' ? 'ok' : 'denied'}`);
}
const acct = (user: string) => `rc=0; pamtester sshd ${user} acct_mgmt >/dev/null 2>&1 || rc=$?; echo "acct ${user} rc=$rc"`;

describe('SSSD ldap_access_filter on memberOf: members (nested too) pass, others are refused', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let host: SssdHost;

  before(async () => {
    ({ realm, admin } = await startAdminRealm({ idStart: 730_000 }));
    for (const u of ['alice', 'bob']) await admin.call('user_add', [u], { first: u, last: 'L', password: `${u}-Pass-1234` });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add', ['ops']);
    await admin.call('group_add_member', ['ops'], { users: ['alice'] });
    await admin.call('group_add_member', ['devs'], { groups: ['ops'] });
    await admin.call('host_add', [FQDN]);
    const data = join(realm.dataDir, 'realm');
    const keytab = join(realm.dataDir, `${FQDN}.keytab`);
    writeFileSync(keytab, (await admin.call('keytab_get', [`host/${FQDN}`])).result.keytab as Buffer);
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: data,
      hostPrincipal: `host/${FQDN}@EXAMPLE.TEST`,
      users: [],
      caFile: join(data, 'ca.crt'),
      keytab,
      pamServices: ['sshd'],
      sssdConf: ({ keytab: kt, caFile, ccDir }) => {
        const conf = readFileSync(join(data, 'sssd.conf'), 'utf8');
        assert.match(conf, /^ldap_access_order = .*$/m);
        assert.match(conf, /^ldap_access_filter = .*$/m);
        return conf
          .replaceAll('host/localhost@', `host/${FQDN}@`)
          .replaceAll(join(data, 'host.keytab'), kt)
          .replaceAll(join(data, 'ca.crt'), caFile)
          .replace(/^ldap_access_order = .*$/m, 'ldap_access_order = filter')
          .replace(/^ldap_access_filter = .*$/m, `ldap_access_filter = (memberOf=${DEVS})`)
          .replace(/^(\[domain\/[^\]]+\])$/m, `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\ndebug_level = 6`);
      },
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
  });

  it('alice (in ops, in devs) passes the account phase; bob is refused', async () => {
    const r = await host.exec([acct('alice'), acct('bob')].join('\n'), 90_000);
    assert.deepEqual(outcomes(r.out), ['alice ok', 'bob denied'], `${r.out}\n${r.sssdLog.slice(-8000)}`);
  });
});
