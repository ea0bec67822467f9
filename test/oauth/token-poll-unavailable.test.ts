/**
 * A token poll the IdP cannot answer now (src/oauth/device-flow.ts
 * processDeviceToken and pollToken): HTTP 429 or 5xx without one of the
 * device flow's own errors (a proxy's 502 page, an overloaded IdP's 503,
 * Entra ID's throttling 429), or an OAuth `temporarily_unavailable` or
 * `server_error`, says nothing about the device code. It is told as the
 * IdP not reached (`idp_unreachable`), which the KDC answers "pending" and
 * polls again when the code is due, instead of ending a login the user may
 * be finishing; a Retry-After longer than the interval lengthens the
 * code's interval. A refusal keeps ending the flow, whatever its status.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationServer } from '../../src/oauth/discovery.js';
import { IdpClient } from '../../src/oauth/client.js';
import { devicePolling, IdpUnavailable, pollToken, processDeviceToken, RETRY_AFTER_MAX_S } from '../../src/oauth/device-flow.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const base = 'https://idp.example.test';
const withIssuer: IdpConfig = { name: 'busy', clientId: 'dirid-kdc', clientSecret: 'secret', issuerUrl: base, devAuthUri: `${base}/device`, tokenUri: `${base}/token`, keysUri: `${base}/jwks`, userinfoUri: `${base}/me`, scope: 'openid' };
const { issuerUrl: _issuer, ...oauthOnly } = withIssuer;
const HTML = { 'content-type': 'text/html' };
const JSON_TYPE = { 'content-type': 'application/json' };

/** what processDeviceToken makes of an answer */
async function read(cfg: IdpConfig, status: number, body: string, headers: Record<string, string>): Promise<string> {
  const idp = new IdpClient(() => Promise.reject(new Error('no request is made')));
  const as = await authorizationServer(cfg, idp, ['token']);
  try {
    const r = await processDeviceToken(cfg, as, 'device-code', new Response(body, { status, headers }), 5);
    return r.status;
  } catch (e) {
    return e instanceof OAuthError ? `${e.code}: ${e.message}` : `thrown ${String(e)}`;
  }
}

const unavailable: Array<[string, number, string, Record<string, string>, RegExp]> = [
  ['a 503 page', 503, '<html><body>Service Unavailable</body></html>', HTML, /^idp_unreachable: token request: the IdP answered HTTP 503 \(the IdP is unavailable or failing; try again later\)$/],
  ['a 502 from a proxy, no body', 502, '', { 'content-type': 'text/plain' }, /^idp_unreachable: token request: the IdP answered HTTP 502 /],
  ['a 429 with a JSON error of its own', 429, '{"error":"throttled"}', JSON_TYPE, /^idp_unreachable: token request: the IdP answered HTTP 429 \(too many requests/],
  ['temporarily_unavailable with 429', 429, '{"error":"temporarily_unavailable"}', JSON_TYPE, /^idp_unreachable: token request: the IdP answered temporarily_unavailable \(HTTP 429\)/],
  ['server_error with 500', 500, '{"error":"server_error","error_description":"AADSTS50000"}', JSON_TYPE, /^idp_unreachable: token request: the IdP answered server_error \(HTTP 500\)/],
  ['temporarily_unavailable with 400', 400, '{"error":"temporarily_unavailable"}', JSON_TYPE, /^idp_unreachable: /],
];

describe('token polls the IdP could not answer now', () => {
  for (const [cfgName, cfg] of [['with an issuer', withIssuer], ['without one', oauthOnly]] as const) {
    it(`${cfgName}: 429, 5xx, temporarily_unavailable and server_error are the IdP not reached`, async () => {
      for (const [name, status, body, headers, expected] of unavailable) assert.match(await read(cfg, status, body, headers), expected, name);
    });
  }

  it('without an issuer an error is read whatever the status, so a server_error with HTTP 200 (GitHub) is one too', async () => {
    assert.match(await read(oauthOnly, 200, '{"error":"server_error"}', JSON_TYPE), /^idp_unreachable: token request: the IdP answered server_error \(HTTP 200\)/);
  });

  it("the device flow's own answers keep their meaning whatever the status", async () => {
    assert.equal(await read(oauthOnly, 500, '{"error":"authorization_pending"}', JSON_TYPE), 'pending');
    assert.match(await read(oauthOnly, 500, '{"error":"invalid_grant"}', JSON_TYPE), /^invalid_grant: /);
    assert.match(await read(oauthOnly, 503, '{"error":"access_denied"}', JSON_TYPE), /^access_denied: /);
    assert.match(await read(withIssuer, 400, '{"error":"expired_token"}', JSON_TYPE), /^expired_token: /);
    assert.equal(await read(withIssuer, 400, '{"error":"authorization_pending"}', JSON_TYPE), 'pending');
  });

  it('a Retry-After longer than the interval lengthens the interval of the code; a shorter one leaves it', async () => {
    let answer: { status: number; headers: Record<string, string>; body: string } = { status: 429, headers: { 'content-type': 'application/json', 'retry-after': '17' }, body: '{"error":"too_many_requests"}' };
    let requests = 0;
    const idp = new IdpClient(async () => {
      requests++;
      return new Response(answer.body, { status: answer.status, headers: answer.headers });
    });
    const expiresAt = Date.now() + 600_000;
    await assert.rejects(pollToken(oauthOnly, 'code-1', idp, { interval: 5, expiresAt }), (e: unknown) => e instanceof IdpUnavailable && e.code === 'idp_unreachable' && e.retryAfterS === 17);
    assert.equal((await devicePolling(oauthOnly, 'code-1', idp))?.interval, 17);

    answer = { status: 503, headers: { 'content-type': 'text/html', 'retry-after': '2' }, body: '<html>down</html>' };
    await assert.rejects(pollToken(oauthOnly, 'code-2', idp, { interval: 5, expiresAt }), (e: unknown) => e instanceof IdpUnavailable && e.retryAfterS === 2);
    assert.equal((await devicePolling(oauthOnly, 'code-2', idp))?.interval, 5);

    answer = { status: 503, headers: { 'content-type': 'text/html', 'retry-after': new Date(Date.now() + 3600_000).toUTCString() }, body: '' };
    await assert.rejects(pollToken(oauthOnly, 'code-3', idp, { interval: 5, expiresAt }), (e: unknown) => e instanceof IdpUnavailable && e.retryAfterS === RETRY_AFTER_MAX_S);

    // the next poll of the code goes, and its answer counts
    answer = { status: 400, headers: JSON_TYPE, body: '{"error":"authorization_pending"}' };
    assert.deepEqual(await pollToken(oauthOnly, 'code-1', idp, { interval: 5, expiresAt }), { status: 'pending' });
    assert.equal((await devicePolling(oauthOnly, 'code-1', idp))?.interval, 17);
    assert.equal(requests, 4);
  });
});
