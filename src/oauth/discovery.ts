/**
 * OpenID Connect Discovery 1.0 §4 for an IdP reference: the configuration
 * document at `<issuer>/.well-known/openid-configuration` (or, for an
 * issuer without one, its OAuth 2.0 authorization server metadata, RFC
 * 8414), whose `issuer` must equal the configured issuer URL (§4.3), fills
 * the endpoints the administrator did not give. Documents are cached per issuer for an hour.
 * A login's discovery that failed is remembered for DISCOVERY_FAILURE_TTL_MS
 * (a few hundred issuers at most): until then the logins of that issuer are
 * told the same failure without asking again, so the pending flows of a
 * reference whose IdP has no discovery document do not each make a
 * discovery request at every answer; the discovery idp-add runs always
 * asks. Logins discovering one issuer at once share one request. Every
 * endpoint, configured or discovered, must be https:// (docs/device-flow.md).
 * The caches belong to the IdP client (client.ts) the caller passes.
 */
import * as oauth from 'oauth4webapi';
import type { IdpClient } from './client.js';
import { codedError, foreign } from './errors.js';
import { assertHttpsUrl, type FetchLike } from './http.js';
import { ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export const DISCOVERY_TTL_MS = 3600_000;
/** How long a login's failed discovery of an issuer is remembered. */
export const DISCOVERY_FAILURE_TTL_MS = 30_000;
/** Issuers whose failed discovery is remembered at most; past it the one remembered longest goes first. */
export const DISCOVERY_FAILURES_MAX = 256;
/** The deadline of each request oauth4webapi makes (the HTTPS client's own is shorter, http.ts). */
export const REQUEST_TIMEOUT_MS = 15_000;

/** Options oauth4webapi takes for every request: our fetch and a deadline. */
export function requestOptions(fetch: FetchLike) {
  return { [oauth.customFetch]: fetch as unknown as typeof globalThis.fetch, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) };
}

export function discoveryRequest(issuerUrl: string, fetch: FetchLike): Promise<Response> {
  return oauth.discoveryRequest(assertHttpsUrl(issuerUrl, 'Issuer URL'), { algorithm: 'oidc', ...requestOptions(fetch) });
}

