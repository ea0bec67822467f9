/**
 * Refusals a provider names its own way (src/oauth/errors.ts answeredError):
 * Entra ID answers a user who declines the device sign-in with
 * `authorization_declined`, where RFC 8628 §3.5 says `access_denied`. It is
 * the same refusal: coded `access_denied` and told in the same plain words
 * (the sign-in was refused or cancelled at the IdP), keeping the provider's
 * name and description; an error no one names stays the IdP's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationServer } from '../../src/oauth/discovery.js';
import { IdpClient } from '../../src/oauth/client.js';
import { processDeviceToken } from '../../src/oauth/device-flow.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const base = 'https://login.example.test/tenant-1/v2.0';
const withIssuer: IdpConfig = { name: 'entra', clientId: '00000000-0000-0000-0000-000000000001', clientSecret: 'secret', issuerUrl: base, devAuthUri: `${base}/devicecode`, tokenUri: `${base}/token`, keysUri: `${base}/keys`, userinfoUri: `${base}/me`, scope: 'openid' };
const { issuerUrl: _issuer, ...oauthOnly } = withIssuer;
const idp = new IdpClient(() => Promise.reject(new Error('no request is made')));

async function refusal(cfg: IdpConfig, body: unknown): Promise<OAuthError> {
  const as = await authorizationServer(cfg, idp, ['token']);
  try {
    await processDeviceToken(cfg, as, 'device-code', new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json; charset=utf-8' } }), 5);
  } catch (e) {
    assert.ok(e instanceof OAuthError, String(e));
    return e;
  }
  assert.fail('not refused');
}

describe("refusals in a provider's own words", () => {
  for (const [name, cfg] of [['with an issuer', withIssuer], ['without one', oauthOnly]] as const) {
    it(`${name}: authorization_declined is the user's refusal, access_denied`, async () => {
      const e = await refusal(cfg, { error: 'authorization_declined', error_description: 'AADSTS70000: the user declined', error_codes: [70000] });
      assert.equal(e.code, 'access_denied');
      assert.equal(e.message, 'token request: the sign-in was refused or cancelled at the IdP (authorization_declined: AADSTS70000: the user declined)');
      const rfc = await refusal(cfg, { error: 'access_denied' });
      assert.equal(rfc.code, 'access_denied');
      assert.equal(rfc.message, 'token request: the sign-in was refused or cancelled at the IdP (access_denied)');
      const other = await refusal(cfg, { error: 'bad_verification_code' });
      assert.equal(other.code, 'idp_bad_response');
      assert.equal(other.message, 'token request: the IdP answered bad_verification_code');
    });
  }
});
