/**
 * The OAuth 2.0 Device Authorization Grant (RFC 8628) for the KDC, with
 * oauth4webapi. Each step is a request and a process function: the device
 * authorization (§3.1–3.2) and one token request for a pending device code
 * (§3.4–3.5). The token request, made at every poll, is formed here and
 * sent through the HTTPS client's request function without the fetch API,
 * and its error answers (pending nearly always) are read here too, where
 * oauth4webapi would read them; a success goes through oauth4webapi. A
 * poll the IdP could not answer now (HTTP 429 or 5xx, temporarily_unavailable,
 * server_error) is told as the IdP not reached, its Retry-After kept as
 * the code's interval when longer. Device authorization answers are read in
 * the providers' own shapes (a `verification_url`, numbers written as
 * strings, errors with HTTP 200) as RFC 8628 means them. The
 * KDC decides when to poll; nothing here waits or loops.
 * The client authenticates with client_secret_post (RFC 6749 §2.3.1):
 * client_id and client_secret in the form body, which Keycloak, Okta,
 * Entra ID, Google, GitHub and oidc-provider all accept, and which keeps
 * client_id in the body where device endpoints look for it; or, for a
 * reference set to private_key_jwt, with client_id and a signed client
 * assertion in the body (client-auth.ts, docs/client-auth.md), each older
 * client key tried in turn when the IdP refuses the newest. An ID token in
 * the token answer is judged by id-token.ts alone. A device code is
 * exchanged for tokens once: the IdP client remembers those it exchanged
 * and a second poll of one is refused without asking the IdP. It also
 * remembers, per pending device code, its last poll, the interval (as
 * slow_down lengthened it) and the poll in flight: a poll asked for while
 * another of the same code is in flight waits for that one's answer
 * instead of sending a second request (`devicePolling` tells the KDC when
 * the next poll is due).
 */
import * as oauth from 'oauth4webapi';
import { codeKey, type IdpClient, type PollRecord } from './client.js';
import { clientAuthHeader, clientAuthOf, clientAuthParams, withClientKeys } from './client-auth.js';
import { authorizationServer, REQUEST_TIMEOUT_MS, requestOptions } from './discovery.js';
import { answeredError, codedError, statusInWords } from './errors.js';
import { readAnswer, requestOf, toResponse, type FetchLike, type HttpAnswer } from './http.js';
import { checkIdTokenClaims, decodeIdToken, keySetFirst } from './id-token.js';
import { CLOCK_TOLERANCE_S, IDP_ERROR_CODES, OAuthError, type IdpConfig } from './types.js';

export { authorizationServer } from './discovery.js';

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

export type PollResult =
  | { status: 'pending' }
  /** `interval`: the new polling interval in seconds (RFC 8628 §3.5: +5 s) */
  | { status: 'slow_down'; interval: number }
  | { status: 'done'; tokens: oauth.TokenEndpointResponse };

/** RFC 8628 §3.2: the default polling interval. */
export const DEFAULT_INTERVAL_S = 5;
/** ID-token time claims tolerance (id-token.ts). */
export { CLOCK_TOLERANCE_S } from './types.js';

function clientOf(cfg: IdpConfig): [oauth.Client, oauth.ClientAuth] {
  return [{ client_id: cfg.clientId, [oauth.clockTolerance]: CLOCK_TOLERANCE_S }, clientAuthOf(cfg)];
}

/** What a request learns of the client keys: `accepted` is told the `kid` of the key the IdP took (private_key_jwt). */
export interface ClientKeyOptions {
  accepted?: (kid: string) => void;
}

export async function deviceAuthorizationRequest(cfg: IdpConfig, as: oauth.AuthorizationServer, fetch: FetchLike): Promise<Response> {
  const [client, auth] = clientOf(cfg);
  const params: Record<string, string> = cfg.scope ? { scope: cfg.scope } : {};
  try {
    return await oauth.deviceAuthorizationRequest(as, client, auth, params, requestOptions(fetch));
  } catch (e) {
    throw codedError(e, 'device authorization', [cfg.clientSecret]);
  }
}

