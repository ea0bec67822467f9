/**
 * A signing-key rotation at the IdP, seen through the KDC (specification
 * §5.4 and §7, issue 11 item 6): once a login has cached the IdP's JWKS and
 * the IdP has rotated its key, the next login (a new kid) gets a TGT at once,
 * because the KDC fetches the JWKS again instead of waiting out a cooldown;
 * with the JWKS endpoint failing, a token with an unknown kid is refused
 * with `Unable to fetch keys`, in the KDC log and in the e-text dirid kinit
 * shows. Before the fix the KDC said "no applicable key" in both cases.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { runTool } from '../support/mit-tools.js';
import { diridKinitViaIdp } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';

describe('IdP signing-key rotation through the KDC', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let caFile: string;
  let logins = 0;

  before(async () => {
    idp = await startTestIdp({ accounts: ['alice-sub'] });
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-keys-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['rotating'], idpReference(idp, 'openid email'));
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'L' });
    await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'rotating', idp_user_id: 'alice-sub' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  /** dirid kinit alice, armored with the host keytab, approved at the IdP; the KDC's log lines for it */
  async function login(): Promise<{ code: number | null; stderr: string; cc: string; log: string[] }> {
    const cc = `FILE:${join(realm.dataDir, `alice-${++logins}.cc`)}`;
    const before = realm.log.length;
    const r = await diridKinitViaIdp(idp, env, ['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'alice'], 'alice-sub');
    return { code: r.code, stderr: r.stderr, cc, log: realm.log.slice(before).filter((x) => x.includes('client=alice@EXAMPLE.TEST')) };
  }

  function assertTgt(r: Awaited<ReturnType<typeof login>>): Promise<void> {
    assert.equal(r.code, 0, `${r.stderr}\n${r.log.join('\n')}`);
    assert.ok(r.log.some((x) => /outcome=ISSUE .*preauth="idp: rotating identified \\"alice-sub\\""/.test(x)), r.log.join('\n'));
    return runTool('klist', ['-c', r.cc], env).then((l) => assert.match(l.stdout, /Default principal: alice@EXAMPLE\.TEST/));
  }

  it('a login signed with a freshly rotated key gets a TGT right after a login cached the old JWKS', async () => {
    await assertTgt(await login());
    const oldKid = idp.signingKid();
    assert.notEqual(await idp.rotateKey(), oldKid);
    await assertTgt(await login());
  });

  it('an unknown kid with the JWKS endpoint failing is refused with "Unable to fetch keys", and a later login succeeds', async () => {
    await idp.rotateKey();
    idp.failJwks(true);
    try {
      const r = await login();
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /Unable to fetch keys from https:\/\/localhost:\d+\/jwks \(HTTP 503\)/);
      assert.ok(r.log.some((x) => /outcome=KDC_ERR_PREAUTH_FAILED .*preauth="idp: Unable to fetch keys from https:\/\/localhost:\d+\/jwks/.test(x)), r.log.join('\n'));
      assert.equal((await runTool('klist', ['-c', r.cc], env)).code, 1, 'no TGT');
    } finally {
      idp.failJwks(false);
    }
    await assertTgt(await login());
  });
});
