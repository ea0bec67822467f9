/**
 * A generic IdP reference (no provider template, or --provider=oidc) added
 * with neither endpoints nor an issuer: the refusal names both ways to give
 * what a login needs, --issuer-url (endpoints by discovery) or the
 * endpoints, and nothing is stored. One endpoint given still names the
 * other one missing (RequirementError).
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const NEEDS = 'an IdP reference without a provider template needs either --issuer-url (its endpoints then come from OIDC discovery) or its endpoints: --auth-uri (or --dev-auth-uri) and --token-uri';

describe('a generic IdP reference without endpoints or issuer', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  const base = { client_id: 'c', secret: 's3cret-value' };

  before(async () => {
    ({ realm, admin } = await openAdminRealm({}));
  });
  after(async () => realm?.close());

  for (const [what, extra] of [
    ['no provider', {}],
    ['--provider=oidc', { provider: 'oidc' }],
    ['only endpoints a login does not start or finish with', { userinfo_uri: 'https://idp.example.test/userinfo', keys_uri: 'https://idp.example.test/keys' }],
  ] as const) {
    it(`${what}: names --issuer-url and the endpoints, and stores nothing`, async () => {
      const e = await rpcError(admin.call('idp_add', ['bare'], { ...base, ...extra }));
      assert.equal(e.message, NEEDS);
      assert.equal(e.code, 3005);
      assert.equal((await rpcError(admin.call('idp_show', ['bare']))).code, 4001);
    });
  }

  it('an idp-mod that takes every endpoint away from a reference without issuer says the same', async () => {
    await admin.call('idp_add', ['ends'], { ...base, dev_auth_uri: 'https://idp.example.test/device', token_uri: 'https://idp.example.test/token' });
    const e = await rpcError(admin.call('idp_mod', ['ends'], { setattr: ['dirIdpDevAuthEndpoint=', 'dirIdpTokenEndpoint='] }));
    assert.equal(e.message, NEEDS);
    assert.deepEqual((await admin.call('idp_show', ['ends'])).result.diridptokenendpoint, ['https://idp.example.test/token']);
  });

  it('one endpoint given: the other one is named, as before', async () => {
    const e = await rpcError(admin.call('idp_add', ['half'], { ...base, token_uri: 'https://idp.example.test/token' }));
    assert.equal(e.code, 3007);
    assert.equal(e.message, "'auth_uri' is required");
  });
});
