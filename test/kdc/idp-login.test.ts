/**
 * IdP login end to end (specification §3 device-flow sequence, §7): MIT
 * kinit with SSSD's idp plugin, armored with a host ticket, driven through a
 * pseudo-terminal; the user approves on the test IdP's own pages; the KDC
 * polls, verifies the ID token and issues a TGT that works for kvno and
 * `dirid ping`. Plus the refusals: another identity (a failed
 * pre-authentication whose e-text says so, not an unknown client), another
 * IdP reference, issuer mismatch, users not linked; an IdP refusal of the
 * device authorization asked for once although MIT sends the first request
 * twice; a device code that expires while the KDC holds the answer, told
 * expired at once rather than "pending".
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { diridKinitViaIdp, idpPrompts, kinitViaIdp, pty } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { createCa } from '../../src/server/pki.js';

describe('IdP login through the KDC (device flow)', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let admin: RpcSession;
  let armor: string;

  before(async () => {
    idp = await startTestIdp({ accounts: ['alice-sub', 'mallory-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'alice.cc')}` };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['testidp'], {
      client_id: idp.clientId,
      secret: idp.clientSecret,
      issuer_url: idp.issuer,
      auth_uri: idp.endpoints.auth,
      dev_auth_uri: idp.endpoints.devAuth,
      token_uri: idp.endpoints.token,
      keys_uri: idp.endpoints.keys,
      scope: 'openid email',
    });
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'L' });
    await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: 'alice-sub' });
    armor = await hostArmor(realm, env);
    assert.match(readFileSync(join(data, 'krb5.conf'), 'utf8'), /module = idp:\/usr\/lib\/x86_64-linux-gnu\/sssd\/modules\/sssd_krb5_idp_plugin\.so/);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });


  it('MIT kinit -T with the SSSD idp plugin gets a TGT after the IdP login', async () => {
    const cc = `FILE:${join(realm.dataDir, 'alice.cc')}`;
    const r = await kinitViaIdp({ idp, armor, env }, 'alice', 'alice-sub', cc, true);
    assert.equal(r.code, 0, r.out);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.match(l.stdout, /Default principal: alice@EXAMPLE\.TEST/);
    assert.match(l.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
    assert.ok(realm.log.some((x) => /client=alice@EXAMPLE.TEST .*outcome=ISSUE .*preauth="idp: testidp identified \\"alice-sub\\""/.test(x)), realm.log.filter((x) => x.includes('kdc')).join('\n'));
    const v = await runTool('kvno', ['-c', cc, 'HTTP/localhost'], env);
    assert.equal(v.code, 0, v.stderr);
  });

  it('refuses another identity at the IdP as a failed pre-authentication, not as an unknown client; no TGT', async () => {
    const cc = `FILE:${join(realm.dataDir, 'wrong.cc')}`;
    const r = await kinitViaIdp({ idp, armor, env }, 'alice', 'mallory-sub', cc);
    assert.notEqual(r.code, 0);
    // alice is in the database: MIT's "Client 'alice@EXAMPLE.TEST' not found in Kerberos database" said otherwise
    assert.doesNotMatch(r.out, /not found in Kerberos database/);
    assert.match(r.out, /kinit: Preauthentication failed while getting initial credentials/);
    assert.ok(realm.log.some((x) => /client=alice@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED preauth="idp: another account \(testidp identified \\"mallory-sub\\"\)"/.test(x)), realm.log.filter((x) => x.includes('alice@')).join('\n'));
    assert.equal((await runTool('klist', ['-c', cc], env)).code, 1, 'no TGT');
  });

  it('refuses an identity that differs from the link only in letter case, and logs that for the administrator', async () => {
    await admin.call('user_add', ['dave'], { first: 'Dave', last: 'D' });
    await admin.call('user_mod', ['dave'], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: 'Alice-Sub' });
    const since = realm.log.length;
    const cc = `FILE:${join(realm.dataDir, 'dave.cc')}`;
    const r = await kinitViaIdp({ idp, armor, env }, 'dave', 'alice-sub', cc);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /Preauthentication failed/);
    const line = realm.log.slice(since).find((x) => /client=dave@EXAMPLE.TEST .*preauth="idp: another account/.test(x));
    assert.match(line ?? realm.log.slice(since).join('\n'), /testidp identified \\"alice-sub\\"; linked as \\"Alice-Sub\\", which differs only in letter case: set --idp-user-id as the IdP writes it/);
    assert.equal((await runTool('klist', ['-c', cc], env)).code, 1, 'no TGT');
  });

  it('the TGT from the IdP login works for dirid ping', async () => {
    const conf = join(realm.dataDir, 'realm', 'default.conf');
    writeFileSync(conf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = ${realm.url}/dirid/xml`));
    const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
    const r = await runTool(process.execPath, [DIRID, '-c', conf, 'ping'], { ...env, XDG_CACHE_HOME: join(realm.dataDir, 'cache') });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /dirid server version/);
    assert.ok(realm.log.some((x) => /rpc request principal=alice@EXAMPLE.TEST command=ping .*outcome=ok/.test(x)));
  });

  it('refuses a user whose link points at another IdP reference, and an issuer mismatch', async () => {
    await admin.call('idp_add', ['otheridp'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: `${idp.issuer}/not-the-issuer`, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid email' });
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'B' });
    await admin.call('user_mod', ['bob'], { user_auth_type: ['idp'], idp: 'otheridp', idp_user_id: 'alice-sub' });
    const r = await kinitViaIdp({ idp, armor, env }, 'bob', 'alice-sub', `FILE:${join(realm.dataDir, 'bob.cc')}`);
    assert.notEqual(r.code, 0);
    assert.match(r.out, /Preauthentication failed/);
    assert.ok(realm.log.some((x) => /client=bob@EXAMPLE.TEST .*preauth="idp: Issuer does not match/.test(x)), realm.log.filter((x) => x.includes('bob')).join('\n'));
  });

  it('never offers the idp mechanism to users who are not linked; their passwords keep working', async () => {
    await addActiveUser(admin, 'carol', 'Carol-pass-1', { first: 'Carol', last: 'C' });
    const r = await runTool('kinit', ['-T', armor, '-c', `FILE:${join(realm.dataDir, 'carol.cc')}`, 'carol'], env, 'Carol-pass-1\n');
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /Authenticate at/);
    const l = await runTool('klist', ['-C', '-c', `FILE:${join(realm.dataDir, 'carol.cc')}`], env);
    assert.match(l.stdout, /pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 138/);
  });
});

describe('dirid kinit for linked users', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    idp = await startTestIdp({ accounts: ['dora-sub', 'eve-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca2-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), DIRID_KINIT_POLL_MS: '1000' };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    // issuer only: discovery fills the endpoints
    await admin.call('idp_add', ['disco'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, scope: 'openid email' });
    await addActiveUser(admin, 'dora', 'Dora-pass-12', { first: 'Dora', last: 'D' });
    await admin.call('user_mod', ['dora'], { user_auth_type: ['idp', 'password'], idp: 'disco', idp_user_id: 'dora-sub' });
    await admin.call('user_add', ['ivy'], { first: 'Ivy', last: 'I' });
    await admin.call('user_mod', ['ivy'], { user_auth_type: ['idp'], idp: 'disco', idp_user_id: 'ivy-sub' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  /** Runs dirid kinit; approves at the IdP as `account` as soon as the URL is printed. */
  const diridKinit = (args: string[], account: string) => diridKinitViaIdp(idp, env, args, account);

  it('armors with the host keytab, prints the URL and code, and completes without ENTER', async () => {
    const cc = `FILE:${join(realm.dataDir, 'dora.cc')}`;
    const r = await diridKinit(['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'dora'], 'dora-sub');
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^Authenticate at https:\/\/localhost:\d+\/device\?user_code=/m);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.match(l.stdout, /Default principal: dora@EXAMPLE\.TEST/);
    assert.match(l.stdout, /pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
    assert.equal((await runTool('kvno', ['-c', cc, 'HTTP/localhost'], env)).code, 0);
  });

  it('a user slower than a UDP retransmit schedule: the held answer is waited for, as MIT waits, and the TGT comes', async () => {
    // approved 9 s after the code is shown: the KDC holds the answer until its next poll finds the approval (within its 10 s hold)
    const cc = `FILE:${join(realm.dataDir, 'dora-slow.cc')}`;
    const r = await diridKinitViaIdp(idp, env, ['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'dora'], 'dora-sub', 9000);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match((await runTool('klist', ['-c', cc], env)).stdout, /Default principal: dora@EXAMPLE\.TEST/);
  });

  it('without armor, a user who logs in only at the IdP is told to armor the request, and is not asked for a password', async () => {
    const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
    const r = await runTool(process.execPath, [DIRID, 'kinit', '-c', `FILE:${join(realm.dataDir, 'ivy.cc')}`, 'ivy'], env, 'a-password\n');
    assert.equal(r.code, 1, r.stderr + r.stdout);
    assert.doesNotMatch(r.stdout + r.stderr, /Password for/);
    assert.match(r.stderr, /^dirid: ERROR: ivy@EXAMPLE\.TEST has no password to log in with here, only pre-authentication inside FAST armor .*dirid kinit -k \/etc\/krb5\.keytab ivy\) or a ticket cache \(-T ARMOR_CCACHE\)\n$/);
  });

  it('with -T and another identity at the IdP: the KDC says that the IdP identified another account', async () => {
    const armor = await hostArmor(realm, env);
    const r = await diridKinit(['-T', armor, '-c', `FILE:${join(realm.dataDir, 'eve.cc')}`, 'dora'], 'eve-sub');
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'dirid: ERROR: the IdP (disco) identified another account than the one linked to dora@EXAMPLE.TEST: log in there with that account while getting initial credentials\n');
  });
});

