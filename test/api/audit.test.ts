/**
 * The audit trail (docs/logging.md, "Audit"): every write a command
 * commits is one `write` line naming who, which command, which entry and
 * which attributes, with the values of the attributes that decide access
 * (nsAccountLock, member) and never a secret's; a refused command writes no
 * such line; LDAP's Password Modify is logged on the LDAP connection's
 * line; a lockout is logged once. Logins through each way in say their
 * method and outcome.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addActiveUser, changeOwnPassword, startAdminRealm, userSession, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { parseTextLine } from '../support/log-lines.js';
import { ldapTools } from '../support/ldap-tools.js';

const PASSWORD = 'Audit-Password-0815';
const NEW_PASSWORD = 'Audit-Password-0816';
/** bob's own, chosen at his first login (the administrator's has expired) */
const OWN_PASSWORD = 'Audit-Password-0817';
const IDP_SECRET = 'Audit-Idp-Secret-4711';
const BASE = 'dc=example,dc=test';
const bobDn = `uid=bob,cn=users,cn=accounts,${BASE}`;

describe('the audit trail', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  before(async () => {
    ({ realm, admin } = await startAdminRealm());
  });
  after(async () => realm?.stop());

  /** The write lines logged since `since`, read as docs/logging.md says. */
  const writes = (since: number) =>
    realm.log
      .slice(since)
      .map(parseTextLine)
      .filter((l) => l.event === 'write');

  it('an add names who, the command, the entry and the attributes; the password is named, never its value', async () => {
    const since = realm.log.length;
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'Builder', password: PASSWORD });
    const added = writes(since).find((w) => w.fields.command === 'user_add' && w.fields.dn === bobDn);
    assert.ok(added, realm.log.slice(since).join('\n'));
    assert.equal(added.component, 'rpc');
    assert.equal(added.fields.principal, 'admin@EXAMPLE.TEST');
    assert.equal(added.fields.change, 'add');
    const attrs = added.fields.attrs!.split(',');
    for (const a of ['uid', 'givenName', 'sn', 'userPassword', 'krbPrincipalKey']) assert.ok(attrs.includes(a), `${a} in ${added.fields.attrs}`);
    for (const l of realm.log) assert.ok(!l.includes(PASSWORD), l);
  });

  it('who disabled a user: the write line of user_disable, with the value of nsAccountLock', async () => {
    const since = realm.log.length;
    await admin.call('user_disable', ['bob'], {});
    const lines = realm.log.slice(since).filter((l) => l.includes(' write ') && l.includes('nsAccountLock'));
    assert.equal(lines.length, 1, realm.log.slice(since).join('\n'));
    assert.match(lines[0]!, new RegExp(`^\\S+Z rpc write principal=admin@EXAMPLE\\.TEST command=user_disable change=modify dn="${bobDn}" attrs=nsAccountLock(,\\w+)* replace\\.nsAccountLock=TRUE$`));
    await admin.call('user_enable', ['bob'], {});
  });

  it('membership changes carry the member DNs', async () => {
    await admin.call('group_add', ['builders'], { description: 'x' });
    const since = realm.log.length;
    await admin.call('group_add_member', ['builders'], { users: ['bob'] });
    const w = writes(since).find((x) => x.fields.command === 'group_add_member');
    assert.ok(w, realm.log.slice(since).join('\n'));
    assert.equal(w.fields.dn, `cn=builders,cn=groups,cn=accounts,${BASE}`);
    assert.equal(w.fields['add.member'], bobDn);
  });

  it("an IdP reference's client secret is named, never its value, on add, on mod and by --setattr's refusal", async () => {
    const since = realm.log.length;
    await admin.call('idp_add', ['audit-idp'], { client_id: 'c', secret: IDP_SECRET, auth_uri: 'https://s.example/a', token_uri: 'https://s.example/t' });
    await admin.call('idp_mod', ['audit-idp'], { secret: `${IDP_SECRET}-2` });
    const ws = writes(since).filter((w) => w.fields.dn === `cn=audit-idp,cn=idp,${BASE}`);
    assert.deepEqual(ws.map((w) => w.fields.change), ['add', 'modify']);
    for (const w of ws) assert.ok(w.fields.attrs!.split(',').includes('dirIdpClientSecret'), w.fields.attrs);
    for (const l of realm.log) assert.ok(!l.includes(IDP_SECRET), l);
  });

  it('a refused command writes nothing and no write line', async () => {
    await addActiveUser(admin, 'carl', PASSWORD, { first: 'Carl', last: 'C' });
    const carl = await userSession(realm, 'carl', PASSWORD);
    const since = realm.log.length;
    const r = await carl.raw('user_disable', ['bob'], {});
    assert.equal(r.response.error?.name, 'ACIError');
    assert.deepEqual(writes(since), []);
    assert.ok(realm.log.slice(since).some((l) => / rpc request principal=carl@EXAMPLE\.TEST command=user_disable .*outcome=ACIError\(2100\)/.test(l)), realm.log.slice(since).join('\n'));
  });

  it("LDAP Password Modify: the write is logged on the LDAP connection's line, and the bind says its method", async () => {
    // the password the administrator set has expired: bob chooses his own through the session's password change, which is logged
    const before = realm.log.length;
    const changed = await changeOwnPassword(admin, 'bob', PASSWORD, OWN_PASSWORD);
    assert.equal(changed.headers['x-dirid-pwchange-result'], 'ok', changed.body);
    const change = realm.log.slice(before).map(parseTextLine).find((l) => l.event === 'password_change');
    assert.deepEqual([change?.component, change?.fields.user, change?.fields.outcome], ['rpc', 'bob', 'ok'], realm.log.slice(before).join('\n'));
    const since = realm.log.length;
    const tools = ldapTools(realm);
    const r = await tools.run('ldappasswd', ['-H', realm.ldapsUrl, '-x', '-D', bobDn, '-w', OWN_PASSWORD, '-s', NEW_PASSWORD]);
    assert.equal(r.code, 0, r.stderr);
    const lines = realm.log.slice(since).map(parseTextLine);
    const bind = lines.find((l) => l.component === 'ldap' && l.event === 'bind');
    assert.ok(bind, realm.log.slice(since).join('\n'));
    assert.deepEqual([bind.fields.method, bind.fields.outcome, bind.fields.dn], ['simple', 'success(0)', bobDn]);
    const w = lines.find((l) => l.event === 'write');
    assert.ok(w, realm.log.slice(since).join('\n'));
    assert.equal(w.component, 'ldap');
    assert.equal(w.fields.conn, bind.fields.conn);
    assert.deepEqual([w.fields.principal, w.fields.command, w.fields.dn], ['bob@EXAMPLE.TEST', 'passwd', bobDn]);
    assert.ok(w.fields.attrs!.split(',').includes('userPassword'), w.fields.attrs);
    for (const l of realm.log) assert.ok(!l.includes(NEW_PASSWORD) && !l.includes(OWN_PASSWORD), l);
  });

  it('a lockout is logged once, the failed-login counts are not logged as writes', async () => {
    await admin.call('user_add', ['dora'], { first: 'Dora', last: 'D', password: PASSWORD });
    const since = realm.log.length;
    for (let i = 0; i < 6; i++) {
      const s = await admin.raw('ping', [], {});
      assert.equal(s.response.error, null);
      const r = await userSession(realm, 'dora', 'wrong-password').then(
        () => 'in',
        (e: Error) => e.message,
      );
      assert.notEqual(r, 'in');
    }
    const lines = realm.log.slice(since).map(parseTextLine);
    const lockouts = lines.filter((l) => l.event === 'lockout');
    assert.equal(lockouts.length, 1, realm.log.slice(since).join('\n'));
    assert.deepEqual([lockouts[0]!.component, lockouts[0]!.fields.dn, lockouts[0]!.fields.failures], ['account', `uid=dora,cn=users,cn=accounts,${BASE}`, '6']);
    assert.match(lockouts[0]!.fields.until!, /^\d{4}-\d\d-\d\dT/);
    assert.equal(lines.filter((l) => l.event === 'login' && l.fields.method === 'password' && l.fields.user === 'dora' && l.fields.outcome === 'denied').length, 6);
    assert.deepEqual(lines.filter((l) => l.event === 'write'), [], 'the counts are no audit event');
    const since2 = realm.log.length;
    await admin.call('user_unlock', ['dora'], {});
    const unlock = writes(since2).find((w) => w.fields.command === 'user_unlock');
    assert.ok(unlock, realm.log.slice(since2).join('\n'));
    assert.equal(unlock.fields['replace.krbLoginFailedCount'], '0');
  });
});

