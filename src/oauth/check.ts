/**
 * The check of an IdP reference (docs/device-flow.md, "Checking an IdP
 * reference"): whether logins through it can work, asked of the IdP the
 * way a login would, one line per check. Discovery (OpenID Connect
 * Discovery 1.0 §4, or RFC 8414 metadata where the issuer has no OIDC
 * document) when an issuer is set; each endpoint reachable over
 * HTTPS with a certificate the server trusts (the IdP client's CAs: the
 * system's and --idp-ca-file); the JWKS readable with keys that can verify
 * ID tokens; and a device authorization (RFC 8628 §3.1) with the stored
 * client credentials and scope, whose device code is then left to expire;
 * that check also fails for a reference with an issuer (OpenID Connect)
 * whose scope has no openid, for which the IdP would issue no ID token.
 * It reads and writes nothing of the server's: no directory write, and
 * neither the IdP client's discovery cache nor its key sets are touched.
 * Every message is passed through `redact` with the client secret.
 */
import type * as oauth from 'oauth4webapi';
import { importJWK, type JWK } from 'jose';
import type { IdpClient } from './client.js';
import { withClientKeys } from './client-auth.js';
import { deviceAuthorizationRequest, processDeviceAuthorization } from './device-flow.js';
import { discoveryDocument, oidcDiscoveryUrl, processDiscoveryResponse, rememberDiscovered } from './discovery.js';
import { foreign, redact, UNTRUSTED_CHAIN } from './errors.js';
import { assertHttpsUrl, type FetchLike } from './http.js';
import { ID_TOKEN_ALGORITHMS, OAuthError, type IdpConfig } from './types.js';

export type CheckStatus = 'PASS' | 'FAIL' | 'SKIP';

export interface CheckLine {
  check: string;
  status: CheckStatus;
  message: string;
}

/**
 * The whole check ends within this time, so that a client waiting for its
 * answer (dirid gives up on a silent server after 15 s) gets one: discovery
 * may take DISCOVERY_TIMEOUT_MS of it, and the requests after it run side by
 * side in what is left.
 */
export const CHECK_DEADLINE_MS = 12_000;
export const DISCOVERY_TIMEOUT_MS = 6_000;

/** A network or TLS failure reaching `url`, in plain words. */
export function networkProblem(e: unknown, url: URL): string {
  const code = (e as { code?: unknown } | null)?.code;
  const host = url.host;
  if (typeof code === 'string') {
    if (UNTRUSTED_CHAIN.has(code)) return `certificate verification failure: the certificate of ${host} is not issued by a CA this server trusts (the system CAs and --idp-ca-file) [${code}]`;
    if (code === 'CERT_HAS_EXPIRED') return `certificate verification failure: the certificate of ${host} has expired`;
    if (code === 'CERT_NOT_YET_VALID') return `certificate verification failure: the certificate of ${host} is not valid yet`;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `certificate verification failure: the certificate of ${host} does not name ${url.hostname}`;
    if (code === 'ECONNREFUSED') return `connection refused: nothing listens at ${host}`;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `host not found: ${url.hostname} does not resolve`;
    if (code === 'ETIMEDOUT') return `no answer: the connection to ${host} timed out`;
    if (code === 'ECONNRESET') return `connection reset: ${host} closed the connection`;
    if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return `unreachable: no route to ${host}`;
    if (code === 'EPROTO' || code.startsWith('ERR_SSL_')) return `TLS handshake with ${host} failed [${code}]`;
  }
  if ((e instanceof OAuthError && /timed out/.test(e.message)) || (e instanceof Error && (e.name === 'TimeoutError' || e.name === 'AbortError'))) {
    return `no answer: ${host} did not answer in time`;
  }
  if (e instanceof OAuthError) return e.message;
  return `${host} could not be reached (${e instanceof Error ? foreign(e.message, []) : 'error'})`;
}

/** A fetch through the IdP client that remembers the last failure (oauth4webapi's and ours hide its code). */
function recording(fetch: FetchLike, timeoutMs: number): { fetch: FetchLike; failure(): unknown } {
  let last: unknown;
  return {
    fetch: async (url, init) => {
      try {
        return await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      } catch (e) {
        last = e;
        throw e;
      }
    },
    failure: () => last,
  };
}