describe('IdP errors reach kinit and the server log', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let shortIdp: TestIdp;
  /** codes that live 4 s, polled every second */
  let tickIdp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let admin: RpcSession;
  before(async () => {
    const ca = await createCa('IdP test CA');
    idp = await startTestIdp({ accounts: ['frank-sub'], ca });
    shortIdp = await startTestIdp({ accounts: ['frank-sub'], deviceCodeTtl: 3, ca });
    tickIdp = await startTestIdp({ accounts: ['frank-sub'], deviceCodeTtl: 4, pollInterval: 1, ca });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca3-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), DIRID_KINIT_POLL_MS: '1000' };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('user_add', ['frank'], { first: 'Frank', last: 'F' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    await shortIdp?.stop();
    await tickIdp?.stop();
  });

  async function linkTo(name: string, extra: Record<string, string>, at: TestIdp = idp): Promise<void> {
    await admin.call('idp_add', [name], { client_id: at.clientId, secret: at.clientSecret, issuer_url: at.issuer, dev_auth_uri: at.endpoints.devAuth, token_uri: at.endpoints.token, keys_uri: at.endpoints.keys, scope: 'openid', ...extra });
    const user = await admin.call('user_show', ['frank']);
    if (user.result.diridpconfiglink) await admin.call('user_mod', ['frank'], { delattr: [`dirIdpConfigLink=${user.result.diridpconfiglink[0]}`, 'dirIdpSub=frank-sub'] });
    await admin.call('user_mod', ['frank'], { user_auth_type: ['idp'], idp: name, idp_user_id: 'frank-sub' });
  }
  const kinit = (approveAs?: string) => diridKinitViaIdp(idp, env, ['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', `FILE:${join(realm.dataDir, 'f.cc')}`, 'frank'], approveAs);

  it('a stale client secret: invalid_client', async () => {
    await admin.call('idp_add', ['stale'], { client_id: idp.clientId, secret: 'stale-secret-0000', issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys });
    await admin.call('user_mod', ['frank'], { user_auth_type: ['idp'], idp: 'stale', idp_user_id: 'frank-sub' });
    const r = await kinit();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid_client/);
    assert.ok(realm.log.some((x) => /client=frank@EXAMPLE.TEST .*preauth="idp: .*invalid_client/.test(x)));
    for (const l of realm.log) assert.ok(!l.includes('stale-secret-0000') && !l.includes(idp.clientSecret), l);
  });

  it('an unreachable JWKS endpoint: "Unable to fetch keys"', async () => {
    await linkTo('nokeys', { keys_uri: 'https://127.0.0.1:1/jwks' });
    const r = await kinit('frank-sub');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unable to fetch keys/);
    assert.ok(realm.log.some((x) => /preauth="idp: Unable to fetch keys/.test(x)));
  });

  it('a device code that expires before the user finishes', async () => {
    await linkTo('short', {}, shortIdp);
    const r = await kinit();
    assert.equal(r.code, 1);
    assert.match(r.stderr, /The device code has expired/);
  });

  it('MIT kinit (as krb5_child under pam_sss): an expired device code ends the login, with no new code behind the user', async () => {
    await linkTo('short-mit', {}, shortIdp);
    const armor = await hostArmor(realm, env);
    const devAuth = new URL(shortIdp.endpoints.devAuth).pathname;
    const started = shortIdp.stats().requests[devAuth] ?? 0;
    let answered = 0;
    // the user presses ENTER at every prompt and never approves
    const r = await pty(`kinit -T ${armor} -c FILE:${join(realm.dataDir, 'f-mit.cc')} frank`, env, (out, write) => {
      const prompts = (out.match(/press ENTER/g) ?? []).length;
      for (; answered < prompts; answered++) write('\r');
    });
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /Preauthentication failed/);
    assert.equal(new Set(idpPrompts(r.out)).size, 1, `one code only, no restarted flow:\n${r.out}`);
    assert.equal((shortIdp.stats().requests[devAuth] ?? 0) - started, 1, 'one device authorization');
    assert.ok(realm.log.some((l) => /client=frank@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED .*device code expired/.test(l)), realm.log.filter((l) => l.includes('frank')).join('\n'));
  });

  /**
   * MIT kinit pressing ENTER at every prompt, never approving: the prompts it
   * showed, how long it ran, its output.
   */
  async function mitNeverApproving(cc: string): Promise<{ prompts: number; ms: number; out: string }> {
    const armor = await hostArmor(realm, env);
    let prompts = 0;
    const t = performance.now();
    const r = await pty(`kinit -T ${armor} -c FILE:${join(realm.dataDir, cc)} frank`, env, (out, write) => {
      for (; prompts < (out.match(/press ENTER/g) ?? []).length; prompts++) write('\r');
    });
    assert.notEqual(r.code, 0, r.out);
    assert.match(r.out, /kinit: Preauthentication failed while getting initial credentials/);
    return { prompts, ms: performance.now() - t, out: r.out };
  }

  it('a device code that expires while the KDC holds the answer (the IdP saying "pending") is told expired then, not "pending": one prompt', async () => {
    await linkTo('tick', {}, tickIdp);
    const since = realm.log.length;
    const r = await mitNeverApproving('f-tick.cc');
    assert.equal(r.prompts, 1, `kinit asked for ENTER again for a code that no longer exists:\n${r.out}\n${realm.log.slice(since).join('\n')}`);
    assert.ok(r.ms < 9000, `ended ${Math.round(r.ms)} ms after it started, the code living 4 s`);
    assert.ok(realm.log.slice(since).some((l) => /client=frank@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED .*preauth="idp: device code expired \((while held: after [1-5] poll\(s\) held \d+ ms|the IdP answered expired_token)\)"/.test(l)), realm.log.slice(since).join('\n'));
  });

  it('a device code that expires while the IdP cannot be reached is told expired then, not "pending": one prompt', async () => {
    await linkTo('tick-down', { token_uri: 'https://127.0.0.1:1/token' }, tickIdp);
    const since = realm.log.length;
    const r = await mitNeverApproving('f-tick-down.cc');
    assert.equal(r.prompts, 1, `kinit asked for ENTER again for a code that no longer exists:\n${r.out}\n${realm.log.slice(since).join('\n')}`);
    assert.ok(realm.log.slice(since).some((l) => /client=frank@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED .*preauth="idp: device code expired \(while held/.test(l)), realm.log.slice(since).join('\n'));
  });

  it('a device code that expires before its first poll is due: the answer is held until the expiry, not the whole hold, and told expired', async () => {
    // codes of 3 s polled every 5 s: no poll can be made before the code expires
    await linkTo('short-hold', {}, shortIdp);
    const tokens = shortIdp.stats().requests['/token'] ?? 0;
    const r = await mitNeverApproving('f-short-hold.cc');
    assert.equal(r.prompts, 1, r.out);
    assert.ok(r.ms < 7000, `ended ${Math.round(r.ms)} ms after it started: held past the code's 3 s`);
    assert.equal((shortIdp.stats().requests['/token'] ?? 0) - tokens, 0, 'a token request went for a code not due before it expired');
  });

  it('an IdP refusal of the device authorization is asked once although MIT kinit sends the first request again at once', async () => {
    await linkTo('stale-mit', { secret: 'stale-secret-1111' });
    const devAuth = new URL(idp.endpoints.devAuth).pathname;
    for (const [why, answer] of [['a stale secret', undefined], ['an IdP answering HTTP 503', 503]] as const) {
      if (answer) idp.rewriteDeviceAnswers(() => ({ status: answer, body: { message: 'down for maintenance' } }));
      const before = idp.stats().requests[devAuth] ?? 0;
      const since = realm.log.length;
      const armor = await hostArmor(realm, env);
      const r = await pty(`kinit -T ${armor} -c FILE:${join(realm.dataDir, 'f-stale.cc')} frank`, env, () => {});
      idp.rewriteDeviceAnswers();
      assert.notEqual(r.code, 0);
      assert.match(r.out, /kinit: Preauthentication failed while getting initial credentials/);
      assert.equal((idp.stats().requests[devAuth] ?? 0) - before, 1, `${why}: device authorization requests for one login`);
      const lines = realm.log.slice(since).filter((l) => /client=frank@EXAMPLE.TEST .*outcome=KDC_ERR_PREAUTH_FAILED/.test(l));
      assert.equal(lines.length, 2, `${why}: MIT sends the first request twice:\n${lines.join('\n')}`);
      assert.match(lines[1]!, /answered again without asking the IdP: a repeat of the request refused \d+ ms ago/);
    }
  });
});