describe('JSON lines (server.conf log_format = json)', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  before(async () => {
    ({ realm, admin } = await startAdminRealm({ serverConf: { log_format: 'json' } }));
  });
  after(async () => realm?.stop());

  it('every line of a running server is one JSON object; the audit query of docs/logging.md finds who disabled bob', async () => {
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'B', password: PASSWORD });
    await admin.call('user_disable', ['bob'], {});
    const records = realm.log.map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const r of records) {
      assert.match(String(r.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(['info', 'warn', 'error'].includes(String(r.level)), JSON.stringify(r));
      assert.equal(typeof r.component, 'string');
      assert.equal(typeof r.event, 'string');
    }
    assert.ok(records.some((r) => r.component === 'server' && r.event === 'started'));
    assert.ok(records.some((r) => r.component === 'rpc' && r.event === 'login' && r.method === 'password' && r.outcome === 'ok'));
    // jq 'select(.event == "write" and (.dn | startswith("uid=bob,")) and any(.attrs[]; . == "nsAccountLock"))'
    const who = records.filter((r) => r.event === 'write' && String(r.dn).startsWith('uid=bob,') && (r.attrs as string[]).includes('nsAccountLock'));
    assert.equal(who.length, 1, JSON.stringify(who));
    assert.deepEqual([who[0]!.principal, who[0]!.command, who[0]!.replace], ['admin@EXAMPLE.TEST', 'user_disable', { nsAccountLock: ['TRUE'] }]);
    for (const l of realm.log) assert.ok(!l.includes(PASSWORD), l);
  });
});
