/**
 * Turning what oauth4webapi, jose and the network throw into OAuthErrors,
 * and keeping secrets out of their messages: an IdP's error_description or
 * a transport message may echo what we sent, so every message built from
 * foreign text is passed through `redact` with the secrets of the call.
 * A TLS certificate the client refused is told apart from an IdP that could
 * not be reached: the IdP answered, its certificate was not trusted.
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

/**
 * Providers' own names for an RFC error: Entra ID answers a user's refusal
 * of the device sign-in `authorization_declined` where RFC 8628 §3.5 says
 * `access_denied`.
 */
const SAME_AS: Readonly<Record<string, OAuthErrorCode>> = { authorization_declined: 'access_denied' };

/** The coded error for an OAuth error answer (RFC 6749 §5.2) whose `error` and `error_description` members are given. */
export function answeredError(errorMember: unknown, descriptionMember: unknown, what: string, secrets: ReadonlyArray<string | undefined>): OAuthError {
  const error = typeof errorMember === 'string' ? errorMember : 'an unnamed error';
  const code = (IDP_ERROR_CODES.has(error) ? error : (Object.hasOwn(SAME_AS, error) ? SAME_AS[error] : undefined) ?? 'idp_bad_response') as OAuthErrorCode;
  const said = typeof descriptionMember === 'string' && descriptionMember ? foreign(descriptionMember, secrets) : '';
  const description = said ? ` (${said})` : '';
  // the user said no (or closed the page) at the IdP: say so first, in words a user knows
  if (code === 'access_denied') return new OAuthError(code, `${what}: the sign-in was refused or cancelled at the IdP (${error}${said ? `: ${said}` : ''})`);
  return new OAuthError(code, `${what}: the IdP answered ${IDP_ERROR_CODES.has(error) ? error : foreign(error, secrets)}${description}`);
}

/**
 * An HTTP status an IdP answered instead of the one expected, in words;
 * 429 and 5xx say that the IdP is busy or down rather than refusing.
 */
export function statusInWords(status: number): string {
  if (status === 429) return 'HTTP 429 (too many requests: it is limiting its clients; try again later)';
  if (status >= 500 && status <= 599) return `HTTP ${status} (the IdP is unavailable or failing; try again later)`;
  return `HTTP ${status} instead of an OAuth answer`;
}

/** The coded error for anything thrown during the protocol step `what`. */
export function codedError(e: unknown, what: string, secrets: ReadonlyArray<string | undefined>): OAuthError {
  if (e instanceof OAuthError) {
    // the same error when there was nothing to redact, so that what it is (an algorithm refused, say) is kept
    const message = redact(e.message, secrets);
    return message === e.message ? e : new OAuthError(e.code, message);
  }
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
    // an answer of a status the step does not expect, without an OAuth error in it (a 503 page, a 404): its status, in words
    if (e instanceof oauth.OperationProcessingError && e.code === oauth.RESPONSE_IS_NOT_CONFORM && e.cause instanceof Response && /unexpected HTTP status code/.test(e.message)) {
      return new OAuthError('idp_bad_response', `${what}: the IdP answered ${statusInWords(e.cause.status)}`);
    }
    return new OAuthError('idp_bad_response', `${what}: ${foreign(e.message, secrets)}`);
  }
  const refused = certificateRefusal(e, secrets);
  if (refused) return new OAuthError('idp_unreachable', `${what}: ${refused}`);
  const detail = e instanceof Error ? foreign(e.message, secrets) : 'error';
  return new OAuthError('idp_unreachable', `${what}: the IdP could not be reached (${detail})`);
}

/** Node's (OpenSSL's) codes for a chain that does not end at a CA the client trusts (check.ts words them for idp-check). */
export const UNTRUSTED_CHAIN = new Set([
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
]);

/** Other certificate verification failures, in our words. */
const CERTIFICATE_PROBLEMS: Readonly<Record<string, string>> = {
  CERT_HAS_EXPIRED: 'it has expired',
  CERT_NOT_YET_VALID: 'it is not valid yet',
  CERT_REVOKED: 'it has been revoked',
  CERT_REJECTED: 'it is marked as not to be trusted',
  INVALID_CA: 'a CA certificate in its chain is not valid as a CA',
  PATH_LENGTH_EXCEEDED: 'its chain is longer than a CA in it allows',
  INVALID_PURPOSE: 'it is not meant for a TLS server',
};

/** How many `cause` links are followed looking for a TLS failure (undici and fetch wrap it). */
const CAUSE_DEPTH = 5;

/**
 * When `e` (or an error it was caused by) is the client's refusal of the
 * IdP's certificate, what to tell the administrator; else null. Node's own
 * text is not used: it suggests a command-line flag of Node's, not the
 * server's option.
 */
export function certificateRefusal(e: unknown, secrets: ReadonlyArray<string | undefined>): string | null {
  let at: unknown = e;
  for (let depth = 0; depth <= CAUSE_DEPTH && at instanceof Error; depth++, at = at.cause) {
    const code = (at as { code?: unknown }).code;
    if (typeof code !== 'string') continue;
    if (UNTRUSTED_CHAIN.has(code)) {
      return `the IdP's TLS certificate was not accepted (it is not issued by a CA this server trusts [${code}]): if the IdP's CA is not a public one, give its certificate to the server (dirid-server start --idp-ca-file)`;
    }
    const problem = CERTIFICATE_PROBLEMS[code];
    if (problem) return `the IdP's TLS certificate was not accepted (${problem} [${code}])`;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      // Node's text names the host asked for and the names the certificate holds
      const reason = (at as { reason?: unknown }).reason;
      const detail = typeof reason === 'string' ? `: ${foreign(reason, secrets)}` : '';
      return `the IdP's TLS certificate was not accepted (it is not issued for the host asked for${detail} [${code}])`;
    }
  }
  return null;
}
