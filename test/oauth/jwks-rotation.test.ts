/**
 * Signing-key rotation at the IdP (specification §5.4 and §7, issue 11
 * item 6): an ID token whose kid is not in the cached JWKS makes the client
 * fetch the JWKS again at once (rate-limited per URL to a few seconds, a
 * token inside that window waiting for it rather than failing), and only
 * then refuse; when that fetch fails the error is `Unable to fetch keys`.
 * Real device-flow logins against oidc-provider, whose key is rotated
 * between them.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import type { TokenEndpointResponse } from 'oauth4webapi';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { pollToken, startDeviceAuthorization } from '../../src/oauth/device-flow.js';
import { JWKS_REFETCH_INTERVAL_MS } from '../../src/oauth/key-sets.js';
import { resolveUserIdentifier } from '../../src/oauth/identity.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { IdpClient } from '../../src/oauth/client.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

function configOf(idp: TestIdp): IdpConfig {
  return { name: 'rotating', clientId: idp.clientId, clientSecret: idp.clientSecret, issuerUrl: idp.issuer, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token, keysUri: idp.endpoints.keys, scope: 'openid' };
}

/** a device-flow login approved as alice: the tokens */
async function tokensOf(idp: TestIdp, cfg: IdpConfig, client: IdpClient): Promise<TokenEndpointResponse> {
  const da = await startDeviceAuthorization(cfg, client);
  await idp.approveDevice(da.userCode, 'alice');
  const r = await pollToken(cfg, da.deviceCode, client);
  assert.equal(r.status, 'done');
  if (r.status !== 'done') throw new Error('unreachable');
  return r.tokens;
}

describe('JWKS refetch on signing-key rotation', () => {
  let idp: TestIdp;
  let down: TestIdp;
  let client: IdpClient;

  before(async () => {
    idp = await startTestIdp();
    down = await startTestIdp();
    client = new IdpClient(httpsFetch([idp.caPem, down.caPem].join('\n')));
  });
  after(async () => {
    await idp?.stop();
    await down?.stop();
  });

  it('accepts a login signed with a freshly rotated key right after a login cached the old JWKS', async () => {
    const cfg = configOf(idp);
    const first = await tokensOf(idp, cfg, client);
    assert.equal(await resolveUserIdentifier(cfg, first, client), 'alice');
    const oldKid = decodeProtectedHeader(first.id_token!).kid;
    const newKid = await idp.rotateKey();
    const second = await tokensOf(idp, cfg, client);
    assert.equal(decodeProtectedHeader(second.id_token!).kid, newKid);
    assert.notEqual(newKid, oldKid);
    const t0 = Date.now();
    assert.equal(await resolveUserIdentifier(cfg, second, client), 'alice');
    // at most one rate-limit window of waiting (a few seconds), never jose's 30 s cooldown;
    // the bound is loose so that a loaded machine cannot fail it
    assert.ok(JWKS_REFETCH_INTERVAL_MS <= 5_000);
    assert.ok(Date.now() - t0 < 20_000, `took ${Date.now() - t0} ms`);
    // a kid the IdP never published is refused after the refetch, as a key mismatch
    const [, p, s] = second.id_token!.split('.');
    const stranger = `${Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'never-published' })).toString('base64url')}.${p}.${s}`;
    await assert.rejects(resolveUserIdentifier(cfg, { ...second, id_token: stranger }, client), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_id_token');
  });

  it('says "Unable to fetch keys" when the JWKS endpoint fails for an unknown kid', async () => {
    const cfg = configOf(down);
    const first = await tokensOf(down, cfg, client);
    assert.equal(await resolveUserIdentifier(cfg, first, client), 'alice');
    await down.rotateKey();
    const second = await tokensOf(down, cfg, client);
    down.failJwks(true);
    await assert.rejects(resolveUserIdentifier(cfg, second, client), (e: unknown) => {
      assert.ok(e instanceof OAuthError, String(e));
      assert.equal(e.code, 'jwks_unreachable', e.message);
      assert.match(e.message, /^Unable to fetch keys from https:\/\/localhost:\d+\/jwks/);
      return true;
    });
    // once the endpoint is back, the same token is accepted
    down.failJwks(false);
    assert.equal(await resolveUserIdentifier(cfg, second, client), 'alice');
  });
});
