/**
 * The user's identifier at the IdP (docs/device-flow.md): the claim
 * named by --idp-user-id (default `sub`) from the validated ID token,
 * merged with UserInfo claims when a UserInfo endpoint is configured or
 * discovered (the ID token wins). OAuth-only providers without ID tokens
 * (GitHub: `login` from its user API) are read from UserInfo alone. The
 * identifier is a non-empty string; a number is taken (as its decimal text)
 * only from such a provider, whose user API numbers its users (GitHub's
 * `id`): where an ID token speaks, a number, list or object is refused.
 */
import type { AuthorizationServer } from 'oauth4webapi';
import type { IdpClient } from './client.js';
import { authorizationServer } from './discovery.js';
import { kindOf, validateIdToken } from './id-token.js';
import { fetchUserinfo } from './userinfo.js';
import { OAuthError, type IdpConfig, type IssuedTokens } from './types.js';

export const DEFAULT_USER_ID_ATTR = 'sub';

export async function resolveUserIdentifier(cfg: IdpConfig, tokens: IssuedTokens, idp: IdpClient, opts: { endpoints?: AuthorizationServer; now?: number } = {}): Promise<string> {
  const attr = cfg.idpUserIdAttr || DEFAULT_USER_ID_ATTR;
  const as = opts.endpoints ?? (await authorizationServer(cfg, idp, []));
  let claims: Record<string, unknown> = {};
  if (tokens.id_token) {
    const jwksUri = as.jwks_uri ?? cfg.keysUri;
    const algorithms = as.id_token_signing_alg_values_supported;
    claims = { ...(await validateIdToken(cfg, tokens.id_token, idp, { ...(jwksUri ? { jwksUri } : {}), ...(opts.now !== undefined ? { now: opts.now } : {}), ...(algorithms ? { algorithms } : {}) })) };
  }
  const userinfoUri = cfg.userinfoUri ?? as.userinfo_endpoint;
  if (userinfoUri && tokens.access_token) {
    const info = await fetchUserinfo(userinfoUri, tokens.access_token, idp.fetch, typeof claims.sub === 'string' ? { expectedSub: claims.sub } : {});
    claims = { ...info, ...claims };
  } else if (!tokens.id_token) {
    throw new OAuthError('not_configured', `IdP reference ${cfg.name} returned no ID token and has no UserInfo endpoint`);
  }
  const v = claims[attr];
  const name = `'${attr.slice(0, 64)}'`;
  if (typeof v === 'string' && v.length > 0) return v;
  if (typeof v === 'number' && Number.isFinite(v) && !tokens.id_token) return String(v);
  if (v === undefined) throw new OAuthError('user_id_missing', `the IdP's answer has no ${name} claim`);
  if (v === '') throw new OAuthError('user_id_missing', `the IdP's ${name} claim is empty`);
  throw new OAuthError('user_id_missing', `the IdP's ${name} claim is not a string (${kindOf(v)})`);
}
