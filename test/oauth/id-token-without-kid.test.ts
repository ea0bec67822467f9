/**
 * ID tokens without a `kid` header (it is optional: JWS §4.1.4, and some
 * IdPs sign without one) at src/oauth/id-token.ts validateIdToken. When
 * several keys of the IdP's JWKS fit the token's algorithm (two RSA keys
 * during a rollover, a second signing key beside an encryption key), each
 * is tried until one verifies; when none does, the JWKS is fetched again
 * once (the IdP may have rotated its key: a token without a kid names no
 * key whose absence would say so), at most every few seconds as for an
 * unknown kid. A token no published key signed is still refused.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { IdpClient } from '../../src/oauth/client.js';
import { validateIdToken } from '../../src/oauth/id-token.js';
import { JWKS_REFETCH_INTERVAL_MS } from '../../src/oauth/key-sets.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const issuer = 'https://idp.example.test';
const jwksUri = `${issuer}/jwks`;
const cfg: IdpConfig = { name: 'nokid', clientId: 'dirid-kdc', clientSecret: 'secret', issuerUrl: issuer, devAuthUri: `${issuer}/device`, tokenUri: `${issuer}/token`, keysUri: jwksUri, scope: 'openid' };

async function keyPair(alg: string, extra: Partial<JWK> = {}): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const k = await generateKeyPair(alg, { extractable: true });
  return { privateKey: k.privateKey, jwk: { ...(await exportJWK(k.publicKey)), ...extra } };
}

/** an ID token for `sub`, signed RS256 with `key`, its header without a kid */
function tokenOf(key: CryptoKey, sub: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub, email: `${sub}@example.test` }).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).setIssuer(issuer).setAudience(cfg.clientId).setIssuedAt(now).setExpirationTime(now + 300).sign(key);
}

/** an IdP client whose JWKS endpoint publishes `keys()` at each fetch, counting them */
function clientPublishing(keys: () => JWK[]): { idp: IdpClient; fetches: () => number } {
  let n = 0;
  const idp = new IdpClient(async (url) => {
    assert.equal(String(url), jwksUri);
    n++;
    return new Response(JSON.stringify({ keys: keys() }), { status: 200, headers: { 'content-type': 'application/jwk-set+json' } });
  });
  return { idp, fetches: () => n };
}

const refusal = async (p: Promise<unknown>): Promise<OAuthError> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof OAuthError, String(e));
    return e;
  }
  assert.fail('the token was accepted');
};

describe('ID tokens without a kid', () => {
  it('several keys of the set fit: the one that signed it verifies it', async () => {
    const [a, b, c] = await Promise.all([keyPair('RS256', { use: 'sig' }), keyPair('RS256', { use: 'sig', alg: 'RS256' }), keyPair('RS256')]);
    const enc = await keyPair('RSA-OAEP-256', { use: 'enc' });
    const { idp, fetches } = clientPublishing(() => [enc.jwk, a.jwk, b.jwk, c.jwk]);
    for (const [key, sub] of [[a, 'ann'], [b, 'bob'], [c, 'cid']] as const) {
      const claims = await validateIdToken(cfg, await tokenOf(key.privateKey, sub), idp);
      assert.equal(claims.sub, sub);
    }
    assert.equal(fetches(), 1);
  });

  it('a token signed by none of them is refused, after one more look at the set', async () => {
    const [a, b, stranger] = await Promise.all([keyPair('RS256'), keyPair('RS256'), keyPair('RS256')]);
    const { idp, fetches } = clientPublishing(() => [a.jwk, b.jwk]);
    const e = await refusal(validateIdToken(cfg, await tokenOf(stranger.privateKey, 'mallory'), idp));
    assert.equal(e.code, 'invalid_id_token');
    assert.equal(e.message, 'ID token rejected: signature verification failed');
    assert.equal(fetches(), 2);
  });

  it('after the IdP rotated its one key, the set is fetched again and the new key verifies', async () => {
    const [old, next] = await Promise.all([keyPair('RS256', { use: 'sig' }), keyPair('RS256', { use: 'sig' })]);
    let published = [old.jwk];
    const { idp, fetches } = clientPublishing(() => published);
    assert.equal((await validateIdToken(cfg, await tokenOf(old.privateKey, 'dee'), idp)).sub, 'dee');
    published = [next.jwk]; // the old key vanished
    const t0 = Date.now();
    assert.equal((await validateIdToken(cfg, await tokenOf(next.privateKey, 'dee'), idp)).sub, 'dee');
    assert.equal(fetches(), 2);
    // no sooner than the refetch interval after the last fetch
    assert.ok(Date.now() - t0 >= JWKS_REFETCH_INTERVAL_MS - 100, `refetched after ${Date.now() - t0} ms`);
  });
});
