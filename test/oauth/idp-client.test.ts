/**
 * What an IdP client remembers belongs to that client (issue 12: no hidden
 * module state): a discovery document or a JWKS key set fetched through one
 * IdpClient is served from its cache to that client only; another client in
 * the same process fetches its own. The IdP here is a fetch function that
 * answers from memory and counts what it is asked.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { IdpClient } from '../../src/oauth/client.js';
import { discover } from '../../src/oauth/discovery.js';
import type { FetchLike } from '../../src/oauth/http.js';
import { validateIdToken } from '../../src/oauth/id-token.js';
import type { IdpConfig } from '../../src/oauth/types.js';

const ISSUER = 'https://idp.example.test';
const DISCOVERY_PATH = '/.well-known/openid-configuration';
const JWKS_PATH = '/jwks';

/** An IdP in memory: its discovery document, its key set, and the paths it was asked for. */
async function memoryIdp(): Promise<{ fetch: FetchLike; asked: string[]; sign: (sub: string) => Promise<string> }> {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'RS256', use: 'sig' };
  const asked: string[] = [];
  const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  const fetch: FetchLike = async (url) => {
    const path = new URL(String(url)).pathname;
    asked.push(path);
    if (path === DISCOVERY_PATH) return json({ issuer: ISSUER, token_endpoint: `${ISSUER}/token`, device_authorization_endpoint: `${ISSUER}/device`, jwks_uri: `${ISSUER}${JWKS_PATH}` });
    if (path === JWKS_PATH) return json({ keys: [jwk] });
    return new Response('not found', { status: 404 });
  };
  const sign = (sub: string) =>
    new SignJWT({}).setProtectedHeader({ alg: 'RS256', kid: 'key-1' }).setIssuer(ISSUER).setSubject(sub).setAudience('client-1').setIssuedAt().setExpirationTime('5m').sign(privateKey);
  return { fetch, asked, sign };
}

const count = (asked: string[], path: string) => asked.filter((p) => p === path).length;

describe('IdP clients keep their caches to themselves', () => {
  it('a discovery document cached by one client is not seen by another', async () => {
    const idp = await memoryIdp();
    const one = new IdpClient(idp.fetch);
    const other = new IdpClient(idp.fetch);
    const first = await discover(ISSUER, one);
    assert.equal(first.token_endpoint, `${ISSUER}/token`);
    await discover(ISSUER, one);
    assert.equal(count(idp.asked, DISCOVERY_PATH), 1, 'the second discovery of the same client came from its cache');
    assert.equal(other.discovery.size, 0, 'the other client has nothing cached');
    assert.equal((await discover(ISSUER, other)).token_endpoint, `${ISSUER}/token`);
    assert.equal(count(idp.asked, DISCOVERY_PATH), 2, 'the other client fetched the document itself');
  });

  it('a JWKS key set fetched by one client is not used by another', async () => {
    const idp = await memoryIdp();
    const cfg: IdpConfig = { name: 'memory', clientId: 'client-1', issuerUrl: ISSUER, keysUri: `${ISSUER}${JWKS_PATH}` };
    const one = new IdpClient(idp.fetch);
    const other = new IdpClient(idp.fetch);
    assert.equal((await validateIdToken(cfg, await idp.sign('alice'), one)).sub, 'alice');
    assert.equal((await validateIdToken(cfg, await idp.sign('bob'), one)).sub, 'bob');
    assert.equal(count(idp.asked, JWKS_PATH), 1, 'the second token of the same client was checked with its cached keys');
    assert.equal((await validateIdToken(cfg, await idp.sign('carol'), other)).sub, 'carol');
    assert.equal(count(idp.asked, JWKS_PATH), 2, 'the other client fetched the keys itself');
  });
});