/** `<issuer>/.well-known/openid-configuration` (OpenID Connect Discovery 1.0 §4.1). */
export function oidcDiscoveryUrl(issuerUrl: string): string {
  return `${issuerUrl.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * Where an issuer's OAuth 2.0 authorization server metadata (RFC 8414) may
 * be, besides the OIDC document: after the issuer's path, as Okta's custom
 * authorization servers publish it (`https://host/oauth2/default/.well-known/oauth-authorization-server`),
 * and before it, as RFC 8414 §3.1 places it
 * (`https://host/.well-known/oauth-authorization-server/oauth2/default`);
 * one URL for an issuer without a path.
 */
export function oauthMetadataUrls(issuerUrl: string): string[] {
  const url = new URL(issuerUrl);
  const path = url.pathname.replace(/\/+$/, '');
  const appended = `${url.origin}${path}/.well-known/oauth-authorization-server`;
  const inserted = `${url.origin}/.well-known/oauth-authorization-server${path}`;
  return appended === inserted ? [appended] : [appended, inserted];
}

/**
 * The issuer's metadata document and the URL that answered it: the OIDC
 * discovery document, or, when the issuer has none (an answer of 4xx other
 * than 429), its RFC 8414 metadata (oauthMetadataUrls), which some IdPs
 * publish alone; the document must name the issuer all the same
 * (processDiscoveryResponse). When no document is found, the OIDC
 * document's answer and URL.
 */
export async function discoveryDocument(issuerUrl: string, fetch: FetchLike): Promise<{ response: Response; url: string }> {
  const oidc = await discoveryRequest(issuerUrl, fetch);
  const url = oidcDiscoveryUrl(issuerUrl);
  if (oidc.status < 400 || oidc.status > 499 || oidc.status === 429) return { response: oidc, url };
  for (const other of oauthMetadataUrls(issuerUrl)) {
    let r: Response;
    try {
      r = await fetch(other, { headers: { accept: 'application/json' }, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch {
      continue; // the OIDC document's answer says what is missing
    }
    if (r.status === 200) {
      await oidc.body?.cancel().catch(() => {});
      return { response: r, url: other };
    }
    await r.body?.cancel().catch(() => {});
  }
  return { response: oidc, url };
}

/** Validates the document: JSON object, issuer equal to the configured one, https endpoints. */
export async function processDiscoveryResponse(issuerUrl: string, response: Response): Promise<oauth.AuthorizationServer> {
  if (response.status !== 200) {
    await response.body?.cancel().catch(() => {});
    throw new OAuthError('discovery_failed', `OIDC discovery at ${issuerUrl}: answered HTTP ${response.status} instead of a discovery document (is the issuer URL right?)`);
  }
  let as: oauth.AuthorizationServer;
  try {
    as = await oauth.processDiscoveryResponse(new URL(issuerUrl), response);
  } catch (e) {
    if (e instanceof oauth.OperationProcessingError && e.code === oauth.JSON_ATTRIBUTE_COMPARISON) {
      const named = (e.cause as { body?: { issuer?: unknown } } | undefined)?.body?.issuer;
      const which = typeof named === 'string' ? `names issuer ${foreign(named, [])}, which ID tokens carry in iss: give exactly that as the issuer URL` : 'names another issuer';
      throw new OAuthError('issuer_mismatch', `Issuer does not match: the discovery document at ${issuerUrl} ${which}`);
    }
    const coded = codedError(e, `OIDC discovery at ${issuerUrl}`, []);
    throw coded.code === 'idp_unreachable' ? coded : new OAuthError('discovery_failed', coded.message);
  }
  for (const k of ['device_authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri', 'authorization_endpoint'] as const) {
    const v = as[k];
    if (v !== undefined) assertHttpsUrl(v, `discovered ${k}`);
  }
  return as;
}

/** The discovery document of `issuerUrl`, cached by `idp` for DISCOVERY_TTL_MS. */
export async function discover(issuerUrl: string, idp: IdpClient, now = Date.now()): Promise<oauth.AuthorizationServer> {
  const hit = idp.discovery.get(issuerUrl);
  if (hit && hit.expires > now) return hit.as;
  let response: Response;
  try {
    ({ response } = await discoveryDocument(issuerUrl, idp.fetch));
  } catch (e) {
    const coded = codedError(e, `OIDC discovery at ${issuerUrl}`, []);
    throw coded.code === 'insecure_endpoint' ? coded : new OAuthError('discovery_failed', coded.message);
  }
  const as = await processDiscoveryResponse(issuerUrl, response);
  rememberDiscovered(idp, issuerUrl, as, now);
  return as;
}

/**
 * A document just read at `issuerUrl` (by discover() or by idp-check, which
 * always asks): kept for the logins, and a failure remembered for them
 * ends, so a fixed IdP serves logins as soon as it has been asked.
 */
export function rememberDiscovered(idp: IdpClient, issuerUrl: string, as: oauth.AuthorizationServer, now = Date.now()): void {
  idp.discovery.set(issuerUrl, { as, expires: now + DISCOVERY_TTL_MS });
  idp.discoveryFailures.delete(issuerUrl);
}

/**
 * discover() for a login: a failure of the last DISCOVERY_FAILURE_TTL_MS
 * is thrown again (a new error of the same code and message) without a
 * request, and logins that discover one issuer at the same time share one.
 */
async function discoverForLogin(issuerUrl: string, idp: IdpClient): Promise<oauth.AuthorizationServer> {
  const now = Date.now();
  const hit = idp.discovery.get(issuerUrl);
  if (hit && hit.expires > now) return hit.as;
  const failed = idp.discoveryFailures.get(issuerUrl);
  if (failed && failed.expires > now) throw new OAuthError(failed.code, failed.message);
  let running = idp.discoveryInFlight.get(issuerUrl);
  if (!running) {
    running = discover(issuerUrl, idp, now).then(
      (as) => {
        idp.discoveryInFlight.delete(issuerUrl);
        return as;
      },
      (e: unknown) => {
        idp.discoveryInFlight.delete(issuerUrl);
        if (e instanceof OAuthError) rememberFailure(idp, issuerUrl, e, Date.now());
        throw e;
      },
    );
    idp.discoveryInFlight.set(issuerUrl, running);
  }
  return running;
}

function rememberFailure(idp: IdpClient, issuerUrl: string, e: OAuthError, now: number): void {
  const failures = idp.discoveryFailures;
  failures.delete(issuerUrl);
  for (const [k, f] of failures) {
    if (f.expires > now && failures.size < DISCOVERY_FAILURES_MAX) break;
    failures.delete(k); // expired, or remembered longest when full
  }
  failures.set(issuerUrl, { code: e.code, message: e.message, expires: now + DISCOVERY_FAILURE_TTL_MS });
}

export type Endpoint = 'device' | 'token' | 'userinfo' | 'jwks';

/**
 * The authorization server as configured, completed by discovery when an
 * issuer is set and something is missing. Discovery failures only matter
 * when a `required` endpoint is still missing afterwards.
 */
export async function authorizationServer(cfg: IdpConfig, idp: IdpClient, required: readonly Endpoint[] = ['device', 'token']): Promise<oauth.AuthorizationServer> {
  const made = Object.isFrozen(cfg) ? madeFor.get(cfg) : undefined;
  if (!made) {
    const configured: Array<[string | undefined, string]> = [
      [cfg.authUri, 'Authorization URI'],
      [cfg.devAuthUri, 'Device authorization URI'],
      [cfg.tokenUri, 'Token URI'],
      [cfg.userinfoUri, 'User info URI'],
      [cfg.keysUri, 'JWKS endpoint'],
      [cfg.issuerUrl, 'Issuer URL'],
    ];
    for (const [v, label] of configured) if (v) assertHttpsUrl(v, `${label} of IdP reference ${cfg.name}`);
  }

  let discovered: oauth.AuthorizationServer | undefined;
  let discoveryError: OAuthError | undefined;
  const gaps = !cfg.tokenUri || !(cfg.devAuthUri ?? cfg.authUri) || !cfg.keysUri || !cfg.userinfoUri;
  if (cfg.issuerUrl && gaps) {
    try {
      discovered = await discoverForLogin(cfg.issuerUrl, idp);
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      discoveryError = e;
    }
  }
  // the one this frozen reference made from the same discovered document, if any: its endpoints are the ones below
  const again = made && !discoveryError && made.discovered === discovered ? made.as : undefined;
  const endpoints = again
    ? { device: again.device_authorization_endpoint, token: again.token_endpoint, userinfo: again.userinfo_endpoint, jwks: again.jwks_uri }
    : {
        device: cfg.devAuthUri ?? cfg.authUri ?? discovered?.device_authorization_endpoint,
        token: cfg.tokenUri ?? discovered?.token_endpoint,
        // UserInfo is called only when configured or when discovery filled it
        userinfo: cfg.userinfoUri ?? discovered?.userinfo_endpoint,
        jwks: cfg.keysUri ?? discovered?.jwks_uri,
      };
  for (const need of required) {
    if (endpoints[need]) continue;
    if (discoveryError && discoveryError.code !== 'discovery_failed') throw discoveryError;
    throw new OAuthError(discoveryError ? 'discovery_failed' : 'not_configured', `IdP reference ${cfg.name} has no ${need} endpoint${discoveryError ? ` (${discoveryError.message})` : ''}`);
  }
  if (again) return again;
  const authorization = cfg.authUri ?? discovered?.authorization_endpoint;
  const as: oauth.AuthorizationServer = {
    // what oauth4webapi accepts in an ID token's alg: without this member it
    // expects RS256 only; never more than our allow-list, whatever the IdP says
    id_token_signing_alg_values_supported: idTokenAlgorithms(discovered?.id_token_signing_alg_values_supported),
    issuer: cfg.issuerUrl ?? new URL(endpoints.token ?? endpoints.device ?? endpoints.userinfo ?? 'https://unknown.invalid').origin,
    ...(authorization ? { authorization_endpoint: authorization } : {}),
    ...(endpoints.device ? { device_authorization_endpoint: endpoints.device } : {}),
    ...(endpoints.token ? { token_endpoint: endpoints.token } : {}),
    ...(endpoints.userinfo ? { userinfo_endpoint: endpoints.userinfo } : {}),
    ...(endpoints.jwks ? { jwks_uri: endpoints.jwks } : {}),
  };
  // what a cached reference (frozen, kdc/idp-preauth.ts) makes is made again only once the discovered document changes
  if (Object.isFrozen(cfg) && !discoveryError) madeFor.set(cfg, { discovered, as: Object.freeze(as) });
  return as;
}

/**
 * The authorization server each frozen IdP reference made last, with the
 * discovered document it was made from (undefined when none): the answers
 * of a reference's pending flows use one, where each answer checked every
 * configured URL again and made two of them.
 */
const madeFor = new WeakMap<IdpConfig, { discovered: oauth.AuthorizationServer | undefined; as: oauth.AuthorizationServer }>();

/** Our allow-list, narrowed to what discovery says the IdP signs with (when it says so). */
function idTokenAlgorithms(advertised: unknown): string[] {
  const ours: readonly string[] = ID_TOKEN_ALGORITHMS;
  if (!Array.isArray(advertised)) return [...ours];
  return ours.filter((alg) => advertised.includes(alg));
}
