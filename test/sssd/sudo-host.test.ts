/**
 * Sudo on a host of the realm: Debian's sudo 1.9 with `sudoers: files sss`
 * asks SSSD's sudo responder, which holds the rules SSSD's ldap sudo
 * provider fetched from dirid's LDAP service (the sssd.conf dirid-server
 * writes for hosts: sudo_provider = ldap below ou=sudoers, with its refresh
 * intervals), in a private namespace (test/support/sssd.ts) with the
 * distribution's PAM files and /etc/sudoers. As root, `sudo -l -U USER`
 * lists exactly the user's rules for this host; as the user (setpriv, no
 * PAM of its own), `sudo -n` runs what a rule with !authenticate allows,
 * as root or as the run-as user it names, and refuses a denied command, a
 * rule that needs a password, and what no rule allows. While the host runs,
 * a rule given !authenticate and a renamed user take effect within the
 * smart refresh interval, and a disabled rule stops within the full
 * refresh interval.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import type { WireValue } from '../../src/rpc/codec/types.js';
import { sssdHost, type SssdHost } from '../support/sssd.js';
import { SUDO_FULL_REFRESH_SECONDS, SUDO_SMART_REFRESH_SECONDS } from '../../src/host/sssd-conf.js';

/** What SSSD's own timers add to an interval: a refresh starts on its tick and takes a moment; the loop below tries once a second. */
const SLACK = 5;

