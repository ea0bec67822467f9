/**
 * Talking to dirid servers over HTTPS (docs/architecture.md "Contracts"):
 * trusting only the realm's CA (`ca_file`), with a `Referer` under the
 * server's own `/dirid/` (CSRF rule), `User-Agent: dirid/<version>` and
 * `Accept-Language` from the locale. The client speaks JSON-RPC — one
 * encoding everywhere (ping and every command); both endpoints take the same
 * envelope and the XML parser alone cost 40 ms of a 180 ms `dirid ping`.
 *
 * Authentication: a cached session cookie (`dirid_session`) on
 * `/dirid/session/json` while the credential cache holds a valid TGT of the
 * principal the session belongs to, else `Authorization: Negotiate <token>` on
 * `/dirid/json` from a pluggable `Authenticator` (Kerberos by default). A
 * cookie from any `Set-Cookie` is cached per user (under the cache
 * directory) and per server, mode 0600, until it expires; a 401 on the
 * cookie drops it and retries once with Negotiate. A host joining the
 * realm with its one-time password calls `/dirid/session/enroll` with no
 * credentials at all (ConnectOptions.enrolment). A server that does not
 * answer (connection refused, timeout, 502-504) makes the caller try the
 * next one (discovery.ts); with -v it says so.
 */
import { request } from 'node:https';
import { connect as netConnect } from 'node:net';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { decodeJsonResponse, encodeJsonRequest } from '../rpc/codec/json.js';
import { CodecError, type RpcResponse, type WireValue } from '../rpc/codec/types.js';
import { cacheDir, type ClientConfig } from './config.js';
import { CliError, serverError } from './errors.js';
import { NOT_AUTHENTICATED, ticketPrincipal } from './principal.js';
import { serverCandidates, type SrvLookup } from './discovery.js';

/** Produces SPNEGO tokens for `HTTP/<serviceHost>`; the Kerberos code implements it. */
export interface Authenticator {
  /** base64 Negotiate token for the service HTTP/<serviceHost> */
  negotiateToken(serviceHost: string): Promise<string>;
  /**
   * The principal the tokens speak for while it holds a valid ticket; null
   * when there is none. A cached session is used only for this principal.
   */
  principal?(): string | null;
  /** checks the server's mutual-authentication answer to the last token for this host */
  verifyReply?(serviceHost: string, wwwAuthenticate: string | undefined): void;
}

/** Kerberos from the MIT credential cache; its code loads only when a token is needed. */
export function kerberosAuthenticator(realm: string): Authenticator {
  const pending = new Map<string, { verify(h: string | undefined): void }>();
  return {
    async negotiateToken(host) {
      const { negotiateFor } = await import('./negotiate.js');
      const ctx = await negotiateFor(host, realm);
      pending.set(host, ctx);
      return ctx.token;
    },
    principal: () => ticketPrincipal(),
    verifyReply(host, header) {
      pending.get(host)?.verify(header);
    },
  };
}

/** No Kerberos: only a cached session cookie can authenticate. */
export const noAuthenticator: Authenticator = {
  negotiateToken() {
    return Promise.reject(new CliError(NOT_AUTHENTICATED));
  },
};

export interface Session {
  call(method: string, args: WireValue[], options: Record<string, WireValue>): Promise<RpcResponse>;
  /** URL of the server that answered */
  server: string;
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** The server did not answer: try the next one. */
export class ConnectError extends Error {}

const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;
const TLS_ERRORS = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
]);

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export const CLIENT_VERSION = readVersion();

/** `de_DE.UTF-8` → `de-de`; C, POSIX or nothing → `en-us`. */
export function acceptLanguage(env: NodeJS.ProcessEnv = process.env): string {
  const raw = env.LC_ALL || env.LC_MESSAGES || env.LANG || '';
  const m = /^([a-z]{2,3})(?:_([A-Za-z]{2}))?(?:[.@]|$)/.exec(raw);
  if (!m) return 'en-us';
  return (m[2] ? `${m[1]}-${m[2]}` : m[1]!).toLowerCase();
}

/** Whether a TCP connection to the server's host and port opens within `timeoutMs`. */
export function reachable(url: URL, timeoutMs = 5000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = netConnect({ host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443), timeout: timeoutMs });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

export function post(url: URL, ca: string, body: string, headers: Record<string, string>, timeoutMs = 15_000): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const req = request(
      { method: 'POST', host, port: url.port || 443, path: url.pathname, ca, timeout: timeoutMs, headers: { 'Content-Length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new CliError(`the server's answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new ConnectError('timed out')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e instanceof CliError || e instanceof ConnectError) reject(e);
      else if (e.code && TLS_ERRORS.has(e.code)) reject(new CliError(`cannot connect to '${url.origin}': certificate verification failure (${e.message})`));
      else reject(new ConnectError(e.message));
    });
    req.end(body);
  });
}

