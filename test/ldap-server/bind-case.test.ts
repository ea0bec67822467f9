/**
 * A simple bind names the user's entry as the directory matches DNs: uid
 * (caseIgnoreMatch) and the container's RDNs in any letter case bind as the
 * stored user, as the same DN works as a search base; the login runs for the
 * stored uid, so failures count against that account. A wrong password and
 * an unknown user still get the same answer. A real server and OpenLDAP's
 * clients.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';

const BASE = 'dc=example,dc=test';
const STORED = `uid=robert,cn=users,cn=accounts,${BASE}`;

describe('LDAP simple bind with a user DN in another letter case', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    await addActiveUser(admin, 'robert', 'Robert-pass-1', { first: 'Robert', last: 'Roe' });
  });
  after(async () => realm.stop());

  const whoami = (dn: string, password: string) => tools.run('ldapwhoami', ['-x', '-H', realm.ldapsUrl, '-D', dn, '-w', password]);

  it('the DN works as a search base and as a bind DN, and the bind is the stored user', async () => {
    const mixed = `uid=Robert,cn=users,cn=accounts,${BASE}`;
    const base = await tools.run('ldapsearch', ['-LLL', '-x', '-H', realm.ldapsUrl, '-D', STORED, '-w', 'Robert-pass-1', '-b', mixed, '-s', 'base', '(objectClass=*)', 'uid']);
    assert.equal(base.code, 0, base.stderr);
    assert.match(base.stdout, /^uid: robert$/m);
    for (const dn of [mixed, `UID=ROBERT,CN=Users,cn=Accounts,DC=Example,dc=TEST`]) {
      const r = await whoami(dn, 'Robert-pass-1');
      assert.equal(r.code, 0, `${dn}: ${r.stderr}`);
      assert.equal(r.stdout.trim(), `dn:${STORED}`);
    }
  });

  it('a wrong password with such a DN is refused as an unknown user is, and counted against the stored user', async () => {
    const wrong = await whoami(`uid=Robert,cn=users,cn=accounts,${BASE}`, 'Wrong-pass-1');
    const unknown = await whoami(`uid=Nobody,cn=users,cn=accounts,${BASE}`, 'Wrong-pass-1');
    assert.equal(wrong.code, 49, wrong.stderr);
    assert.equal(unknown.code, 49, unknown.stderr);
    assert.equal(wrong.stderr, unknown.stderr);
    const counted = await tools.run('ldapsearch', ['-LLL', '-x', '-H', realm.ldapsUrl, '-D', `uid=admin,cn=users,cn=accounts,${BASE}`, '-w', realm.adminPassword, '-b', STORED, '-s', 'base', '(objectClass=*)', 'krbLoginFailedCount']);
    assert.equal(counted.code, 0, counted.stderr);
    assert.match(counted.stdout, /^krbLoginFailedCount: 1$/m);
  });
});
