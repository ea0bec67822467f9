/**
 * ID-token validation (OpenID Connect Core §3.1.3.7; docs/device-flow.md)
 * with jose: the signature through the JWKS endpoint (the IdP client's key
 * sets, key-sets.ts: kept per URL, fetched again on an unknown key id at
 * most every few seconds), `iss` equal to the configured issuer,
 * `aud` containing the client id (and `azp` equal to it when present with
 * several audiences), `exp`, `nbf` and `iat` (not in the future) with 60 s
 * of tolerance, and an allow-list of asymmetric algorithms (never `none`
 * or HMAC).
 */
import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from 'jose';
import type { IdpClient } from './client.js';
import { CLOCK_TOLERANCE_S } from './device-flow.js';
import { authorizationServer } from './discovery.js';
import { foreign } from './errors.js';
import { algorithmRefused, ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export { ID_TOKEN_ALGORITHMS } from './types.js';

/** The verified claims of `idToken`. */
export async function validateIdToken(cfg: IdpConfig, idToken: string, idp: IdpClient, opts: { jwksUri?: string; now?: number } = {}): Promise<JWTPayload> {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(idToken).alg;
  } catch {
    throw new OAuthError('invalid_id_token', 'ID token rejected: not a signed JWT');
  }
  // refused before any key is looked up: `none` and HMAC never verify an IdP
  if (!(ID_TOKEN_ALGORITHMS as readonly unknown[]).includes(alg)) throw algorithmRefused(alg);
  const jwksUri = opts.jwksUri ?? cfg.keysUri ?? (await authorizationServer(cfg, idp, ['jwks'])).jwks_uri!;
  try {
    const { payload } = await jwtVerify(idToken, idp.keySets.lookup(jwksUri, idp.fetch), {
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
