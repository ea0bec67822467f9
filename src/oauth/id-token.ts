/**
 * ID-token validation (OpenID Connect Core §3.1.3.7, specification §5.4)
 * with jose: the signature through the JWKS endpoint (cached per URL,
 * refetched on an unknown key id), `iss` equal to the configured issuer,
 * `aud` containing the client id (and `azp` equal to it when present with
 * several audiences), `exp`, `nbf` and `iat` (not in the future) with 60 s
 * of tolerance, and an allow-list of asymmetric algorithms (never `none`
 * or HMAC).
 */
import { createRemoteJWKSet, customFetch, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { AuthorizationServer, TokenEndpointResponse } from 'oauth4webapi';
import { CLOCK_TOLERANCE_S } from './device-flow.js';
import { authorizationServer } from './discovery.js';
import { foreign } from './errors.js';
import { assertHttpsUrl, type FetchLike } from './http.js';
import { algorithmRefused, ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export { ID_TOKEN_ALGORITHMS } from './types.js';

const keySets = new Map<string, JWTVerifyGetKey>();

/** Errors of a key lookup that say something about the token, not about the endpoint. */
const TOKEN_SIDE_KEY_ERRORS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_ALG_NOT_ALLOWED', 'ERR_JOSE_NOT_SUPPORTED']);

/** The remote key set of `jwksUri`; fetch failures become `jwks_unreachable`. */
function keySetOf(jwksUri: string, fetch: FetchLike): JWTVerifyGetKey {
  let set = keySets.get(jwksUri);
  if (!set) {
    const remote = createRemoteJWKSet(assertHttpsUrl(jwksUri, 'JWKS endpoint'), { [customFetch]: fetch as never, timeoutDuration: 10_000, cooldownDuration: 30_000 });
    set = async (header, token) => {
      try {
        return await remote(header, token);
      } catch (e) {
        if (e instanceof errors.JOSEError && TOKEN_SIDE_KEY_ERRORS.has(e.code)) throw e;
        throw new OAuthError('jwks_unreachable', `Unable to fetch keys from ${jwksUri}`);
      }
    };
    keySets.set(jwksUri, set);
  }
  return set;
}

/** The verified claims of `idToken`. */
export async function validateIdToken(cfg: IdpConfig, idToken: string, fetch: FetchLike, opts: { jwksUri?: string; now?: number } = {}): Promise<JWTPayload> {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(idToken).alg;
  } catch {
    throw new OAuthError('invalid_id_token', 'ID token rejected: not a signed JWT');
  }
  // refused before any key is looked up: `none` and HMAC never verify an IdP
  if (!(ID_TOKEN_ALGORITHMS as readonly unknown[]).includes(alg)) throw algorithmRefused(alg);
  const jwksUri = opts.jwksUri ?? cfg.keysUri ?? (await authorizationServer(cfg, fetch, ['jwks'])).jwks_uri!;
  try {
    const { payload } = await jwtVerify(idToken, keySetOf(jwksUri, fetch), {
      algorithms: [...ID_TOKEN_ALGORITHMS],
      audience: cfg.clientId,
      clockTolerance: CLOCK_TOLERANCE_S,
      requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
      ...(cfg.issuerUrl ? { issuer: cfg.issuerUrl } : {}),
      ...(opts.now !== undefined ? { currentDate: new Date(opts.now) } : {}),
    });
    const nowS = (opts.now ?? Date.now()) / 1000;
    if (typeof payload.iat !== 'number' || payload.iat > nowS + CLOCK_TOLERANCE_S) throw new OAuthError('invalid_id_token', 'ID token rejected: issued in the future');
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== undefined && payload.azp !== cfg.clientId) {
      throw new OAuthError('invalid_id_token', 'ID token rejected: azp is not our client id');
    }
    return payload;
  } catch (e) {
    if (e instanceof OAuthError) throw e;
    if (e instanceof errors.JWTClaimValidationFailed && e.claim === 'iss') {
      throw new OAuthError('issuer_mismatch', `Issuer does not match: ID token from ${foreign(String(e.payload.iss ?? '?'), [])}, expected ${cfg.issuerUrl}`);
    }
    if (e instanceof errors.JOSEError) throw new OAuthError('invalid_id_token', `ID token rejected: ${foreign(e.message, [idToken])}`);
    throw new OAuthError('invalid_id_token', 'ID token rejected');
  }
}

/**
 * @deprecated the KDC's former entry point; use `resolveUserIdentifier`
 * from identity.ts, which takes the endpoints as an option.
 */
export async function resolveUserIdentifier(cfg: IdpConfig, as: AuthorizationServer, tokens: TokenEndpointResponse, fetch: FetchLike): Promise<string> {
  const identity = await import('./identity.js');
  return identity.resolveUserIdentifier(cfg, tokens, fetch, { endpoints: as });
}
