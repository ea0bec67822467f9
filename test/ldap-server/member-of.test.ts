/**
 * memberOf as the LDAP service publishes it (ldap-server/member-of.ts,
 * docs/ldap.md "memberOf"), read with OpenLDAP's ldapsearch bound as a
 * user: a user in a nested group lists both groups, a host in a host group
 * lists it, `(memberOf=DN)` finds direct and nested members (paged too), a
 * membership change is seen by the next search, and a write naming
 * memberOf is refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAdminRealm, type TestRealm, addActiveUser } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';

const BASE = 'dc=example,dc=test';
const USERS = `cn=users,cn=accounts,${BASE}`;
const GROUPS = `cn=groups,cn=accounts,${BASE}`;
const HOSTGROUPS = `cn=hostgroups,cn=accounts,${BASE}`;

describe('the LDAP service publishes memberOf, nested memberships included', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;

  async function search(base: string, filter: string, attrs: string[], extra: string[] = []): Promise<string> {
    const r = await tools.run('ldapsearch', ['-LLL', '-o', 'ldif-wrap=no', '-x', '-H', realm.ldapsUrl, '-D', `uid=alice,${USERS}`, '-w', 'alice-Pass-1234', ...extra, '-b', base, filter, ...attrs]);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }
  const values = (out: string, name: string) => [...out.matchAll(new RegExp(`^${name}: (.*)$`, 'gim'))].map((m) => m[1]!).sort();
  const dns = (out: string) => values(out, 'dn');

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    for (const u of ['alice', 'bob', 'carol']) await addActiveUser(admin, u, `${u}-Pass-1234`, { first: u, last: 'L' });
    await admin.call('group_add', ['devs']);
    await admin.call('group_add', ['ops']);
    await admin.call('group_add_member', ['ops'], { users: ['alice'] });
    await admin.call('group_add_member', ['devs'], { users: ['bob'], groups: ['ops'] });
    await admin.call('host_add', ['web1.example.test']);
    await admin.call('hostgroup_add', ['webservers']);
    await admin.call('hostgroup_add', ['all-hosts']);
    await admin.call('hostgroup_add_member', ['webservers'], { hosts: ['web1.example.test'] });
    await admin.call('hostgroup_add_member', ['all-hosts'], { hostgroups: ['webservers'] });
  });
  after(async () => realm.stop());

  it('a user in a nested group lists both groups, when asked by name or with +, not with *', async () => {
    const named = await search(USERS, '(uid=alice)', ['memberOf']);
    assert.deepEqual(values(named, 'memberOf'), [`cn=devs,${GROUPS}`, `cn=ops,${GROUPS}`]);
    assert.deepEqual(values(await search(USERS, '(uid=alice)', ['+']), 'memberOf'), values(named, 'memberOf'));
    assert.deepEqual(values(await search(USERS, '(uid=alice)', ['*']), 'memberOf'), []);
    // a group in a group
    assert.deepEqual(values(await search(GROUPS, '(cn=ops)', ['memberOf']), 'memberOf'), [`cn=devs,${GROUPS}`]);
  });

  it('(memberOf=DN) finds the direct and the nested members, paged and under a size limit too', async () => {
    const devs = `cn=devs,${GROUPS}`;
    const expected = [`cn=ops,${GROUPS}`, `uid=alice,${USERS}`, `uid=bob,${USERS}`].sort();
    assert.deepEqual(dns(await search(BASE, `(memberOf=${devs})`, ['1.1'])), expected);
    // the DN in any spelling; combined with other items; negated
    assert.deepEqual(dns(await search(BASE, `(&(objectClass=posixAccount)(memberOf=CN=Devs, cn=groups,cn=accounts,${BASE}))`, ['1.1'])), [`uid=alice,${USERS}`, `uid=bob,${USERS}`]);
    assert.deepEqual(dns(await search(USERS, `(&(uid=*)(!(memberOf=${devs})))`, ['uid'])).filter((d) => /alice|bob|carol/.test(d)), [`uid=carol,${USERS}`]);
    assert.deepEqual(dns(await search(BASE, `(memberOf=${devs})`, ['1.1'], ['-E', 'pr=1/noprompt'])), expected);
    const limited = await tools.run('ldapsearch', ['-LLL', '-x', '-H', realm.ldapsUrl, '-D', `uid=alice,${USERS}`, '-w', 'alice-Pass-1234', '-z', '2', '-b', BASE, `(memberOf=${devs})`, '1.1']);
    assert.equal(limited.code, 4, limited.stderr);
    assert.equal(dns(limited.stdout).length, 2);
    assert.deepEqual(dns(await search(BASE, `(memberOf=cn=nobody,${GROUPS})`, ['1.1'])), []);
  });

  it('a change of membership is seen by the next search', async () => {
    const ops = `cn=ops,${GROUPS}`;
    assert.deepEqual(dns(await search(USERS, `(memberOf=${ops})`, ['1.1'])), [`uid=alice,${USERS}`]);
    await admin.call('group_add_member', ['ops'], { users: ['carol'] });
    assert.deepEqual(dns(await search(USERS, `(memberOf=${ops})`, ['1.1'])), [`uid=alice,${USERS}`, `uid=carol,${USERS}`]);
    assert.ok(values(await search(USERS, '(uid=carol)', ['memberOf']), 'memberOf').includes(`cn=devs,${GROUPS}`));
    await admin.call('group_remove_member', ['devs'], { groups: ['ops'] });
    assert.ok(!values(await search(USERS, '(uid=carol)', ['memberOf']), 'memberOf').includes(`cn=devs,${GROUPS}`));
  });

  it('a host in a host group lists it and the host groups above', async () => {
    const out = await search(`cn=computers,cn=accounts,${BASE}`, '(fqdn=web1.example.test)', ['memberOf']);
    assert.deepEqual(values(out, 'memberOf'), [`cn=all-hosts,${HOSTGROUPS}`, `cn=webservers,${HOSTGROUPS}`]);
    assert.deepEqual(dns(await search(BASE, `(memberOf=cn=all-hosts,${HOSTGROUPS})`, ['1.1'])), [`cn=webservers,${HOSTGROUPS}`, `fqdn=web1.example.test,cn=computers,cn=accounts,${BASE}`]);
  });

  it('a write naming memberOf is refused (LDAP takes no writes; the API is the write path)', async () => {
    await assert.rejects(admin.call('user_mod', ['bob'], { addattr: [`memberOf=cn=admins,${GROUPS}`] }), /memberOf/);
    assert.equal(values(await search(USERS, '(uid=bob)', ['memberOf']), 'memberOf').includes(`cn=admins,${GROUPS}`), false);
  });
});
