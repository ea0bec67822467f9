/**
 * Device authorization answers (RFC 8628 §3.2) in the shapes real providers
 * give them (src/oauth/device-flow.ts processDeviceAuthorization): Entra
 * ID's older endpoints write `expires_in` and `interval` as JSON strings
 * and add a `message`; GitHub answers a refusal with HTTP 200 and an
 * `error` member; an IdP that is down answers 503 with an HTML page. The
 * first must start the flow with those numbers, the others must say what
 * the IdP said instead of a parser's complaint.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type * as oauth from 'oauth4webapi';
import { processDeviceAuthorization } from '../../src/oauth/device-flow.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const base = 'https://idp.example.test';
const cfg: IdpConfig = { name: 'shapes', clientId: 'dirid-kdc', clientSecret: 'the-client-secret', devAuthUri: `${base}/device`, tokenUri: `${base}/token`, userinfoUri: `${base}/me` };
const as: oauth.AuthorizationServer = { issuer: base, device_authorization_endpoint: `${base}/device`, token_endpoint: `${base}/token` };
const answer = (status: number, body: unknown, type = 'application/json; charset=utf-8') => new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': type } });
const refusal = async (r: Response): Promise<OAuthError> => {
  try {
    await processDeviceAuthorization(cfg, as, r);
  } catch (e) {
    assert.ok(e instanceof OAuthError, String(e));
    return e;
  }
  assert.fail('the answer was taken for a device authorization');
};

describe('device authorization answers as providers shape them', () => {
  it('expires_in and interval written as strings (Entra ID) are taken as their numbers', async () => {
    const now = 1_700_000_000_000;
    const da = await processDeviceAuthorization(
      cfg,
      as,
      answer(200, { device_code: 'dc-1', user_code: 'ABCD-EFGH', verification_uri: 'https://microsoft.com/devicelogin', expires_in: '900', interval: '7', message: 'To sign in, use a web browser to open the page https://microsoft.com/devicelogin and enter the code ABCD-EFGH to authenticate.' }),
      now,
    );
    assert.equal(da.interval, 7);
    assert.equal(da.expiresAt, now + 900_000);
    assert.equal(da.userCode, 'ABCD-EFGH');
    assert.equal(da.verificationUri, 'https://microsoft.com/devicelogin');
  });

  it('numbers stay numbers, and an interval that is not a number is still refused', async () => {
    const da = await processDeviceAuthorization(cfg, as, answer(200, { device_code: 'dc-2', user_code: 'X', verification_uri: `${base}/activate`, expires_in: 600, interval: 5 }), 0);
    assert.deepEqual([da.interval, da.expiresAt], [5, 600_000]);
    const e = await refusal(answer(200, { device_code: 'dc-3', user_code: 'X', verification_uri: `${base}/activate`, expires_in: 600, interval: 'soon' }));
    assert.equal(e.code, 'idp_bad_response');
  });

  it('an error answered with HTTP 200 (GitHub) is the IdP refusal it names', async () => {
    const e = await refusal(answer(200, { error: 'unauthorized_client', error_description: 'device flow is not enabled for client the-client-secret' }));
    assert.equal(e.code, 'unauthorized_client');
    assert.match(e.message, /^device authorization: the IdP answered unauthorized_client \(device flow is not enabled for client \[redacted\]\)$/);
    const other = await refusal(answer(200, { error: 'device_flow_disabled' }));
    assert.equal(other.code, 'idp_bad_response');
    assert.equal(other.message, 'device authorization: the IdP answered device_flow_disabled');
  });

  it('an IdP that is down or limiting its clients is told so, by its HTTP status', async () => {
    const down = await refusal(answer(503, '<html><body>Service Unavailable</body></html>', 'text/html'));
    assert.equal(down.code, 'idp_bad_response');
    assert.equal(down.message, 'device authorization: the IdP answered HTTP 503 (the IdP is unavailable or failing; try again later)');
    const limited = await refusal(answer(429, '', 'text/plain'));
    assert.match(limited.message, /^device authorization: the IdP answered HTTP 429 \(too many requests/);
    const missing = await refusal(answer(404, '<html>Not Found</html>', 'text/html'));
    assert.equal(missing.message, 'device authorization: the IdP answered HTTP 404 instead of an OAuth answer');
  });
});
