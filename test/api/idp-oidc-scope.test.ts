/**
 * The scope of an OpenID Connect reference (one with an issuer URL,
 * docs/conventions.md, Provider templates): idp-add without --scope gives it
 * `openid`, without which the IdP issues no ID token; a reference without an
 * issuer and the templates keep the scope they have. idp-check fails the
 * Device authorization line of an OpenID Connect reference whose scope has
 * no openid, saying what to set.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { RpcSession } from '../support/rpc-client.js';

interface Line {
  check: string;
  status: 'PASS' | 'FAIL' | 'SKIP';
  message: string;
}

describe('the scope of an OpenID Connect reference', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-oidc-scope-ca-${process.pid}.pem`);
  const scopeOf = async (name: string) => (await admin.call('idp_show', [name])).result.diridpscope as string[] | undefined;
  const check = async (name: string): Promise<Line[]> => (await admin.call('idp_check', [name])).result as Line[];
  const failures = (lines: Line[]) => lines.filter((l) => l.status === 'FAIL');

  before(async () => {
    idp = await startTestIdp();
    writeFileSync(caFile, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    rmSync(caFile, { force: true });
  });

  it('idp-add by issuer without --scope stores openid, and idp-check passes it', async () => {
    const r = await admin.call('idp_add', ['bydisco'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret });
    assert.deepEqual(r.result.diridpscope, ['openid']);
    assert.deepEqual(await scopeOf('bydisco'), ['openid']);
    const lines = await check('bydisco');
    assert.deepEqual(failures(lines), [], JSON.stringify(lines, null, 1));
    assert.match(lines.find((l) => l.check === 'Device authorization')!.message, /^the IdP accepted client "dirid-kdc" with the stored secret and scope "openid" and issued a device code/);
  });

  it('idp-add with an issuer and explicit endpoints without --scope stores openid too', async () => {
    await admin.call('idp_add', ['byhand'], {
      issuer_url: idp.issuer,
      dev_auth_uri: idp.endpoints.devAuth,
      token_uri: idp.endpoints.token,
      keys_uri: idp.endpoints.keys,
      client_id: idp.clientId,
      secret: idp.clientSecret,
      provider: 'oidc',
    });
    assert.deepEqual(await scopeOf('byhand'), ['openid']);
  });

  it('a scope given, a reference without an issuer and the templates keep their scope', async () => {
    await admin.call('idp_add', ['given'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email profile' });
    assert.deepEqual(await scopeOf('given'), ['openid email profile']);
    await admin.call('idp_add', ['plainoauth'], { auth_uri: 'https://oauth.example.test/authorize', token_uri: 'https://oauth.example.test/token', client_id: 'c', secret: 's3cret' });
    assert.equal(await scopeOf('plainoauth'), undefined, 'no issuer: no scope is added');
    await admin.call('idp_add', ['gh'], { provider: 'github', client_id: 'c', secret: 's3cret' });
    assert.deepEqual(await scopeOf('gh'), ['user']);
    await admin.call('idp_add', ['kc'], { provider: 'keycloak', organization: 'main', base_url: 'kc.example.test', client_id: 'c', secret: 's3cret' });
    assert.deepEqual(await scopeOf('kc'), ['openid email']);
  });

  it('idp-check fails the device authorization of a reference with an issuer whose scope has no openid, saying what to set', async () => {
    await admin.call('idp_add', ['noopenid'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'email' });
    const lines = await check('noopenid');
    assert.deepEqual(failures(lines).map((l) => l.check), ['Device authorization'], JSON.stringify(lines, null, 1));
    const device = lines.find((l) => l.check === 'Device authorization')!;
    assert.match(device.message, /^scope "email" has no openid: .*the IdP issues no ID token.*; set --scope="openid email" \(the IdP accepted client "dirid-kdc" /);
    assert.equal((await admin.call('idp_check', ['noopenid'])).summary, 'Checked IdP reference "noopenid": 7 passed, 1 failed, 0 skipped');
  });

  it('idp-check names a missing scope of a reference with an issuer as missing openid', async () => {
    await admin.call('idp_mod', ['bydisco'], { setattr: ['dirIdpScope='] });
    assert.equal(await scopeOf('bydisco'), undefined);
    const lines = await check('bydisco');
    assert.deepEqual(failures(lines).map((l) => l.check), ['Device authorization'], JSON.stringify(lines, null, 1));
    assert.match(lines.find((l) => l.check === 'Device authorization')!.message, /^no scope set, so no openid: .*the IdP issues no ID token.*; set --scope="openid" \(the IdP accepted client "dirid-kdc" with the stored secret \(no scope set\)/);
  });

  it('a reference without an issuer and without openid is not failed for it', async () => {
    await admin.call('idp_add', ['oauthonly'], {
      dev_auth_uri: idp.endpoints.devAuth,
      token_uri: idp.endpoints.token,
      userinfo_uri: idp.endpoints.userinfo,
      client_id: idp.clientId,
      secret: idp.clientSecret,
      scope: 'email',
    });
    const lines = await check('oauthonly');
    assert.deepEqual(failures(lines), [], JSON.stringify(lines, null, 1));
  });
});
