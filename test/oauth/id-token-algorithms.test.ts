/**
 * ID-token signing algorithms (specification §5.4, issue 11 item 5): real
 * device-flow logins against oidc-provider signing with RS256, ES256, PS256
 * and EdDSA succeed, with the endpoints configured explicitly (as the KDC's
 * references usually are) and found by discovery; an IdP signing with HMAC
 * (HS256) is refused with a reason that names the algorithm, and so is an
 * unsigned (`none`) token; but when the IdP's key set cannot be fetched (an
 * IdP without signing keys signs with HMAC: glewlwyd), the refusal names
 * the unreachable key set instead.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeProtectedHeader } from 'jose';
import { startTestIdp, type SigningAlg, type TestIdp } from '../support/oidc-idp.js';
import { pollToken, startDeviceAuthorization, type PollResult } from '../../src/oauth/device-flow.js';
import { validateIdToken } from '../../src/oauth/id-token.js';
import { resolveUserIdentifier } from '../../src/oauth/identity.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { IdpClient } from '../../src/oauth/client.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const ASYMMETRIC: SigningAlg[] = ['RS256', 'ES256', 'PS256', 'EdDSA'];
const REFUSED = /^ID token rejected: signed with "(HS256|none)", which is not an accepted signing algorithm/;

/** explicit endpoints (issuer for the iss check) and discovery alone */
function configs(idp: TestIdp): Record<'explicit' | 'discovery', IdpConfig> {
  const base = { clientId: idp.clientId, clientSecret: idp.clientSecret, issuerUrl: idp.issuer, scope: 'openid email' };
  return {
    explicit: { ...base, name: 'explicit', authUri: idp.endpoints.auth, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token, keysUri: idp.endpoints.keys },
    discovery: { ...base, name: 'discovery' },
  };
}

/** a device-flow login approved as alice: the final poll's result (or what it threw) */
async function login(idp: TestIdp, cfg: IdpConfig, client: IdpClient): Promise<PollResult> {
  const da = await startDeviceAuthorization(cfg, client);
  await idp.approveDevice(da.userCode, 'alice');
  let r = await pollToken(cfg, da.deviceCode, client);
  for (let i = 0; i < 3 && r.status === 'slow_down'; i++) {
    await new Promise((res) => setTimeout(res, r.status === 'slow_down' ? r.interval * 1000 : 0));
    r = await pollToken(cfg, da.deviceCode, client);
  }
  return r;
}

async function refusal(p: Promise<unknown>): Promise<OAuthError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OAuthError, String(e));
    return e;
  }
  return assert.fail('expected a refusal');
}

describe('ID-token signing algorithms against oidc-provider', () => {
  const idps = new Map<SigningAlg, TestIdp>();
  let client: IdpClient;

  before(async () => {
    for (const alg of [...ASYMMETRIC, 'HS256'] as SigningAlg[]) idps.set(alg, await startTestIdp({ signingAlg: alg }));
    client = new IdpClient(httpsFetch([...idps.values()].map((i) => i.caPem).join('\n')));
  });
  after(async () => {
    for (const i of idps.values()) await i.stop();
  });

  for (const alg of ASYMMETRIC) {
    it(`logs in with ID tokens signed ${alg}, with explicit endpoints and with discovery`, async () => {
      const idp = idps.get(alg)!;
      for (const [how, cfg] of Object.entries(configs(idp))) {
        const r = await login(idp, cfg, client);
        assert.equal(r.status, 'done', how);
        if (r.status !== 'done') return;
        assert.equal(decodeProtectedHeader(r.tokens.id_token!).alg, alg, how);
        assert.equal(await resolveUserIdentifier(cfg, r.tokens, client), 'alice', how);
      }
    });
  }

  it('refuses HMAC-signed and unsigned ID tokens, naming the algorithm', async () => {
    const idp = idps.get('HS256')!;
    for (const [how, cfg] of Object.entries(configs(idp))) {
      const e = await refusal(login(idp, cfg, client));
      assert.equal(e.code, 'invalid_id_token', `${how}: ${e.message}`);
      assert.match(e.message, REFUSED, how);
    }
    // without an issuer the token response is read as plain OAuth: the ID token is refused at validation
    const plain: IdpConfig = { name: 'plain', clientId: idp.clientId, clientSecret: idp.clientSecret, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token, keysUri: idp.endpoints.keys, scope: 'openid' };
    const r = await login(idp, plain, client);
    assert.equal(r.status, 'done');
    if (r.status !== 'done') return;
    assert.equal(decodeProtectedHeader(r.tokens.id_token!).alg, 'HS256');
    const hs = await refusal(resolveUserIdentifier(plain, r.tokens, client));
    assert.equal(hs.code, 'invalid_id_token');
    assert.match(hs.message, REFUSED);
    // the same claims, unsigned
    const [, payload] = r.tokens.id_token!.split('.');
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${payload}.`;
    const none = await refusal(validateIdToken(plain, unsigned, client));
    assert.equal(none.code, 'invalid_id_token');
    assert.match(none.message, REFUSED);
  });

  it('refuses an HMAC-signed ID token for the key set when the JWKS cannot be fetched, at the poll and at validation', async () => {
    const idp = idps.get('HS256')!;
    // each login with a client of its own: no key set read before, no fetch of it failed lately
    const fresh = () => new IdpClient(httpsFetch(idp.caPem));
    idp.failJwks(true);
    try {
      for (const [how, cfg] of Object.entries(configs(idp))) {
        const e = await refusal(login(idp, cfg, fresh()));
        assert.equal(e.code, 'jwks_unreachable', `${how}: ${e.message}`);
        assert.equal(e.message, `Unable to fetch keys from ${idp.endpoints.keys} (HTTP 503)`, how);
      }
      const plain: IdpConfig = { name: 'plain', clientId: idp.clientId, clientSecret: idp.clientSecret, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token, keysUri: idp.endpoints.keys, scope: 'openid' };
      const c = fresh();
      const r = await login(idp, plain, c);
      assert.equal(r.status, 'done');
      if (r.status !== 'done') return;
      const e = await refusal(resolveUserIdentifier(plain, r.tokens, c));
      assert.equal(e.code, 'jwks_unreachable', e.message);
      assert.match(e.message, /^Unable to fetch keys from https:\/\/localhost:\d+\/jwks \(HTTP 503\)$/);
    } finally {
      idp.failJwks(false);
    }
  });
});
