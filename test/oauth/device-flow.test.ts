/**
 * The OAuth device-flow client against real OpenID Providers over HTTPS:
 * discovery, device authorization, polling, approval on the provider's own
 * pages, ID-token validation, user identifiers, and each error of the
 * specification's §7 that an IdP can cause. No error message may carry a
 * client secret, a device code or a token.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { authorizationServer, processDiscoveryResponse } from '../../src/oauth/discovery.js';
import { pollToken, startDeviceAuthorization, type DeviceAuthorization } from '../../src/oauth/device-flow.js';
import { validateIdToken } from '../../src/oauth/id-token.js';
import { resolveUserIdentifier } from '../../src/oauth/identity.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { IdpClient } from '../../src/oauth/client.js';
import { OAuthError, type IdpConfig, type OAuthErrorCode } from '../../src/oauth/types.js';
import type { TokenEndpointResponse } from 'oauth4webapi';

describe('OAuth device flow against oidc-provider', () => {
  let idp: TestIdp;
  let other: TestIdp;
  let shortLived: TestIdp;
  let cfg: IdpConfig;
  let fetch: ReturnType<typeof httpsFetch>;
  let client: IdpClient;
  /** every secret the suite handles, and every error message it saw */
  const secrets = new Set<string>(['stale-secret-999']);
  const messages: string[] = [];

  before(async () => {
    idp = await startTestIdp({ grantRefusal: 'unauthorized_client' });
    other = await startTestIdp();
    shortLived = await startTestIdp({ deviceCodeTtl: 1 });
    fetch = httpsFetch([idp.caPem, other.caPem, shortLived.caPem].join('\n'));
    client = new IdpClient(fetch);
    cfg = { name: 'test', clientId: idp.clientId, clientSecret: idp.clientSecret, issuerUrl: idp.issuer, scope: 'openid email profile' };
    for (const i of [idp, other, shortLived]) for (const s of [i.clientSecret, i.noDeviceGrant.clientSecret, i.narrowScope.clientSecret]) secrets.add(s);
  });
  after(async () => {
    await idp?.stop();
    await other?.stop();
    await shortLived?.stop();
  });

  const failure = async (p: Promise<unknown>, code: OAuthErrorCode): Promise<OAuthError> => {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof OAuthError, String(e));
      messages.push(e.message);
      assert.equal(e.code, code, e.message);
      return e;
    }
    return assert.fail(`expected OAuthError ${code}`);
  };
  const started = async (c: IdpConfig): Promise<DeviceAuthorization> => {
    const da = await startDeviceAuthorization(c, client);
    secrets.add(da.deviceCode);
    return da;
  };
  /** polls as the KDC does, honouring slow_down, until the flow is done */
  const tokensAfterApproval = async (c: IdpConfig, da: DeviceAuthorization, account: string): Promise<TokenEndpointResponse> => {
    await idp.approveDevice(da.userCode, account);
    let r = await pollToken(c, da.deviceCode, client);
    for (let i = 0; i < 3 && r.status === 'slow_down'; i++) {
      await new Promise((res) => setTimeout(res, r.status === 'slow_down' ? r.interval * 1000 : 0));
      r = await pollToken(c, da.deviceCode, client);
    }
    assert.equal(r.status, 'done');
    if (r.status !== 'done') throw new Error('unreachable');
    for (const t of [r.tokens.access_token, r.tokens.id_token, r.tokens.refresh_token]) if (typeof t === 'string') secrets.add(t);
    return r.tokens;
  };

  it('fills unconfigured endpoints by discovery, keeping configured ones', async () => {
    const as = await authorizationServer({ name: 'disco', clientId: 'x', issuerUrl: idp.issuer }, client, ['device', 'token', 'userinfo', 'jwks']);
    assert.equal(as.issuer, idp.issuer);
    assert.equal(as.device_authorization_endpoint, idp.endpoints.devAuth);
    assert.equal(as.token_endpoint, idp.endpoints.token);
    assert.equal(as.userinfo_endpoint, idp.endpoints.userinfo);
    assert.equal(as.jwks_uri, idp.endpoints.keys);
    assert.equal(as.authorization_endpoint, idp.endpoints.auth);
    const mixed = await authorizationServer({ name: 'mixed', clientId: 'x', issuerUrl: idp.issuer, keysUri: `${other.issuer}/jwks` }, client);
    assert.equal(mixed.jwks_uri, `${other.issuer}/jwks`);
    assert.equal(mixed.token_endpoint, idp.endpoints.token);
    await failure(authorizationServer({ name: 'none', clientId: 'x' }, client), 'not_configured');
  });

  it('refuses a discovery document that names another issuer', async () => {
    const doc = new Response(JSON.stringify({ issuer: other.issuer, token_endpoint: `${other.issuer}/token` }), { headers: { 'content-type': 'application/json' } });
    const e = await failure(processDiscoveryResponse(idp.issuer, doc), 'issuer_mismatch');
    assert.match(e.message, /^Issuer does not match/);
  });

  it('authorizes a device, stays pending, then returns tokens whose ID token validates', async () => {
    const da = await started(cfg);
    assert.match(da.userCode, /^[A-Z]{4}-[A-Z]{4}$/);
    assert.equal(da.verificationUri, `${idp.issuer}/device`);
    assert.ok(da.verificationUriComplete?.startsWith(`${idp.issuer}/device?user_code=`));
    assert.ok(da.expiresAt > Date.now() + 60_000 && da.expiresAt <= Date.now() + 600_000);
    assert.ok(da.interval >= 1);
    assert.deepEqual(await pollToken(cfg, da.deviceCode, client), { status: 'pending' });
    const tokens = await tokensAfterApproval(cfg, da, 'alice');
    assert.equal(typeof tokens.id_token, 'string');
    const claims = await validateIdToken(cfg, tokens.id_token!, client);
    assert.equal(claims.sub, 'alice');
    assert.equal(claims.iss, idp.issuer);
    assert.equal(claims.aud, idp.clientId);

    // the user identifier: sub by default, or another claim by name (UserInfo merged)
    assert.equal(await resolveUserIdentifier(cfg, tokens, client), 'alice');
    assert.equal(await resolveUserIdentifier({ ...cfg, idpUserIdAttr: 'email' }, tokens, client), 'alice@example.test');
    assert.equal(await resolveUserIdentifier({ ...cfg, idpUserIdAttr: 'preferred_username' }, tokens, client), 'alice');
    await failure(resolveUserIdentifier({ ...cfg, idpUserIdAttr: 'employee_number' }, tokens, client), 'user_id_missing');
    // an OAuth-only reference (GitHub-like): no ID token, the identifier comes from UserInfo
    const oauthOnly: IdpConfig = { name: 'oauth-only', clientId: idp.clientId, userinfoUri: idp.endpoints.userinfo, idpUserIdAttr: 'email' };
    assert.equal(await resolveUserIdentifier(oauthOnly, { access_token: tokens.access_token }, client), 'alice@example.test');
    await failure(resolveUserIdentifier({ ...oauthOnly, userinfoUri: undefined }, { access_token: tokens.access_token }, client), 'not_configured');

    // ID-token refusals
    const mismatch = await failure(validateIdToken({ ...cfg, issuerUrl: other.issuer, keysUri: idp.endpoints.keys }, tokens.id_token!, client), 'issuer_mismatch');
    assert.match(mismatch.message, /^Issuer does not match/);
    await failure(validateIdToken({ ...cfg, clientId: 'someone-else' }, tokens.id_token!, client), 'invalid_id_token');
    await failure(validateIdToken(cfg, tokens.id_token!, client, { now: Date.now() + 3 * 3600_000 }), 'invalid_id_token');
    await failure(validateIdToken(cfg, tokens.id_token!, client, { now: Date.now() - 3600_000 }), 'invalid_id_token');
    const [h, p, sig] = tokens.id_token!.split('.');
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, sub: 'mallory' })).toString('base64url')}.${sig}`;
    await failure(validateIdToken(cfg, forged, client), 'invalid_id_token');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${p}.`;
    await failure(validateIdToken(cfg, unsigned, client), 'invalid_id_token');
    // keys signed by another provider: its JWKS has no key for this token's kid, or the signature fails
    await failure(validateIdToken({ ...cfg, keysUri: other.endpoints.keys }, tokens.id_token!, client), 'invalid_id_token');
    const closed = await failure(validateIdToken({ ...cfg, keysUri: 'https://127.0.0.1:1/jwks' }, tokens.id_token!, client), 'jwks_unreachable');
    assert.match(closed.message, /^Unable to fetch keys/);
    await failure(validateIdToken({ ...cfg, keysUri: `${idp.issuer}/no-such-jwks` }, tokens.id_token!, client), 'jwks_unreachable');
  });

  it('passes on the IdP refusals: access_denied, invalid_client, unauthorized_client, invalid_scope, invalid_grant', async () => {
    const da = await started(cfg);
    await idp.denyDevice(da.userCode);
    await failure(pollToken(cfg, da.deviceCode, client), 'access_denied');
    const stale = await failure(startDeviceAuthorization({ ...cfg, clientSecret: 'stale-secret-999' }, client), 'invalid_client');
    assert.match(stale.message, /^device authorization: the IdP answered invalid_client/);
    const noGrant = await failure(startDeviceAuthorization({ ...cfg, clientId: idp.noDeviceGrant.clientId, clientSecret: idp.noDeviceGrant.clientSecret }, client), 'unauthorized_client');
    assert.match(noGrant.message, /^device authorization: the IdP answered unauthorized_client/);
    // oidc-provider itself says invalid_request for the same refusal: passed on as sent
    await failure(startDeviceAuthorization({ name: 'o', clientId: other.noDeviceGrant.clientId, clientSecret: other.noDeviceGrant.clientSecret, issuerUrl: other.issuer, scope: 'openid' }, client), 'invalid_request');
    await failure(startDeviceAuthorization({ ...cfg, clientId: idp.narrowScope.clientId, clientSecret: idp.narrowScope.clientSecret }, client), 'invalid_scope');
    assert.equal((await startDeviceAuthorization({ ...cfg, clientId: idp.narrowScope.clientId, clientSecret: idp.narrowScope.clientSecret, scope: 'openid' }, client)).verificationUri, `${idp.issuer}/device`);
    await failure(pollToken(cfg, 'mistyped-device-code', client), 'invalid_grant');
  });

  it('reports expired_token once the device code has expired', async () => {
    const short: IdpConfig = { name: 'short', clientId: shortLived.clientId, clientSecret: shortLived.clientSecret, issuerUrl: shortLived.issuer, scope: 'openid' };
    const da = await started(short);
    assert.ok(da.expiresAt <= Date.now() + 1000);
    await new Promise((r) => setTimeout(r, 1500));
    await failure(pollToken(short, da.deviceCode, client), 'expired_token');
  });

  it('refuses non-https endpoints before any request, and unreachable IdPs cleanly', async () => {
    for (const bad of [{ devAuthUri: 'http://127.0.0.1:1/device', tokenUri: 'https://127.0.0.1:1/token' }, { issuerUrl: `http://localhost:1` }, { devAuthUri: 'not a url', tokenUri: 'https://127.0.0.1:1/token' }, { devAuthUri: 'https://127.0.0.1:1/d', tokenUri: 'https://127.0.0.1:1/t', keysUri: 'ftp://keys.example/jwks' }]) {
      await failure(startDeviceAuthorization({ name: 'x', clientId: 'c', ...bad }, client), 'insecure_endpoint');
    }
    await failure(fetch('http://127.0.0.1:1/'), 'insecure_endpoint');
    await failure(startDeviceAuthorization({ name: 'x', clientId: 'c', devAuthUri: 'https://127.0.0.1:1/device', tokenUri: 'https://127.0.0.1:1/token' }, client), 'idp_unreachable');
    // a server certificate from a CA we were not told to trust (endpoints given: a client of its own has no discovery document cached)
    await failure(startDeviceAuthorization({ ...cfg, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token }, new IdpClient(httpsFetch())), 'idp_unreachable');
  });

  it('never shows a client secret, device code or token in an error message', () => {
    assert.ok(messages.length >= 25, `only ${messages.length} messages seen`);
    for (const m of messages) for (const s of secrets) assert.ok(!m.includes(s), `message leaks a secret: ${m}`);
  });
});
