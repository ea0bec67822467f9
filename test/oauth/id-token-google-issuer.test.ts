/**
 * Google documents the `iss` of its ID tokens as `https://accounts.google.com`
 * or `accounts.google.com`: both are the issuer of the google template
 * (src/oauth/id-token.ts issuersOf). A token carrying either validates, its
 * signature included; no other issuer gains a second spelling, and nothing
 * near Google's is taken for it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { IdpClient } from '../../src/oauth/client.js';
import { checkIdTokenClaims, validateIdToken } from '../../src/oauth/id-token.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const google: IdpConfig = { name: 'google', clientId: '123-abc.apps.googleusercontent.com', clientSecret: 'secret', issuerUrl: 'https://accounts.google.com', keysUri: 'https://www.googleapis.com/oauth2/v3/certs', scope: 'openid email' };
const now = Math.floor(Date.now() / 1000);
const claimsFrom = (cfg: IdpConfig, iss: string) => ({ iss, aud: cfg.clientId, azp: cfg.clientId, sub: '110169484474386276334', email: 'user@example.test', iat: now, exp: now + 3600 });
const verdict = (cfg: IdpConfig, iss: string): string => {
  try {
    checkIdTokenClaims(cfg, { alg: 'RS256', kid: 'k1' }, claimsFrom(cfg, iss));
    return 'accepted';
  } catch (e) {
    return e instanceof OAuthError ? e.code : String(e);
  }
};

describe("Google's two spellings of its issuer", () => {
  it('both are accepted for the Google issuer, and only those', () => {
    assert.equal(verdict(google, 'https://accounts.google.com'), 'accepted');
    assert.equal(verdict(google, 'accounts.google.com'), 'accepted');
    for (const iss of ['accounts.google.com.example', 'http://accounts.google.com', 'https://accounts.google.com/', 'ACCOUNTS.GOOGLE.COM']) assert.equal(verdict(google, iss), 'issuer_mismatch', iss);
    const other: IdpConfig = { ...google, issuerUrl: 'https://idp.example.test' };
    assert.equal(verdict(other, 'https://idp.example.test'), 'accepted');
    assert.equal(verdict(other, 'idp.example.test'), 'issuer_mismatch');
  });

  it('a token with iss accounts.google.com validates with its signature', async () => {
    const { privateKey, publicKey } = await generateKeyPair('RS256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'g1', alg: 'RS256', use: 'sig' };
    const idp = new IdpClient(async () => Response.json({ keys: [jwk] }));
    const token = await new SignJWT(claimsFrom(google, 'accounts.google.com')).setProtectedHeader({ alg: 'RS256', kid: 'g1', typ: 'JWT' }).sign(privateKey);
    const claims = await validateIdToken(google, token, idp);
    assert.equal(claims.iss, 'accounts.google.com');
    assert.equal(claims.sub, '110169484474386276334');
  });
});
