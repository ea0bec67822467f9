/**
 * Client assertions for private_key_jwt (src/oauth/client-auth.ts,
 * docs/client-auth.md): the claims and header each assertion carries, a
 * fresh jti for every request, the lifetime, the form parameters sent, and
 * the walk through older keys on invalid_client during a rollover; and the
 * Basic header of client_secret_basic.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJwt, decodeProtectedHeader, importJWK, jwtVerify } from 'jose';
import type * as oauth from 'oauth4webapi';
import { ASSERTION_LIFETIME_S, clientAssertion, clientAuthHeader, clientAuthOf, clientAuthParams, JWT_BEARER_ASSERTION_TYPE, withClientKeys } from '../../src/oauth/client-auth.js';
import { OAuthError, idpConfigOf, type ClientKey, type IdpConfig } from '../../src/oauth/types.js';
import { newClientKey, publicJwk, publicKeySet, writeClientKeys } from '../../src/objects/idp-client-key.js';

const TOKEN = 'https://idp.example.test/token';

describe('private_key_jwt client assertions', () => {
  for (const alg of ['ES256', 'RS256'] as const) {
    it(`${alg}: iss = sub = client_id, aud = the token endpoint, jti, iat, exp 60 s later; alg and kid in the header; verifies with the published key`, async () => {
      const key = (await newClientKey(alg)) as ClientKey;
      const now = Date.UTC(2026, 0, 1, 12);
      const jwt = await clientAssertion('my-client', TOKEN, key, now);
      const header = decodeProtectedHeader(jwt);
      assert.equal(header.alg, alg);
      assert.equal(header.kid, key.kid);
      const claims = decodeJwt(jwt);
      assert.equal(claims.iss, 'my-client');
      assert.equal(claims.sub, 'my-client');
      assert.equal(claims.aud, TOKEN);
      assert.equal(claims.iat, now / 1000);
      assert.equal(claims.exp, now / 1000 + ASSERTION_LIFETIME_S);
      assert.equal(ASSERTION_LIFETIME_S, 60);
      assert.match(String(claims.jti), /^[0-9a-f-]{36}$/);
      const published = publicKeySet(writeClientKeys([key])).keys[0]!;
      const { payload } = await jwtVerify(jwt, await importJWK(published, alg), { audience: TOKEN, issuer: 'my-client', currentDate: new Date(now + 1000) });
      assert.equal(payload.sub, 'my-client');
    });
  }

  it('every assertion has its own jti', async () => {
    const key = (await newClientKey('ES256')) as ClientKey;
    const jtis = new Set<unknown>();
    for (let i = 0; i < 20; i++) jtis.add(decodeJwt(await clientAssertion('c', TOKEN, key)).jti);
    assert.equal(jtis.size, 20);
  });

  it('the published key set has no private member', async () => {
    const keys = [(await newClientKey('ES256')) as ClientKey, (await newClientKey('RS256')) as ClientKey];
    const set = publicKeySet(writeClientKeys(keys));
    assert.deepEqual(set.keys.map((k) => k.kid), keys.map((k) => k.kid));
    for (const k of set.keys) for (const m of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal((k as Record<string, unknown>)[m], undefined);
    assert.deepEqual(Object.keys(publicJwk(keys[0]!)).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y']);
  });

  it('the request carries client_id, the assertion type and a new assertion each time, never a secret', async () => {
    const key = (await newClientKey('ES256')) as ClientKey;
    const cfg = idpConfigOf('r', { dirIdpClientId: ['my-client'], dirIdpClientAuth: ['private_key_jwt'] }, 'ignored-secret', writeClientKeys([key]));
    assert.equal(cfg.clientAuth, 'private_key_jwt');
    const auth = clientAuthOf(cfg);
    const as = { issuer: 'https://idp.example.test', token_endpoint: TOKEN } as oauth.AuthorizationServer;
    const bodies: URLSearchParams[] = [];
    for (let i = 0; i < 2; i++) {
      const body = new URLSearchParams();
      await auth(as, { client_id: 'my-client' }, body, new Headers());
      bodies.push(body);
    }
    for (const b of bodies) {
      assert.equal(b.get('client_id'), 'my-client');
      assert.equal(b.get('client_assertion_type'), JWT_BEARER_ASSERTION_TYPE);
      assert.equal(b.get('client_secret'), null);
      assert.equal(decodeProtectedHeader(b.get('client_assertion')!).kid, key.kid);
    }
    assert.notEqual(decodeJwt(bodies[0]!.get('client_assertion')!).jti, decodeJwt(bodies[1]!.get('client_assertion')!).jti);
  });

  it('a reference with the secret still sends client_secret_post', async () => {
    const cfg = idpConfigOf('r', { dirIdpClientId: ['c'] }, 'the-secret', undefined);
    const body = new URLSearchParams();
    await clientAuthOf(cfg)({ issuer: 'https://i', token_endpoint: TOKEN } as oauth.AuthorizationServer, { client_id: 'c' }, body, new Headers());
    assert.equal(body.get('client_secret'), 'the-secret');
    assert.equal(body.get('client_assertion'), null);
  });

  it('rollover: the new key first, the older one on invalid_client; what the IdP accepted is told', async () => {
    const fresh = (await newClientKey('ES256')) as ClientKey;
    const old = (await newClientKey('ES256')) as ClientKey;
    const cfg: IdpConfig = { name: 'r', clientId: 'c', clientAuth: 'private_key_jwt', clientKeys: [fresh, old] };
    const tried: string[] = [];
    const accepted: string[] = [];
    const only = (kid: string) => async (c: IdpConfig) => {
      tried.push(c.clientKeys![0]!.kid);
      if (c.clientKeys![0]!.kid !== kid) throw new OAuthError('invalid_client', 'refused');
      return 'ok';
    };
    assert.equal(await withClientKeys(cfg, only(old.kid), (k) => accepted.push(k)), 'ok');
    assert.deepEqual(tried, [fresh.kid, old.kid]);
    assert.deepEqual(accepted, [old.kid]);
    tried.length = 0;
    accepted.length = 0;
    assert.equal(await withClientKeys(cfg, only(fresh.kid), (k) => accepted.push(k)), 'ok');
    assert.deepEqual(tried, [fresh.kid]);
    assert.deepEqual(accepted, [fresh.kid]);
    // no key accepted: the last refusal; another error is not a reason to try the older key
    await assert.rejects(withClientKeys(cfg, only('none')), (e: unknown) => e instanceof OAuthError && e.code === 'invalid_client');
    tried.length = 0;
    await assert.rejects(
      withClientKeys(cfg, async (c) => {
        tried.push(c.clientKeys![0]!.kid);
        throw new OAuthError('invalid_scope', 'no');
      }),
      (e: unknown) => e instanceof OAuthError && e.code === 'invalid_scope',
    );
    assert.deepEqual(tried, [fresh.kid]);
  });
});

describe('client_secret_basic', () => {
  it('sends the form-encoded client ID and secret in a Basic header (RFC 6749 §2.3.1), and neither in the body', async () => {
    const cfg: IdpConfig = { name: 'b', clientId: 'my client', clientSecret: 'p:+/ é%', clientAuth: 'client_secret_basic' };
    const header = clientAuthHeader(cfg)!;
    assert.match(header, /^Basic [A-Za-z0-9+/]+=*$/);
    // a colon in the secret must not split it: each part is form-encoded before they are joined
    assert.equal(Buffer.from(header.slice(6), 'base64').toString(), 'my+client:p%3A%2B%2F+%C3%A9%25');
    assert.deepEqual(await clientAuthParams(cfg, TOKEN), []);
    const body = new URLSearchParams();
    const headers = new Headers();
    await clientAuthOf(cfg)({ issuer: 'https://idp.example.test', token_endpoint: TOKEN } as oauth.AuthorizationServer, { client_id: cfg.clientId }, body, headers);
    assert.equal(headers.get('authorization'), header);
    assert.equal(body.toString(), '');
  });

  it('is read from the stored reference; client_secret_post sends no header', () => {
    const basic = idpConfigOf('r', { dirIdpClientId: ['c'], dirIdpClientAuth: ['client_secret_basic'] }, 's');
    assert.equal(basic.clientAuth, 'client_secret_basic');
    assert.equal(clientAuthHeader(basic), `Basic ${Buffer.from('c:s').toString('base64')}`);
    const post = idpConfigOf('r', { dirIdpClientId: ['c'], dirIdpClientAuth: ['client_secret_post'] }, 's');
    assert.equal(clientAuthHeader(post), undefined);
  });
});
