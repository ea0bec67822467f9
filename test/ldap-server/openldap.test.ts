/**
 * The LDAP service of a real dirid server (startTestRealm, ephemeral
 * ports) through OpenLDAP's own clients: the root DSE for anyone, nothing
 * else for anonymous clients; simple binds only over StartTLS or LDAPS,
 * through the password rule of the API (wrong passwords counted up to the
 * lockout); searches of users and groups with their POSIX attributes and
 * never a secret, whoever asks and however; paged results, size limits,
 * substring filters, compare, Who am I?, Password Modify of one's own
 * password (MIT kinit then takes the new one), writes refused; and SASL
 * GSSAPI with an MIT ticket, in clear (a security layer is negotiated) and
 * over StartTLS.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';

const BASE = 'dc=example,dc=test';
const USERS = `cn=users,cn=accounts,${BASE}`;
const GROUPS = `cn=groups,cn=accounts,${BASE}`;
const dnOf = (uid: string) => `uid=${uid},${USERS}`;
const IDP_SECRET = 'Idp-Client-Secret-4711';

describe('the LDAP service with OpenLDAP clients', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  let ldap: string;
  let ldaps: string;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    tools = ldapTools(realm);
    ldap = realm.ldapUrl;
    ldaps = realm.ldapsUrl;
    for (const [uid, first, last] of [
      ['alice', 'Alice', 'Liddell'],
      ['bob', 'Bob', 'Builder'],
      ['carol', 'Carol', 'Ann'],
      ['dave', 'Dave', 'Lock'],
      ['erin', 'Erin', 'Change'],
    ] as const) {
      await addActiveUser(admin, uid, `${first}-pass-1`, { first, last });
    }
    await admin.call('group_add', ['crew'], { description: 'Crew' });
    await admin.call('group_add_member', ['crew'], { users: ['alice', 'bob'] });
    await admin.call('idp_add', ['corp'], { client_id: 'corp-client', secret: IDP_SECRET, auth_uri: 'https://idp.example/a', token_uri: 'https://idp.example/t' });
    await admin.call('idp_add', ['corpkey'], { client_id: 'corp-key', client_auth: 'private_key_jwt', auth_uri: 'https://idp.example/a', token_uri: 'https://idp.example/t' });
  });
  after(async () => realm.stop());

  const search = (args: string[], env?: NodeJS.ProcessEnv) => tools.run('ldapsearch', ['-LLL', ...args], env ? { env } : {});
  const asUser = (uid: string, password: string, url = ldaps) => ['-x', '-H', url, ...(url.startsWith('ldap:') ? ['-ZZ'] : []), '-D', dnOf(uid), '-w', password];
  const dns = (ldif: string) => [...ldif.matchAll(/^dn: (.*)$/gm)].map((m) => m[1]!);

  it('gives anyone the root DSE, operational attributes with +', async () => {
    const r = await search(['-x', '-H', ldap, '-b', '', '-s', 'base', '+']);
    assert.equal(r.code, 0, r.stderr);
    for (const line of [
      `namingContexts: ${BASE}`,
      'supportedLDAPVersion: 3',
      'supportedSASLMechanisms: GSSAPI',
      'supportedControl: 1.2.840.113556.1.4.319',
      'supportedExtension: 1.3.6.1.4.1.1466.20037',
      'supportedExtension: 1.3.6.1.4.1.4203.1.11.3',
      'supportedExtension: 1.3.6.1.4.1.4203.1.11.1',
      'subschemaSubentry: cn=subschema',
      'vendorName: dirid',
    ]) {
      assert.match(r.stdout, new RegExp(`^${line.replace(/\./g, '\\.')}$`, 'm'));
    }
    // without + only the user attribute objectClass
    const plain = await search(['-x', '-H', ldap, '-b', '', '-s', 'base']);
    assert.equal(plain.code, 0, plain.stderr);
    assert.equal(plain.stdout.trim(), 'dn:\nobjectClass: top');
  });

  it('refuses anonymous searches of anything else, and hides the subschema from them', async () => {
    for (const base of [USERS, BASE, 'cn=subschema']) {
      const r = await search(['-x', '-H', ldap, '-b', base, '-s', base === 'cn=subschema' ? 'base' : 'sub', '(objectClass=*)']);
      assert.equal(r.code, 50, r.stdout + r.stderr);
      assert.match(r.stderr, /Insufficient access \(50\)/);
      assert.match(r.stderr, /anonymous clients may read the root DSE only/);
    }
  });

  it('refuses a simple bind in clear, pointing to StartTLS and ldaps', async () => {
    const r = await tools.run('ldapwhoami', ['-x', '-H', ldap, '-D', dnOf('alice'), '-w', 'Alice-pass-1']);
    assert.equal(r.code, 13, r.stderr);
    assert.match(r.stderr, /Confidentiality required \(13\)/);
    assert.match(r.stderr, /use StartTLS \(ldapsearch -ZZ\) or ldaps:\/\//);
  });

  it('refuses an unauthenticated bind (a DN with an empty password)', async () => {
    const r = await tools.run('ldapwhoami', ['-x', '-H', ldaps, '-D', dnOf('alice'), '-w', '']);
    assert.equal(r.code, 53, r.stderr);
    assert.match(r.stderr, /unauthenticated bind/);
  });

  it('binds over StartTLS and LDAPS and tells who we are', async () => {
    for (const url of [ldap, ldaps]) {
      const r = await tools.run('ldapwhoami', asUser('alice', 'Alice-pass-1', url));
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), `dn:${dnOf('alice')}`);
    }
    const anon = await tools.run('ldapwhoami', ['-x', '-H', ldap]);
    assert.equal(anon.code, 0, anon.stderr);
    assert.equal(anon.stdout.trim(), 'anonymous');
  });

  it('finds users and groups with their POSIX attributes and members', async () => {
    const r = await search([...asUser('alice', 'Alice-pass-1', ldap), '-b', BASE, '(&(objectClass=posixAccount)(uid=bob))', 'uid', 'uidNumber', 'gidNumber', 'homeDirectory', 'loginShell', 'gecos']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(dns(r.stdout), [dnOf('bob')]);
    assert.match(r.stdout, /^uidNumber: \d+$/m);
    assert.match(r.stdout, /^gidNumber: \d+$/m);
    assert.match(r.stdout, /^homeDirectory: \/home\/bob$/m);
    assert.match(r.stdout, /^loginShell: \/bin\/bash$/m);
    assert.match(r.stdout, /^gecos: Bob Builder$/m);
    const g = await search([...asUser('alice', 'Alice-pass-1'), '-b', GROUPS, '(cn=crew)', 'member', 'gidNumber']);
    assert.equal(g.code, 0, g.stderr);
    assert.deepEqual(dns(g.stdout), [`cn=crew,${GROUPS}`]);
    assert.match(g.stdout, /^gidNumber: \d+$/m);
    assert.match(g.stdout, new RegExp(`^member: ${dnOf('alice')}$`, 'm'));
    assert.match(g.stdout, new RegExp(`^member: ${dnOf('bob')}$`, 'm'));
  });

  it('never returns a secret, to admins either, not even as a name with * and +', async () => {
    for (const [who, pw] of [
      ['alice', 'Alice-pass-1'],
      ['admin', realm.adminPassword],
    ] as const) {
      const r = await search([...asUser(who, pw), '-b', BASE, '(objectClass=*)', '*', '+', 'userPassword', 'krbPrincipalKey', 'dirIdpClientSecret', 'dirIdpClientKey']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(dns(r.stdout).includes(dnOf('alice')));
      assert.ok(dns(r.stdout).includes(`cn=corp,cn=idp,${BASE}`), 'IdP references are readable');
      assert.match(r.stdout, /^entryUUID: /m, 'operational attributes come with +');
      assert.match(r.stdout, /^uidNumber: /m);
      assert.doesNotMatch(r.stdout, /userPassword|krbPrincipalKey|dirIdpClientSecret|dirIdpClientKey(?!Alg)/i);
      assert.ok(!r.stdout.includes(IDP_SECRET));
      assert.match(r.stdout, /^dirIdpClientAuth: private_key_jwt$/m, 'a reference using private_key_jwt is readable, without its key');
      // the Kerberos container and cn=etc are not readable: no principal of krbtgt, no ID range
      assert.ok(!dns(r.stdout).some((dn) => /cn=kerberos|cn=etc/i.test(dn)), r.stdout);
      const hidden = await search([...asUser(who, pw), '-b', `cn=kerberos,${BASE}`, '(objectClass=*)']);
      assert.equal(hidden.code, 32, hidden.stderr);
    }
  });

  it('filters and compares on secrets see them as absent', async () => {
    const auth = asUser('admin', realm.adminPassword);
    const present = await search([...auth, '-b', USERS, '(userPassword=*)', '1.1']);
    assert.equal(present.code, 0, present.stderr);
    assert.deepEqual(dns(present.stdout), []);
    const negated = await search([...auth, '-b', USERS, '(&(uid=alice)(!(krbPrincipalKey=*)))', '1.1']);
    assert.equal(negated.code, 0, negated.stderr);
    assert.deepEqual(dns(negated.stdout), [dnOf('alice')]);
    const eq = await search([...auth, '-b', USERS, '(userPassword=Alice-pass-1)', '1.1']);
    assert.equal(eq.code, 0, eq.stderr);
    assert.deepEqual(dns(eq.stdout), []);
    const c = await tools.run('ldapcompare', [...auth, dnOf('alice'), 'userPassword:Alice-pass-1']);
    assert.equal(c.code, 16, c.stdout + c.stderr);
    assert.match(c.stdout + c.stderr, /No such attribute \(16\)/);
  });

  it('pages through more entries than a page holds', async () => {
    const r = await search([...asUser('alice', 'Alice-pass-1', ldap), '-E', 'pr=2/noprompt', '-b', USERS, '(objectClass=posixAccount)', 'uid']);
    assert.equal(r.code, 0, r.stderr);
    const found = dns(r.stdout);
    assert.equal(found.length, 6, r.stdout);
    assert.equal(new Set(found).size, 6);
    // ldapsearch prints the control of every page: three pages, the last cookie empty
    const pages = [...r.stdout.matchAll(/^# pagedresults: estimate=(\d+) cookie=(.*)$/gm)];
    assert.equal(pages.length, 3, r.stdout);
    assert.equal(pages[2]![2], '');
    assert.ok(pages[0]![2]!.length > 0);
  });

  it('stops at the size limit with the entries that fit', async () => {
    const r = await search([...asUser('alice', 'Alice-pass-1'), '-z', '2', '-b', USERS, '(objectClass=posixAccount)', 'uid']);
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /Size limit exceeded \(4\)/);
    assert.equal(dns(r.stdout).length, 2);
  });

  it('matches substrings, one-level and base scopes, typesOnly', async () => {
    const auth = asUser('bob', 'Bob-pass-1');
    const sub = await search([...auth, '-b', BASE, '(|(cn=*lid*)(sn=build*))', 'cn']);
    assert.equal(sub.code, 0, sub.stderr);
    assert.deepEqual(dns(sub.stdout).sort(), [dnOf('alice'), dnOf('bob')]);
    const one = await search([...auth, '-b', `cn=accounts,${BASE}`, '-s', 'one', '(objectClass=*)', '1.1']);
    assert.equal(one.code, 0, one.stderr);
    assert.ok(dns(one.stdout).includes(USERS) && dns(one.stdout).includes(GROUPS), one.stdout);
    assert.ok(!dns(one.stdout).includes(`cn=accounts,${BASE}`));
    const base = await search([...auth, '-b', dnOf('carol'), '-s', 'base', '(objectClass=*)', 'sn']);
    assert.equal(base.code, 0, base.stderr);
    assert.equal(base.stdout.trim(), `dn: ${dnOf('carol')}\nsn: Ann`);
    const typesOnly = await search([...auth, '-A', '-b', dnOf('carol'), '-s', 'base', '(objectClass=*)', 'sn', 'uidNumber']);
    assert.equal(typesOnly.code, 0, typesOnly.stderr);
    assert.equal(typesOnly.stdout.trim(), `dn: ${dnOf('carol')}\nsn:\nuidNumber:`);
    // names in any spelling the schema knows, with + beside them: those, under their canonical names, and the operational ones
    const named = await search([...auth, '-b', dnOf('carol'), '-s', 'base', '(objectClass=*)', 'commonName', 'UIDNUMBER', '+']);
    assert.equal(named.code, 0, named.stderr);
    const types = [...named.stdout.matchAll(/^(\w+):/gm)].map((m) => m[1]).filter((t) => t !== 'dn');
    assert.ok(types.includes('cn') && types.includes('uidNumber') && types.includes('entryUUID') && types.includes('modifyTimestamp'), named.stdout);
    assert.ok(!types.includes('sn') && !types.includes('objectClass') && !types.includes('commonName'), named.stdout);
  });

  it('a change made through the API is in the next search, by DN and by the changed value', async () => {
    // the entry and its equality look-up are kept by the store after the first searches; the write must drop them
    const auth = asUser('bob', 'Bob-pass-1');
    const mailOf = async () => (await search([...auth, '-b', dnOf('alice'), '-s', 'base', '(objectClass=*)', 'mail'])).stdout;
    const byMail = async (mail: string) => dns((await search([...auth, '-b', USERS, `(mail=${mail})`, '1.1'])).stdout);
    assert.doesNotMatch(await mailOf(), /^mail:/m);
    assert.deepEqual(await byMail('alice@example.test'), []);
    await admin.call('user_mod', ['alice'], { email: ['alice@example.test'] });
    assert.match(await mailOf(), /^mail: alice@example.test$/m);
    assert.deepEqual(await byMail('alice@example.test'), [dnOf('alice')]);
    await admin.call('user_mod', ['alice'], { email: ['alice2@example.test'] });
    assert.deepEqual(await byMail('alice@example.test'), []);
    assert.deepEqual(await byMail('alice2@example.test'), [dnOf('alice')]);
    assert.match(await mailOf(), /^mail: alice2@example.test$/m);
  });

  it('publishes the subschema to authenticated clients', async () => {
    const r = await search([...asUser('alice', 'Alice-pass-1'), '-o', 'ldif-wrap=no', '-b', 'cn=subschema', '-s', 'base', '(objectClass=subschema)', 'attributeTypes', 'objectClasses']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^attributeTypes: \( 1\.3\.6\.1\.1\.1\.1\.0 NAME 'uidNumber' EQUALITY integerMatch ORDERING integerOrderingMatch SYNTAX 1\.3\.6\.1\.4\.1\.1466\.115\.121\.1\.27 SINGLE-VALUE \)$/m);
    assert.match(r.stdout, /^objectClasses: \( 1\.3\.6\.1\.1\.1\.2\.0 NAME 'posixAccount' AUXILIARY MUST \( cn \$ uid \$ uidNumber \$ gidNumber \$ homeDirectory \) MAY \( loginShell \$ gecos \$ description \) \)$/m);
    assert.match(r.stdout, /^attributeTypes: \( 2\.25\.\d+ NAME 'dirIdpSub' /m);
    assert.doesNotMatch(r.stdout, /userPassword|krbPrincipalKey|dirIdpClientSecret|dirIdpClientKey'/);
  });

  it('compares values with the attribute\'s equality rule', async () => {
    const auth = asUser('alice', 'Alice-pass-1');
    const yes = await tools.run('ldapcompare', [...auth, dnOf('bob'), 'sn:BUILDER']);
    assert.equal(yes.code, 6, yes.stderr);
    assert.equal(yes.stdout.trim(), 'TRUE');
    const no = await tools.run('ldapcompare', [...auth, dnOf('bob'), 'sn:Baker']);
    assert.equal(no.code, 5, no.stderr);
    assert.equal(no.stdout.trim(), 'FALSE');
    const missing = await tools.run('ldapcompare', [...auth, dnOf('bob'), 'mail:bob@example.test']);
    assert.equal(missing.code, 16, missing.stderr);
  });

  it('refuses writes, pointing to the API', async () => {
    const r = await tools.run('ldapmodify', asUser('admin', realm.adminPassword), { stdin: `dn: ${dnOf('bob')}\nchangetype: modify\nreplace: sn\nsn: Other\n` });
    assert.equal(r.code, 53, r.stderr);
    assert.match(r.stderr, /Server is unwilling to perform \(53\)/);
    assert.match(r.stderr, /use the dirid API \(dirid user-mod/);
    const del = await tools.run('ldapdelete', [...asUser('admin', realm.adminPassword), dnOf('bob')]);
    assert.equal(del.code, 53, del.stderr);
    const shown = await admin.call('user_show', ['bob']);
    assert.deepEqual(shown.result.sn, ['Builder']);
  });

  it('changes the bound user\'s own password with ldappasswd, and MIT kinit then takes it', async () => {
    const wrongOld = await tools.run('ldappasswd', [...asUser('erin', 'Erin-pass-1'), '-a', 'not-the-password', '-s', 'Erin-pass-2']);
    assert.notEqual(wrongOld.code, 0);
    assert.match(wrongOld.stdout + wrongOld.stderr, /old password is wrong/);
    const other = await tools.run('ldappasswd', [...asUser('erin', 'Erin-pass-1'), '-s', 'Bob-pass-2', dnOf('bob')]);
    assert.notEqual(other.code, 0);
    assert.match(other.stdout + other.stderr, /only your own password/);
    const short = await tools.run('ldappasswd', [...asUser('erin', 'Erin-pass-1'), '-s', 'short']);
    assert.notEqual(short.code, 0);
    assert.match(short.stdout + short.stderr, /Constraint violation \(19\)/);
    assert.match(short.stdout + short.stderr, /Additional info: invalid 'password': must be at least 8 characters/, 'the message names the rule');
    const r = await tools.run('ldappasswd', [...asUser('erin', 'Erin-pass-1', ldap), '-a', 'Erin-pass-1', '-s', 'Erin-pass-2']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await tools.run('ldapwhoami', asUser('erin', 'Erin-pass-1'))).code, 49);
    assert.equal((await tools.run('ldapwhoami', asUser('erin', 'Erin-pass-2'))).code, 0);
    const cc = `FILE:${join(realm.dataDir, 'erin.cc')}`;
    const k = await runTool('kinit', ['-c', cc, 'erin'], tools.env, 'Erin-pass-2\n');
    assert.equal(k.code, 0, k.stderr);
    const old = await runTool('kinit', ['-c', cc, 'erin'], tools.env, 'Erin-pass-1\n');
    assert.notEqual(old.code, 0);
  });

  it('refuses a user whose login is the IdP alone their own password change, through LDAP and the API alike, while an admin may set one', async () => {
    await addActiveUser(admin, 'fay', 'Fay-pass-1', { first: 'Fay', last: 'Linked' });
    const fay = new RpcSession(realm.url, realm.ca);
    assert.equal((await fay.login('fay', 'Fay-pass-1')).status, 200);
    await admin.call('user_mod', ['fay'], { user_auth_type: ['idp'], idp: 'corp', idp_user_id: 'fay-sub' });
    const reason = /fay logs in through an external identity provider \(user authentication type idp\), not with a password: change it there/;
    // LDAP Password Modify, bound with the local password that still works (spec: a local password keeps working)
    const l = await tools.run('ldappasswd', [...asUser('fay', 'Fay-pass-1'), '-a', 'Fay-pass-1', '-s', 'Fay-pass-2']);
    assert.notEqual(l.code, 0, l.stdout);
    assert.match(l.stdout + l.stderr, /Insufficient access \(50\)/);
    assert.match(l.stdout + l.stderr, reason);
    // the API's passwd, on a session opened before the link
    await assert.rejects(fay.call('passwd', ['fay', 'Fay-pass-2']), (e: Error & { errorName?: string }) => e.errorName === 'ACIError' && reason.test(e.message));
    assert.equal((await tools.run('ldapwhoami', asUser('fay', 'Fay-pass-2'))).code, 49, 'nothing changed');
    // an administrator may still set a password for the user, which has expired, as every password an administrator sets
    await admin.call('passwd', ['fay', 'Fay-pass-3']);
    const set = await tools.run('ldapwhoami', asUser('fay', 'Fay-pass-3'));
    assert.equal(set.code, 49);
    assert.match(set.stderr, /password expired/);
    await admin.call('user_del', ['fay']);
  });

  it('refuses wrong passwords and unknown DNs alike, counts failures and locks the account at the realm\'s limit', async () => {
    const unknown = await tools.run('ldapwhoami', asUser('nobody', 'whatever'));
    assert.equal(unknown.code, 49, unknown.stderr);
    assert.match(unknown.stderr, /Invalid credentials \(49\)/);
    // the realm's default policy: 6 failures within 60 s lock the account (account/state.ts)
    for (let i = 1; i <= 6; i++) {
      const r = await tools.run('ldapwhoami', asUser('dave', `wrong-${i}`));
      assert.equal(r.code, 49, r.stderr);
    }
    const counted = await search([...asUser('admin', realm.adminPassword), '-b', dnOf('dave'), '-s', 'base', '(objectClass=*)', 'krbLoginFailedCount']);
    assert.match(counted.stdout, /^krbLoginFailedCount: 6$/m);
    const locked = await tools.run('ldapwhoami', asUser('dave', 'Dave-pass-1'));
    assert.equal(locked.code, 53, locked.stderr);
    assert.match(locked.stderr, /account locked/);
    // one rule: the API's password login refuses it too
    const api = await new RpcSession(realm.url, realm.ca).login('dave', 'Dave-pass-1');
    assert.equal(api.status, 401);
    assert.match(api.body, /account locked/);
  });

  it('binds with SASL GSSAPI and an MIT ticket, with a security layer in clear and none over StartTLS', async () => {
    const cc = `FILE:${join(realm.dataDir, 'alice.cc')}`;
    const k = await runTool('kinit', ['-c', cc, 'alice'], tools.env, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const env = { KRB5CCNAME: cc };
    const clear = await tools.run('ldapwhoami', ['-Y', 'GSSAPI', '-H', ldap], { env });
    assert.equal(clear.code, 0, clear.stderr);
    assert.equal(clear.stdout.trim(), `dn:${dnOf('alice')}`);
    assert.match(clear.stderr, /SASL SSF: 256/);
    assert.match(clear.stderr, /SASL data security layer installed/);
    const found = await search(['-Y', 'GSSAPI', '-H', ldap, '-b', BASE, '(uid=bob)', 'uidNumber'], env);
    assert.equal(found.code, 0, found.stderr);
    assert.deepEqual(dns(found.stdout), [dnOf('bob')]);
    assert.match(found.stdout, /^uidNumber: \d+$/m);
    const paged = await search(['-Y', 'GSSAPI', '-H', ldap, '-E', 'pr=2/noprompt', '-b', USERS, '(objectClass=posixAccount)', 'uid'], env);
    assert.equal(paged.code, 0, paged.stderr);
    assert.equal(dns(paged.stdout).length, 6);
    const tls = await tools.run('ldapwhoami', ['-Y', 'GSSAPI', '-ZZ', '-H', ldap], { env });
    assert.equal(tls.code, 0, tls.stderr);
    assert.equal(tls.stdout.trim(), `dn:${dnOf('alice')}`);
    assert.match(tls.stderr, /SASL SSF: 0/);
    const tlsSearch = await search(['-Y', 'GSSAPI', '-ZZ', '-H', ldap, '-b', GROUPS, '(cn=crew)', 'member'], env);
    assert.equal(tlsSearch.code, 0, tlsSearch.stderr);
    assert.match(tlsSearch.stdout, new RegExp(`^member: ${dnOf('alice')}$`, 'm'));
  });

  it('checks the account after the GSSAPI exchange: a disabled user with a ticket is refused', async () => {
    const cc = `FILE:${join(realm.dataDir, 'carol.cc')}`;
    const k = await runTool('kinit', ['-c', cc, 'carol'], tools.env, 'Carol-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const ok = await tools.run('ldapwhoami', ['-Y', 'GSSAPI', '-H', ldap], { env: { KRB5CCNAME: cc } });
    assert.equal(ok.code, 0, ok.stderr);
    await admin.call('user_mod', ['carol'], { setattr: ['nsAccountLock=TRUE'] });
    const refused = await tools.run('ldapwhoami', ['-Y', 'GSSAPI', '-H', ldap], { env: { KRB5CCNAME: cc } });
    assert.equal(refused.code, 53, refused.stderr);
    assert.match(refused.stderr, /account disabled/);
  });
});