export async function processDeviceAuthorization(cfg: IdpConfig, as: oauth.AuthorizationServer, response: Response, now = Date.now()): Promise<DeviceAuthorization> {
  const [client] = clientOf(cfg);
  let r: oauth.DeviceAuthorizationResponse;
  try {
    r = await oauth.processDeviceAuthorizationResponse(as, client, await asDeviceAuthorization(response, [cfg.clientSecret]));
  } catch (e) {
    throw codedError(e, 'device authorization', [cfg.clientSecret]);
  }
  assertHttpsVerification(r.verification_uri);
  if (r.verification_uri_complete) assertHttpsVerification(r.verification_uri_complete);
  return {
    deviceCode: r.device_code,
    userCode: r.user_code,
    verificationUri: r.verification_uri,
    ...(r.verification_uri_complete ? { verificationUriComplete: r.verification_uri_complete } : {}),
    expiresAt: now + r.expires_in * 1000,
    interval: typeof r.interval === 'number' && r.interval > 0 ? r.interval : DEFAULT_INTERVAL_S,
  };
}

/**
 * A successful device authorization answer read as RFC 8628 §3.2 means it,
 * whatever the provider's own shape: the page named `verification_url`
 * (Google's, from the draft RFC 8628 came from) taken as `verification_uri`
 * when that is absent; `expires_in` and `interval` written as JSON strings
 * of a number (`"900"`, `"5"`: Entra ID's older endpoints) taken as those
 * numbers; and an `error` member without a device code (GitHub answers its
 * refusals with HTTP 200) thrown as the IdP's refusal it is. An answer of
 * another status is the IdP's refusal when it holds an OAuth error
 * (whatever its media type), and otherwise told by its status (a 503 page
 * from an IdP that is down); one with a WWW-Authenticate challenge is left
 * to oauth4webapi. Any other answer goes on unchanged.
 */
async function asDeviceAuthorization(response: Response, secrets: ReadonlyArray<string | undefined>): Promise<Response> {
  if (response.status !== 200) {
    if (response.headers.has('www-authenticate')) return response; // a challenge: oauth4webapi reads it (invalid_client)
    const { object } = await readJsonObject(response);
    if (object && typeof object.error === 'string' && object.error) throw answeredError(object.error, object.error_description, 'device authorization', secrets);
    throw new OAuthError('idp_bad_response', `device authorization: the IdP answered ${statusInWords(response.status)}`);
  }
  const { text, object: o, again } = await readJsonObject(response);
  if (!o) return again(text);
  if (typeof o.error === 'string' && o.device_code === undefined) throw answeredError(o.error, o.error_description, 'device authorization', secrets);
  const fixed: Record<string, unknown> = { ...o };
  if (fixed.verification_uri === undefined && typeof o.verification_url === 'string') fixed.verification_uri = o.verification_url;
  for (const k of ['expires_in', 'interval'] as const) {
    const v = o[k];
    if (typeof v === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(v)) fixed[k] = Number(v);
  }
  const changed = Object.keys(fixed).some((k) => fixed[k] !== o[k]);
  return again(changed ? JSON.stringify(fixed) : text);
}

/**
 * A read answer's text, the JSON object it holds (undefined when it holds
 * anything else), and `again`, which makes an answer of the same status and
 * headers with another body for the reader that comes next.
 */
async function readJsonObject(response: Response): Promise<{ text: string; object: Record<string, unknown> | undefined; again: (body: string) => Response }> {
  const text = await response.text();
  const again = (body: string) => new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { text, object: undefined, again };
  }
  return { text, object: body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : undefined, again };
}

function assertHttpsVerification(uri: string): void {
  // shown to the user as the place to log in: never a plain-text page
  if (!/^https:\/\/[^/]/i.test(uri)) throw new OAuthError('idp_bad_response', 'device authorization: the verification URI is not an https:// URL');
}

/** RFC 8628 §3.1–3.2: starts a device authorization at the IdP. */
export async function startDeviceAuthorization(cfg: IdpConfig, idp: IdpClient, opts: ClientKeyOptions = {}): Promise<DeviceAuthorization> {
  const as = await authorizationServer(cfg, idp, ['device', 'token']);
  return withClientKeys(cfg, async (c) => processDeviceAuthorization(c, as, await deviceAuthorizationRequest(c, as, idp.fetch)), opts.accepted);
}

