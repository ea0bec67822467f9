/**
 * The HTTPS API (docs/architecture.md "Contracts"): JSON-RPC and XML-RPC on
 * `/dirid/json`, `/dirid/xml` (Kerberos Negotiate) and `/dirid/session/json`,
 * `/dirid/session/xml` (session cookie), plus `/dirid/session/login_password`,
 * `/dirid/session/change_password` (one's own password with the old one, the
 * way out of an expired one), `/dirid/session/login_kerberos` and `/dirid/session/logout`; `/dirid/session/enroll`, where a host
 * joining the realm calls host_enroll (and nothing else) with its one-time password and no other
 * credentials; and, unauthenticated, the public key
 * sets of IdP references using private_key_jwt at
 * `/dirid/idp/NAME/jwks.json` (docs/client-auth.md) and the web console's
 * files under `/dirid/ui/` (rpc/ui-static.ts). It authenticates, decodes, dispatches
 * to the framework and encodes. Every error it answers with, whatever the
 * endpoint (JSON-RPC, XML-RPC, a 401 refusal, a login's text answer, a
 * failure outside any command), takes its wire form from rpc/errors.ts.
 * Every call is logged as one line without argument values (`rpc request`),
 * every login (password, Negotiate with the caller's authentication
 * indicators, a session cookie refused) as `rpc login` with its method and
 * outcome, and every directory write a command makes as `rpc write`
 * (framework/dispatch.ts; docs/logging.md). Whether an
 * account may authenticate is account/state.ts's to say, on every way in
 * (password login, Negotiate, each request on a session cookie, which also
 * ends once the password changed or the account was disabled, renamed or
 * deleted since the cookie was issued); an account it refuses gets its
 * public error from objects/login.ts (accountRefusal), which also holds the
 * password login rule itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallContext, CommandRegistry, CommandResult, Principal, ServerInfo } from '../framework/command.js';
import { dispatch } from '../framework/dispatch.js';
import { publicError, type PublicError } from '../framework/errors.js';
import { publishedClientJwks } from '../objects/idp.js';
import { AuthRefusal } from '../objects/login.js';
import { CodecError, type RpcRequest, type RpcResponse, type WireValue } from './codec/types.js';
import { decodeJsonRequest, encodeJsonResponse } from './codec/json.js';
import { decodeXmlRequest, encodeXmlResponse } from './codec/xml.js';
import { rejectionReason, toRpcError } from './errors.js';
import { SessionCodec, SESSION_COOKIE, parseCookies } from './session.js';
import type { SessionBinding } from '../account/state.js';
import { createUiHandler } from './ui-static.js';
import type { Logger } from '../log/logger.js';

export const MAX_BODY_BYTES = 1024 * 1024;
/** What `/dirid/session/enroll` runs, without credentials: the command checks the host's one-time password itself. */
const ENROLMENT_COMMANDS: ReadonlySet<string> = new Set(['host_enroll']);
/** How long a request body may take to arrive, by default (docs/load.md). */
export const BODY_TIMEOUT_MS = 30_000;

/** Result of a Negotiate (SPNEGO) exchange on one request. */
export interface NegotiateOutcome {
  principal: Principal;
  /** base64 token for `WWW-Authenticate: Negotiate <token>` (mutual auth) */
  responseToken?: string;
}


