/**
 * The OIDC UserInfo endpoint (OpenID Connect Core §5.3): a GET with the
 * access token as a bearer credential (RFC 6750 §2.1), answered by a JSON
 * object whose `sub` must equal the ID token's when both exist (§5.3.2).
 * Signed or encrypted (application/jwt) answers are refused cleanly.
 */
import { codedError, foreign } from './errors.js';
import type { FetchLike } from './http.js';
import { OAuthError } from './types.js';

export async function userinfoRequest(userinfoUri: string, accessToken: string, fetch: FetchLike): Promise<Response> {
  try {
    return await fetch(userinfoUri, { method: 'GET', headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' }, signal: AbortSignal.timeout(15_000) });
  } catch (e) {
    if (e instanceof OAuthError) throw e;
    throw codedError(e, 'UserInfo', [accessToken]);
  }
}

export async function processUserinfoResponse(response: Response, opts: { expectedSub?: string } = {}): Promise<Record<string, unknown>> {
  if (response.status !== 200) throw new OAuthError('idp_bad_response', `UserInfo answered HTTP ${response.status}`);
  const type = (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/jwt') throw new OAuthError('idp_bad_response', 'UserInfo answered a signed or encrypted JWT; only JSON answers are supported');
  if (type !== 'application/json' && !type.endsWith('+json')) throw new OAuthError('idp_bad_response', `UserInfo answered ${type ? `'${foreign(type, [])}'` : 'no content type'} instead of JSON`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new OAuthError('idp_bad_response', 'UserInfo answered malformed JSON');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('idp_bad_response', 'UserInfo did not answer a JSON object');
  const claims = body as Record<string, unknown>;
  if (opts.expectedSub !== undefined && claims.sub !== undefined && claims.sub !== opts.expectedSub) {
    throw new OAuthError('userinfo_mismatch', 'UserInfo sub differs from the ID token sub');
  }
  return claims;
}

/** UserInfo claims for an access token. */
export async function fetchUserinfo(userinfoUri: string, accessToken: string, fetch: FetchLike, opts: { expectedSub?: string } = {}): Promise<Record<string, unknown>> {
  return processUserinfoResponse(await userinfoRequest(userinfoUri, accessToken, fetch), opts);
}