describe('sudo on a host of the realm, with the rules from dirid through SSSD', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let host: SssdHost;

  before(async () => {
    ({ realm, admin } = await startAdminRealm({ idStart: 710_000 }));
    for (const u of ['alice', 'bob', 'carol', 'dave']) await admin.call('user_add', [u], { first: u, last: 'Sudoer', password: `${u}-Pass-1234` });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add_member', ['devs'], { users: ['carol'] });
    await admin.call('host_add', ['other.example.test']);
    for (const c of ['/usr/bin/id', '/usr/bin/whoami']) await admin.call('sudocmd_add', [c]);
    const rule = async (name: string, opts: Record<string, WireValue>, members: Array<[string, Record<string, WireValue>]>, options: string[] = ['!authenticate']) => {
      await admin.call('sudorule_add', [name], opts);
      for (const [what, o] of members) await admin.call(`sudorule_add_${what}`, [name], o);
      if (options.length > 0) await admin.call('sudorule_add_option', [name], { sudooption: options });
    };
    await rule('nopass-id', {}, [['user', { users: ['alice'], groups: ['devs'] }], ['host', { hosts: ['localhost'] }], ['allow_command', { sudocmds: ['/usr/bin/id'] }]]);
    await rule('as-bob', { order: 5 }, [['user', { users: ['alice', 'dave'] }], ['host', { hosts: ['localhost'] }], ['allow_command', { sudocmds: ['/usr/bin/whoami'] }], ['runasuser', { users: ['bob'] }]]);
    await rule('all-but-whoami', { cmdcat: 'all', order: 10 }, [['user', { users: ['alice'] }], ['host', { hosts: ['localhost'] }], ['deny_command', { sudocmds: ['/usr/bin/whoami'] }]]);
    await rule('with-password', {}, [['user', { users: ['bob'] }], ['host', { hosts: ['localhost'] }], ['allow_command', { sudocmds: ['/usr/bin/id'] }]], []);
    await rule('elsewhere', { cmdcat: 'all' }, [['user', { users: ['alice', 'bob'] }], ['host', { hosts: ['other.example.test'] }]]);
    const data = join(realm.dataDir, 'realm');
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: data,
      hostPrincipal: 'host/localhost@EXAMPLE.TEST',
      users: [],
      caFile: join(data, 'ca.crt'),
      sudo: true,
      // the file dirid-server wrote for hosts, with this host's paths
      sssdConf: ({ keytab, caFile, ccDir }) =>
        readFileSync(join(data, 'sssd.conf'), 'utf8')
          .replaceAll('/etc/krb5.keytab', keytab)
          .replaceAll('/etc/dirid/ca.crt', caFile)
          .replace(/^(\[domain\/[^\]]+\])$/m, `$1\nkrb5_ccname_template = FILE:${ccDir}/krb5cc_%U\ncache_credentials = false\ndebug_level = 6`),
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
  });

  it('dirid-server wrote the sudo provider, its search base and refresh intervals into the sssd.conf for hosts', () => {
    const conf = readFileSync(join(realm.dataDir, 'realm', 'sssd.conf'), 'utf8');
    assert.match(conf, /^services = nss, pam(, ssh)?, sudo$/m);
    assert.match(conf, /^sudo_provider = ldap$/m);
    assert.match(conf, /^ldap_sudo_search_base = ou=sudoers,dc=example,dc=test$/m);
    assert.match(conf, new RegExp(`^ldap_sudo_smart_refresh_interval = ${SUDO_SMART_REFRESH_SECONDS}$`, 'm'));
    assert.match(conf, new RegExp(`^ldap_sudo_full_refresh_interval = ${SUDO_FULL_REFRESH_SECONDS}$`, 'm'));
  });

  it('sudo -l lists exactly the rules of the user and host; sudo -n allows and refuses as they say; changes reach the host within the intervals', async () => {
    const script = `set +e
as() { u=$1; shift; setpriv --reuid="$u" --regid="$u" --init-groups -- "$@"; }
tries=0
until grep -q 'Successful full refresh of sudo rules' /var/log/sssd/sssd_example.test.log 2>/dev/null; do tries=$((tries+1)); [ $tries -gt 300 ] && { echo "@@no-full-refresh"; break; }; sleep 0.1; done
echo "@@list-alice"; sudo -l -U alice; echo "@@list-end"
echo "@@list-carol"; sudo -l -U carol; echo "@@list-end"
try() { key=$1; shift; o=$("$@" 2>&1); rc=$?; echo "@@$key=$o rc=$rc"; }
try alice-id as alice sudo -n -u root /usr/bin/id -u
try alice-whoami-as-bob as alice sudo -n -u bob /usr/bin/whoami
try alice-whoami as alice sudo -n /usr/bin/whoami
try carol-id as carol sudo -n /usr/bin/id -u
try bob-id as bob sudo -n /usr/bin/id -u
try carol-whoami as carol sudo -n /usr/bin/whoami
echo "@@change"; read -r go
start=$(date +%s); bob=; david=; carol=
while [ -z "$bob" ] || [ -z "$david" ] || [ -z "$carol" ]; do
  now=$(($(date +%s) - start)); [ $now -gt ${SUDO_FULL_REFRESH_SECONDS + 30} ] && { echo "@@gave-up after $now s"; break; }
  [ -z "$bob" ] && [ "$(as bob sudo -n /usr/bin/id -u 2>/dev/null)" = 0 ] && { bob=$now; echo "@@bob-allowed-after=$now"; }
  [ -z "$david" ] && [ "$(as david sudo -n -u bob /usr/bin/whoami 2>/dev/null)" = bob ] && { david=$now; echo "@@david-allowed-after=$now"; }
  [ -z "$carol" ] && ! as carol sudo -n /usr/bin/id -u >/dev/null 2>&1 && { carol=$now; echo "@@carol-refused-after=$now"; }
  sleep 1
done
echo "@@list-alice-after"; sudo -l -U alice; echo "@@list-end"
echo "@@list-david"; sudo -l -U david; echo "@@list-end"
echo "@@done"`;
    let changed = false;
    const r = await host.exec(script, (SUDO_FULL_REFRESH_SECONDS + 90) * 1000, (out, write) => {
      if (changed || !out.includes('@@change\r\n') && !out.includes('@@change\n')) return;
      changed = true;
      void (async () => {
        // a rule changed (an option), a user renamed (the rules follow: dave, whom this host has not
        // looked up yet; one it has is known by its old name until SSSD's entry cache expires), a rule disabled (served no more)
        await admin.call('sudorule_add_option', ['with-password'], { sudooption: ['!authenticate'] });
        await admin.call('user_mod', ['dave'], { rename: 'david' });
        await admin.call('sudorule_disable', ['nopass-id']);
        write('\n');
      })();
    });
    const out = r.out.replace(/\r/g, '');
    const why = `${out}\n${r.sssdLog.split('\n').filter((l) => /sudo|ldap_search_ext/i.test(l)).slice(-80).join('\n')}`;
    const section = (name: string) => {
      const from = out.indexOf(`@@list-${name}\n`);
      return from < 0 ? '' : out.slice(from, out.indexOf('@@list-end', from));
    };
    const value = (key: string) => new RegExp(`^@@${key}=(.*)$`, 'm').exec(out)?.[1];

    assert.doesNotMatch(out, /@@no-full-refresh/, why);
    // the user's rules on this host, and no other
    const alice = section('alice');
    assert.match(alice, /User alice may run the following commands on localhost:/, why);
    assert.match(alice, /^\s+\(root\) NOPASSWD: \/usr\/bin\/id$/m, why);
    assert.match(alice, /^\s+\(bob\) NOPASSWD: \/usr\/bin\/whoami$/m, why);
    assert.match(alice, /^\s+\(root\) NOPASSWD: ALL, !\/usr\/bin\/whoami$/m, why);
    assert.equal(alice.match(/^\s+\(\w+\) /gm)?.length, 3, `three rules, not the other host's: ${alice}`);
    assert.match(section('carol'), /^\s+\(root\) NOPASSWD: \/usr\/bin\/id$/m, 'through the group devs');
    assert.equal(section('carol').match(/^\s+\(\w+\) /gm)?.length, 1, why);

    assert.equal(value('alice-id'), '0 rc=0', why);
    assert.equal(value('alice-whoami-as-bob'), 'bob rc=0', why);
    assert.match(value('alice-whoami') ?? '', /Sorry, user alice is not allowed to execute '\/usr\/bin\/whoami' as root on localhost\.? rc=1$/, why);
    assert.equal(value('carol-id'), '0 rc=0', why);
    assert.match(value('bob-id') ?? '', /a password is required rc=1$/, why);
    assert.match(value('carol-whoami') ?? '', /rc=1$/, why);

    assert.doesNotMatch(out, /@@gave-up/, why);
    const after = (k: string) => Number(value(k));
    // a changed rule and a renamed user: the smart refresh, by entryUSN, which a change in the same second as the last the host saw does not escape (docs/sssd-host.md)
    assert.ok(after('bob-allowed-after') <= SUDO_SMART_REFRESH_SECONDS + SLACK, `a changed rule within the smart refresh interval: ${value('bob-allowed-after')} s\n${why}`);
    assert.ok(after('david-allowed-after') <= SUDO_SMART_REFRESH_SECONDS + SLACK, `a renamed user within the smart refresh interval: ${value('david-allowed-after')} s\n${why}`);
    // a disabled rule is no entry any more, which only the full refresh sees
    assert.match(r.sssdLog, /entryUSN/, 'SSSD found lastUSN in the root DSE and asks by entryUSN');
    assert.ok(after('carol-refused-after') <= SUDO_FULL_REFRESH_SECONDS + SLACK, `a disabled rule within the full refresh interval: ${value('carol-refused-after')} s\n${why}`);
    assert.match(section('david'), /^\s+\(bob\) NOPASSWD: \/usr\/bin\/whoami$/m, why);
    assert.doesNotMatch(section('alice-after'), /NOPASSWD: \/usr\/bin\/id$/m, 'the disabled rule is gone');
    assert.equal(section('alice-after').match(/^\s+\(\w+\) /gm)?.length, 2, why);
    console.log(`# sudo on the host: a changed rule after ${value('bob-allowed-after')} s, a renamed user after ${value('david-allowed-after')} s, a disabled rule after ${value('carol-refused-after')} s`);
  });
});
