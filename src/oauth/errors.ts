/**
 * Turning what oauth4webapi, jose and the network throw into OAuthErrors,
 * and keeping secrets out of their messages: an IdP's error_description or
 * a transport message may echo what we sent, so every message built from
 * foreign text is passed through `redact` with the secrets of the call.
 */
import * as oauth from 'oauth4webapi';
import { algorithmRefused, IDP_ERROR_CODES, OAuthError, type OAuthErrorCode } from './types.js';

const FOREIGN_TEXT_MAX = 200;

/** Replaces each secret (client secret, device code, tokens) in `text`. */
export function redact(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let out = text;
  for (const s of secrets) if (s && s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}

/** A message fragment taken from an IdP or a library: bounded and redacted. */
export function foreign(text: string, secrets: ReadonlyArray<string | undefined>): string {
  return redact(text, secrets).replace(/[\r\n\0]+/g, ' ').slice(0, FOREIGN_TEXT_MAX);
}

/** The coded error for an OAuth error answer (RFC 6749 §5.2) whose `error` and `error_description` members are given. */
export function answeredError(errorMember: unknown, descriptionMember: unknown, what: string, secrets: ReadonlyArray<string | undefined>): OAuthError {
  const error = typeof errorMember === 'string' ? errorMember : 'an unnamed error';
  const code = (IDP_ERROR_CODES.has(error) ? error : 'idp_bad_response') as OAuthErrorCode;
  const said = typeof descriptionMember === 'string' && descriptionMember ? foreign(descriptionMember, secrets) : '';
  const description = said ? ` (${said})` : '';
  // the user said no (or closed the page) at the IdP: say so first, in words a user knows
  if (error === 'access_denied') return new OAuthError(code, `${what}: the sign-in was refused or cancelled at the IdP (access_denied${said ? `: ${said}` : ''})`);
  return new OAuthError(code, `${what}: the IdP answered ${IDP_ERROR_CODES.has(error) ? error : foreign(error, secrets)}${description}`);
}

/** The coded error for anything thrown during the protocol step `what`. */
export function codedError(e: unknown, what: string, secrets: ReadonlyArray<string | undefined>): OAuthError {
  if (e instanceof OAuthError) return new OAuthError(e.code, redact(e.message, secrets));
  if (e instanceof oauth.ResponseBodyError) return answeredError(e.error, e.error_description, what, secrets);
  if (e instanceof oauth.WWWAuthenticateChallengeError) {
    // a 401 with a challenge: client authentication failed (RFC 6749 §5.2)
    const named = e.cause.map((c) => c.parameters.error).find((x): x is string => typeof x === 'string' && IDP_ERROR_CODES.has(x));
    const code = (named ?? 'invalid_client') as OAuthErrorCode;
    return new OAuthError(code, `${what}: the IdP answered ${code} (HTTP ${e.status})`);
  }
  if (e instanceof oauth.OperationProcessingError || e instanceof oauth.UnsupportedOperationError) {
    const claim = (e as { cause?: { claim?: string } }).cause?.claim;
    if (claim === 'iss') return new OAuthError('issuer_mismatch', 'Issuer does not match the configured issuer URL');
    // oauth4webapi checks the ID token's alg against id_token_signing_alg_values_supported
    const header = (e as { cause?: { header?: { alg?: unknown } } }).cause?.header;
    if (e.message === 'unexpected JWT "alg" header parameter' && header) return algorithmRefused(header.alg);
    return new OAuthError('idp_bad_response', `${what}: ${foreign(e.message, secrets)}`);
  }
  const detail = e instanceof Error ? foreign(e.message, secrets) : 'error';
  return new OAuthError('idp_unreachable', `${what}: the IdP could not be reached (${detail})`);
}
