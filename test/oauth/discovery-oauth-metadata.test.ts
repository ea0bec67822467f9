/**
 * Discovery at an issuer that publishes only OAuth 2.0 authorization server
 * metadata (RFC 8414), not OpenID Connect's document (src/oauth/discovery.ts
 * discoveryDocument): after the issuer's path as Okta's custom authorization
 * servers serve it, or before it as RFC 8414 §3.1 says. idp-add (discover)
 * and idp-check read it; it must name the issuer all the same; an issuer
 * with the OIDC document is asked nothing else.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IdpClient } from '../../src/oauth/client.js';
import { checkIdp } from '../../src/oauth/check.js';
import { discover } from '../../src/oauth/discovery.js';
import type { FetchLike } from '../../src/oauth/http.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const ORIGIN = 'https://idp.example';
const ISSUER = `${ORIGIN}/oauth2/default`;

/** an IdP serving its metadata at the paths of `served` only (naming `named` as issuer); every request is counted by path */
function fakeIdp(served: string[], named = ISSUER) {
  const asked: string[] = [];
  const fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    asked.push(url.pathname);
    if (served.includes(url.pathname)) {
      return Response.json({ issuer: named, authorization_endpoint: `${ISSUER}/v1/authorize`, device_authorization_endpoint: `${ISSUER}/v1/device/authorize`, token_endpoint: `${ISSUER}/v1/token`, jwks_uri: `${ISSUER}/v1/keys` });
    }
    if (url.pathname.endsWith('/device/authorize')) return Response.json({ device_code: 'dc', user_code: 'UC', verification_uri: `${ORIGIN}/activate`, expires_in: 600 });
    if (url.pathname.endsWith('/keys')) return Response.json({ keys: [] });
    return new Response('<html>Not Found</html>', { status: 404, headers: { 'content-type': 'text/html' } });
  };
  return { idp: new IdpClient(fetch), asked };
}

const OIDC = '/oauth2/default/.well-known/openid-configuration';
const APPENDED = '/oauth2/default/.well-known/oauth-authorization-server';
const INSERTED = '/.well-known/oauth-authorization-server/oauth2/default';

describe('discovery of an issuer with RFC 8414 metadata only', () => {
  it("reads the metadata after the issuer's path (Okta's custom authorization servers)", async () => {
    const f = fakeIdp([APPENDED]);
    const as = await discover(ISSUER, f.idp);
    assert.equal(as.token_endpoint, `${ISSUER}/v1/token`);
    assert.equal(as.device_authorization_endpoint, `${ISSUER}/v1/device/authorize`);
    assert.deepEqual(f.asked, [OIDC, APPENDED]);
  });

  it('reads the metadata where RFC 8414 §3.1 puts it, before the path', async () => {
    const f = fakeIdp([INSERTED]);
    assert.equal((await discover(ISSUER, f.idp)).jwks_uri, `${ISSUER}/v1/keys`);
    assert.deepEqual(f.asked, [OIDC, APPENDED, INSERTED]);
  });

  it('asks for nothing else when the OIDC document is there', async () => {
    const f = fakeIdp([OIDC, APPENDED]);
    await discover(ISSUER, f.idp);
    assert.deepEqual(f.asked, [OIDC]);
  });

  it('metadata naming another issuer is refused, and no document at all is told as before', async () => {
    const other = fakeIdp([APPENDED], `${ORIGIN}/oauth2/other`);
    await assert.rejects(discover(ISSUER, other.idp), (e: unknown) => e instanceof OAuthError && e.code === 'issuer_mismatch');
    const none = fakeIdp([]);
    await assert.rejects(
      discover(ISSUER, none.idp),
      (e: unknown) => e instanceof OAuthError && e.code === 'discovery_failed' && /answered HTTP 404 instead of a discovery document/.test(e.message),
    );
  });

  it("idp-check's Discovery line names the document it read", async () => {
    const f = fakeIdp([APPENDED]);
    const cfg: IdpConfig = { name: 'okta', clientId: 'c', clientSecret: 'client-secret-1', issuerUrl: ISSUER, scope: 'openid' };
    const line = (await checkIdp(cfg, f.idp)).find((l) => l.check === 'Discovery');
    assert.equal(line?.status, 'PASS');
    assert.match(line!.message, new RegExp(`^${ORIGIN}${APPENDED} names issuer ${ISSUER} and `));
  });
});