export interface RpcServerOptions {
  registry: CommandRegistry;
  /** the store commands run against, handed to them untouched */
  dir: CallContext['dir'];
  server: ServerInfo;
  sessions: SessionCodec;
  /** checks a user name and password and whether the account may log in */
  passwordLogin(user: string, password: string): Promise<Principal | AuthRefusal>;
  /** a user's own password changed with the old one, without a session (objects/passwd.ts changeOwnPassword) */
  changePassword?(change: { user: string; oldPassword: string; newPassword: string }): Promise<{ outcome: 'changed' } | { outcome: 'rejected' | 'denied' | 'failed'; message: string }>;
  /** verifies an `Authorization: Negotiate` token (throws AuthRefusal for an account that may not log in) */
  negotiate?(token: string): Promise<NegotiateOutcome>;
  /** what a session beginning now is bound to: the account's entry and security stamp (account/state.ts) */
  bindSession?(p: Principal): Promise<SessionBinding>;
  /** whether the principal named by a session cookie, bound to `binding` when it began, may still act: null, or why not */
  checkSession?(p: Principal, binding: SessionBinding): Promise<AuthRefusal | null>;
  /** milliseconds a request body may take to arrive (BODY_TIMEOUT_MS) */
  bodyTimeoutMs?: number;
  /** the API's logger (component rpc) */
  log: Logger;
  /** told of each command answered: its method, ok or the error's name, milliseconds (the server's metrics) */
  observe?(command: string, outcome: string, ms: number): void;
  /** where the built web console lives (default: dist/ui, rpc/ui-static.ts) */
  uiDir?: string;
}

type Encoding = 'json' | 'xml';

/**
 * Writes a whole answer. API answers (entries, errors, login outcomes) are
 * never stored by a browser or a proxy (`no-store`); an answer meant to be
 * kept (a published key set) says so in `headers`.
 */
/** A login event's own fields (a client's words), each cut to 255 characters; the logger escapes them. */
function cutFields(fields: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.slice(0, 255)]));
}

