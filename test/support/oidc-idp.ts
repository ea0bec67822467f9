/**
 * A real OpenID Provider for tests: node-oidc-provider over HTTPS on
 * 127.0.0.1 with an ephemeral port, a certificate from our own test CA,
 * device flow enabled, a confidential client, and test accounts. The
 * "other device" step is done like a user would: `approveDevice` walks the
 * provider's own HTML pages (user code form, login, consent) over HTTPS with
 * a cookie jar.
 *
 * Besides the main confidential client (client_secret_post, device_code and
 * refresh_token grants), two clients exist to provoke refusals: one without
 * the device grant and one allowed only the `openid` scope. oidc-provider
 * refuses a missing grant with `invalid_request`; `grantRefusal:
 * 'unauthorized_client'` rewrites that answer to the RFC 6749 §5.2 code that
 * Keycloak and Entra ID send, so both shapes can be tested.
 *
 * Tests may also change what the provider says: the device authorization's
 * polling interval (`pollInterval`), extra keys in its JWKS (`publishKeys`),
 * every answer of its device authorization endpoint (`rewriteDeviceAnswers`),
 * and every answer of its token endpoint (`rewriteTokenAnswers`), to hand a
 * client ID tokens the test signed itself with keys it chose (`signingJwk`
 * is the provider's own). It counts what it serves (`stats`): TLS
 * connections, those that resumed a session, and requests by path.
 *
 * The provider fetches documents clients name (a client's `jwks_uri`).
 * Its own fetch refuses loopback and other special-use addresses, where
 * every dirid of the tests listens; `trustForFetches(caPem)` makes it
 * fetch through node:https instead, trusting that CA only (the realm's),
 * as an IdP on another host would reach dirid's public name.
 */
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import { createCa, issueServerCert } from '../../src/server/pki.js';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export interface TestClient {
  clientId: string;
  clientSecret: string;
}

export interface TestIdp {
  issuer: string;
  caPem: string;
  clientId: string;
  clientSecret: string;
  /** a client registered without the device grant */
  noDeviceGrant: TestClient;
  /** a device-flow client allowed only the `openid` scope */
  narrowScope: TestClient;
  /** endpoints for IdP references */
  endpoints: { auth: string; devAuth: string; token: string; userinfo: string; keys: string };
  /** the kid of the key the provider signs ID tokens with now */
  signingKid(): string;
  /**
   * Replaces the signing key by a new one of the same type: the JWKS then
   * publishes only the new key, as after an IdP's key rotation. Returns its kid.
   */
  rotateKey(): Promise<string>;
  /** While true, the JWKS endpoint answers HTTP 503 (an outage of the key endpoint). */
  failJwks(down: boolean): void;
  /** the provider's outgoing fetches (a client's jwks_uri) go through node:https trusting this CA, loopback included */
  trustForFetches(caPem: string): void;
  /** The private key the provider signs ID tokens with now (a JWK with kid and alg), for tests that sign tokens themselves. */
  signingJwk(): JWK;
  /** Keys the JWKS endpoint publishes besides the provider's own, until called again (an empty list: none). */
  publishKeys(keys: JWK[]): void;
  /**
   * While a hook is set, every answer of the token endpoint (its HTTP status
   * and JSON body, success or error) goes through it and the client gets
   * what it returns: a test replaces the ID token by one it forged, or
   * answers an exchange the provider refused. Without an argument, answers
   * go out as the provider made them again.
   */
  rewriteTokenAnswers(hook?: TokenAnswerHook): void;
  /** Rewrites every answer of the device authorization endpoint (e.g. to a provider's own member names); none to stop. */
  rewriteDeviceAnswers(hook?: TokenAnswerHook): void;
  /**
   * What the provider has served so far: TLS connections accepted, how many
   * of them resumed an earlier TLS session (an abbreviated handshake) and
   * HTTP requests by path (`/token` counts the client's token requests).
   */
  stats(): IdpStats;
  approveDevice(userCode: string, account: string): Promise<void>;
  denyDevice(userCode: string): Promise<void>;
  stop(): Promise<void>;
}

export interface IdpStats {
  connections: number;
  resumed: number;
  requests: Record<string, number>;
}

/**
 * Makes `idp` answer the device flow in Google's shapes: its device
 * authorization answer names the page `verification_url` (RFC 8628's
 * `verification_uri` and the complete URI left out, so a client shows the
 * code to type), and its token endpoint answers a pending code with HTTP 428
 * and `slow_down` with HTTP 403. Returns the token answers' statuses as
 * they are served, in order.
 */
