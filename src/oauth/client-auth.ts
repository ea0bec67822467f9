/**
 * How the client authenticates to an IdP (docs/client-auth.md): with its
 * secret in the form body (client_secret_post, RFC 6749 §2.3.1), in an HTTP
 * Basic Authorization header (client_secret_basic, the same section: the
 * one every authorization server must take), or with a signed client
 * assertion (private_key_jwt: RFC 7523 §2.2 and §3 as OpenID
 * Connect Core §9 uses them). An assertion is made for one request and never
 * again: `iss` and `sub` are the client ID, `aud` the token endpoint URL
 * (OIDC Core §9; IdPs also accept it at the device authorization endpoint),
 * a random `jti`, `iat` now and `exp` ASSERTION_LIFETIME_S later; the header
 * names the key's `alg` and `kid`. With several keys (a rollover, see
 * docs/client-auth.md) the first signs and the others are tried in turn
 * when the IdP answers invalid_client: `withClientKeys` runs a request so.
 * The form parameters and the header are made in one place
 * (`clientAuthParams`, `clientAuthHeader`), for the token poll that sends
 * them itself and for oauth4webapi (`clientAuthOf`).
 */
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import * as oauth from 'oauth4webapi';
import { OAuthError, type ClientKey, type IdpConfig } from './types.js';

/** RFC 7523 §2.2: the client_assertion_type of a JWT client assertion. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** How long an assertion is good for, in seconds: one request's round trip, with room for clock skew. */
export const ASSERTION_LIFETIME_S = 60;

/** The stored form of `keys` (parseClientKeys reads it back). */
export function serializeClientKeys(keys: readonly ClientKey[]): string {
  return JSON.stringify({ keys });
}

/** A signed client assertion for `clientId`, addressed to `audience`, made with `key`. */
export async function clientAssertion(clientId: string, audience: string, key: ClientKey, now = Date.now()): Promise<string> {
  const iat = Math.floor(now / 1000);
  const signingKey = await importJWK(key, key.alg);
  return new SignJWT({})
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(audience)
    .setJti(randomUUID())
    .setIssuedAt(iat)
    .setExpirationTime(iat + ASSERTION_LIFETIME_S)
    .sign(signingKey);
}

/**
 * The form parameters that authenticate the client of `cfg` in one request
 * to `audience` (the token endpoint URL): client_id and a fresh assertion
 * signed with its first client key, client_id and its secret, or client_id
 * alone. The token poll (device-flow.ts) sends these itself; clientAuthOf
 * hands the same to oauth4webapi.
 */
export async function clientAuthParams(cfg: IdpConfig, audience: string | undefined): Promise<Array<[string, string]>> {
  if (cfg.clientAuth === 'private_key_jwt') {
    const key = signingKeyOf(cfg);
    if (!audience) throw new OAuthError('not_configured', 'private_key_jwt needs the token endpoint URL, the audience of client assertions');
    return [
      ['client_id', cfg.clientId],
      ['client_assertion_type', JWT_BEARER_ASSERTION_TYPE],
      ['client_assertion', await clientAssertion(cfg.clientId, audience, key)],
    ];
  }
  // with client_secret_basic the header names the client (clientAuthHeader), and the body does not again
  if (cfg.clientAuth === 'client_secret_basic' && cfg.clientSecret) return [];
  return cfg.clientSecret ? [['client_id', cfg.clientId], ['client_secret', cfg.clientSecret]] : [['client_id', cfg.clientId]];
}

/** RFC 6749 §2.3.1: a client ID or secret as it goes into the Basic credentials, form-encoded first (Appendix B). */
const formEncoded = (v: string): string => new URLSearchParams([['', v]]).toString().slice(1);

/**
 * The Authorization header of a request by the client of `cfg`
 * (client_secret_basic: `Basic` and base64 of the form-encoded client ID,
 * a colon and the form-encoded secret), or undefined when it sends none.
 */
export function clientAuthHeader(cfg: IdpConfig): string | undefined {
  if (cfg.clientAuth !== 'client_secret_basic' || !cfg.clientSecret) return undefined;
  return `Basic ${Buffer.from(`${formEncoded(cfg.clientId)}:${formEncoded(cfg.clientSecret)}`).toString('base64')}`;
}

function signingKeyOf(cfg: IdpConfig): ClientKey {
  const key = cfg.clientKeys?.[0];
  if (!key) throw new OAuthError('not_configured', 'the IdP reference uses private_key_jwt and has no client key');
  return key;
}

/** The client authentication of `cfg` for oauth4webapi: its first client key's assertion, its secret, or none (clientAuthParams). */
export function clientAuthOf(cfg: IdpConfig): oauth.ClientAuth {
  if (cfg.clientAuth === 'private_key_jwt') signingKeyOf(cfg); // a reference without a key is refused before any request
  return async (as, _client, body, headers) => {
    for (const [name, value] of await clientAuthParams(cfg, as.token_endpoint)) body.set(name, value);
    const authorization = clientAuthHeader(cfg);
    if (authorization) headers.set('authorization', authorization);
  };
}

/**
 * Runs `request` with `cfg`'s signing key, and again with each older key in
 * turn while the IdP answers invalid_client (during a rollover the IdP may
 * not know the new key yet). `accepted` learns the `kid` of the key the IdP
 * took; the last refusal is thrown. A reference without client keys runs
 * `request` once, as it is.
 */
export async function withClientKeys<T>(cfg: IdpConfig, request: (cfg: IdpConfig) => Promise<T>, accepted?: (kid: string) => void): Promise<T> {
  const keys = cfg.clientAuth === 'private_key_jwt' ? (cfg.clientKeys ?? []) : [];
  if (keys.length === 0) return request(cfg);
  for (let i = 0; ; i++) {
    try {
      const r = await request({ ...cfg, clientKeys: keys.slice(i) });
      accepted?.(keys[i]!.kid);
      return r;
    } catch (e) {
      if (!(e instanceof OAuthError) || e.code !== 'invalid_client' || i === keys.length - 1) throw e;
    }
  }
}
