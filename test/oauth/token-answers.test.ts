/**
 * How a token answer to a pending device code is read
 * (src/oauth/device-flow.ts processDeviceToken): `authorization_pending`
 * and `slow_down` are recognized without oauth4webapi's error objects, but
 * only where oauth4webapi would recognize them (a 4xx status, an
 * application/json object, no WWW-Authenticate challenge). Every answer
 * below is read as it was before that shortcut (the expected outcomes are
 * those of the reader without it), with an issuer configured (oauth4webapi
 * reads the answer) and without one (the plain OAuth reader).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { authorizationServer } from '../../src/oauth/discovery.js';
import { IdpClient } from '../../src/oauth/client.js';
import { processDeviceToken } from '../../src/oauth/device-flow.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const base = 'https://idp.example.test';
const withIssuer: IdpConfig = { name: 'answers', clientId: 'dirid-kdc', clientSecret: 'secret', issuerUrl: base, devAuthUri: `${base}/device`, tokenUri: `${base}/token`, keysUri: `${base}/jwks`, userinfoUri: `${base}/me`, scope: 'openid' };
const { issuerUrl: _issuer, ...oauthOnly } = withIssuer;
const idp = new IdpClient(() => Promise.reject(new Error('no request is made')));
const JSON_TYPE = { 'content-type': 'application/json' };

/** an answer: HTTP status, body, headers; what it reads as with an issuer, and without */
const answers: Array<[string, number, string, Record<string, string>, string, string]> = [
  ['authorization_pending', 400, '{"error":"authorization_pending"}', JSON_TYPE, 'pending', 'pending'],
  ['authorization_pending with a charset', 400, '{"error":"authorization_pending","error_description":"wait"}', { 'content-type': 'application/json; charset=utf-8' }, 'pending', 'pending'],
  ['slow_down', 400, '{"error":"slow_down"}', JSON_TYPE, 'slow_down 10', 'slow_down 10'],
  ['access_denied', 400, '{"error":"access_denied"}', JSON_TYPE, 'refused access_denied', 'refused access_denied'],
  ['expired_token', 400, '{"error":"expired_token"}', JSON_TYPE, 'refused expired_token', 'refused expired_token'],
  ['not JSON', 400, 'not json', JSON_TYPE, 'refused idp_bad_response', 'refused idp_bad_response'],
  ['pending as text/plain', 400, '{"error":"authorization_pending"}', { 'content-type': 'text/plain' }, 'refused idp_bad_response', 'pending'],
  ['pending with a challenge', 401, '{"error":"authorization_pending"}', { ...JSON_TYPE, 'www-authenticate': 'Bearer error="invalid_token"' }, 'refused invalid_client', 'pending'],
  ['a JSON array', 400, '["authorization_pending"]', JSON_TYPE, 'refused idp_bad_response', 'refused idp_bad_response'],
  ['pending with HTTP 500', 500, '{"error":"authorization_pending"}', JSON_TYPE, 'refused idp_bad_response', 'pending'],
  ['pending with HTTP 200', 200, '{"error":"authorization_pending"}', JSON_TYPE, 'refused idp_bad_response', 'pending'],
  ['pending after a byte order mark', 400, '\uFEFF{"error":"authorization_pending"}', JSON_TYPE, 'pending', 'pending'],
  ['invalid_grant', 400, '{"error":"invalid_grant","error_description":"unknown code"}', JSON_TYPE, 'refused invalid_grant', 'refused invalid_grant'],
  ['invalid_grant as Application/JSON', 400, '{"error":"invalid_grant"}', { 'content-type': 'Application/JSON' }, 'refused idp_bad_response', 'refused invalid_grant'],
  ['invalid_grant with a challenge', 401, '{"error":"invalid_grant"}', { ...JSON_TYPE, 'www-authenticate': 'Bearer error="invalid_token"' }, 'refused invalid_client', 'refused invalid_grant'],
  ['invalid_grant with HTTP 500', 500, '{"error":"invalid_grant"}', JSON_TYPE, 'refused idp_bad_response', 'refused invalid_grant'],
  ['an error no RFC names', 400, '{"error":"weird_thing"}', JSON_TYPE, 'refused idp_bad_response', 'refused idp_bad_response'],
  ['an empty error', 400, '{"error":""}', JSON_TYPE, 'refused idp_bad_response', 'refused idp_bad_response'],
  ['an error that is not a string', 400, '{"error":7}', JSON_TYPE, 'refused idp_bad_response', 'refused idp_bad_response'],
];

/** what processDeviceToken makes of an answer: its status, or the code it refused it with */
async function read(cfg: IdpConfig, status: number, body: string, headers: Record<string, string>): Promise<string> {
  const as = await authorizationServer(cfg, idp, ['token']);
  try {
    const r = await processDeviceToken(cfg, as, 'device-code', new Response(body, { status, headers }), 5);
    return r.status === 'slow_down' ? `slow_down ${r.interval}` : r.status;
  } catch (e) {
    return e instanceof OAuthError ? `refused ${e.code}` : `thrown ${(e as Error).name}`;
  }
}

describe('token answers to a pending device code', () => {
  it('with an issuer, read as oauth4webapi reads them', async () => {
    for (const [name, status, body, headers, expected] of answers) assert.equal(await read(withIssuer, status, body, headers), expected, name);
  });
  it('without an issuer, read as the plain OAuth reader reads them', async () => {
    for (const [name, status, body, headers, , expected] of answers) assert.equal(await read(oauthOnly, status, body, headers), expected, name);
  });
  it('a refusal names what the IdP answered, its description redacted of the device code', async () => {
    for (const cfg of [withIssuer, oauthOnly]) {
      const as = await authorizationServer(cfg, idp, ['token']);
      const answer = new Response('{"error":"invalid_grant","error_description":"unknown code device-code"}', { status: 400, headers: JSON_TYPE });
      await assert.rejects(processDeviceToken(cfg, as, 'device-code', answer, 5), (e: unknown) => {
        assert.ok(e instanceof OAuthError);
        assert.equal(e.code, 'invalid_grant');
        assert.equal(e.message, 'token request: the IdP answered invalid_grant (unknown code [redacted])');
        return true;
      });
    }
  });
});