function send(res: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, {
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Strict-Transport-Security': 'max-age=31536000',
    ...headers,
  });
  res.end(body);
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function readBody(req: IncomingMessage, timeoutMs: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? '0');
    if (Number.isFinite(declared) && declared > MAX_BODY_BYTES) {
      reject(new HttpError(413, 'request body too large'));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => {
      reject(new HttpError(408, 'request body timeout'));
      req.destroy();
    }, timeoutMs);
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        clearTimeout(timer);
        reject(new HttpError(413, 'request body too large'));
        req.destroy();
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks));
    });
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** Drops undefined members so codecs see only wire values. */
function toWire(v: unknown): WireValue {
  if (v === undefined) return null;
  if (v === null || typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return v;
  if (Buffer.isBuffer(v) || v instanceof Date) return v;
  if (Array.isArray(v)) return v.map(toWire);
  const out: Record<string, WireValue> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (x !== undefined) out[k] = toWire(x);
  return out;
}

/** A command's result as the API sends it (test/support/in-process.ts gives it to tests that call in process). */
export function resultToWire(r: CommandResult): WireValue {
  return toWire({
    result: r.result,
    value: r.value ?? null,
    summary: r.summary,
    count: r.count,
    truncated: r.truncated,
    completed: r.completed,
    failed: r.failed,
  });
}

export function createRpcHandler(opts: RpcServerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const serveUi = createUiHandler(opts.uiDir);
  const bodyTimeout = opts.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  const encode = (enc: Encoding, r: RpcResponse) => (enc === 'json' ? encodeJsonResponse(r) : encodeXmlResponse(r));
  const contentType = (enc: Encoding) => (enc === 'json' ? 'application/json; charset=utf-8' : 'text/xml; charset=utf-8');

  /** The envelope of an error: anything thrown, in its one wire form (rpc/errors.ts). */
  function errorResponse(enc: Encoding, err: unknown, id: WireValue, principal: Principal | null): { body: string; name: string; code: number } {
    const error = toRpcError(err, opts.log);
    return { body: encode(enc, { result: null, error, id, principal: principal?.name ?? null, version: opts.server.version }), name: error.name, code: error.code };
  }

  /** The encoding the endpoint of a request target answers in; null for the others (login endpoints, targets that do not parse), which answer in text. */
  function encodingOf(target: string | undefined): Encoding | null {
    const path = (target ?? '/').split('?')[0]!;
    if (path === '/dirid/session/enroll') return 'json';
    const m = /^\/dirid\/(?:session\/)?(json|xml)$/.exec(path);
    return m ? (m[1] as Encoding) : null;
  }

  /** The Referer must point into our own /dirid/ tree (CSRF protection). */
  function checkReferer(req: IncomingMessage): void {
    const referer = req.headers.referer;
    const host = req.headers.host;
    if (!referer || !host || !referer.startsWith(`https://${host}/dirid/`)) {
      throw new HttpError(400, 'Missing or invalid HTTP Referer');
    }
  }

  async function call(enc: Encoding, body: Buffer, principal: Principal | null, res: ServerResponse, extraHeaders: Record<string, string | string[]> = {}, only?: ReadonlySet<string>): Promise<void> {
    const started = performance.now();
    let request: RpcRequest | undefined;
    let outcome = 'ok';
    let reason: string | undefined;
    let errorName: string | undefined;
    let responseBody: string;
    try {
      request = enc === 'json' ? decodeJsonRequest(body) : decodeXmlRequest(body);
      if (only && !only.has(request.method)) throw publicError('NotAuthenticated');
      const ctx = { dir: opts.dir, principal, server: opts.server, cache: new Map<string, unknown>(), registry: opts.registry, log: opts.log };
      const result = await dispatch(ctx, request.method, request.args, request.options);
      responseBody = encode(enc, { result: resultToWire(result), error: null, id: request.id ?? null, principal: principal?.name ?? null, version: opts.server.version });
    } catch (err) {
      // a command that refuses credentials of its own (host_enroll's one-time password) says why in the log only
      if (err instanceof AuthRefusal) reason = err.message;
      const answer = errorResponse(enc, err instanceof AuthRefusal ? err.publicError : err, request?.id ?? null, principal);
      outcome = `${answer.name}(${answer.code})`;
      errorName = answer.name;
      responseBody = answer.body;
    }
    const ms = performance.now() - started;
    opts.observe?.(request?.method ?? '-', errorName ?? 'ok', ms);
    opts.log.info('request', { principal: principal?.name ?? null, command: request?.method.slice(0, 64) ?? null, encoding: enc, outcome, reason, duration_ms: Math.round(ms * 10) / 10 });
    // a command that is a login of its own (host_enroll) is logged as the logins are, by what it logs in
    const login = request && opts.registry.has(request.method) ? opts.registry.get(request.method).loginEvent?.(request.args, request.options) : undefined;
    if (login) {
      opts.log.info(login.event, { ...cutFields(login.fields), outcome: outcome === 'ok' ? 'ok' : 'denied', error: outcome === 'ok' ? undefined : outcome, reason, principal: principal?.name });
    }
    send(res, 200, contentType(enc), responseBody, extraHeaders);
  }

  function refused(enc: Encoding, res: ServerResponse, err: PublicError, negotiate: boolean): void {
    send(res, 401, contentType(enc), errorResponse(enc, err, null, null).body, negotiate ? { 'WWW-Authenticate': 'Negotiate' } : {});
  }

  function unauthenticated(enc: Encoding, res: ServerResponse, negotiate: boolean): void {
    refused(enc, res, publicError('NotAuthenticated'), negotiate);
  }

  /** The Set-Cookie of a session beginning now, bound to the account as it is now. */
  async function sessionCookie(p: Principal): Promise<string> {
    return opts.sessions.cookieFor(p, opts.bindSession ? await opts.bindSession(p) : { entry: '', stamp: '' });
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let path: string;
    try {
      path = new URL(req.url ?? '/', 'https://localhost').pathname;
    } catch {
      // a request target that is not a path (`//a:b`): the client's fault, answered as such
      const e = toRpcError(new CodecError('parse', 'the request target is not a path'), opts.log);
      return send(res, 400, 'text/plain; charset=utf-8', `${e.message}\n`);
    }
    if (serveUi(req, res)) return;
    const jwks = /^\/dirid\/idp\/([^/]+)\/jwks\.json$/.exec(path);
    if (jwks && (req.method === 'GET' || req.method === 'HEAD')) {
      let name: string;
      try {
        name = decodeURIComponent(jwks[1]!);
      } catch {
        return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
      }
      const set = await publishedClientJwks(opts.dir, name);
      if (!set) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
      // the IdP may keep it a while: a rollover keeps the old key published until the new one is used
      return send(res, 200, 'application/jwk-set+json', JSON.stringify(set), { 'Cache-Control': 'public, max-age=300' });
    }
    if (req.method !== 'POST') {
      if (path === '/' || path === '/dirid' || path === '/dirid/') return send(res, 200, 'text/plain; charset=utf-8', 'dirid: POST JSON-RPC to /dirid/session/json or /dirid/json\n');
      return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'POST' });
    }
    const routes: Record<string, () => Promise<void>> = {
      '/dirid/session/login_password': async () => {
        checkReferer(req);
        const body = await readBody(req, bodyTimeout);
        const form = new URLSearchParams(body.toString('utf8'));
        const user = form.get('user') ?? '';
        const password = form.get('password') ?? '';
        const outcome =
          user && password && user.length <= 256 && password.length <= 1024
            ? await opts.passwordLogin(user, password)
            : new AuthRefusal(publicError('InvalidCredentials'), 'user name or password missing or too long');
        const who = user.slice(0, 64);
        if (outcome instanceof AuthRefusal) {
          const err = toRpcError(outcome.publicError, opts.log);
          opts.log.info('login', { method: 'password', user: who, outcome: 'denied', error: `${err.name}(${err.code})`, reason: outcome.message });
          return send(res, 401, 'text/plain; charset=utf-8', `${err.message}\n`, { 'X-Dirid-Rejection-Reason': rejectionReason(err) });
        }
        opts.log.info('login', { method: 'password', user: who, principal: outcome.name, outcome: 'ok' });
        send(res, 200, 'text/plain; charset=utf-8', `Authenticated as ${outcome.name}\n`, { 'Set-Cookie': await sessionCookie(outcome) });
      },
      '/dirid/session/change_password': async () => {
        checkReferer(req);
        const body = await readBody(req, bodyTimeout);
        const form = new URLSearchParams(body.toString('utf8'));
        const user = form.get('user') ?? '';
        const oldPassword = form.get('old_password') ?? '';
        const newPassword = form.get('new_password') ?? '';
        const fits = user && oldPassword && newPassword && user.length <= 256 && oldPassword.length <= 1024 && newPassword.length <= 1024;
        const done = !opts.changePassword
          ? { outcome: 'failed' as const, message: 'password changes are not served here' }
          : fits
            ? await opts.changePassword({ user, oldPassword, newPassword })
            : { outcome: 'denied' as const, message: 'user name, old or new password missing or too long' };
        const result = done.outcome === 'changed' ? 'ok' : done.outcome === 'rejected' ? 'policy-error' : done.outcome === 'denied' ? 'invalid-password' : 'error';
        opts.log.info('password_change', { user: user.slice(0, 64), outcome: result, reason: done.outcome === 'changed' ? undefined : done.message });
        const headers: Record<string, string> = { 'X-Dirid-Pwchange-Result': result };
        if (done.outcome === 'rejected') headers['X-Dirid-Pwchange-Policy-Error'] = done.message.replace(/[^\x20-\x7e]/g, '?');
        send(res, 200, 'text/plain; charset=utf-8', done.outcome === 'changed' ? 'Password change successful\n' : `Password change rejected: ${done.message}\n`, headers);
      },
      '/dirid/session/login_kerberos': async () => {
        checkReferer(req);
        await readBody(req, bodyTimeout);
        const outcome = await negotiateFrom(req);
        if (!outcome || outcome instanceof AuthRefusal) {
          const err = toRpcError(outcome ? outcome.publicError : publicError('NotAuthenticated'), opts.log);
          return send(res, 401, 'text/plain; charset=utf-8', `${err.message}\n`, { 'WWW-Authenticate': 'Negotiate' });
        }
        const headers: Record<string, string | string[]> = { 'Set-Cookie': await sessionCookie(outcome.principal) };
        if (outcome.responseToken) headers['WWW-Authenticate'] = `Negotiate ${outcome.responseToken}`;
        send(res, 200, 'text/plain; charset=utf-8', `Authenticated as ${outcome.principal.name}\n`, headers);
      },
      // a host's enrolment with its one-time password, no other credentials: host_enroll and nothing else (docs/access.md)
      '/dirid/session/enroll': async () => {
        checkReferer(req);
        const body = await readBody(req, bodyTimeout);
        await call('json', body, null, res, {}, ENROLMENT_COMMANDS);
      },
      '/dirid/session/logout': async () => {
        checkReferer(req);
        await readBody(req, bodyTimeout);
        const cookie = parseCookies(req.headers.cookie)[SESSION_COOKIE];
        const principal = cookie ? opts.sessions.principalFrom(cookie) : null;
        opts.log.info('logout', { principal: principal?.name ?? null });
        send(res, 200, 'text/plain; charset=utf-8', 'Logged out\n', { 'Set-Cookie': opts.sessions.clearingCookie() });
      },
    };
    for (const enc of ['json', 'xml'] as const) {
      routes[`/dirid/session/${enc}`] = async () => {
        checkReferer(req);
        const body = await readBody(req, bodyTimeout);
        const cookie = parseCookies(req.headers.cookie)[SESSION_COOKIE];
        const session = cookie ? opts.sessions.sessionFrom(cookie) : null;
        if (!session) return unauthenticated(enc, res, false);
        const { principal } = session;
        // a sealed cookie outlives nothing: an account that may no longer authenticate, or whose
        // password changed (or that was disabled, renamed, deleted) since, loses its session at once
        const refusal = opts.checkSession ? await opts.checkSession(principal, session.binding) : null;
        if (refusal) {
          opts.log.info('login', { method: 'session', principal: principal.name, outcome: 'denied', error: `${refusal.publicError.errorName}(${refusal.publicError.code})`, reason: refusal.message });
          return refused(enc, res, refusal.publicError, false);
        }
        await call(enc, body, principal, res);
      };
      routes[`/dirid/${enc}`] = async () => {
        checkReferer(req);
        const body = await readBody(req, bodyTimeout);
        const outcome = await negotiateFrom(req);
        if (!outcome) return unauthenticated(enc, res, true);
        if (outcome instanceof AuthRefusal) return refused(enc, res, outcome.publicError, true);
        const headers: Record<string, string | string[]> = { 'Set-Cookie': await sessionCookie(outcome.principal) };
        if (outcome.responseToken) headers['WWW-Authenticate'] = `Negotiate ${outcome.responseToken}`;
        await call(enc, body, outcome.principal, res, headers);
      };
    }
    const route = routes[path];
    if (!route) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    await route();
  }

  /** The Negotiate outcome; an AuthRefusal for an account that may not log in; null for anything else. */
  async function negotiateFrom(req: IncomingMessage): Promise<NegotiateOutcome | AuthRefusal | null> {
    const auth = req.headers.authorization;
    if (!auth || !opts.negotiate) return null;
    const m = /^Negotiate\s+([A-Za-z0-9+/=]{1,65536})$/.exec(auth.trim());
    if (!m) return null;
    try {
      const outcome = await opts.negotiate(m[1]!);
      const ind = outcome.principal.authIndicators ?? [];
      opts.log.info('login', { method: 'negotiate', principal: outcome.principal.name, outcome: 'ok', auth_indicators: ind });
      return outcome;
    } catch (err) {
      const error = err instanceof AuthRefusal ? `${err.publicError.errorName}(${err.publicError.code})` : undefined;
      opts.log.info('login', { method: 'negotiate', outcome: 'denied', error, reason: err instanceof Error ? err.message : 'error' });
      return err instanceof AuthRefusal ? err : null;
    }
  }

  return (req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) {
        send(res, err.status, 'text/plain; charset=utf-8', `${err.message}\n`, err.status === 413 ? { Connection: 'close' } : {});
        return;
      }
      // a failure outside any command: the endpoint's own form of InternalError, the detail in the log
      const enc = encodingOf(req.url);
      if (enc) send(res, 500, contentType(enc), errorResponse(enc, err, null, null).body);
      else send(res, 500, 'text/plain; charset=utf-8', `${toRpcError(err, opts.log).message}\n`);
    });
  };
}

