/**
 * The OAuth 2.0 Device Authorization Grant (RFC 8628) for the KDC, with
 * oauth4webapi: discovery fills endpoints from --issuer-url (cached), one
 * call starts a device authorization, one call polls the token endpoint once
 * (the KDC decides when). Each step validates the answer and throws coded
 * OAuthErrors.
 */
import * as oauth from 'oauth4webapi';
import { IDP_ERROR_CODES, OAuthError, type IdpConfig, type OAuthErrorCode } from './types.js';
import type { FetchLike } from './http.js';

export interface DeviceAuthorization {
  deviceCode: string;
  userCode: string;
  verificationUri: string;
  verificationUriComplete?: string;
  /** epoch ms */
  expiresAt: number;
  /** seconds between polls */
  interval: number;
}

export type PollResult = { status: 'pending' } | { status: 'slow_down'; interval: number } | { status: 'done'; tokens: oauth.TokenEndpointResponse };

const discoveryCache = new Map<string, { as: oauth.AuthorizationServer; expires: number }>();
const DISCOVERY_TTL_MS = 3600_000;

function fetchOpts(fetch: FetchLike) {
  return { [oauth.customFetch]: fetch as unknown as typeof globalThis.fetch, signal: AbortSignal.timeout(15_000) };
}

/** The authorization server as configured, completed by OIDC discovery when an issuer is set. */
export async function authorizationServer(cfg: IdpConfig, fetch: FetchLike): Promise<oauth.AuthorizationServer> {
  let discovered: oauth.AuthorizationServer | undefined;
  const missing = !cfg.tokenUri || !(cfg.devAuthUri ?? cfg.authUri);
  if (cfg.issuerUrl && (missing || !cfg.keysUri)) {
    const hit = discoveryCache.get(cfg.issuerUrl);
    if (hit && hit.expires > Date.now()) discovered = hit.as;
    else {
      try {
        const issuer = new URL(cfg.issuerUrl);
        discovered = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...fetchOpts(fetch) }));
        discoveryCache.set(cfg.issuerUrl, { as: discovered, expires: Date.now() + DISCOVERY_TTL_MS });
      } catch (e) {
        if (missing) throw new OAuthError('discovery_failed', `OIDC discovery at ${cfg.issuerUrl} failed: ${e instanceof Error ? e.message : 'error'}`);
      }
    }
  }
  const device = cfg.devAuthUri ?? cfg.authUri ?? discovered?.device_authorization_endpoint;
  const token = cfg.tokenUri ?? discovered?.token_endpoint;
  if (!device || !token) throw new OAuthError('not_configured', `IdP reference ${cfg.name} has no device authorization or token endpoint`);
  const userinfo = cfg.userinfoUri ?? discovered?.userinfo_endpoint;
  const jwks = cfg.keysUri ?? discovered?.jwks_uri;
  return {
    issuer: cfg.issuerUrl ?? new URL(token).origin,
    device_authorization_endpoint: device,
    token_endpoint: token,
    ...(userinfo ? { userinfo_endpoint: userinfo } : {}),
    ...(jwks ? { jwks_uri: jwks } : {}),
  };
}

function clientOf(cfg: IdpConfig): [oauth.Client, oauth.ClientAuth] {
  return [{ client_id: cfg.clientId }, cfg.clientSecret ? oauth.ClientSecretBasic(cfg.clientSecret) : oauth.None()];
}

function coded(e: unknown, what: string): OAuthError {
  if (e instanceof OAuthError) return e;
  if (e instanceof oauth.ResponseBodyError) {
    const code = (IDP_ERROR_CODES.has(e.error) ? e.error : 'idp_bad_response') as OAuthErrorCode;
    return new OAuthError(code, `${what}: the IdP answered ${e.error}${e.error_description ? ` (${e.error_description.slice(0, 200)})` : ''}`);
  }
  if (e instanceof oauth.WWWAuthenticateChallengeError) {
    // a 401 with a challenge: the client authentication failed (RFC 6749 §5.2)
    const named = e.cause.map((c) => c.parameters.error).find((x): x is string => typeof x === 'string' && IDP_ERROR_CODES.has(x));
    return new OAuthError((named ?? 'invalid_client') as OAuthErrorCode, `${what}: the IdP answered ${named ?? 'invalid_client'} (HTTP ${e.status})`);
  }
  if (e instanceof oauth.OperationProcessingError || e instanceof oauth.UnsupportedOperationError) {
    const claim = (e as { cause?: { claim?: string } }).cause?.claim;
    if (claim === 'iss') return new OAuthError('issuer_mismatch', `Issuer does not match the configured issuer URL`);
    return new OAuthError('idp_bad_response', `${what}: ${e.message}`);
  }
  return new OAuthError('idp_unreachable', `${what}: the IdP could not be reached (${e instanceof Error ? e.message : 'error'})`);
}

export async function startDeviceAuthorization(cfg: IdpConfig, fetch: FetchLike): Promise<DeviceAuthorization> {
  const as = await authorizationServer(cfg, fetch);
  const [client, auth] = clientOf(cfg);
  try {
    const params: Record<string, string> = {};
    if (cfg.scope) params.scope = cfg.scope;
    const r = await oauth.processDeviceAuthorizationResponse(as, client, await oauth.deviceAuthorizationRequest(as, client, auth, params, fetchOpts(fetch)));
    return {
      deviceCode: r.device_code,
      userCode: r.user_code,
      verificationUri: r.verification_uri,
      ...(r.verification_uri_complete ? { verificationUriComplete: r.verification_uri_complete } : {}),
      expiresAt: Date.now() + r.expires_in * 1000,
      interval: typeof r.interval === 'number' && r.interval > 0 ? r.interval : 5,
    };
  } catch (e) {
    throw coded(e, 'device authorization');
  }
}

/**
 * A token response read without oauth4webapi's ID-token claim checks: used
 * when no issuer is configured (then there is nothing to compare `iss`
 * with; OAuth-only providers such as GitHub send no ID token at all).
 */
async function plainTokenResponse(r: Response): Promise<oauth.TokenEndpointResponse> {
  let body: Record<string, unknown>;
  try {
    body = (await r.json()) as Record<string, unknown>;
  } catch {
    throw new OAuthError('idp_bad_response', `token endpoint answered HTTP ${r.status} without JSON`);
  }
  if (typeof body.error === 'string') {
    const code = (IDP_ERROR_CODES.has(body.error) ? body.error : 'idp_bad_response') as OAuthErrorCode;
    throw new OAuthError(code, `token request: the IdP answered ${body.error}`);
  }
  if (r.status !== 200 || typeof body.access_token !== 'string') throw new OAuthError('idp_bad_response', `token endpoint answered HTTP ${r.status} without an access token`);
  return body as unknown as oauth.TokenEndpointResponse;
}

/** One token request for a pending device code. */
export async function pollToken(cfg: IdpConfig, deviceCode: string, fetch: FetchLike): Promise<PollResult> {
  const as = await authorizationServer(cfg, fetch);
  const [client, auth] = clientOf(cfg);
  try {
    const response = await oauth.deviceCodeGrantRequest(as, client, auth, deviceCode, fetchOpts(fetch));
    const tokens = cfg.issuerUrl ? await oauth.processDeviceCodeResponse(as, client, response) : await plainTokenResponse(response);
    return { status: 'done', tokens };
  } catch (e) {
    const err = coded(e, 'token request');
    if (err.code === 'authorization_pending') return { status: 'pending' };
    if (err.code === 'slow_down') return { status: 'slow_down', interval: 5 };
    throw err;
  }
}