type Probe = { response: Response; url: URL } | { problem: string };

/** One request to an endpoint: an HTTP answer over a trusted TLS connection, or why there was none. */
async function probe(fetch: FetchLike, value: string, label: string, method: 'GET' | 'POST', timeoutMs: number): Promise<Probe> {
  let url: URL;
  try {
    url = assertHttpsUrl(value, label);
  } catch (e) {
    return { problem: e instanceof Error ? e.message : 'not an https:// URL' };
  }
  try {
    // POST endpoints get an empty form (an error answer is enough: the endpoint is there)
    const init: Parameters<FetchLike>[1] =
      method === 'POST' ? { method, headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: '' } : { method, headers: { accept: 'application/json, */*' } };
    return { response: await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) }), url };
  } catch (e) {
    return { problem: networkProblem(e, url) };
  }
}

const reached = (url: string, status: number) => `${url} answered over HTTPS with a trusted certificate (HTTP ${status})`;

/** A key set's keys as ID-token verifiers: which can verify, and why the others cannot. */
async function signingKeys(body: unknown): Promise<{ usable: string[]; ignored: string[] } | string> {
  if (!body || typeof body !== 'object' || !Array.isArray((body as { keys?: unknown }).keys)) return 'the answer is not a JSON Web Key Set';
  const usable: string[] = [];
  const ignored: string[] = [];
  const keys = (body as { keys: unknown[] }).keys;
  for (const [i, raw] of keys.entries()) {
    if (!raw || typeof raw !== 'object') continue;
    const k = raw as JWK & { key_ops?: unknown };
    const name = typeof k.kid === 'string' ? `kid ${foreign(k.kid, []).slice(0, 64)}` : `key ${i + 1} (no kid)`;
    if (k.use !== undefined && k.use !== 'sig') {
      ignored.push(`${name}: use ${foreign(String(k.use), []).slice(0, 16)}`);
      continue;
    }
    const alg = typeof k.alg === 'string' ? k.alg : defaultAlgorithm(k);
    if (alg === undefined) {
      ignored.push(`${name}: key type ${foreign(String(k.kty), []).slice(0, 16)} signs no accepted algorithm`);
      continue;
    }
    if (!(ID_TOKEN_ALGORITHMS as readonly string[]).includes(alg)) {
      ignored.push(`${name}: ${foreign(alg, []).slice(0, 16)} is not an accepted algorithm`);
      continue;
    }
    try {
      await importJWK({ ...k, ext: true }, alg);
    } catch {
      ignored.push(`${name}: not a valid ${alg} key`);
      continue;
    }
    usable.push(`${name} (${alg}${typeof k.alg === 'string' ? '' : ', by its key type'})`);
  }
  return { usable, ignored };
}

/** The algorithm a key without `alg` is taken for by its type. */
function defaultAlgorithm(k: JWK): string | undefined {
  if (k.kty === 'RSA') return 'RS256';
  if (k.kty === 'EC') return { 'P-256': 'ES256', 'P-384': 'ES384', 'P-521': 'ES512' }[String(k.crv)];
  if (k.kty === 'OKP' && k.crv === 'Ed25519') return 'EdDSA';
  return undefined;
}

