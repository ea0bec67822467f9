/**
 * The keys an IdP publishes at its JWKS endpoint, kept per URL for ID-token
 * validation (id-token.ts). An unknown key id fetches the set again at
 * once, at most every few seconds per URL, and so does a token without a
 * kid that no key verified (id-token.ts); keys older than a few minutes are
 * fetched again before use. A KeySetCache belongs to one IdpClient
 * (client.ts), so two servers in one process keep their keys apart.
 */
import { createLocalJWKSet, errors, type FlattenedJWSInput, type JSONWebKeySet, type JWTHeaderParameters, type JWTVerifyGetKey } from 'jose';
import { certificateRefusal, foreign } from './errors.js';
import { assertHttpsUrl, type FetchLike } from './http.js';
import { OAuthError } from './types.js';

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

  /** Reads the set unless it was read within JWKS_MAX_AGE_MS (throws jwks_unreachable when it cannot be read). */
  async fresh(fetch: FetchLike): Promise<void> {
    if (this.local && Date.now() - this.loadedAt <= JWKS_MAX_AGE_MS) return;
    await this.load(fetch);
  }

  /** Fetches the set again (a fetch already running is joined; none begins within JWKS_REFETCH_INTERVAL_MS of the last). */
  load(fetch: FetchLike): Promise<void> {
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
    throw unable(certificateRefusal(e, []) ?? (e instanceof Error ? foreign(e.message, []) : 'no answer'));
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

/** Key sets by JWKS URL, at most JWKS_CACHE_MAX of them, the least recently used going first. */
export class KeySetCache {
  private readonly sets = new Map<string, RemoteKeySet>();

  /** The key lookup for `jwksUri` (an https:// URL), fetching through `fetch`. */
  lookup(jwksUri: string, fetch: FetchLike): JWTVerifyGetKey {
    const s = this.set(jwksUri);
    return (header, token) => s.getKey(header, token, fetch);
  }

  /**
   * Fetches the set at `jwksUri` again, at most every JWKS_REFETCH_INTERVAL_MS:
   * for a token without a kid that no key of the set verified (the IdP may
   * have rotated the key, and such a token names no key to miss).
   */
  reload(jwksUri: string, fetch: FetchLike): Promise<void> {
    return this.set(jwksUri).load(fetch);
  }

  /**
   * Reads the set at `jwksUri` unless it was read lately: whether the IdP
   * publishes keys at all (id-token.ts keySetFirst). Throws
   * `jwks_unreachable` when it cannot be read.
   */
  readable(jwksUri: string, fetch: FetchLike): Promise<void> {
    return this.set(jwksUri).fresh(fetch);
  }

  private set(jwksUri: string): RemoteKeySet {
    const url = assertHttpsUrl(jwksUri, 'JWKS endpoint');
    let set = this.sets.get(url.href);
    if (set) this.sets.delete(url.href);
    else set = new RemoteKeySet(url);
    this.sets.set(url.href, set); // most recently used last
    for (const oldest of this.sets.keys()) {
      if (this.sets.size <= JWKS_CACHE_MAX) break;
      this.sets.delete(oldest);
    }
    return set;
  }
}
