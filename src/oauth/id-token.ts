/**
 * ID-token validation (OpenID Connect Core §3.1.3.7; docs/device-flow.md),
 * the one place where ID tokens are checked. `checkIdTokenClaims` judges what
 * a token says without its signature: the algorithm against an allow-list
 * of asymmetric algorithms (never `none` or HMAC), no header naming or
 * carrying its own key (`jwk`, `jku`, `x5u`), `iss` equal to the configured
 * issuer (or the other spelling its provider documents: Google's
 * `accounts.google.com`), `aud` containing the client id (and `azp` equal to it when
 * present, required with several audiences), `exp`, `nbf` and `iat` (not in
 * the future) with 60 s of tolerance, `sub` a non-empty string. The token
 * poll runs it on the token endpoint's answer (device-flow.ts);
 * `validateIdToken` runs it and then verifies the signature with jose
 * through the JWKS endpoint (the IdP client's key sets, key-sets.ts: kept
 * per URL, fetched again on an unknown key id at most every few seconds).
 * A token without a kid (the header parameter is optional) is tried with
 * every key of the set it fits, and when none verifies it the set is
 * fetched again once, as for an unknown kid.
 * Each refusal names its reason; a token refused for its algorithm while
 * the IdP's key set cannot be fetched is refused for the key set
 * (keySetFirst), which is what to mend.
 */
