/**
 * The sudoRole entries below ou=sudoers as a host reads them: OpenLDAP's
 * ldapsearch bound with the host's own key (SASL GSSAPI, a ticket from the
 * realm's host.keytab, over StartTLS), with the filter, attributes and
 * paged results control SSSD 2.8's ldap sudo provider sends for a full
 * refresh (as Debian's sssd_be logged it) and for a smart refresh (changed
 * since a modifyTimestamp). The view is searched like the directory: from
 * the base DN as one more readable part, one level and base scope, a
 * missing entry below it is noSuchObject, anonymous clients see nothing,
 * ldapcompare answers on its entries, and the subschema holds sudoRole.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';
import { runTool } from '../support/mit-tools.js';
import { generalizedTime } from '../../src/directory/schema.js';

const BASE = 'dc=example,dc=test';
const SUDOERS = `ou=sudoers,${BASE}`;
/** What SSSD asks for (sdap_sudo's attribute map; modifyTimestamp as its USN when the server publishes none). */
const SSSD_ATTRS = ['objectClass', 'cn', 'sudoCommand', 'sudoHost', 'sudoUser', 'sudoOption', 'sudoRunAs', 'sudoRunAsUser', 'sudoRunAsGroup', 'sudoNotBefore', 'sudoNotAfter', 'sudoOrder', 'modifyTimestamp'];
/** The host part of SSSD's filter for the host localhost (its names, addresses and networks, netgroups), as sssd_be sent it. */
const HOST_FILTER = '(|(&(!(sudoHost=*))(cn=defaults))(sudoHost=ALL)(sudoHost=localhost)(sudoHost=localhost)(sudoHost=192.0.2.2)(sudoHost=192.0.2.0/24)(sudoHost=fd00::2)(sudoHost=fd00::/64)(sudoHost=+*))';
const FULL_REFRESH = `(&(objectClass=sudoRole)${HOST_FILTER})`;
const smartRefresh = (since: string) => `(&(&(objectclass=sudoRole)(modifyTimestamp>=${since})(!(modifyTimestamp=${since})))${HOST_FILTER})`;

