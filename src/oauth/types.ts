/**
 * The OAuth 2.0 / OIDC client's vocabulary: an IdP reference as the client
 * needs it, and OAuthError with coded reasons whose messages never carry the
 * client secret, device codes or tokens.
 */
export interface IdpConfig {
  name: string;
  clientId: string;
  clientSecret?: string;
  authUri?: string;
  devAuthUri?: string;
  tokenUri?: string;
  userinfoUri?: string;
  keysUri?: string;
  issuerUrl?: string;
  scope?: string;
  /** claim naming the user; default `sub` */
  idpUserIdAttr?: string;
}

export type OAuthErrorCode =
  | 'authorization_pending'
  | 'slow_down'
  | 'expired_token'
  | 'access_denied'
  | 'unauthorized_client'
  | 'invalid_client'
  | 'invalid_scope'
  | 'invalid_grant'
  | 'invalid_request'
  | 'issuer_mismatch'
  | 'jwks_unreachable'
  | 'invalid_id_token'
  | 'user_id_missing'
  | 'idp_unreachable'
  | 'idp_bad_response'
  | 'discovery_failed'
  | 'not_configured';

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

/** The IdP's own error codes we pass through by name (RFC 6749 §5.2, RFC 8628 §3.5). */
export const IDP_ERROR_CODES: ReadonlySet<string> = new Set(['authorization_pending', 'slow_down', 'expired_token', 'access_denied', 'unauthorized_client', 'invalid_client', 'invalid_scope', 'invalid_grant', 'invalid_request']);
