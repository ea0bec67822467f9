/**
 * The OAuth device-flow client against a real OpenID Provider over HTTPS:
 * discovery, device authorization, polling, approval on the provider's own
 * pages, ID-token validation, user identifiers, and each error of the
 * specification's §7 that the IdP side can cause.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { authorizationServer, pollToken, startDeviceAuthorization } from '../../src/oauth/device-flow.js';
import { resolveUserIdentifier } from '../../src/oauth/id-token.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

describe('OAuth device flow against oidc-provider', () => {
  let idp: TestIdp;
  let other: TestIdp;
  let cfg: IdpConfig;
  let fetch: ReturnType<typeof httpsFetch>;
  before(async () => {
    idp = await startTestIdp({ clients: [{ client_id: 'no-device', client_secret: 'nd-secret-1', grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://rp.example/cb'] }] });
    other = await startTestIdp();
    fetch = httpsFetch(`${idp.caPem}\n${other.caPem}`);
    cfg = { name: 'test', clientId: idp.clientId, clientSecret: idp.clientSecret, issuerUrl: idp.issuer, scope: 'openid email profile' };
  });
  after(async () => {
    await idp.stop();
    await other.stop();
  });

  const oauthError = async (p: Promise<unknown>): Promise<OAuthError> => {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof OAuthError, String(e));
      return e;
    }
    return assert.fail('expected an OAuthError');
  };

  it('discovers endpoints from the issuer, authorizes, stays pending, then returns tokens', async () => {
    const as = await authorizationServer(cfg, fetch);
    assert.equal(as.device_authorization_endpoint, `${idp.issuer}/device/auth`);
    assert.equal(as.jwks_uri, `${idp.issuer}/jwks`);
    const da = await startDeviceAuthorization(cfg, fetch);
    assert.match(da.userCode, /^[A-Z-]+$/);
    assert.equal(da.verificationUri, `${idp.issuer}/device`);
    assert.ok(da.expiresAt > Date.now());
    assert.deepEqual(await pollToken(cfg, da.deviceCode, fetch), { status: 'pending' });
    await idp.approveDevice(da.userCode, 'alice');
    let r = await pollToken(cfg, da.deviceCode, fetch);
    for (let i = 0; i < 3 && r.status === 'slow_down'; i++) {
      await new Promise((res) => setTimeout(res, 5500));
      r = await pollToken(cfg, da.deviceCode, fetch);
    }
    assert.equal(r.status, 'done');
    if (r.status !== 'done') return;
    assert.equal(await resolveUserIdentifier(cfg, as, r.tokens, fetch), 'alice');
    assert.equal(await resolveUserIdentifier({ ...cfg, idpUserIdAttr: 'email' }, as, r.tokens, fetch), 'alice@example.test');
    assert.equal((await oauthError(resolveUserIdentifier({ ...cfg, idpUserIdAttr: 'nope' }, as, r.tokens, fetch))).code, 'user_id_missing');
    const mismatch = await oauthError(resolveUserIdentifier({ ...cfg, issuerUrl: other.issuer, keysUri: `${idp.issuer}/jwks` }, { ...as, issuer: other.issuer }, r.tokens, fetch));
    assert.equal(mismatch.code, 'issuer_mismatch');
    assert.match(mismatch.message, /^Issuer does not match/);
    const deadKeys = await oauthError(resolveUserIdentifier({ ...cfg }, { ...as, jwks_uri: 'https://127.0.0.1:1/jwks', userinfo_endpoint: undefined } as never, r.tokens, fetch));
    assert.equal(deadKeys.code, 'jwks_unreachable');
    assert.match(deadKeys.message, /^Unable to fetch keys/);
  });

  it('reports access_denied, invalid_client, a client without the device grant, and mistyped codes', async () => {
    const da = await startDeviceAuthorization(cfg, fetch);
    await idp.denyDevice(da.userCode);
    assert.equal((await oauthError(pollToken(cfg, da.deviceCode, fetch))).code, 'access_denied');
    const badSecret = await oauthError(startDeviceAuthorization({ ...cfg, clientSecret: 'stale-secret-999' }, fetch));
    assert.equal(badSecret.code, 'invalid_client');
    assert.ok(!badSecret.message.includes('stale-secret-999'));
    // oidc-provider refuses a client without the device grant with invalid_request; the IdP's code is passed on as sent
    const noGrant = await oauthError(startDeviceAuthorization({ ...cfg, clientId: 'no-device', clientSecret: 'nd-secret-1' }, fetch));
    assert.equal(noGrant.code, 'invalid_request');
    assert.match(noGrant.message, /not allowed for this client/);
    assert.equal((await oauthError(pollToken(cfg, 'mistyped-device-code', fetch))).code, 'invalid_grant');
  });

  it('refuses http:// endpoints and unreachable IdPs cleanly', async () => {
    const plain = await oauthError(startDeviceAuthorization({ name: 'x', clientId: 'c', devAuthUri: 'http://127.0.0.1:1/device', tokenUri: 'https://127.0.0.1:1/token' }, fetch));
    assert.ok(['idp_unreachable', 'idp_bad_response'].includes(plain.code));
    assert.equal((await oauthError(startDeviceAuthorization({ name: 'x', clientId: 'c', devAuthUri: 'https://127.0.0.1:1/device', tokenUri: 'https://127.0.0.1:1/token' }, fetch))).code, 'idp_unreachable');
  });
});
