/**
 * Enrolment credentials (objects/host-enroll.ts, docs/access.md): `host-add
 * --random` shows a one-time password once and `--password` sets one; the
 * host joins with it over `/dirid/session/enroll` and no other credentials
 * (the client's enrollHost, cli/enroll.ts), gets a keytab MIT kinit takes
 * and the realm's particulars, and the password is gone: not twice, also
 * not for two enrolments racing with it. A wrong password is a failed
 * login: the same answer and the same password hash as an unknown host or
 * one without a password, counted towards a lockout of the enrolment (not
 * of the host's Kerberos principal), logged with its reason and never the
 * password. An administrator enrols with their own credentials; nobody
 * else without the password; the enrolment endpoint runs nothing else.
 * Every enrolment is logged as a login is, by host and way in:
 * `enroll host=FQDN method=password|admin outcome=ok|denied`.
 */
import { after, before, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startAdminRealm, userSession, type TestRealm, addActiveUser } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { runTool } from '../support/mit-tools.js';
import { rpcError } from '../support/expect.js';
import { loadClientConfig, type ClientConfig } from '../../src/cli/config.js';
import { enrollHost, type Enrolment } from '../../src/cli/enroll.js';
import { DEFAULT_LOCKOUT } from '../../src/account/state.js';

describe('host enrolment with a one-time password', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let conf: ClientConfig;
  let env: NodeJS.ProcessEnv;
  /** a session with no credentials at all, for the enrolment endpoint */
  let nobody: RpcSession;

  const enrolRaw = (fqdn: string, options: Record<string, string>) => nobody.raw('host_enroll', [fqdn], options, '/dirid/session/enroll');
  /** kinit -k with the keytab an enrolment gave: the KDC takes the host's new keys */
  async function kinitWith(e: Enrolment, name: string): Promise<void> {
    const kt = join(realm.dataDir, `${name}.keytab`);
    writeFileSync(kt, e.keytab);
    const r = await runTool('kinit', ['-k', '-t', kt, '-c', `FILE:${join(realm.dataDir, `${name}.cc`)}`, e.principal], env);
    assert.equal(r.code, 0, r.stderr);
  }

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    const client = cliClient(realm);
    conf = loadClientConfig(client.conf);
    env = client.env;
    nobody = new RpcSession(realm.url, realm.ca);
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'L' });
  });
  after(async () => realm.stop());

  it('host-add --random shows the password once; show says Password and Keytab, never the password', async () => {
    const added = await admin.call('host_add', ['web.example.test'], { random: true });
    const password = added.result.randompassword as string;
    assert.match(password, /^[A-Za-z0-9_-]{24}$/);
    assert.equal(added.result.has_password, true);
    assert.equal(added.result.has_keytab, false, 'no keys before it joins');
    const bodies = [
      (await admin.raw('host_show', ['web.example.test'], { all: true, raw: true })).http.body,
      (await admin.raw('host_find', [], { all: true })).http.body,
      (await admin.raw('host_show', ['web.example.test'], {})).http.body,
    ];
    for (const b of bodies) assert.ok(!b.includes(password) && !b.includes('SCRYPT'), b);
    const shown = await admin.call('host_show', ['web.example.test'], {});
    assert.equal(shown.result.has_password, true);
    assert.equal(shown.result.randompassword, undefined, 'shown by the call that made it only');
    assert.ok(!realm.log.some((l) => l.includes(password)));
  });

  it('the host enrols with it and no other credentials, MIT kinit takes the keytab, and the password is gone', async () => {
    const { result } = await admin.call('host_mod', ['web.example.test'], { random: true });
    const e = await enrollHost(conf, { fqdn: 'Web.Example.Test', password: result.randompassword });
    assert.equal(e.fqdn, 'web.example.test');
    assert.equal(e.principal, 'host/web.example.test@EXAMPLE.TEST');
    assert.equal(e.kvno, 1);
    assert.equal(e.realm, 'EXAMPLE.TEST');
    assert.equal(e.domain, 'example.test');
    assert.equal(e.baseDn, 'dc=example,dc=test');
    assert.equal(e.caPem, realm.ca);
    assert.deepEqual(e.servers, [
      { hostname: 'localhost', kdcPort: realm.server.kdcPort, kpasswdPort: realm.server.kpasswdPort, httpsPort: realm.server.httpsPort, ldapPort: realm.server.ldapPort, ldapsPort: realm.server.ldapsPort },
    ]);
    await kinitWith(e, 'web');
    assert.ok(realm.log.some((l) => / enroll host=web\.example\.test method=password outcome=ok$/.test(l)), 'the enrolment is logged by host, as a login');
    const shown = await admin.call('host_show', ['web.example.test'], {});
    assert.equal(shown.result.has_password, false);
    assert.equal(shown.result.has_keytab, true);
    await assert.rejects(enrollHost(conf, { fqdn: 'web.example.test', password: result.randompassword }), /no such host, or its one-time password is wrong, used already or not set/);
    assert.ok(realm.log.some((l) => /command=host_enroll .*outcome=EnrolmentRefused\(1010\) reason="host web.example.test: the host has no one-time password/.test(l)));
    assert.ok(realm.log.some((l) => / enroll host=web\.example\.test method=password outcome=denied error=EnrolmentRefused\(1010\) reason="host web.example.test: the host has no one-time password/.test(l)));
  });

  it('--password sets the one-time password; a new enrolment gives the next key version', async () => {
    await admin.call('host_mod', ['web.example.test'], { password: 'Chosen-OTP-4711' });
    const e = await enrollHost(conf, { fqdn: 'web.example.test', password: 'Chosen-OTP-4711' });
    assert.equal(e.kvno, 2);
    await kinitWith(e, 'web2');
    const both = await rpcError(admin.call('host_mod', ['web.example.test'], { random: true, password: 'x-y-z-1234' }));
    assert.match(both.message, /--random and --password cannot be given together/);
  });

  it('a wrong password, an unknown host and a host without a password: one answer, one password hash each; the log says which', async () => {
    await admin.call('host_add', ['db.example.test'], { password: 'Right-OTP-0815' });
    await admin.call('host_add', ['nopass.example.test'], {});
    const scrypt = mock.method(crypto, 'scrypt');
    syncBuiltinESMExports();
    try {
      const attempts: Array<[string, string]> = [
        ['db.example.test', 'Wrong-OTP-0001'],
        ['nosuch.example.test', 'Wrong-OTP-0002'],
        ['nopass.example.test', 'Wrong-OTP-0003'],
      ];
      const works: unknown[] = [];
      for (const [fqdn, password] of attempts) {
        const before = scrypt.mock.callCount();
        const { status, response } = await enrolRaw(fqdn, { password });
        assert.equal(status, 200);
        assert.equal(response.error?.name, 'EnrolmentRefused');
        assert.equal(response.error?.message, 'Insufficient access: no such host, or its one-time password is wrong, used already or not set');
        works.push(scrypt.mock.calls.slice(before).map((c) => [c.arguments[2], c.arguments[3]]));
      }
      assert.equal((works[0] as unknown[]).length, 1, 'one password hash');
      assert.deepEqual(works[1], works[0]);
      assert.deepEqual(works[2], works[0]);
    } finally {
      scrypt.mock.restore();
      syncBuiltinESMExports();
    }
    for (const [host, reason] of [
      ['db.example.test', 'wrong one-time password'],
      ['nosuch.example.test', 'no such host'],
      ['nopass.example.test', 'the host has no one-time password'],
    ]) {
      assert.ok(realm.log.some((l) => l.includes(`rpc request principal=- command=host_enroll`) && l.includes(`reason="host ${host}: ${reason}`)), `${host}: ${reason}`);
    }
    for (const host of ['db', 'nosuch', 'nopass']) {
      assert.ok(realm.log.some((l) => l.includes(` enroll host=${host}.example.test method=password outcome=denied error=EnrolmentRefused(1010) reason="host ${host}.example.test: `)), host);
    }
    // a name that is no host name cannot forge a field or a line
    await enrolRaw('evil outcome=ok\nenroll host=x', { password: 'Wrong-OTP-0004' });
    assert.ok(realm.log.some((l) => l.includes(' enroll host="evil outcome=ok\\nenroll host=x" method=password outcome=denied error=ValidationError(3009)')));
    assert.ok(!realm.log.some((l) => /Wrong-OTP|Right-OTP/.test(l)), 'no password in the log');
    // a wrong one did not use the password up
    await kinitWith(await enrollHost(conf, { fqdn: 'db.example.test', password: 'Right-OTP-0815' }), 'db');
  });

  it('counts wrong passwords towards a lockout of the enrolment, not of the host; a new password starts again', async () => {
    const { result } = await admin.call('host_mod', ['db.example.test'], { random: true });
    for (let i = 0; i < DEFAULT_LOCKOUT.maxFailures; i++) assert.equal((await enrolRaw('db.example.test', { password: `wrong-${i}` })).response.error?.name, 'EnrolmentRefused');
    const locked = await enrolRaw('db.example.test', { password: result.randompassword });
    assert.equal(locked.response.error?.name, 'AccountLocked', 'the right password too, once locked');
    assert.ok(realm.log.some((l) => /reason="host db\.example\.test: enrolment locked after too many wrong one-time passwords, until /.test(l)));
    // the host's own keys still work: its principal is not locked
    const kinit = await runTool('kinit', ['-k', '-t', join(realm.dataDir, 'db.keytab'), '-c', `FILE:${join(realm.dataDir, 'db3.cc')}`, 'host/db.example.test@EXAMPLE.TEST'], env);
    assert.equal(kinit.code, 0, kinit.stderr);
    const again = await admin.call('host_mod', ['db.example.test'], { random: true });
    await kinitWith(await enrollHost(conf, { fqdn: 'db.example.test', password: again.result.randompassword }), 'db4');
  });

  it('of two enrolments racing with one password, one gets keys and the other is refused', async () => {
    const { result } = await admin.call('host_add', ['race.example.test'], { random: true });
    const tries = await Promise.allSettled([1, 2, 3].map(() => enrollHost(conf, { fqdn: 'race.example.test', password: result.randompassword })));
    const won = tries.flatMap((t) => (t.status === 'fulfilled' ? [t.value] : []));
    assert.equal(won.length, 1, JSON.stringify(tries.map((t) => (t.status === 'rejected' ? String(t.reason) : 'ok'))));
    for (const t of tries) if (t.status === 'rejected') assert.match(String(t.reason), /used already or not set/);
    await kinitWith(won[0]!, 'race');
  });

  it('an administrator enrols with their own credentials; nobody else without the password; the endpoint runs nothing else', async () => {
    const existing = await admin.call('host_enroll', ['nopass.example.test'], {});
    assert.equal(existing.result.principal, 'host/nopass.example.test@EXAMPLE.TEST');
    assert.equal(existing.result.kvno, 2, 'host-add gave it keys: the next version');
    const added = await admin.call('host_enroll', ['new.example.test'], {});
    assert.equal(added.result.kvno, 2);
    assert.equal((await admin.call('host_show', ['new.example.test'], {})).result.has_keytab, true);
    const alice = await userSession(realm, 'alice', 'Alice-pass-1');
    const notAdmin = await rpcError(alice.call('host_enroll', ['new.example.test'], {}));
    assert.equal(notAdmin.code, 2100);
    assert.ok(realm.log.some((l) => / enroll host=new\.example\.test method=admin outcome=ok principal=admin@EXAMPLE\.TEST$/.test(l)));
    assert.ok(realm.log.some((l) => / enroll host=new\.example\.test method=admin outcome=denied error=ACIError\(2100\) principal=alice@EXAMPLE\.TEST$/.test(l)));
    const anonymous = await enrolRaw('new.example.test', {});
    assert.equal(anonymous.response.error?.name, 'NotAuthenticated');
    const other = await nobody.raw('user_find', [], {}, '/dirid/session/enroll');
    assert.equal(other.response.error?.name, 'NotAuthenticated');
    assert.equal(other.response.result, null);
  });

  it('a dirid server\'s own host entry gets no one-time password and is not enrolled', async () => {
    const mod = await rpcError(admin.call('host_mod', ['localhost'], { random: true }));
    assert.match(mod.message, /required by the dirid server localhost and cannot be given a one-time password/);
    const enrol = await rpcError(admin.call('host_enroll', ['localhost'], {}));
    assert.match(enrol.message, /cannot be enrolled/);
  });
});
