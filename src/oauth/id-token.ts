/**
 * ID-token validation (OpenID Connect Core §3.1.3.7, specification §5.4)
 * with jose: the signature through the JWKS endpoint (cached per URL,
 * refetched on an unknown key id at most every few seconds), `iss` equal to the configured issuer,
 * `aud` containing the client id (and `azp` equal to it when present with
 * several audiences), `exp`, `nbf` and `iat` (not in the future) with 60 s
 * of tolerance, and an allow-list of asymmetric algorithms (never `none`
 * or HMAC).
 */
import { createLocalJWKSet, decodeProtectedHeader, errors, jwtVerify, type FlattenedJWSInput, type JSONWebKeySet, type JWTHeaderParameters, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { CLOCK_TOLERANCE_S } from './device-flow.js';
import { authorizationServer } from './discovery.js';
import { foreign } from './errors.js';
import { assertHttpsUrl, type FetchLike } from './http.js';
import { algorithmRefused, ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export { ID_TOKEN_ALGORITHMS } from './types.js';

/** Least time between two fetches of one JWKS URL (an unknown kid inside it waits for its end). */
export const JWKS_REFETCH_INTERVAL_MS = 3_000;
/** Keys older than this are fetched again before use (jose's default cache age). */
export const JWKS_MAX_AGE_MS = 600_000;
/** How many JWKS URLs keep a key set; the least recently used one goes first. */
export const JWKS_CACHE_MAX = 64;
const JWKS_TIMEOUT_MS = 10_000;

/**
 * The keys published at one JWKS URL. An unknown kid fetches the set again
 * at once, unless the last fetch began less than JWKS_REFETCH_INTERVAL_MS
 * ago: then it waits for the end of that window and fetches (concurrent
 * lookups share one fetch). Only a fetch failure is `jwks_unreachable`.
 */
class RemoteKeySet {
  private local: ReturnType<typeof createLocalJWKSet> | undefined;
  private loadedAt = -Infinity;
  private lastAttempt = -Infinity;
  private inflight: Promise<void> | undefined;

  constructor(private readonly url: URL) {}

  async getKey(header: JWTHeaderParameters, token: FlattenedJWSInput, fetch: FetchLike): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    if (!this.local) await this.load(fetch);
    else if (Date.now() - this.loadedAt > JWKS_MAX_AGE_MS) await this.load(fetch).catch(() => {}); // stale keys still serve known kids
    try {
      return await this.local!(header, token);
    } catch (e) {
      if (!(e instanceof errors.JWKSNoMatchingKey)) throw e;
      // a kid we do not know yet: the IdP may have rotated its key since we fetched
      await this.load(fetch);
      return await this.local!(header, token);
    }
  }

  private load(fetch: FetchLike): Promise<void> {
    this.inflight ??= (async () => {
      const wait = this.lastAttempt + JWKS_REFETCH_INTERVAL_MS - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      this.lastAttempt = Date.now();
      this.local = createLocalJWKSet(await fetchJwks(this.url, fetch));
      this.loadedAt = Date.now();
    })().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }
}

async function fetchJwks(url: URL, fetch: FetchLike): Promise<JSONWebKeySet> {
  const unable = (why: string) => new OAuthError('jwks_unreachable', `Unable to fetch keys from ${url.href} (${why})`);
  let r: Response;
  try {
    r = await fetch(url, { headers: { accept: 'application/json, application/jwk-set+json' }, signal: AbortSignal.timeout(JWKS_TIMEOUT_MS) });
  } catch (e) {
    throw unable(e instanceof Error ? foreign(e.message, []) : 'no answer');
  }
  if (r.status !== 200) throw unable(`HTTP ${r.status}`);
  let body: unknown;
  try {
    body = await r.json();
  } catch {
    throw unable('not JSON');
  }
  if (!body || typeof body !== 'object' || !Array.isArray((body as { keys?: unknown }).keys)) throw unable('not a JSON Web Key Set');
  return body as JSONWebKeySet;
}

const keySets = new Map<string, RemoteKeySet>();

/** The key lookup for `jwksUri`, through a per-URL cache of at most JWKS_CACHE_MAX sets. */
function keySetOf(jwksUri: string, fetch: FetchLike): JWTVerifyGetKey {
  const url = assertHttpsUrl(jwksUri, 'JWKS endpoint');
  let set = keySets.get(url.href);
  if (set) keySets.delete(url.href);
  else set = new RemoteKeySet(url);
  keySets.set(url.href, set); // most recently used last
  for (const oldest of keySets.keys()) {
    if (keySets.size <= JWKS_CACHE_MAX) break;
    keySets.delete(oldest);
  }
  const s = set;
  return (header, token) => s.getKey(header, token, fetch);
}

/** Forgets every cached key set (tests). */
export function clearKeySetCache(): void {
  keySets.clear();
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