// ---- session cookie cache ---------------------------------------------------

interface StoredCookie {
  cookie: string;
  expires: number;
  principal: string | null;
}

const COOKIE_PAIR = /^dirid_session=[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]{1,4096}$/;

/** One file per server origin under `<cache>/dirid/sessions/`. */
export function cookieFile(origin: string): string {
  return join(cacheDir(), 'sessions', `${createHash('sha256').update(origin).digest('hex').slice(0, 32)}.json`);
}

/**
 * The cached cookie for this server, for `principal` only: none without a
 * principal holding a valid ticket (after kdestroy a session is not used),
 * none stored for another principal, none expired.
 */
export function loadCookie(origin: string, principal: string | null, now = Date.now()): string | null {
  if (!principal) return null;
  try {
    const v = JSON.parse(readFileSync(cookieFile(origin), 'utf8')) as Partial<StoredCookie>;
    if (typeof v.cookie !== 'string' || !COOKIE_PAIR.test(v.cookie) || typeof v.expires !== 'number') return null;
    if (v.expires <= now + 5000) return null;
    if (v.principal !== principal) return null;
    return v.cookie;
  } catch {
    return null;
  }
}

/** `Set-Cookie: dirid_session=...; Max-Age=N` (or Expires) → what is stored; null when there is none. */
export function parseSessionCookie(setCookie: string | string[] | undefined, now = Date.now()): { cookie: string; expires: number } | null {
  for (const header of Array.isArray(setCookie) ? setCookie : setCookie ? [setCookie] : []) {
    const [pair, ...attrs] = header.split(';').map((s) => s.trim());
    if (!pair || !COOKIE_PAIR.test(pair)) continue;
    let maxAge: number | null = null;
    let expires: number | null = null;
    for (const a of attrs) {
      const eq = a.indexOf('=');
      const k = (eq < 0 ? a : a.slice(0, eq)).trim().toLowerCase();
      const v = eq < 0 ? '' : a.slice(eq + 1).trim();
      if (k === 'max-age' && /^-?\d{1,10}$/.test(v)) maxAge = now + Number(v) * 1000;
      else if (k === 'expires' && !Number.isNaN(Date.parse(v))) expires = Date.parse(v);
    }
    const until = maxAge ?? expires; // Max-Age wins (RFC 6265 §5.3)
    // a cookie without a lifetime lives for this process only: nothing to store
    return until === null ? null : { cookie: pair, expires: until };
  }
  return null;
}