/** RFC 8628 §3.4: the grant type of a device code's token request. */
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
/** The headers of a token request besides User-Agent and Content-Length (http.ts adds those), as oauth4webapi sends them. */
const TOKEN_REQUEST_HEADERS: Readonly<Record<string, string>> = { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' };

/**
 * RFC 8628 §3.4: one token request for `deviceCode`, its form made here
 * (device_code, grant_type and the client's authentication, in the order
 * oauth4webapi puts them) and sent by the HTTPS client's request function,
 * which hands back the answer as read off the wire; through any other
 * fetch function (a test's), the answer it gives, read whole.
 */
export async function deviceTokenRequest(cfg: IdpConfig, as: oauth.AuthorizationServer, deviceCode: string, fetch: FetchLike): Promise<HttpAnswer> {
  try {
    const url = as.token_endpoint;
    if (!url) throw new OAuthError('not_configured', `IdP reference ${cfg.name} has no token endpoint`);
    const body = new URLSearchParams([['device_code', deviceCode], ['grant_type', DEVICE_CODE_GRANT], ...(await clientAuthParams(cfg, url))]).toString();
    const authorization = clientAuthHeader(cfg);
    const headers = authorization ? { ...TOKEN_REQUEST_HEADERS, authorization } : TOKEN_REQUEST_HEADERS;
    const request = requestOf(fetch);
    if (request) return await request(url, { method: 'POST', headers, body });
    return await readAnswer(await fetch(url, { method: 'POST', headers: { ...headers }, body, redirect: 'manual', signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }));
  } catch (e) {
    throw codedError(e, 'token request', [cfg.clientSecret, deviceCode]);
  }
}

/**
 * RFC 8628 §3.5. The answer to nearly every poll is an error answer,
 * `authorization_pending` or `slow_down`; it and any other error answer
 * are read here, where the reader below would read them (errorAnswer), and
 * cost no error object but the one a refusal throws. Anything else goes to
 * that reader: with an issuer configured oauth4webapi (the ID token set
 * aside, checkIdTokenClaims judges its claims, not its signature:
 * validateIdToken does), without one the plain OAuth reader.
 */
export async function processDeviceToken(cfg: IdpConfig, as: oauth.AuthorizationServer, deviceCode: string, answer: HttpAnswer | Response, currentInterval = DEFAULT_INTERVAL_S): Promise<PollResult> {
  const raw = answer instanceof Response ? await readAnswer(answer) : answer;
  // only a 429 or 5xx is read for this: a pending answer's body is read once, below
  const busy = raw.status === 429 || (raw.status >= 500 && raw.status <= 599) ? unavailable(raw) : undefined;
  if (busy) throw busy;
  const said = errorAnswer(raw, !!cfg.issuerUrl);
  if (said?.error === 'authorization_pending') return { status: 'pending' };
  if (said?.error === 'slow_down') return { status: 'slow_down', interval: currentInterval + 5 };
  if (said && TRY_AGAIN.has(said.error)) throw new IdpUnavailable(`token request: the IdP answered ${said.error} (HTTP ${raw.status}): it could not answer the poll now`, retryAfterOf(raw));
  if (said) throw answeredError(said.error, said.description, 'token request', [cfg.clientSecret, deviceCode]);
  const [client] = clientOf(cfg);
  try {
    const response = toResponse(raw);
    let tokens: oauth.TokenEndpointResponse;
    if (cfg.issuerUrl) {
      const { rest, idToken } = await withoutIdToken(response);
      tokens = await oauth.processDeviceCodeResponse(as, client, rest);
      if (idToken !== undefined) {
        const { header, claims } = decodeIdToken(idToken);
        checkIdTokenClaims(cfg, header, claims, as.id_token_signing_alg_values_supported ? { algorithms: as.id_token_signing_alg_values_supported } : {});
        tokens = { ...tokens, id_token: idToken };
      }
    } else tokens = await plainTokenResponse(response);
    return { status: 'done', tokens };
  } catch (e) {
    const err = codedError(e, 'token request', [cfg.clientSecret, deviceCode]);
    if (err.code === 'authorization_pending') return { status: 'pending' };
    if (err.code === 'slow_down') return { status: 'slow_down', interval: currentInterval + 5 };
    throw err;
  }
}

/**
 * A poll the IdP could not answer now: it is no answer about the device
 * code, which may still be valid, so it is told as the IdP not reached
 * (`idp_unreachable`: the KDC keeps the flow pending and polls again when
 * the code is due). `retryAfterS`: the seconds its Retry-After header asks
 * to wait, when it names any.
 */
export class IdpUnavailable extends OAuthError {
  constructor(
    message: string,
    readonly retryAfterS: number | undefined,
  ) {
    super('idp_unreachable', message);
  }
}

/** Retry-After waits longer than this are taken as this (the device code expires long before most). */
export const RETRY_AFTER_MAX_S = 300;

/** Error codes of OAuth 2.0 (RFC 6749 §4.1.2.1) that say the server cannot serve now, not that the request is wrong. */
const TRY_AGAIN = new Set(['temporarily_unavailable', 'server_error']);

/**
 * The token answer of an IdP that is busy or failing (HTTP 429 or 5xx: an
 * overloaded or restarting IdP, a proxy's error page) rather than
 * answering about the device code: undefined when its body is one of the
 * device flow's own errors (read as such by the caller).
 */
function unavailable(answer: HttpAnswer): IdpUnavailable | undefined {
  let error: unknown;
  try {
    error = (JSON.parse(textOf(answer.body)) as { error?: unknown } | null)?.error;
  } catch {
    error = undefined;
  }
  const named = typeof error === 'string' ? error : undefined;
  if (named !== undefined && TRY_AGAIN.has(named)) {
    return new IdpUnavailable(`token request: the IdP answered ${named} (HTTP ${answer.status}): it could not answer the poll now`, retryAfterOf(answer));
  }
  if (named !== undefined && IDP_ERROR_CODES.has(named)) return undefined;
  return new IdpUnavailable(`token request: the IdP answered ${statusInWords(answer.status)}`, retryAfterOf(answer));
}

/** RFC 9110 §10.2.3: the seconds a Retry-After header (delay-seconds or an HTTP date) asks for, at most RETRY_AFTER_MAX_S. */
function retryAfterOf(answer: HttpAnswer): number | undefined {
  const v = answer.headers['retry-after'];
  if (typeof v !== 'string') return undefined;
  const t = v.trim();
  const s = /^\d+$/.test(t) ? Number(t) : Number.isFinite(Date.parse(t)) ? Math.ceil((Date.parse(t) - Date.now()) / 1000) : undefined;
  return s === undefined || s <= 0 ? undefined : Math.min(s, RETRY_AFTER_MAX_S);
}

/** A token answer's body as text, as a fetch Response's text() decodes it (UTF-8, a leading byte order mark dropped). */
function textOf(body: Buffer): string {
  return body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.toString('utf8', 3) : body.toString('utf8');
}

/**
 * The OAuth error answer (RFC 6749 §5.2) in a token answer, where the
 * reader processDeviceToken would otherwise use takes it for one, read
 * once and without the error objects (each with its stack trace) that
 * reader and codedError would make of it. With an issuer, oauth4webapi's
 * reading: a 4xx status, no WWW-Authenticate challenge, an
 * application/json object (the media type compared exactly) whose `error`
 * is a non-empty string; `authorization_pending` and `slow_down` are also
 * taken under a media type differing in case or spacing, as they always
 * were here. Without one, the plain reader's: a JSON object with a string
 * `error`, whatever the status and media type (GitHub answers its pending
 * polls with HTTP 200).
 */
function errorAnswer(answer: HttpAnswer, oidc: boolean): { error: string; description: unknown } | undefined {
  let media: string | undefined;
  if (oidc) {
    if (answer.status < 400 || answer.status > 499 || answer.headers['www-authenticate'] !== undefined) return undefined;
    const type = answer.headers['content-type'];
    media = typeof type === 'string' ? type.split(';')[0] : undefined;
    if (media?.trim().toLowerCase() !== 'application/json') return undefined;
  }
  let body: unknown;
  try {
    body = JSON.parse(textOf(answer.body));
  } catch {
    return undefined; // not JSON: the reader says what is wrong with it
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { error, error_description: description } = body as { error?: unknown; error_description?: unknown };
  if (typeof error !== 'string') return undefined;
  if (!oidc || error === 'authorization_pending' || error === 'slow_down' || (error && media === 'application/json')) return { error, description };
  return undefined;
}

/**
 * A successful token answer without its `id_token` member, and that member:
 * oauth4webapi would check the ID token's claims itself, and they are
 * checked in one place (id-token.ts). Any other answer is passed unchanged.
 */
async function withoutIdToken(response: Response): Promise<{ rest: Response; idToken?: string }> {
  if (response.status !== 200) return { rest: response };
  const { text, object, again } = await readJsonObject(response);
  if (!object || !('id_token' in object)) return { rest: again(text) };
  const { id_token: idToken, ...rest } = object;
  if (typeof idToken !== 'string') throw new OAuthError('idp_bad_response', 'token endpoint answered an id_token that is not a string');
  return { rest: again(JSON.stringify(rest)), idToken };
}

/** How long the polling of a device code is remembered when its expiry is not known. */
const POLL_RECORD_DEFAULT_MS = 3600_000;

/**
 * What this IdP client knows of its polling of a device code: when its last
 * token request went, the interval (slow_down included), what the last
 * answered one said and whether one is in flight; undefined when it has
 * not polled the code (or has forgotten it).
 */
export async function devicePolling(cfg: IdpConfig, deviceCode: string, idp: IdpClient): Promise<Readonly<PollRecord> | undefined> {
  const as = await authorizationServer(cfg, idp, ['token']);
  return idp.polls.get(codeKey(deviceCode, as.token_endpoint!));
}

/**
 * One token request for a pending device code; never waits for the
 * interval (the caller does). A device code this client already exchanged
 * for tokens is refused without asking the IdP again (`expiresAt`: when it
 * expires, epoch ms, so it is remembered that long). While a token request
 * for the same code is in flight, no second one goes: its answer is this
 * poll's too, except tokens, which only the request that got them may use
 * (the others are refused as a reused code).
 */
export async function pollToken(cfg: IdpConfig, deviceCode: string, idp: IdpClient, opts: { interval?: number; expiresAt?: number } & ClientKeyOptions = {}): Promise<PollResult> {
  const as = await authorizationServer(cfg, idp, ['token']);
  // one digest of the code for every record this poll reads and writes
  const key = codeKey(deviceCode, as.token_endpoint!);
  const reused = () => new OAuthError('device_code_reused', 'device code already used: it was exchanged for tokens once, a second exchange is refused');
  if (idp.spentDeviceCodes.has(key)) throw reused();
  const known = idp.polls.get(key);
  if (known?.inFlight) {
    const r = await (known.inFlight as Promise<PollResult>);
    if (r.status === 'done') throw reused();
    return r;
  }
  const interval = Math.max(opts.interval ?? DEFAULT_INTERVAL_S, known?.interval ?? 0);
  const sent = Date.now();
  const until = opts.expiresAt ?? sent + POLL_RECORD_DEFAULT_MS;
  const inFlight = withClientKeys(cfg, async (c) => processDeviceToken(c, as, deviceCode, await deviceTokenRequest(c, as, deviceCode, idp.fetch), interval), opts.accepted).catch(
    async (e: unknown) => {
      // an ID token refused for its algorithm by an IdP whose key set cannot be fetched is refused for that
      throw await keySetFirst(e, as.jwks_uri, idp);
    },
  );
  idp.polls.set(key, { lastPoll: sent, interval, inFlight, until });
  let r: PollResult;
  try {
    r = await inFlight;
  } catch (e) {
    // an IdP that asks to be left alone longer than the interval (Retry-After) is polled no sooner
    const wait = e instanceof IdpUnavailable && e.retryAfterS !== undefined ? Math.max(interval, e.retryAfterS) : interval;
    idp.polls.set(key, { lastPoll: sent, interval: wait, until });
    throw e;
  }
  if (r.status === 'done') {
    idp.spentDeviceCodes.add(key, opts.expiresAt);
    idp.polls.delete(key);
  } else idp.polls.set(key, { lastPoll: sent, interval: r.status === 'slow_down' ? r.interval : interval, lastStatus: r.status, until });
  return r;
}

/**
 * A token response read without oauth4webapi's ID-token claim checks, when
 * no issuer is configured (nothing to compare `iss` with). OAuth-only
 * providers such as GitHub send no ID token and may answer errors with
 * HTTP 200 and an `error` member.
 */
async function plainTokenResponse(r: Response): Promise<oauth.TokenEndpointResponse> {
  let body: unknown;
  try {
    body = await r.json();
  } catch {
    throw new OAuthError('idp_bad_response', `token endpoint answered HTTP ${r.status} without JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new OAuthError('idp_bad_response', `token endpoint answered HTTP ${r.status} without a JSON object`);
  const o = body as Record<string, unknown>;
  if (typeof o.error === 'string') throw new oauth.ResponseBodyError('token endpoint error', { cause: o as never, response: r });
  if (r.status !== 200 || typeof o.access_token !== 'string' || !o.access_token) throw new OAuthError('idp_bad_response', `token endpoint answered HTTP ${r.status} without an access token`);
  if (o.id_token !== undefined && typeof o.id_token !== 'string') throw new OAuthError('idp_bad_response', 'token endpoint answered an id_token that is not a string');
  const tokenType = typeof o.token_type === 'string' ? o.token_type.toLowerCase() : 'bearer';
  return { ...(o as object), token_type: tokenType } as oauth.TokenEndpointResponse;
}
