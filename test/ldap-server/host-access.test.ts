/**
 * What a host's SSSD reads at each login (ldap-server/host-access.ts,
 * docs/hbac.md): bound as itself (SASL GSSAPI with its host keytab, MIT
 * kinit and OpenLDAP's ldapsearch), a host that names `host` and
 * `authorizedService` gets, on each user, `*` and the PAM services the
 * enabled access rules grant that user on that host (`*` for every
 * service), and neither where nothing is granted; the same user
 * looks different from another host. A user's bind, a simple bind, and a
 * search that does not name them see nothing of them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';

const BASE = 'dc=example,dc=test';
const USERS = `cn=users,cn=accounts,${BASE}`;

describe('the LDAP service tells a host which services each user may log in through', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  let ldap: string;

  /** A ticket cache of the host `fqdn`, from its keytab. */
  async function hostTicket(fqdn: string): Promise<string> {
    const kt = join(realm.dataDir, `${fqdn}.keytab`);
    writeFileSync(kt, (await admin.call('keytab_get', [`host/${fqdn}`])).result.keytab as Buffer);
    const cc = `FILE:${join(realm.dataDir, `${fqdn}.cc`)}`;
    const k = await runTool('kinit', ['-k', '-t', kt, '-c', cc, `host/${fqdn}`], tools.env);
    assert.equal(k.code, 0, k.stderr);
    return cc;
  }
  const tickets = new Map<string, string>();
  /** The values of host and authorizedService on `login` as `as` (a host's ticket cache) reads them; `extra` asks for more. */
  async function seen(as: string, login: string, attrs = ['host', 'authorizedService']): Promise<{ host: string[]; services: string[]; out: string }> {
    const r = await tools.run('ldapsearch', ['-LLL', '-o', 'ldif-wrap=no', '-Y', 'GSSAPI', '-Q', '-H', ldap, '-b', USERS, `(uid=${login})`, ...attrs], { env: { KRB5CCNAME: tickets.get(as) ?? as } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`^dn: uid=${login},`, 'm'));
    const values = (name: string) => [...r.stdout.matchAll(new RegExp(`^${name}: (.*)$`, 'gm'))].map((m) => m[1]!);
    return { host: values('host'), services: values('authorizedService'), out: r.stdout };
  }

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    ldap = realm.ldapUrl;
    for (const u of ['alice', 'bob']) await addActiveUser(admin, u, `${u}-Pass-1234`, { first: u, last: 'L' });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add_member', ['devs'], { users: ['alice'] });
    for (const h of ['web1.example.test', 'db1.example.test']) {
      await admin.call('host_add', [h]);
      tickets.set(h, await hostTicket(h));
    }
    await admin.call('hbacrule_add', ['devs_web1']);
    await admin.call('hbacrule_add_user', ['devs_web1'], { groups: ['devs'] });
    await admin.call('hbacrule_add_host', ['devs_web1'], { hosts: ['web1.example.test'] });
    await admin.call('hbacrule_add_service', ['devs_web1'], { hbacsvcs: ['sshd'], hbacsvcgroups: ['Sudo'] });
  });
  after(async () => realm.stop());

  it('while allow_all is enabled, every user gets the host and every service (*)', async () => {
    const bob = await seen('db1.example.test', 'bob');
    assert.deepEqual([bob.host, bob.services], [['*'], ['*']]);
  });

  it('with allow_all disabled: the services the rules grant on the asking host, through groups and service groups', async () => {
    await admin.call('hbacrule_disable', ['allow_all']);
    const a = await seen('web1.example.test', 'alice');
    assert.deepEqual([a.host, a.services.sort()], [['*'], ['sshd', 'sudo', 'sudo-i', 'systemd-user']]);
    // the same user from another host: only allow_systemd-user
    const b = await seen('db1.example.test', 'alice');
    assert.deepEqual([b.host, b.services], [['*'], ['systemd-user']]);
    assert.deepEqual((await seen('web1.example.test', 'bob')).services, ['systemd-user']);
    // nothing granted: neither attribute, which SSSD takes as a refusal
    await admin.call('hbacrule_disable', ['allow_systemd-user']);
    const none = await seen('web1.example.test', 'bob');
    assert.deepEqual([none.host, none.services], [[], []]);
    assert.deepEqual((await seen('web1.example.test', 'alice')).services.sort(), ['sshd', 'sudo', 'sudo-i']);
  });

  it('a rule change is seen by the next search', async () => {
    await admin.call('hbacrule_add_user', ['devs_web1'], { users: ['bob'] });
    assert.deepEqual((await seen('web1.example.test', 'bob')).host, ['*']);
    await admin.call('hbacrule_remove_user', ['devs_web1'], { users: ['bob'] });
    assert.deepEqual((await seen('web1.example.test', 'bob')).host, []);
  });

  it('only a host sees them, and only when it names them', async () => {
    // a user bound with GSSAPI
    const cc = `FILE:${join(realm.dataDir, 'alice.cc')}`;
    assert.equal((await runTool('kinit', ['-c', cc, 'alice'], tools.env, 'alice-Pass-1234\n')).code, 0);
    const asAlice = await seen(cc, 'alice');
    assert.deepEqual([asAlice.host, asAlice.services], [[], []]);
    // a simple bind over TLS
    const simple = await tools.run('ldapsearch', ['-LLL', '-x', '-ZZ', '-H', ldap, '-D', `uid=alice,${USERS}`, '-w', 'alice-Pass-1234', '-b', USERS, '(uid=alice)', 'host', 'authorizedService', 'uid']);
    assert.equal(simple.code, 0, simple.stderr);
    assert.match(simple.stdout, /^uid: alice$/m);
    assert.doesNotMatch(simple.stdout, /^(host|authorizedService):/m);
    // a host that asks for every attribute without naming them
    const all = await seen('web1.example.test', 'alice', ['*']);
    assert.match(all.out, /^uid: alice$/m);
    assert.deepEqual([all.host, all.services], [[], []]);
    // they are not stored: a filter on them matches nothing
    const filtered = await tools.run('ldapsearch', ['-LLL', '-Y', 'GSSAPI', '-Q', '-H', ldap, '-b', USERS, '(authorizedService=*)', 'uid'], { env: { KRB5CCNAME: tickets.get('web1.example.test')! } });
    assert.equal(filtered.code, 0, filtered.stderr);
    assert.equal(filtered.stdout.trim(), '');
  });
});