describe("sudoRole entries read by a host's key, with SSSD's filters", () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  let hostEnv: NodeJS.ProcessEnv;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'L' });
    await admin.call('group_add', ['ops']);
    await admin.call('host_add', ['web1.example.test']);
    for (const c of ['/usr/bin/id', '/usr/bin/less', '/bin/su']) await admin.call('sudocmd_add', [c]);
    await admin.call('sudorule_add', ['here'], { order: 3 });
    await admin.call('sudorule_add_user', ['here'], { users: ['alice'], groups: ['ops'] });
    await admin.call('sudorule_add_host', ['here'], { hosts: ['localhost'] });
    await admin.call('sudorule_add_allow_command', ['here'], { sudocmds: ['/usr/bin/id'] });
    await admin.call('sudorule_add_deny_command', ['here'], { sudocmds: ['/bin/su'] });
    await admin.call('sudorule_add_runasuser', ['here'], { groups: ['ops'] });
    await admin.call('sudorule_add_option', ['here'], { sudooption: ['!authenticate'] });
    await admin.call('sudorule_add', ['there'], { cmdcat: 'all' });
    await admin.call('sudorule_add_host', ['there'], { hosts: ['web1.example.test'] });
    await admin.call('sudorule_add', ['everywhere'], { usercat: 'all', hostcat: 'all' });
    await admin.call('sudorule_add_allow_command', ['everywhere'], { sudocmds: ['/usr/bin/less'] });
    await admin.call('sudorule_add', ['off'], { usercat: 'all', hostcat: 'all', cmdcat: 'all' });
    await admin.call('sudorule_disable', ['off']);
    // the host's own ticket, from the keytab init wrote for the server's host
    const cc = `FILE:${join(realm.dataDir, 'host.cc')}`;
    const k = await runTool('kinit', ['-k', '-t', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'host/localhost@EXAMPLE.TEST'], tools.env);
    assert.equal(k.code, 0, k.stderr);
    hostEnv = { KRB5CCNAME: cc };
  });
  after(async () => realm.stop());

  const asHost = (args: string[]) => tools.run('ldapsearch', ['-LLL', '-Y', 'GSSAPI', '-ZZ', '-H', realm.ldapUrl, '-E', 'pr=1000/noprompt', ...args], { env: hostEnv });
  const dns = (ldif: string) => [...ldif.matchAll(/^dn: (.*)$/gm)].map((m) => m[1]!);
  /** The LDIF record of one entry, lines in order, without the paged results lines ldapsearch prints. */
  const record = (ldif: string, dn: string) => {
    const from = ldif.indexOf(`dn: ${dn}\n`);
    return ldif.slice(from, ldif.indexOf('\n\n', from)).split('\n');
  };

  it("answers SSSD's full refresh as the host: the host's enabled rules, with what SSSD reads", async () => {
    const r = await asHost(['-b', SUDOERS, '-s', 'sub', FULL_REFRESH, ...SSSD_ATTRS]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(dns(r.stdout).sort(), [`cn=everywhere,${SUDOERS}`, `cn=here,${SUDOERS}`]);
    const here = record(r.stdout, `cn=here,${SUDOERS}`);
    const modified = here.find((l) => l.startsWith('modifyTimestamp: '));
    assert.match(modified ?? '', /^modifyTimestamp: \d{14}Z$/);
    assert.deepEqual(
      here.filter((l) => l !== modified),
      [
        `dn: cn=here,${SUDOERS}`,
        'objectClass: top',
        'objectClass: sudoRole',
        'cn: here',
        'sudoUser: alice',
        'sudoUser: %ops',
        'sudoHost: localhost',
        'sudoCommand: /usr/bin/id',
        'sudoCommand: !/bin/su',
        'sudoRunAsUser: %ops',
        'sudoOption: !authenticate',
        'sudoOrder: 3',
      ],
    );
    assert.deepEqual(record(r.stdout, `cn=everywhere,${SUDOERS}`).filter((l) => /^sudo/.test(l)), ['sudoUser: ALL', 'sudoHost: ALL', 'sudoCommand: /usr/bin/less']);
  });

  it('answers its smart refresh with the rules changed since the time it saw, and a rules refresh by name', async () => {
    const first = await asHost(['-b', SUDOERS, FULL_REFRESH, 'modifyTimestamp']);
    const seen = [...first.stdout.matchAll(/^modifyTimestamp: (\S+)$/gm)].map((m) => m[1]!).sort().at(-1)!;
    const none = await asHost(['-b', SUDOERS, smartRefresh(seen), ...SSSD_ATTRS]);
    assert.equal(none.code, 0, none.stderr);
    assert.deepEqual(dns(none.stdout), []);
    while (generalizedTime() <= seen) await new Promise((r) => setTimeout(r, 100));
    await admin.call('sudorule_add_option', ['here'], { sudooption: ['env_keep+=LANG'] });
    await admin.call('sudorule_add_option', ['there'], { sudooption: ['!requiretty'] });
    const changed = await asHost(['-b', SUDOERS, smartRefresh(seen), ...SSSD_ATTRS]);
    assert.deepEqual(dns(changed.stdout), [`cn=here,${SUDOERS}`], "the other host's rule changed too, and is not this host's");
    assert.match(changed.stdout, /^sudoOption: env_keep\+=LANG$/m);
    const byName = await asHost(['-b', SUDOERS, `(&(objectClass=sudoRole)(|(cn=here)(cn=off)(cn=gone))${HOST_FILTER})`, 'cn']);
    assert.deepEqual(dns(byName.stdout), [`cn=here,${SUDOERS}`], 'a disabled rule is not there');
  });

  it('is searched like the directory: from the base DN, one level, base, a missing entry, anonymously, compared', async () => {
    const fromBase = await asHost(['-b', BASE, '(objectClass=sudoRole)', 'cn']);
    assert.equal(fromBase.code, 0, fromBase.stderr);
    assert.deepEqual(dns(fromBase.stdout).sort(), ['everywhere', 'here', 'there'].map((n) => `cn=${n},${SUDOERS}`));
    const users = await asHost(['-b', BASE, '(&(uid=alice)(objectClass=posixAccount))', 'uid']);
    assert.deepEqual(dns(users.stdout), [`uid=alice,cn=users,cn=accounts,${BASE}`], 'user look-ups from the base DN are unchanged');
    const one = await asHost(['-b', SUDOERS, '-s', 'one', '(objectClass=*)', 'cn']);
    assert.equal(dns(one.stdout).length, 3);
    const root = await asHost(['-b', SUDOERS, '-s', 'base', '(objectClass=*)']);
    assert.deepEqual(record(root.stdout, SUDOERS), [`dn: ${SUDOERS}`, 'objectClass: top', 'objectClass: organizationalUnit', 'ou: sudoers']);
    const missing = await asHost(['-b', `cn=nothing,${SUDOERS}`, '-s', 'base', '(objectClass=*)']);
    assert.equal(missing.code, 32, missing.stderr);
    const anonymous = await tools.run('ldapsearch', ['-LLL', '-x', '-ZZ', '-H', realm.ldapUrl, '-b', SUDOERS, '(objectClass=sudoRole)']);
    assert.equal(anonymous.code, 50, anonymous.stderr);
    const yes = await tools.run('ldapcompare', ['-Y', 'GSSAPI', '-ZZ', '-H', realm.ldapUrl, `cn=here,${SUDOERS}`, 'sudoUser:alice'], { env: hostEnv });
    assert.equal(yes.code, 6, `${yes.stdout}${yes.stderr}`);
    const no = await tools.run('ldapcompare', ['-Y', 'GSSAPI', '-ZZ', '-H', realm.ldapUrl, `cn=here,${SUDOERS}`, 'sudoUser:ALICE'], { env: hostEnv });
    assert.equal(no.code, 5, 'sudoUser matches case-exactly, as sudoers.ldap has it');
    const schema = await asHost(['-b', 'cn=subschema', '-s', 'base', '(objectClass=*)', 'objectClasses']);
    assert.match(schema.stdout.replace(/\n /g, ''), /NAME 'sudoRole'/);
  });
});
