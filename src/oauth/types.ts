/**
 * The OAuth 2.0 / OIDC client's vocabulary: an IdP reference as the client
 * needs it (docs/conventions.md), and OAuthError with coded reasons — the
 * IdP's own codes (RFC 6749 §5.2, RFC 8628 §3.5) passed through by name,
 * plus our validation failures; the stored form of client keys
 * (private_key_jwt, docs/client-auth.md). Messages never carry the client
 * secret, client keys, device codes or tokens.
 */
import type { JWK } from 'jose';

export interface IdpConfig {
  name: string;
  clientId: string;
  clientSecret?: string;
  /** how the client authenticates (docs/client-auth.md); absent: client_secret_post */
  clientAuth?: 'private_key_jwt' | 'client_secret_basic';
  /** private_key_jwt: the client's private keys, the signing key first (never logged) */
  clientKeys?: ClientKey[];
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

/** A client key as stored (sealed): a private JWK with its `kid` and `alg`. */
export type ClientKey = JWK & { kid: string; alg: string };

/**
 * The stored client keys (the sealed value of an IdP reference's client key
 * attribute: `{"keys":[...]}`, the signing key first); [] for nothing usable.
 */
export function parseClientKeys(stored: string | undefined): ClientKey[] {
  if (!stored) return [];
  try {
    const v: unknown = JSON.parse(stored);
    const keys = v && typeof v === 'object' && Array.isArray((v as { keys?: unknown }).keys) ? ((v as { keys: unknown[] }).keys as unknown[]) : [];
    return keys.filter((k): k is ClientKey => !!k && typeof k === 'object' && typeof (k as JWK).kid === 'string' && typeof (k as JWK).alg === 'string' && typeof (k as JWK).d === 'string');
  } catch {
    return [];
  }
}

/** The stored attribute of an IdP reference (objects/idp.ts) for each field of its IdpConfig. */
const REFERENCE_ATTRIBUTES: ReadonlyArray<[Exclude<keyof IdpConfig, 'name' | 'clientId' | 'clientSecret' | 'clientAuth' | 'clientKeys'>, string]> = [
  ['authUri', 'dirIdpAuthEndpoint'],
  ['devAuthUri', 'dirIdpDevAuthEndpoint'],
  ['tokenUri', 'dirIdpTokenEndpoint'],
  ['userinfoUri', 'dirIdpUserInfoEndpoint'],
  ['keysUri', 'dirIdpKeysEndpoint'],
  ['issuerUrl', 'dirIdpIssuerUrl'],
  ['scope', 'dirIdpScope'],
  ['idpUserIdAttr', 'dirIdpUserIdAttribute'],
];

/**
 * The one sealed attribute a reference authenticates to its IdP with: its
 * client keys under private_key_jwt, else its client secret. A caller that
 * opens only this one reads one secret per login instead of both.
 */
export function clientCredentialAttribute(attrs: Readonly<Record<string, readonly string[] | undefined>>): 'dirIdpClientKey' | 'dirIdpClientSecret' {
  return attrs.dirIdpClientAuth?.[0] === 'private_key_jwt' ? 'dirIdpClientKey' : 'dirIdpClientSecret';
}

/**
 * An IdP reference as stored (its entry's attributes, its client secret and
 * its client keys, opened) as the client needs it: the one reading of a
 * reference, for the KDC's logins and for idp-check.
 */
export function idpConfigOf(name: string, attrs: Readonly<Record<string, readonly string[] | undefined>>, secret: string | undefined, clientKeys?: string): IdpConfig {
  const first = (attr: string) => attrs[attr]?.[0];
  const cfg: IdpConfig = { name: first('cn') ?? name, clientId: first('dirIdpClientId') ?? '' };
  if (secret) cfg.clientSecret = secret;
  if (first('dirIdpClientAuth') === 'private_key_jwt') {
    cfg.clientAuth = 'private_key_jwt';
    cfg.clientKeys = parseClientKeys(clientKeys);
  } else if (first('dirIdpClientAuth') === 'client_secret_basic') cfg.clientAuth = 'client_secret_basic';
  for (const [field, attr] of REFERENCE_ATTRIBUTES) {
    const v = first(attr);
    if (v) cfg[field] = v;
  }
  return cfg;
}

/**
 * The ID-token signing algorithms we accept (docs/device-flow.md, Signing keys): every
 * standard asymmetric JWS algorithm, never `none` or HMAC (a shared-secret
 * signature proves nothing about the IdP to whoever else holds the secret).
 * oauth4webapi (through the endpoints' id_token_signing_alg_values_supported)
 * and jose (validateIdToken) both take this list; id-token.ts re-exports it.
 */
export const ID_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

/** ID-token time claims tolerance, in seconds (id-token.ts). */
export const CLOCK_TOLERANCE_S = 60;

/** The refusal of an ID token signed with `alg`, which is not in ID_TOKEN_ALGORITHMS. */
export function algorithmRefused(alg: unknown): OAuthError {
  return new AlgorithmRefused(alg);
}

/** Error codes an IdP sends (RFC 6749 §5.2, RFC 8628 §3.5). */
export const IDP_PROTOCOL_ERRORS = [
  'authorization_pending',
  'slow_down',
  'expired_token',
  'access_denied',
  'unauthorized_client',
  'invalid_client',
  'invalid_scope',
  'invalid_grant',
  'invalid_request',
] as const;

/** Failures found on our side while reaching or validating an IdP. */
export const CLIENT_SIDE_ERRORS = [
  'issuer_mismatch',
  'jwks_unreachable',
  'invalid_id_token',
  'device_code_reused',
  'user_id_missing',
  'userinfo_mismatch',
  'idp_unreachable',
  'idp_bad_response',
  'discovery_failed',
  'insecure_endpoint',
  'not_configured',
] as const;

export type OAuthErrorCode = (typeof IDP_PROTOCOL_ERRORS)[number] | (typeof CLIENT_SIDE_ERRORS)[number];

export class OAuthError extends Error {
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'OAuthError';
  }
}

/** An ID token refused for its signing algorithm (algorithmRefused): id-token.ts keySetFirst tells it from other refusals. */
export class AlgorithmRefused extends OAuthError {
  constructor(alg: unknown) {
    const named = typeof alg === 'string' ? JSON.stringify(alg.slice(0, 32)) : 'no algorithm';
    super('invalid_id_token', `ID token rejected: signed with ${named}, which is not an accepted signing algorithm (accepted: ${ID_TOKEN_ALGORITHMS.join(', ')})`);
  }
}

/** The IdP's own error codes we pass through by name. */
export const IDP_ERROR_CODES: ReadonlySet<string> = new Set(IDP_PROTOCOL_ERRORS);

/** The part of a token endpoint response the identity step reads. */
export interface IssuedTokens {
  access_token: string;
  id_token?: string;
}