import { decodeJwt, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey, type JWTVerifyOptions, type ProtectedHeaderParameters } from 'jose';
import type { IdpClient } from './client.js';
import { authorizationServer } from './discovery.js';
import { foreign } from './errors.js';
import { AlgorithmRefused, algorithmRefused, CLOCK_TOLERANCE_S, ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export { ID_TOKEN_ALGORITHMS } from './types.js';

/**
 * Another spelling of an issuer that its provider documents as the same
 * issuer in ID tokens: Google's `iss` is `https://accounts.google.com` or
 * `accounts.google.com`.
 */
const SAME_ISSUER: Readonly<Record<string, string>> = { 'https://accounts.google.com': 'accounts.google.com' };

/** The `iss` values an ID token of the issuer `issuerUrl` may carry: it, and its documented other spelling. */
export function issuersOf(issuerUrl: string): string[] {
  return Object.hasOwn(SAME_ISSUER, issuerUrl) ? [issuerUrl, SAME_ISSUER[issuerUrl]!] : [issuerUrl];
}

/** Header parameters that name or carry a key of the token's own choosing: keys come only from the IdP's JWKS. */
const KEY_HEADERS = ['jwk', 'jku', 'x5u'] as const;

const rejected = (why: string) => new OAuthError('invalid_id_token', `ID token rejected: ${why}`);
const shown = (v: unknown) => foreign(JSON.stringify(v) ?? String(v), []).slice(0, 80);

/** What a claim that should be a string is instead, in words. */
export function kindOf(v: unknown): string {
  return Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`;
}

/** The header and the claims of `idToken`, not verified. */
export function decodeIdToken(idToken: string): { header: ProtectedHeaderParameters; claims: JWTPayload } {
  try {
    return { header: decodeProtectedHeader(idToken), claims: decodeJwt(idToken) };
  } catch {
    throw rejected('not a signed JWT');
  }
}

/**
 * Everything about an ID token but its signature; throws the refusal.
 * `algorithms`: the accepted ones (default ID_TOKEN_ALGORITHMS; never more).
 */
export function checkIdTokenClaims(cfg: IdpConfig, header: ProtectedHeaderParameters, claims: JWTPayload, opts: { now?: number; algorithms?: readonly string[] } = {}): void {
  // refused before any key is looked up: `none` and HMAC never verify an IdP
  const allowed = (opts.algorithms ?? ID_TOKEN_ALGORITHMS).filter((a) => (ID_TOKEN_ALGORITHMS as readonly string[]).includes(a));
  if (!allowed.includes(header.alg as string)) throw algorithmRefused(header.alg);
  for (const h of KEY_HEADERS) if (header[h] !== undefined) throw rejected(`header parameter "${h}" refused (keys come only from the IdP's JWKS)`);

  if (cfg.issuerUrl && !issuersOf(cfg.issuerUrl).includes(claims.iss as string)) {
    throw new OAuthError('issuer_mismatch', `Issuer does not match: ID token from ${typeof claims.iss === 'string' ? foreign(claims.iss, []) : 'no issuer'}, expected ${cfg.issuerUrl}`);
  }
  const aud = claims.aud;
  const audiences = typeof aud === 'string' ? [aud] : Array.isArray(aud) && aud.every((a) => typeof a === 'string') ? aud : undefined;
  if (!audiences) throw rejected(aud === undefined ? 'no aud claim' : 'the aud claim is not a string or a list of strings');
  if (!audiences.includes(cfg.clientId)) throw rejected(`aud ${shown(aud)} does not name our client id`);
  // another audience may use the token too: only the authorized party may present it (OIDC Core §3.1.3.7 items 4–5)
  if (audiences.length > 1 && claims.azp === undefined) throw rejected('several audiences and no azp claim');
  if (claims.azp !== undefined && claims.azp !== cfg.clientId) throw rejected(`azp ${shown(claims.azp)} is not our client id`);

  const nowS = (opts.now ?? Date.now()) / 1000;
  const time = (name: 'exp' | 'nbf' | 'iat', required: boolean): number | undefined => {
    const v = claims[name];
    if (v === undefined && !required) return undefined;
    if (typeof v !== 'number' || !Number.isFinite(v)) throw rejected(v === undefined ? `no ${name} claim` : `the ${name} claim is not a number`);
    return v;
  };
  const exp = time('exp', true)!;
  const nbf = time('nbf', false);
  const iat = time('iat', true)!;
  if (exp <= nowS - CLOCK_TOLERANCE_S) throw rejected(`expired (exp ${Math.round(nowS - exp)} s ago)`);
  if (nbf !== undefined && nbf > nowS + CLOCK_TOLERANCE_S) throw rejected(`not yet valid (nbf ${Math.round(nbf - nowS)} s ahead)`);
  if (iat > nowS + CLOCK_TOLERANCE_S) throw rejected(`issued in the future (iat ${Math.round(iat - nowS)} s ahead)`);
  if (claims.auth_time !== undefined && typeof claims.auth_time !== 'number') throw rejected('the auth_time claim is not a number');

  if (claims.sub === undefined) throw rejected('no sub claim');
  if (typeof claims.sub !== 'string') throw rejected(`the sub claim is not a string (${kindOf(claims.sub)})`);
  if (claims.sub === '') throw rejected('the sub claim is empty');
}

/**
 * The claims of `idToken` verified with the key `keys` selects. A token
 * without a kid that several keys of the set fit (two RSA keys during a
 * rollover, say) is verified with each in turn until one verifies it;
 * none doing so is a signature that does not verify.
 */
async function verifiedBy(idToken: string, keys: JWTVerifyGetKey, options: JWTVerifyOptions): Promise<JWTPayload> {
  try {
    return (await jwtVerify(idToken, keys, options)).payload;
  } catch (e) {
    if (!(e instanceof errors.JWKSMultipleMatchingKeys)) throw e;
    for await (const key of e) {
      try {
        return (await jwtVerify(idToken, key, options)).payload;
      } catch (x) {
        if (!(x instanceof errors.JWSSignatureVerificationFailed)) throw x;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}

/**
 * What to tell of `e`, a refusal of an ID token: when it was refused for
 * its algorithm (`none`, HMAC) and the IdP's key set at `jwksUri` cannot be
 * fetched, that failure (`jwks_unreachable`, naming the key set): an IdP
 * with no key set to publish signs with what it has (glewlwyd without a
 * signing key: HMAC with the client secret), and its keys are what to mend.
 * Anything else, or a key set that can be read, leaves `e` as it is.
 */
export async function keySetFirst(e: unknown, jwksUri: string | undefined, idp: IdpClient): Promise<unknown> {
  if (!(e instanceof AlgorithmRefused) || jwksUri === undefined) return e;
  try {
    await idp.keySets.readable(jwksUri, idp.fetch);
  } catch (k) {
    if (k instanceof OAuthError && k.code === 'jwks_unreachable') return k;
  }
  return e;
}

/** The verified claims of `idToken`. */
export async function validateIdToken(cfg: IdpConfig, idToken: string, idp: IdpClient, opts: { jwksUri?: string; now?: number; algorithms?: readonly string[] } = {}): Promise<JWTPayload> {
  const { header, claims } = decodeIdToken(idToken);
  const keysAt = async () => opts.jwksUri ?? cfg.keysUri ?? (await authorizationServer(cfg, idp, ['jwks'])).jwks_uri!;
  try {
    checkIdTokenClaims(cfg, header, claims, opts);
  } catch (e) {
    throw await keySetFirst(e, await keysAt().catch(() => undefined), idp);
  }
  const jwksUri = await keysAt();
  // the claims were judged above; jose's own checks of them stay as a second look
  const options: JWTVerifyOptions = {
    algorithms: [header.alg as string],
    audience: cfg.clientId,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ['iss', 'sub', 'aud', 'exp', 'iat'],
    ...(cfg.issuerUrl ? { issuer: issuersOf(cfg.issuerUrl) } : {}),
    ...(opts.now !== undefined ? { currentDate: new Date(opts.now) } : {}),
  };
  try {
    const keys = idp.keySets.lookup(jwksUri, idp.fetch);
    try {
      return await verifiedBy(idToken, keys, options);
    } catch (e) {
      // a token without a kid names no key a rotation could have taken away: the set is read again, once
      if (header.kid !== undefined || !(e instanceof errors.JWSSignatureVerificationFailed)) throw e;
      await idp.keySets.reload(jwksUri, idp.fetch);
      return await verifiedBy(idToken, keys, options);
    }
  } catch (e) {
    if (e instanceof OAuthError) throw e;
    if (e instanceof errors.JWKSNoMatchingKey) {
      throw rejected(header.kid === undefined ? "no key in the IdP's JWKS fits it (no kid)" : `unknown kid ${shown(header.kid)} (not in the IdP's JWKS)`);
    }
    if (e instanceof errors.JOSEError) throw rejected(foreign(e.message, [idToken]));
    throw rejected('unreadable');
  }
}