export function saveCookie(origin: string, principal: string | null, setCookie: string | string[] | undefined, now = Date.now()): void {
  const parsed = parseSessionCookie(setCookie, now);
  if (!parsed) return;
  if (parsed.expires <= now) return dropCookie(origin);
  mkdirSync(join(cacheDir(), 'sessions'), { recursive: true, mode: 0o700 });
  const f = cookieFile(origin);
  const tmp = `${f}.${process.pid}.tmp`;
  const stored: StoredCookie = { ...parsed, principal };
  writeFileSync(tmp, JSON.stringify(stored), { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, f);
}

export function dropCookie(origin: string): void {
  rmSync(cookieFile(origin), { force: true });
}

// ---- calls ---------------------------------------------------------------------

export interface ConnectOptions {
  verbose: boolean;
  /** `ping --server HOST` */
  server?: string;
  log?: (line: string) => void;
  authenticator?: Authenticator;
  /** SRV look-ups (tests) */
  srvLookup?: SrvLookup;
  /**
   * No credentials at all: calls go to `/dirid/session/enroll`, which runs
   * host_enroll alone, authenticated by the host's one-time password it
   * carries (`dirid join` on a host that has no ticket yet).
   */
  enrolment?: boolean;
}

export interface Call {
  method: string;
  args: WireValue[];
  options: Record<string, WireValue>;
}

/**
 * Tries the servers in order with the first call; returns the session of
 * the first server that answers, with that call's response.
 */
export async function connect(conf: ClientConfig, o: ConnectOptions, first: Call): Promise<{ session: Session; response: RpcResponse }> {
  const log = o.log ?? ((l: string) => process.stderr.write(l + '\n'));
  let ca: string;
  try {
    ca = readFileSync(conf.caFile, 'utf8');
  } catch {
    throw new CliError(`cannot read the CA certificate file ${conf.caFile}`);
  }
  const auth = o.authenticator ?? kerberosAuthenticator(conf.realm);
  let lastError: unknown;
  for await (const url of serverCandidates(conf, o.server, o.srvLookup)) {
    if (o.verbose) log(`dirid: INFO: trying ${url}`);
    const session = o.enrolment ? makeEnrolmentSession(new URL(url), ca, o.verbose ? log : null) : makeSession(new URL(url), ca, auth, o.verbose ? log : null);
    try {
      const response = await session.call(first.method, first.args, first.options);
      return { session, response };
    } catch (e) {
      if (!(e instanceof ConnectError)) throw e;
      lastError = e;
      if (o.verbose) log(`dirid: WARNING: Connection to ${url} failed`);
    }
  }
  throw new CliError(`cannot connect to any dirid server${lastError instanceof Error ? ` (last error: ${lastError.message})` : ''}`);
}

export function decodeReply(r: HttpReply): RpcResponse {
  if (r.status === 502 || r.status === 503 || r.status === 504) throw new ConnectError(`HTTP ${r.status}`);
  const type = String(r.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) {
    const first = r.body.toString('utf8', 0, Math.min(r.body.length, 200)).split('\n')[0]!.replace(/[\u0000-\u001f\u007f]/g, '');
    throw new CliError(`the server answered HTTP ${r.status}${first ? `: ${first}` : ''}`);
  }
  try {
    return decodeJsonResponse(r.body);
  } catch (e) {
    if (e instanceof CodecError) throw new CliError(`invalid answer from the server: ${e.message}`);
    throw e;
  }
}

/** A refused call (401): the server's error (not authenticated, or why the account may not authenticate), else "not authenticated". */
function refusal(r: HttpReply): CliError {
  try {
    const e = decodeJsonResponse(r.body).error;
    if (e) return serverError(e);
  } catch {
    // not a JSON-RPC answer
  }
  return new CliError(NOT_AUTHENTICATED);
}

function requestHeaders(origin: string): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json',
    Referer: `${origin}/dirid/json`,
    'User-Agent': `dirid/${CLIENT_VERSION}`,
    'Accept-Language': acceptLanguage(),
  };
}

/** Calls without credentials to `/dirid/session/enroll` (ConnectOptions.enrolment); no cookie is kept. */
function makeEnrolmentSession(url: URL, ca: string, log: ((l: string) => void) | null): Session {
  const origin = url.origin;
  const server = url.toString();
  return {
    server,
    async call(method, args, options) {
      if (log) log(`dirid: INFO: Forwarding '${method}' to server '${server}' (enrolment, no credentials)`);
      const r = await post(new URL('/dirid/session/enroll', origin), ca, encodeJsonRequest({ method, args, options, id: 0 }), requestHeaders(origin));
      if (r.status === 401) throw refusal(r);
      return decodeReply(r);
    },
  };
}

function makeSession(url: URL, ca: string, auth: Authenticator, log: ((l: string) => void) | null): Session {
  const origin = url.origin;
  const server = url.toString();
  const baseHeaders = requestHeaders(origin);
  const serviceHost = url.hostname.replace(/^\[|\]$/g, '');
  return {
    server,
    async call(method, args, options) {
      if (log) log(`dirid: INFO: Forwarding '${method}' to server '${server}'`);
      const body = encodeJsonRequest({ method, args, options, id: 0 });
      const principal = auth.principal?.() ?? null;
      const cookie = loadCookie(origin, principal);
      if (cookie) {
        const r = await post(new URL('/dirid/session/json', origin), ca, body, { ...baseHeaders, Cookie: cookie });
        if (r.status !== 401) {
          const resp = decodeReply(r);
          saveCookie(origin, resp.principal ?? principal, r.headers['set-cookie']);
          return resp;
        }
        dropCookie(origin);
      }
      let token: string;
      try {
        token = await auth.negotiateToken(serviceHost);
      } catch (e) {
        // a server that does not answer is reported as such, not as a Kerberos error about its service principal
        if (!(await reachable(url))) throw new ConnectError(`${origin} does not answer`);
        throw e;
      }
      const r = await post(new URL('/dirid/json', origin), ca, body, { ...baseHeaders, Authorization: `Negotiate ${token}` });
      if (r.status === 401) throw refusal(r);
      auth.verifyReply?.(serviceHost, r.headers['www-authenticate'] as string | undefined);
      const resp = decodeReply(r);
      saveCookie(origin, resp.principal ?? principal, r.headers['set-cookie']);
      return resp;
    },
  };
}
