/**
 * ID-token validation (specification §5.4) with jose: the signature through
 * the JWKS endpoint (cached, refetched on an unknown key id), `iss` equal to
 * the configured issuer, `aud` containing the client id, `exp` and `nbf`,
 * and an allow-list of asymmetric algorithms. Then the user identifier:
 * the claim named by --idp-user-id (default sub), from the ID token merged
 * with UserInfo when a UserInfo endpoint is configured.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import type { AuthorizationServer, TokenEndpointResponse } from 'oauth4webapi';
import type { FetchLike } from './http.js';
import { OAuthError, type IdpConfig } from './types.js';

const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];
const jwksCache = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

export async function validateIdToken(cfg: IdpConfig, as: AuthorizationServer, idToken: string, fetch: FetchLike): Promise<JWTPayload> {
  if (!as.jwks_uri) throw new OAuthError('invalid_id_token', `IdP reference ${cfg.name} has no JWKS endpoint to verify ID tokens`);
  let jwks = jwksCache.get(as.jwks_uri);
  if (!jwks) {
    jwks = createRemoteJWKSet(new URL(as.jwks_uri), { [customFetch]: fetch as never, timeoutDuration: 10_000, cooldownDuration: 30_000 });
    jwksCache.set(as.jwks_uri, jwks);
  }
  try {
    const { payload } = await jwtVerify(idToken, jwks, {
      algorithms: ALGORITHMS,
      audience: cfg.clientId,
      clockTolerance: 60,
      ...(cfg.issuerUrl ? { issuer: cfg.issuerUrl } : {}),
    });
    return payload;
  } catch (e) {
    if (e instanceof errors.JWTClaimValidationFailed && e.claim === 'iss') throw new OAuthError('issuer_mismatch', `Issuer does not match: ID token from ${String(e.payload.iss ?? '?').slice(0, 200)}, expected ${cfg.issuerUrl}`);
    if (e instanceof errors.JOSEError && (e.code === 'ERR_JWKS_TIMEOUT' || e.code === 'ERR_JWKS_INVALID')) throw new OAuthError('jwks_unreachable', `Unable to fetch keys from ${as.jwks_uri}`);
    if (!(e instanceof errors.JOSEError)) throw new OAuthError('jwks_unreachable', `Unable to fetch keys from ${as.jwks_uri}`);
    throw new OAuthError('invalid_id_token', `ID token rejected: ${e.message}`);
  }
}

async function userinfo(as: AuthorizationServer, accessToken: string, fetch: FetchLike): Promise<Record<string, unknown>> {
  const r = await fetch(as.userinfo_endpoint!, { headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' } });
  if (r.status !== 200) throw new OAuthError('idp_bad_response', `UserInfo answered HTTP ${r.status}`);
  const body = (await r.json()) as unknown;
  if (!body || typeof body !== 'object') throw new OAuthError('idp_bad_response', 'UserInfo did not return a JSON object');
  return body as Record<string, unknown>;
}

/** The value identifying the user at the IdP, from validated tokens. */
export async function resolveUserIdentifier(cfg: IdpConfig, as: AuthorizationServer, tokens: TokenEndpointResponse, fetch: FetchLike): Promise<string> {
  const attr = cfg.idpUserIdAttr || 'sub';
  let claims: Record<string, unknown> = {};
  if (tokens.id_token) claims = { ...(await validateIdToken(cfg, as, tokens.id_token, fetch)) };
  if (as.userinfo_endpoint && tokens.access_token) {
    const info = await userinfo(as, tokens.access_token, fetch);
    if (claims.sub !== undefined && info.sub !== undefined && info.sub !== claims.sub) throw new OAuthError('invalid_id_token', 'UserInfo sub differs from the ID token');
    claims = { ...info, ...claims };
  } else if (!tokens.id_token) {
    throw new OAuthError('invalid_id_token', `IdP reference ${cfg.name} returned no ID token and has no UserInfo endpoint`);
  }
  const v = claims[attr];
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number') return String(v);
  throw new OAuthError('user_id_missing', `the IdP's answer has no '${attr}' claim`);
}