/** The plain words for an IdP's refusal of the device authorization. */
function refusal(e: OAuthError, cfg: IdpConfig): string {
  const said = /^device authorization: the IdP answered \S+ \((.*)\)$/.exec(e.message)?.[1];
  const tail = said === undefined ? '' : /^HTTP \d+$/.test(said) ? ` (${said})` : ` (the IdP said: ${said})`;
  const client = JSON.stringify(cfg.clientId.slice(0, 64));
  switch (e.code) {
    case 'invalid_client':
      if (cfg.clientAuth === 'private_key_jwt') {
        const kids = (cfg.clientKeys ?? []).map((k) => k.kid).join(', ');
        return `invalid_client: the IdP does not accept client ${client} with a client assertion signed by its client key${kids ? ` (key ID ${kids})` : ''} (the public key is not registered at the IdP, the client is not set to private_key_jwt there, or an unknown client ID: register the key set that idp-show prints)${tail}`;
      }
      {
        // how the secret went, and the other way an IdP may want it
        const [sent, otherWay, otherMethod] =
          cfg.clientAuth === 'client_secret_basic' ? ['in an HTTP Basic header', 'in the request body', 'client_secret_post'] : ['in the request body', 'in an HTTP Basic header', 'client_secret_basic'];
        return `invalid_client: the IdP does not accept client ${client} with the stored secret ${sent} (a wrong or expired secret, an unknown client ID, or an IdP that takes the secret only ${otherWay}: --client-auth=${otherMethod})${tail}`;
      }
    case 'unauthorized_client': {
      // RFC 6749 §5.2 means a grant the client may not use, but some IdPs (glewlwyd) answer a wrong credential so too
      const kids = (cfg.clientKeys ?? []).map((k) => k.kid).join(', ');
      const credential =
        cfg.clientAuth === 'private_key_jwt'
          ? `its client key${kids ? ` (key ID ${kids})` : ''} is not registered at the IdP (register the key set that idp-show prints)`
          : 'the stored client secret is wrong or expired';
      return `unauthorized_client: the IdP refuses client ${client}, as some IdPs answer a wrong credential too: either ${credential}, or the client may not use the device authorization grant (allow it for the client at the IdP)${tail}`;
    }
    case 'invalid_scope':
      return `invalid_scope: the IdP refuses scope ${JSON.stringify(cfg.scope ?? '')} for client ${client}${tail}`;
    case 'invalid_request':
      return `invalid_request: the IdP refused the request${tail}`;
    case 'idp_bad_response':
      return `the answer is not a device authorization (${e.message.replace(/^device authorization: /, '')})`;
    default:
      return e.message;
  }
}

/** Runs every check of `cfg` through the IdP client `idp`; never throws for what it finds. */
export async function checkIdp(cfg: IdpConfig, idp: IdpClient): Promise<CheckLine[]> {
  const lines = await runChecks(cfg, idp);
  const secrets = [cfg.clientSecret];
  return lines.map((l) => ({ ...l, message: redact(l.message, secrets) }));
}