export function answerInGoogleShapes(idp: TestIdp): number[] {
  const statuses: number[] = [];
  idp.rewriteDeviceAnswers(({ status, body }) => {
    if (status !== 200) return { status, body };
    const { verification_uri: page, verification_uri_complete: _complete, ...rest } = body;
    return { status, body: { ...rest, verification_url: page } };
  });
  idp.rewriteTokenAnswers(({ status, body }) => {
    const shaped = body.error === 'authorization_pending' ? 428 : body.error === 'slow_down' ? 403 : status;
    statuses.push(shaped);
    return { status: shaped, body };
  });
  return statuses;
}

/** An answer of the token endpoint, as TestIdp.rewriteTokenAnswers sees and returns it. */
export interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}
export type TokenAnswerHook = (answer: TokenAnswer) => TokenAnswer | Promise<TokenAnswer>;

export interface TestIdpOptions {
  /** sub of each test account; email is <sub>@example.test */
  accounts?: string[];
  deviceCodeTtl?: number;
  /** extra clients (e.g. one without the device grant) */
  clients?: Array<Record<string, unknown>>;
  ca?: { certPem: string; keyPem: string };
  /** how a client without the device grant is refused (default: as oidc-provider does, invalid_request) */
  grantRefusal?: 'invalid_request' | 'unauthorized_client';
  /**
   * The algorithm ID tokens are signed with (default RS256): the JWKS key
   * is of the matching type, the provider enables only this algorithm for
   * ID tokens (so discovery advertises only it) and every client is
   * registered with it as id_token_signed_response_alg. HS256/384/512 sign
   * with the client secret (made long enough for HMAC), beside an RS256 key
   * in the JWKS.
   */
  signingAlg?: SigningAlg;
  /** The polling interval the device authorization answer names, in seconds (default: the provider's, 5 s). */
  pollInterval?: number;
  /** How the kids of the signing keys begin (default `test-key`): two IdPs of one test keep their kids apart. */
  keyIdPrefix?: string;
  /** How the clients are registered to send their secrets (default client_secret_post; oidc-provider refuses any other way). */
  clientAuthMethod?: 'client_secret_post' | 'client_secret_basic';
  /** The client authentication methods the provider takes at all, which discovery lists (default: oidc-provider's). */
  clientAuthMethods?: string[];
}

export type SigningAlg = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'ES512' | 'EdDSA' | 'HS256' | 'HS384' | 'HS512';

interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export async function startTestIdp(o: TestIdpOptions = {}): Promise<TestIdp> {
  const ca = o.ca ?? (await createCa('Test IdP CA'));
  const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const accounts = new Set(o.accounts ?? ['alice', 'bob']);
  const alg = o.signingAlg ?? 'RS256';
  const hmac = alg.startsWith('HS');
  const keyAlg = hmac ? 'RS256' : alg;
  let generation = 0;
  const newSigningKey = async () => {
    generation++;
    const { privateKey } = await generateKeyPair(keyAlg, { extractable: true, ...(keyAlg === 'EdDSA' ? { crv: 'Ed25519' } : {}) });
    return { ...(await exportJWK(privateKey)), kid: `${o.keyIdPrefix ?? 'test-key'}-${generation}`, use: 'sig', alg: keyAlg };
  };
  let jwk = await newSigningKey();
  let jwksDown = false;
  let extraKeys: JWK[] = [];
  let tokenHook: TokenAnswerHook | undefined;
  let deviceHook: TokenAnswerHook | undefined;
  let fetchCa: string | undefined;
  /** the provider's outgoing GETs: the platform fetch, or node:https trusting fetchCa once a test named one */
  const providerFetch = async (url: string | URL, init: { method?: string; headers?: ConstructorParameters<typeof Headers>[0]; signal?: AbortSignal }): Promise<Response> => {
    if (fetchCa === undefined) return globalThis.fetch(url, init);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    return new Promise<Response>((resolve, reject) => {
      const req = request(url, { method: init.method ?? 'GET', headers, ca: fetchCa, ...(init.signal ? { signal: init.signal } : {}) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve(new Response(Buffer.concat(chunks), { status: res.statusCode ?? 0, headers: h }));
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
  };
  const server: Server = createServer({ key: tls.keyPem, cert: tls.certPem });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  const issuer = `https://localhost:${port}`;
  const clientId = 'dirid-kdc';
  // HMAC keys are derived from the client secret, which must then be long enough for them
  const clientSecret = hmac ? 'idp-client-secret-123-long-enough-for-hmac-sha512-0123456789abcdef' : 'idp-client-secret-123';
  const noDeviceGrant = { clientId: 'no-device-grant', clientSecret: 'no-device-secret-456' };
  const narrowScope = { clientId: 'narrow-scope', clientSecret: 'narrow-scope-secret-789' };
  const signedWith = o.signingAlg ? { id_token_signed_response_alg: alg } : {};
  const makeProvider = () => new Provider(issuer, {
    clients: [
      { client_id: clientId, client_secret: clientSecret, grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [], token_endpoint_auth_method: o.clientAuthMethod ?? 'client_secret_post', ...signedWith },
      { client_id: noDeviceGrant.clientId, client_secret: noDeviceGrant.clientSecret, grant_types: ['authorization_code'], response_types: ['code'], redirect_uris: ['https://rp.example.test/cb'], token_endpoint_auth_method: o.clientAuthMethod ?? 'client_secret_post', ...(hmac ? {} : signedWith) },
      { client_id: narrowScope.clientId, client_secret: narrowScope.clientSecret, grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [], token_endpoint_auth_method: o.clientAuthMethod ?? 'client_secret_post', scope: 'openid', ...(hmac ? {} : signedWith) },
      ...(o.clients ?? []),
    ] as never,
    jwks: { keys: [jwk as never] },
    ...(o.clientAuthMethods ? { clientAuthMethods: o.clientAuthMethods } : {}),
    ...(o.signingAlg ? { enabledJWA: { idTokenSigningAlgValues: hmac ? [alg, 'RS256'] : [alg] } } : {}),
    features: { deviceFlow: { enabled: true }, devInteractions: { enabled: true } },
    scopes: ['openid', 'email', 'profile', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username', 'name'] },
    ttl: { DeviceCode: o.deviceCodeTtl ?? 600 },
    cookies: { keys: ['test-cookie-key-0123456789'] },
    fetch: providerFetch,
    async findAccount(_ctx: unknown, id: string) {
      if (!accounts.has(id)) return undefined;
      return { accountId: id, async claims() { return { sub: id, email: `${id}@example.test`, email_verified: true, preferred_username: id, name: id }; } };
    },
  } as never);
  type Middleware = (ctx: { path: string; status: number; body: unknown }, next: () => Promise<void>) => Promise<void>;
  const configure = (provider: Provider): Provider => {
    provider.on('server_error', () => {});
    // the answers tests may change: the poll interval, the published keys, the token endpoint's answers
    (provider as unknown as { use(m: Middleware): void }).use(async (ctx, next) => {
      await next();
      const body = ctx.body as Record<string, unknown> | undefined;
      if (!body || typeof body !== 'object') return;
      if (ctx.path === '/device/auth' && o.pollInterval !== undefined && ctx.status === 200) ctx.body = { ...body, interval: o.pollInterval };
      if (ctx.path === '/jwks' && extraKeys.length > 0) ctx.body = { keys: [...(body.keys as JWK[]), ...extraKeys] };
      if (ctx.path === '/device/auth' && deviceHook) {
        const r = await deviceHook({ status: ctx.status, body: ctx.body as Record<string, unknown> });
        ctx.status = r.status;
        ctx.body = r.body;
      }
      if (ctx.path === '/token' && tokenHook) {
        const r = await tokenHook({ status: ctx.status, body });
        ctx.status = r.status;
        ctx.body = r.body;
      }
    });
    if (o.grantRefusal === 'unauthorized_client') {
      (provider as unknown as { use(m: Middleware): void }).use(async (ctx, next) => {
        await next();
        const body = ctx.body as { error?: string; error_description?: string } | undefined;
        if (ctx.status === 400 && body?.error === 'invalid_request' && /is not allowed for this client/.test(body.error_description ?? '')) {
          ctx.body = { error: 'unauthorized_client', error_description: body.error_description };
        }
      });
    }
    return provider;
  };
  // a rotation starts a new provider with the new key; the server keeps answering on the same port
  let handler = configure(makeProvider()).callback();
  const counts: IdpStats = { connections: 0, resumed: 0, requests: {} };
  server.on('secureConnection', (socket) => {
    counts.connections++;
    if (socket.isSessionReused()) counts.resumed++;
  });
  server.on('request', (req, res) => {
    const path = req.url?.split('?')[0] ?? '';
    counts.requests[path] = (counts.requests[path] ?? 0) + 1;
    if (jwksDown && req.url?.split('?')[0] === '/jwks') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('key endpoint down');
      return;
    }
    handler(req, res);
  });

  const jar = new Map<string, string>();
  const http = (method: string, path: string, form?: Record<string, string>): Promise<HttpResult> =>
    new Promise((resolve, reject) => {
      const body = form ? new URLSearchParams(form).toString() : undefined;
      const headers: Record<string, string> = { cookie: [...jar.entries()].map(([k, v]) => `${k}=${v}`).join('; ') };
      if (body) {
        headers['content-type'] = 'application/x-www-form-urlencoded';
        headers['content-length'] = String(Buffer.byteLength(body));
      }
      const req = request(new URL(path, issuer), { method, headers, ca: ca.certPem }, (res) => {
        for (const c of ([] as string[]).concat(res.headers['set-cookie'] ?? [])) {
          const [kv] = c.split(';');
          const eq = kv!.indexOf('=');
          jar.set(kv!.slice(0, eq), kv!.slice(eq + 1));
        }
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
  /** follows redirects like a browser */
  const browse = async (method: string, path: string, form?: Record<string, string>): Promise<HttpResult> => {
    let r = await http(method, path, form);
    for (let i = 0; i < 10 && r.status >= 300 && r.status < 400 && r.headers.location; i++) r = await http('GET', String(r.headers.location));
    return r;
  };
  /** the first form of a page: action and hidden/filled inputs */
  const formOf = (html: string): { action: string; fields: Record<string, string> } => {
    const m = /<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
    if (!m) throw new Error(`no form on the page: ${html.slice(0, 300)}`);
    const fields: Record<string, string> = {};
    for (const i of m[2]!.matchAll(/<input[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(i[0])?.[1];
      const value = /value="([^"]*)"/.exec(i[0])?.[1] ?? '';
      if (name) fields[name] = value;
    }
    return { action: m[1]!.replace(/&amp;/g, '&'), fields };
  };

  async function walk(userCode: string, account: string | null): Promise<void> {
    jar.clear();
    let page = await browse('GET', '/device');
    let f = formOf(page.body);
    page = await browse('POST', f.action, { ...f.fields, user_code: userCode });
    f = formOf(page.body);
    if (account === null) {
      await browse('POST', f.action, { ...f.fields, abort: 'yes' });
      return;
    }
    page = await browse('POST', f.action, { ...f.fields, confirm: 'yes' });
    for (let step = 0; step < 4 && !/Sign-in Success/.test(page.body); step++) {
      f = formOf(page.body);
      const fields = f.fields.prompt === 'login' ? { ...f.fields, login: account, password: 'any' } : f.fields;
      page = await browse('POST', f.action, fields);
    }
    if (!/Sign-in Success/.test(page.body)) throw new Error(`device approval did not finish: ${page.body.slice(0, 400)}`);
  }

  return {
    issuer,
    caPem: ca.certPem,
    clientId,
    clientSecret,
    noDeviceGrant,
    narrowScope,
    endpoints: { auth: `${issuer}/auth`, devAuth: `${issuer}/device/auth`, token: `${issuer}/token`, userinfo: `${issuer}/me`, keys: `${issuer}/jwks` },
    signingKid: () => jwk.kid,
    async rotateKey() {
      jwk = await newSigningKey();
      handler = configure(makeProvider()).callback();
      return jwk.kid;
    },
    failJwks(down) {
      jwksDown = down;
    },
    trustForFetches(caPem) {
      fetchCa = caPem;
    },
    signingJwk: () => ({ ...jwk }),
    publishKeys(keys) {
      extraKeys = [...keys];
    },
    rewriteDeviceAnswers(hook) {
      deviceHook = hook;
    },
    rewriteTokenAnswers(hook) {
      tokenHook = hook;
    },
    stats: () => ({ connections: counts.connections, resumed: counts.resumed, requests: { ...counts.requests } }),
    approveDevice: (code, account) => walk(code, account),
    denyDevice: (code) => walk(code, null),
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** idp-add options naming this IdP with its endpoints configured (not discovered), as most tests add it. */
export function idpReference(idp: TestIdp, scope = 'openid'): Record<string, string> {
  return {
    client_id: idp.clientId,
    secret: idp.clientSecret,
    issuer_url: idp.issuer,
    dev_auth_uri: idp.endpoints.devAuth,
    token_uri: idp.endpoints.token,
    keys_uri: idp.endpoints.keys,
    scope,
  };
}
