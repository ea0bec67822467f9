/**
 * Account state on every way in (account/state.ts): an account an
 * administrator disables, one whose principal expires, one locked by failed
 * passwords and one whose password expires, each seen through MIT kinit and
 * kvno (AS and TGS), curl --negotiate with a service ticket obtained before,
 * password login, and a session cookie earned before. A change through the
 * API takes effect at once, whatever the KDC has cached. An IdP login is
 * not a password login: an expired password does not stop it, a disabled
 * account does.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { diridKinitViaIdp } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { DEFAULT_LOCKOUT, failuresAfter, verdict, type Account } from '../../src/account/state.js';

const PAST = '20000101000000Z';

describe('account state is checked on every way in', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let armor: string;

  before(async () => {
    realm = await startTestRealm();
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('service_add', ['HTTP/other.example.test'], { force: true });
    armor = await hostArmor(realm, env);
  });
  after(async () => realm.stop());

  const ccache = (user: string) => `FILE:${join(realm.dataDir, `${user}.cc`)}`;
  const kinit = (user: string, password: string, args: string[] = []) => runTool('kinit', [...args, '-c', ccache(user), user], env, `${password}\n`);
  /** kvno with the user's TGT, for a service it has no ticket for yet (so the KDC is asked) */
  const kvnoHost = (user: string, service = 'host/localhost') => runTool('kvno', ['-c', ccache(user), service], env);
  const curlNegotiate = (user: string) =>
    runTool(
      'curl',
      ['-s', '-S', '-i', '--negotiate', '-u', ':', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-H', `Referer: ${realm.url}/dirid/`, '-H', 'Content-Type: application/json', '--data-binary', '{"method":"ping","params":[[],{}],"id":1}', `${realm.url}/dirid/json`],
      { ...env, KRB5CCNAME: ccache(user) },
    );
  const jsonOf = (curlOut: string) => JSON.parse(curlOut.slice(curlOut.indexOf('\r\n\r\n') + 4)) as { error: { code: number; message: string } | null; principal: string | null };

  /** A user with a TGT, a service ticket for the API (through curl) and a session cookie, all working. */
  async function activeUser(user: string, password: string): Promise<RpcSession> {
    await addActiveUser(admin, user, password, { first: user, last: 'Test' });
    const k = await kinit(user, password);
    assert.equal(k.code, 0, k.stderr);
    const n = await curlNegotiate(user);
    assert.match(n.stdout, /^HTTP\/1\.1 200/m, n.stdout + n.stderr);
    const s = new RpcSession(realm.url, realm.ca);
    assert.equal((await s.login(user, password)).status, 200);
    assert.equal((await s.raw('ping')).status, 200);
    return s;
  }

  it('an account an administrator disables is refused at once: kinit, kvno with its TGT, Negotiate, password login, its session', async () => {
    const session = await activeUser('carol', 'Carol-pass-1');
    await admin.call('user_mod', ['carol'], { setattr: ['nsAccountLock=TRUE'] });
    const k = await kinit('carol', 'Carol-pass-1');
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Client's credentials have been revoked/);
    const v = await kvnoHost('carol');
    assert.notEqual(v.code, 0, 'the TGS refuses the TGT of a disabled client');
    assert.match(v.stderr, /Client's credentials have been revoked/);
    const n = await curlNegotiate('carol');
    assert.match(n.stdout, /^HTTP\/1\.1 401/m);
    assert.deepEqual(jsonOf(n.stdout).error && { code: jsonOf(n.stdout).error!.code, message: jsonOf(n.stdout).error!.message }, { code: 1004, message: 'Insufficient access: account disabled' });
    const r = await session.raw('ping');
    assert.equal(r.status, 401);
    assert.equal(r.response.error?.code, 1004);
    assert.equal(r.response.error?.message, 'Insufficient access: account disabled');
    const fresh = new RpcSession(realm.url, realm.ca);
    const login = await fresh.login('carol', 'Carol-pass-1');
    assert.equal(login.status, 401);
    assert.equal(login.body, 'Insufficient access: account disabled\n');
    assert.equal(login.headers['x-dirid-rejection-reason'], 'account-disabled');
    assert.ok(realm.log.some((l) => /kdc tgs_req .*client=carol@EXAMPLE.TEST .*outcome=KDC_ERR_CLIENT_REVOKED/.test(l)));
    assert.ok(realm.log.some((l) => /login method=session principal=carol@EXAMPLE.TEST outcome=denied error=AccountDisabled\(1004\) reason="account disabled"/.test(l)));
    // enabled again, the TGT works again at once; the session the disablement ended stays ended (docs/access.md), a new login works
    await admin.call('user_mod', ['carol'], { disabled: false });
    assert.equal((await kvnoHost('carol')).code, 0);
    assert.equal((await session.raw('ping')).status, 401);
    assert.equal((await session.login('carol', 'Carol-pass-1')).status, 200);
    assert.equal((await session.raw('ping')).status, 200);
  });

  it('an account whose principal expired is refused the same way, with "expired"', async () => {
    const session = await activeUser('erin', 'Erin-pass-1');
    await admin.call('user_mod', ['erin'], { setattr: [`krbPrincipalExpiration=${PAST}`] });
    const k = await kinit('erin', 'Erin-pass-1');
    assert.match(k.stderr, /Client's entry in database has expired/);
    const v = await kvnoHost('erin');
    assert.notEqual(v.code, 0, 'the TGS refuses the TGT of an expired client');
    assert.match(v.stderr, /Client's entry in database has expired/);
    const n = await curlNegotiate('erin');
    assert.match(n.stdout, /^HTTP\/1\.1 401/m);
    assert.equal(jsonOf(n.stdout).error?.code, 1006);
    const r = await session.raw('ping');
    assert.equal(r.status, 401);
    assert.equal(r.response.error?.message, 'Insufficient access: account expired');
    const login = await new RpcSession(realm.url, realm.ca).login('erin', 'Erin-pass-1');
    assert.equal(login.status, 401);
    assert.equal(login.headers['x-dirid-rejection-reason'], 'krbprincipal-expired');
    assert.ok(realm.log.some((l) => /kdc tgs_req .*client=erin@EXAMPLE.TEST .*outcome=KDC_ERR_NAME_EXP/.test(l)));
    assert.ok(realm.log.some((l) => /login method=negotiate outcome=denied error=AccountExpired\(1006\) reason="account expired at 2000-01-01T00:00:00.000Z"/.test(l)));
  });

  it('failed passwords lock an account (6 within 60 s), counted by the KDC and the API alike; a correct password then is refused everywhere', async () => {
    const session = await activeUser('lara', 'Lara-pass-12');
    const generation = realm.server.dir.generation;
    assert.equal((await runTool('kinit', ['-c', `FILE:${join(realm.dataDir, 'lara-2.cc')}`, 'lara'], env, 'Lara-pass-12\n')).code, 0);
    assert.equal(realm.server.dir.generation, generation, 'a login without failures before it writes nothing');
    for (let i = 0; i < 2; i++) assert.match((await kinit('lara', 'wrong-password')).stderr, /Password incorrect/);
    // FAST with encrypted challenge counts too
    assert.match((await kinit('lara', 'wrong-password', ['-T', armor])).stderr, /Password incorrect/);
    for (let i = 0; i < 2; i++) assert.equal((await new RpcSession(realm.url, realm.ca).login('lara', 'wrong-password')).status, 401);
    const shown = await admin.call('user_show', ['lara'], { all: true, raw: true });
    assert.deepEqual(shown.result.krbloginfailedcount, ['5']);
    assert.equal((await kvnoHost('lara', 'HTTP/other.example.test')).code, 0, 'not locked yet');
    assert.match((await kinit('lara', 'wrong-password')).stderr, /Password incorrect/);
    // the sixth failure locked it: the right password no longer helps
    const k = await kinit('lara', 'Lara-pass-12');
    assert.notEqual(k.code, 0);
    assert.match(k.stderr, /Client's credentials have been revoked/);
    const login = await new RpcSession(realm.url, realm.ca).login('lara', 'Lara-pass-12');
    assert.equal(login.status, 401);
    assert.equal(login.body, 'Insufficient access: account locked after too many failed logins\n');
    assert.equal(login.headers['x-dirid-rejection-reason'], 'user-locked');
    assert.equal((await session.raw('ping')).response.error?.code, 1005);
    assert.match((await kvnoHost('lara')).stderr, /Client's credentials have been revoked/);
    assert.equal(jsonOf((await curlNegotiate('lara')).stdout).error?.code, 1005);
    assert.ok(realm.log.some((l) => /kdc as_req .*client=lara@EXAMPLE.TEST .*outcome=KDC_ERR_CLIENT_REVOKED reason="client lara@EXAMPLE.TEST: account locked after too many failed logins, until \d{4}-/.test(l)), 'the KDC log says why');
    assert.ok(realm.log.some((l) => /login method=password user=lara outcome=denied error=AccountLocked\(1005\) reason="account locked after too many failed logins, until \d{4}-/.test(l)));
    // user-unlock: only for those who manage users; an administrator's ends the lockout at once
    await addActiveUser(admin, 'uma', 'Uma-pass-123', { first: 'Uma', last: 'U' });
    const uma = new RpcSession(realm.url, realm.ca);
    assert.equal((await uma.login('uma', 'Uma-pass-123')).status, 200);
    await assert.rejects(uma.call('user_unlock', ['lara']), (e: Error & { errorName?: string }) => e.errorName === 'ACIError' && /not allowed to unlock user accounts/.test(e.message));
    await assert.rejects(admin.call('user_unlock', ['nobody-here']), (e: Error & { errorName?: string }) => e.errorName === 'NotFound');
    const unlocked = await admin.call('user_unlock', ['lara']);
    assert.equal(unlocked.summary, 'Unlocked account "lara"');
    const after = (await admin.call('user_show', ['lara'], { all: true, raw: true })).result;
    assert.deepEqual([after.krbloginfailedcount, after.krblastfailedauth], [['0'], undefined]);
    assert.ok(realm.log.some((l) => /rpc request principal=admin@EXAMPLE.TEST command=user_unlock .*outcome=ok/.test(l)));
    assert.equal((await kinit('lara', 'Lara-pass-12')).code, 0);
    assert.equal((await session.raw('ping')).status, 200);
  });

  it('a user with neither a password nor an IdP login is refused, and the KDC log says why', async () => {
    await admin.call('user_add', ['nopass'], { first: 'No', last: 'Pass' });
    const k = await kinit('nopass', 'anything');
    assert.notEqual(k.code, 0);
    // a failed login, as SSSD reads it ("Authentication failure"), not an enctype problem ("System error")
    assert.match(k.stderr, /Preauthentication failed/);
    assert.ok(realm.log.some((l) => /kdc as_req .*client=nopass@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED reason="the user has no password and no IdP login \(set a password, or link the user to an IdP reference\)"/.test(l)), realm.log.filter((l) => l.includes('nopass')).join('\n'));
  });

  it('a correct password resets the count: failures before it do not add up with failures after it', async () => {
    await addActiveUser(admin, 'rita', 'Rita-pass-12', { first: 'Rita', last: 'R' });
    for (let i = 0; i < 5; i++) assert.match((await kinit('rita', 'wrong-password')).stderr, /Password incorrect/);
    const generation = realm.server.dir.generation;
    assert.equal((await new RpcSession(realm.url, realm.ca).login('rita', 'Rita-pass-12')).status, 200);
    assert.deepEqual((await admin.call('user_show', ['rita'], { all: true, raw: true })).result.krbloginfailedcount, ['0']);
    assert.ok(realm.server.dir.generation > generation, 'the first success after failures writes');
    const reset = realm.server.dir.generation;
    assert.equal((await kinit('rita', 'Rita-pass-12')).code, 0);
    assert.equal(realm.server.dir.generation, reset, 'the next success writes nothing');
    for (let i = 0; i < 5; i++) assert.match((await kinit('rita', 'wrong-password')).stderr, /Password incorrect/);
    assert.equal((await kinit('rita', 'Rita-pass-12')).code, 0, 'five failures do not lock');
  });

  it('an expired password refuses only logins with that password: kinit (plain and FAST) and password login; tickets and sessions go on', async () => {
    const session = await activeUser('pete', 'Pete-pass-12');
    await admin.call('user_mod', ['pete'], { setattr: [`krbPasswordExpiration=${PAST}`] });
    for (const args of [[], ['-T', armor]]) {
      // kinit then gets a kadmin/changepw ticket and asks for a new password, which stdin does not give (kpasswd.test.ts
      // changes it); its trace shows what the KDC said
      const trace = join(realm.dataDir, `pete-trace-${args.length}.txt`);
      const k = await runTool('kinit', [...args, '-c', `FILE:${join(realm.dataDir, 'pete-new.cc')}`, 'pete'], { ...env, KRB5_TRACE: trace }, 'Pete-pass-12\n');
      assert.notEqual(k.code, 0);
      assert.match(readFileSync(trace, 'utf8'), /Received error from KDC: -1765328361\/Password has expired/, k.stderr);
      const wrong = await runTool('kinit', [...args, '-c', `FILE:${join(realm.dataDir, 'pete-new.cc')}`, 'pete'], env, 'wrong-password\n');
      assert.match(wrong.stderr, /Password incorrect/, 'a wrong password is not told the password expired');
    }
    assert.ok(realm.log.some((l) => /kdc as_req .*client=pete@EXAMPLE.TEST .*outcome=KDC_ERR_KEY_EXPIRED/.test(l)));
    const login = await new RpcSession(realm.url, realm.ca).login('pete', 'Pete-pass-12');
    assert.equal(login.status, 401);
    assert.equal(login.body, 'Insufficient access: password expired\n');
    assert.equal(login.headers['x-dirid-rejection-reason'], 'password-expired');
    const wrongLogin = await new RpcSession(realm.url, realm.ca).login('pete', 'wrong-password');
    assert.equal(wrongLogin.body, 'Insufficient access: invalid user name or password\n');
    // what was issued before keeps working
    assert.equal((await kvnoHost('pete')).code, 0);
    assert.equal((await session.raw('ping')).status, 200);
    assert.match((await curlNegotiate('pete')).stdout, /^HTTP\/1\.1 200/m);
  });
});

describe('account state and IdP logins', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    idp = await startTestIdp({ accounts: ['ivy-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca-state-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), DIRID_KINIT_POLL_MS: '1000' };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['testidp'], idpReference(idp, 'openid email'));
    await addActiveUser(admin, 'ivy', 'Ivy-pass-123', { first: 'Ivy', last: 'I' });
    await admin.call('user_mod', ['ivy'], { user_auth_type: ['idp', 'password'], idp: 'testidp', idp_user_id: 'ivy-sub' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  /** dirid kinit with host armor; approves at the IdP as soon as the code is printed. */
  const diridKinit = (cc: string) => diridKinitViaIdp(idp, env, ['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'ivy'], 'ivy-sub');


  it('an expired password refuses the password but not the IdP login', async () => {
    await admin.call('user_mod', ['ivy'], { setattr: [`krbPasswordExpiration=${PAST}`] });
    const login = await new RpcSession(realm.url, realm.ca).login('ivy', 'Ivy-pass-123');
    assert.equal(login.body, 'Insufficient access: password expired\n');
    const cc = `FILE:${join(realm.dataDir, 'ivy.cc')}`;
    const r = await diridKinit(cc);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match((await runTool('klist', ['-C', '-c', cc], env)).stdout, /pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
  });

  it('a disabled account gets no IdP login', async () => {
    await admin.call('user_mod', ['ivy'], { disabled: true });
    const r = await diridKinit(`FILE:${join(realm.dataDir, 'ivy-2.cc')}`);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /account disabled/, 'the e-text says why');
    assert.doesNotMatch(r.stdout, /enter the code/, 'refused before any device authorization starts');
  });
});

describe('the lockout rule over time (what the tests above cannot wait for)', () => {
  const t0 = Date.UTC(2030, 0, 1);
  const user = (failedLogins: number, lastFailed: number): Account => ({ dn: 'uid=u', isUser: true, disabled: false, failedLogins, lastFailedLogin: new Date(lastFailed) });

  it('six failures lock for 600 s after the last one, then the account is usable and counts from one again', () => {
    assert.deepEqual(verdict(user(6, t0), DEFAULT_LOCKOUT, t0 + 599_000), { state: 'locked', until: new Date(t0 + 600_000) });
    assert.deepEqual(verdict(user(6, t0), DEFAULT_LOCKOUT, t0 + 600_000), { state: 'usable' });
    assert.equal(failuresAfter(user(6, t0), DEFAULT_LOCKOUT, t0 + 600_000), 1);
  });

  it('a failure more than 60 s after the previous one counts from one again', () => {
    assert.equal(failuresAfter(user(5, t0), DEFAULT_LOCKOUT, t0 + 60_000), 6);
    assert.equal(failuresAfter(user(5, t0), DEFAULT_LOCKOUT, t0 + 61_000), 1);
  });

  it('a lockout duration of 0 locks until reset; a maximum of 0 never locks', () => {
    assert.deepEqual(verdict(user(6, t0), { ...DEFAULT_LOCKOUT, lockoutSec: 0 }, t0 + 86_400_000), { state: 'locked' });
    assert.deepEqual(verdict(user(60, t0), { ...DEFAULT_LOCKOUT, maxFailures: 0 }, t0), { state: 'usable' });
  });

  it('disabled comes before expired, expired before locked; a password expiry matters only for the password', () => {
    const a: Account = { ...user(6, t0), disabled: true, principalExpiration: new Date(t0), passwordExpiration: new Date(t0) };
    assert.equal(verdict(a, DEFAULT_LOCKOUT, t0 + 1000).state, 'disabled');
    assert.equal(verdict({ ...a, disabled: false }, DEFAULT_LOCKOUT, t0 + 1000).state, 'expired');
    const b: Account = { dn: 'uid=b', isUser: true, disabled: false, failedLogins: 0, passwordExpiration: new Date(t0) };
    assert.equal(verdict(b, DEFAULT_LOCKOUT, t0 + 1000).state, 'usable');
    assert.equal(verdict(b, DEFAULT_LOCKOUT, t0 + 1000, 'password').state, 'password-expired');
  });
});