async function runChecks(cfg: IdpConfig, idp: IdpClient): Promise<CheckLine[]> {
  const started = Date.now();
  const left = () => Math.max(1_000, CHECK_DEADLINE_MS - (Date.now() - started));
  const lines: CheckLine[] = [];
  let discovered: oauth.AuthorizationServer | undefined;
  let discoveryFailed = false;
  if (!cfg.issuerUrl) {
    lines.push({ check: 'Discovery', status: 'SKIP', message: 'no issuer URL set: the endpoints are the ones stored' });
  } else {
    const rec = recording(idp.fetch, DISCOVERY_TIMEOUT_MS);
    let docUrl = oidcDiscoveryUrl(cfg.issuerUrl);
    try {
      const found = await discoveryDocument(cfg.issuerUrl, rec.fetch);
      docUrl = found.url;
      discovered = await processDiscoveryResponse(cfg.issuerUrl, found.response);
      rememberDiscovered(idp, cfg.issuerUrl, discovered);
      const named = (['authorization_endpoint', 'device_authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'jwks_uri'] as const).filter((k) => discovered![k] !== undefined);
      if (discovered.issuer !== cfg.issuerUrl) {
        // the same URL written otherwise (a trailing slash): discovery takes it, the ID tokens' iss will not match the stored one
        const theirs = foreign(discovered.issuer, []);
        lines.push({ check: 'Discovery', status: 'FAIL', message: `${docUrl} names issuer ${theirs}, and ID tokens carry it so in iss, but the reference says ${cfg.issuerUrl}: set --issuer-url ${theirs}` });
      } else lines.push({ check: 'Discovery', status: 'PASS', message: `${docUrl} names issuer ${discovered.issuer} and ${named.length ? named.join(', ') : 'no endpoint'}` });
    } catch (e) {
      discoveryFailed = true;
      const failure = rec.failure();
      const why = failure !== undefined ? networkProblem(failure, new URL(docUrl)) : e instanceof Error ? e.message.replace(`OIDC discovery at ${cfg.issuerUrl}: `, '') : 'failed';
      lines.push({ check: 'Discovery', status: 'FAIL', message: `${docUrl}: ${why}` });
    }
  }

  // what a login uses: what is stored, else what discovery found (oauth/discovery.ts, authorizationServer)
  const from = (stored: string | undefined, found: string | undefined): { url?: string; note: string } =>
    stored ? { url: stored, note: '' } : found ? { url: found, note: ' (discovered)' } : { note: '' };
  const missing = (what: string) => `not set${cfg.issuerUrl ? (discoveryFailed ? ', and discovery failed' : ', and discovery names none') : ''}: ${what}`;
  const authorization = from(cfg.authUri, discovered?.authorization_endpoint);
  const device = cfg.devAuthUri ? { url: cfg.devAuthUri, note: '' } : cfg.authUri ? { url: cfg.authUri, note: ' (the Authorization URI)' } : from(undefined, discovered?.device_authorization_endpoint);
  const token = from(cfg.tokenUri, discovered?.token_endpoint);
  const userinfo = from(cfg.userinfoUri, discovered?.userinfo_endpoint);
  const keys = from(cfg.keysUri, discovered?.jwks_uri);
  const wantsIdToken = (cfg.scope ?? '').split(' ').includes('openid');
  // a reference with an issuer is an OpenID Connect one: without openid in its scope the IdP issues no ID token
  const scopeProblem =
    cfg.issuerUrl && !wantsIdToken
      ? `${cfg.scope ? `scope ${JSON.stringify(cfg.scope)} has no openid` : 'no scope set, so no openid'}: with an issuer the reference is an OpenID Connect one, and without openid the IdP issues no ID token and logins through it fail; set --scope=${JSON.stringify(cfg.scope ? `openid ${cfg.scope}` : 'openid')}`
      : null;

  const endpointLine = async (check: string, e: { url?: string; note: string }, method: 'GET' | 'POST', absent: () => CheckLine): Promise<CheckLine> => {
    if (!e.url) return absent();
    const p = await probe(idp.fetch, e.url, check, method, left());
    if ('problem' in p) return { check, status: 'FAIL', message: `${e.url}${e.note}: ${p.problem}` };
    await p.response.body?.cancel().catch(() => {});
    return { check, status: 'PASS', message: reached(e.url, p.response.status) + e.note };
  };

  const keysLines = async (): Promise<CheckLine[]> => {
    const check = 'JWKS endpoint';
    if (!keys.url) {
      return wantsIdToken
        ? [{ check, status: 'FAIL', message: missing('ID tokens (scope openid) cannot be verified') }, { check: 'Signing keys', status: 'SKIP', message: 'no JWKS endpoint' }]
        : [{ check, status: 'SKIP', message: missing('users are identified from UserInfo alone') }, { check: 'Signing keys', status: 'SKIP', message: 'no JWKS endpoint' }];
    }
    const p = await probe(idp.fetch, keys.url, check, 'GET', left());
    const noKeys = { check: 'Signing keys', status: 'SKIP', message: 'the JWKS endpoint could not be read' } as const;
    if ('problem' in p) return [{ check, status: 'FAIL', message: `${keys.url}${keys.note}: ${p.problem}` }, noKeys];
    if (p.response.status !== 200) {
      await p.response.body?.cancel().catch(() => {});
      return [{ check, status: 'FAIL', message: `${keys.url}${keys.note} answered HTTP ${p.response.status} instead of its key set` }, noKeys];
    }
    let body: unknown;
    try {
      body = await p.response.json();
    } catch {
      return [{ check, status: 'FAIL', message: `${keys.url}${keys.note} answered something that is not JSON` }, noKeys];
    }
    const found = await signingKeys(body);
    if (typeof found === 'string') return [{ check, status: 'FAIL', message: `${keys.url}${keys.note}: ${found}` }, noKeys];
    const ignored = found.ignored.length ? `; ignored: ${found.ignored.join('; ')}` : '';
    const endpoint: CheckLine = { check, status: 'PASS', message: reached(keys.url, 200) + keys.note };
    if (found.usable.length === 0) return [endpoint, { check: 'Signing keys', status: 'FAIL', message: `no key that can verify ID tokens${ignored}` }];
    return [endpoint, { check: 'Signing keys', status: 'PASS', message: `${found.usable.length} key${found.usable.length === 1 ? '' : 's'} to verify ID tokens: ${found.usable.join(', ')}${ignored}` }];
  };

  const deviceRequest = async (): Promise<CheckLine> => {
    const check = 'Device authorization';
    if (!device.url) return { check, status: 'FAIL', message: missing('logins cannot start') + (scopeProblem ? `; and ${scopeProblem}` : '') };
    const as: oauth.AuthorizationServer = {
      issuer: cfg.issuerUrl ?? new URL(device.url).origin,
      device_authorization_endpoint: device.url,
      ...(token.url ? { token_endpoint: token.url } : {}),
    };
    const rec = recording(idp.fetch, left());
    try {
      assertHttpsUrl(device.url, 'Device authorization URI');
      let kid: string | undefined;
      const da = await withClientKeys(cfg, async (c) => processDeviceAuthorization(c, as, await deviceAuthorizationRequest(c, as, rec.fetch)), (k) => (kid = k));
      const scope = cfg.scope ? ` and scope ${JSON.stringify(cfg.scope)}` : ' (no scope set)';
      const lifetime = Math.max(0, Math.round((da.expiresAt - Date.now()) / 1000));
      const signer = cfg.clientKeys?.[0];
      const credential =
        cfg.clientAuth === 'private_key_jwt' ? `a client assertion signed by key ${kid ?? '?'}` : cfg.clientAuth === 'client_secret_basic' ? 'the stored secret in an HTTP Basic header' : 'the stored secret';
      const rollover =
        signer && kid !== undefined && kid !== signer.kid
          ? `; the IdP refused the new client key ${signer.kid} (invalid_client) and logins use the previous one until the new public key is registered at the IdP`
          : '';
      const accepted = `the IdP accepted client ${JSON.stringify(cfg.clientId)} with ${credential}${scope} and issued a device code, left unused to expire (in ${lifetime} s)${rollover}`;
      return scopeProblem ? { check, status: 'FAIL', message: `${scopeProblem} (${accepted})` } : { check, status: 'PASS', message: accepted };
    } catch (e) {
      const failure = rec.failure();
      const also = scopeProblem ? `; and ${scopeProblem}` : '';
      if (failure !== undefined) return { check, status: 'FAIL', message: `${device.url}: ${networkProblem(failure, new URL(device.url))}${also}` };
      if (e instanceof OAuthError) return { check, status: 'FAIL', message: refusal(e, cfg) + also };
      return { check, status: 'FAIL', message: `the device authorization failed${also}` };
    }
  };

  const [auth, dev, tok, info, jwks, request] = await Promise.all([
    endpointLine('Authorization URI', authorization, 'GET', () => ({ check: 'Authorization URI', status: 'SKIP', message: missing('the device flow does not use it') })),
    cfg.devAuthUri || !cfg.authUri
      ? endpointLine('Device authorization URI', device, 'POST', () => ({ check: 'Device authorization URI', status: 'FAIL', message: missing('logins cannot start') }))
      : Promise.resolve<CheckLine>({ check: 'Device authorization URI', status: 'SKIP', message: 'not set: logins use the Authorization URI' }),
    endpointLine('Token URI', token, 'POST', () => ({ check: 'Token URI', status: 'FAIL', message: missing('logins cannot finish') })),
    endpointLine('User info URI', userinfo, 'GET', () =>
      wantsIdToken
        ? { check: 'User info URI', status: 'SKIP', message: missing('users are identified from the ID token alone') }
        : { check: 'User info URI', status: 'FAIL', message: missing('with no openid in the scope there is no ID token either, so nothing identifies the user') },
    ),
    keysLines(),
    deviceRequest(),
  ]);
  lines.push(auth, dev, tok, info, ...jwks, request);
  return lines;
}
