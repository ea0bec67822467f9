/**
 * The HTTP client for IdP endpoints: a fetch-compatible function over
 * undici that trusts Node's root CAs plus an optional extra bundle (the
 * server's "IdP CA bundle" option), refuses anything but https:// URLs with
 * a host, bounds each request by a deadline and each response by a size cap,
 * and names itself in User-Agent (some APIs, GitHub's, refuse requests
 * without one). Each IdP host has its kept-alive HTTP/1.1 connections
 * (an undici Client each, one request at a time on it): they are reused
 * from request to request (a device flow's polls, whichever flow they are
 * for), a new connection resumes the TLS session of an earlier one, and at
 * most MAX_CONNECTIONS_PER_IDP requests are in flight to one host, the
 * next ones waiting for a connection with their deadline running (one
 * whose deadline passes while it waits is never sent). A request reset
 * before any answer on a connection that had answered before is sent
 * again, once. One TLS context, built once, serves every connection, and
 * each endpoint URL is checked and parsed once. oauth4webapi and jose take
 * the function through their customFetch options; under it is a plain
 * request function (`request`) answering status, headers and body, which
 * the token poll uses directly (no Headers, Response or body stream per
 * poll). undici rather than node:https: a token request costs the IdP
 * client about a third less CPU (bench/idp-poll.ts --client both);
 * undici's Pool is not used (see Host). docs/device-flow.md.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import { buildConnector, Client, type Dispatcher } from 'undici';
import { OAuthError } from './types.js';

export type FetchLike = (
  url: string | URL,
  init?: { method?: string; headers?: Record<string, string> | Headers | [string, string][]; body?: string | URLSearchParams | null; signal?: AbortSignal | null; redirect?: string },
) => Promise<Response>;

export const DEFAULT_TIMEOUT_MS = 10_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/**
 * Requests in flight to one IdP host at most, each on a connection of its
 * own, kept alive; the next ones wait for a free connection (their deadline
 * running). 64 carry the polls of the 1,000 answers the KDC holds at most
 * (200 a second at the default 5 s interval) to an IdP that answers within
 * 300 ms; fewer would make a slow IdP's polls time out in the queue.
 */
export const MAX_CONNECTIONS_PER_IDP = 64;
const USER_AGENT = 'dirid-idp-client';
/**
 * How long a connection may stay idle before the client closes it, unless
 * the IdP announces a shorter keep-alive (undici then closes it a little
 * before the IdP would). undici's own default, 4 s, would have a lone
 * flow's polls, 5 s apart, each open a connection.
 */
const KEEP_ALIVE_MS = 60_000;

/** Throws `insecure_endpoint` unless `value` is an https:// URL with a host. */
export function assertHttpsUrl(value: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OAuthError('insecure_endpoint', `${what} is not a valid URL`);
  }
  if (url.protocol !== 'https:' || !url.hostname) throw new OAuthError('insecure_endpoint', `${what} must be an https:// URL with a host`);
  return url;
}

/** An endpoint URL as the client requests it: its host's connections and the path asked for. */
interface Target {
  host: Host;
  path: string;
}
/** Endpoint URLs kept parsed at most; past it the client starts again with none. */
const MAX_TARGETS = 1_000;

/** An IdP's answer as read off the wire: its status, its headers (names in lower case, as Node gives them) and its whole body. */
export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** One request of the HTTPS client without the fetch API around it: headers named in lower case, a text body. */
export type HttpsRequest = (url: string | URL, init?: { method?: string; headers?: Readonly<Record<string, string>>; body?: string; signal?: AbortSignal | null }) => Promise<HttpAnswer>;

/**
 * httpsFetch's function, with the request under it: a caller that reads the
 * answer itself (the token poll, device-flow.ts) skips the Headers, the
 * Response and the stream that fetch's answer is read through.
 */
export type HttpsFetch = FetchLike & { readonly request: HttpsRequest };

/** The request under `fetch` when it is httpsFetch's, else undefined (a test's fetch). */
export function requestOf(fetch: FetchLike): HttpsRequest | undefined {
  return (fetch as Partial<HttpsFetch>).request;
}

/** `answer` as a fetch Response (oauth4webapi reads those). */
export function toResponse(answer: HttpAnswer): Response {
  const h = new Headers();
  for (const [k, v] of Object.entries(answer.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
  const status = answer.status;
  return new Response(status === 204 || status === 304 ? null : answer.body, { status, headers: h });
}

/** A fetch Response read whole into an HttpAnswer. */
export async function readAnswer(response: Response): Promise<HttpAnswer> {
  const headers: IncomingHttpHeaders = {};
  response.headers.forEach((v, k) => (headers[k] = v));
  return { status: response.status, headers, body: Buffer.from(await response.arrayBuffer()) };
}

/**
 * Node's reading of a repeated response header (undici gives every
 * repeated header as a list): Set-Cookie a list, Cookie joined by "; ",
 * those that may appear once the first one, any other joined by ", ".
 */
const SINGLE_HEADERS = new Set(['age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host', 'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards', 'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent']);
function asNodeHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  for (const name in headers) {
    const v = headers[name];
    if (name === 'set-cookie') {
      if (typeof v === 'string') headers[name] = [v];
    } else if (Array.isArray(v)) headers[name] = SINGLE_HEADERS.has(name) ? v[0] : v.join(name === 'cookie' ? '; ' : ', ');
  }
  return headers;
}

/**
 * Error codes of a connection that ended before answering: reset (RST),
 * closed by the IdP (undici's socket error), or written to after it was.
 */
const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

/**
 * One connection to an IdP host: undici's Client (HTTP/1.1, one request at
 * a time, connecting again when its connection closed), counting the
 * answers read on its current connection, so that a request knows whether
 * it went on a reused one.
 */
class IdpConnection extends Client {
  answered = 0;
  constructor(origin: string, options: Client.Options) {
    super(origin, options);
    this.on('connect', () => {
      this.answered = 0;
    });
  }
  send(exchange: Exchange): void {
    exchange.connection = this;
    this.dispatch(exchange.options, exchange);
  }
}

/**
 * An IdP host's connections, at most `max`, and the requests waiting for
 * one. A free connection goes to the next waiting request that still has
 * a caller (one whose deadline passed is dropped unsent), else back on the
 * free list, whose last one is used first: the connections a lull leaves
 * idle are the ones that close. Its connections share one connector, so a
 * new one resumes the TLS session of an earlier one.
 */
class Host {
  private readonly all: IdpConnection[] = [];
  private readonly free: IdpConnection[] = [];
  private waiting: Exchange[] = [];
  private next = 0;
  constructor(
    private readonly origin: string,
    private readonly options: Client.Options,
    private readonly max: number,
  ) {}
  send(exchange: Exchange): void {
    let connection = this.free.pop();
    if (!connection && this.all.length < this.max) this.all.push((connection = new IdpConnection(this.origin, this.options)));
    if (connection) connection.send(exchange);
    else this.waiting.push(exchange);
  }
  /** `connection` is done with its request (undici said so: answered, failed or aborted). */
  release(connection: IdpConnection): void {
    while (this.next < this.waiting.length) {
      const exchange = this.waiting[this.next]!;
      this.waiting[this.next++] = undefined as unknown as Exchange;
      if (exchange.settled) continue;
      if (this.next === this.waiting.length) {
        this.waiting = [];
        this.next = 0;
      } else if (this.next >= 1024 && this.next * 2 >= this.waiting.length) {
        this.waiting = this.waiting.slice(this.next);
        this.next = 0;
      }
      // sent once undici is out of the callback that released the connection
      queueMicrotask(() => connection.send(exchange));
      return;
    }
    this.waiting = [];
    this.next = 0;
    this.free.push(connection);
  }
}

/**
 * One request and its answer, as undici's handler: its deadline, the
 * caller's signal, the answer read whole within the size cap, and the one
 * retry when a reused connection ends before answering (the IdP closed an
 * idle connection just as it was reused: it never answered the request,
 * so it goes again, on whichever connection is free or a new one).
 */
class Exchange implements Dispatcher.DispatchHandler {
  settled = false;
  connection: IdpConnection | undefined = undefined;
  private controller: Dispatcher.DispatchController | undefined = undefined;
  private reused = false;
  private retried = false;
  private started = false;
  private status = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private readonly deadline: NodeJS.Timeout;
  private readonly onAbort: (() => void) | undefined;
  constructor(
    private readonly host: Host,
    readonly options: Dispatcher.DispatchOptions,
    private readonly maxResponseBytes: number,
    timeoutMs: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (answer: HttpAnswer) => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.deadline = setTimeout(() => this.fail(new OAuthError('idp_unreachable', 'IdP request timed out')), timeoutMs);
    if (signal) {
      this.onAbort = () => this.fail(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
      signal.addEventListener('abort', this.onAbort, { once: true });
    }
  }
  /**
   * The request's end for its caller, answered or not: its deadline goes,
   * and so does its listener on the caller's signal (oauth4webapi's 15 s
   * timeout), which would keep the whole request, its answer included,
   * reachable until that signal fired.
   */
  private finish(): void {
    this.settled = true;
    clearTimeout(this.deadline);
    if (this.onAbort) this.signal!.removeEventListener('abort', this.onAbort);
  }
  /** Fails the request; one on the wire is cut off (its connection closed), as undici aborts one. */
  private fail(err: Error): void {
    if (this.settled) return;
    this.finish();
    this.controller?.abort(err);
    this.reject(err);
  }
  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('aborted'));
    else this.reused = this.connection!.answered > 0;
  }
  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return; // an interim answer
    this.started = true;
    this.status = status;
    this.headers = headers;
    if (Number(headers['content-length'] ?? 0) > this.maxResponseBytes) this.fail(new OAuthError('idp_bad_response', 'IdP response too large'));
  }
  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.size += chunk.length;
    if (this.size > this.maxResponseBytes) this.fail(new OAuthError('idp_bad_response', 'IdP response too large'));
    else this.chunks.push(chunk);
  }
  onResponseEnd(): void {
    const connection = this.connection!;
    connection.answered++;
    this.host.release(connection);
    if (this.settled) return;
    this.finish();
    const chunks = this.chunks;
    this.resolve({ status: this.status, headers: asNodeHeaders(this.headers), body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
  }
  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    this.host.release(this.connection!);
    if (!this.settled && this.reused && !this.retried && !this.started && RESET_CODES.has((err as NodeJS.ErrnoException).code ?? '')) {
      this.retried = true;
      this.reused = false;
      this.controller = undefined;
      queueMicrotask(() => this.host.send(this));
      return;
    }
    this.fail(err);
  }
}

export function httpsFetch(extraCaPem?: string, timeoutMs = DEFAULT_TIMEOUT_MS, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, maxConnections = MAX_CONNECTIONS_PER_IDP): HttpsFetch {
  // The extra CAs go in a TLS context of their own, made once. Given as the
  // `ca` option instead, Node would parse the whole root bundle into a new
  // context for each connection: most of what a poll cost the KDC when
  // node:https was the client.
  const secureContext: SecureContext | undefined = extraCaPem ? createSecureContext({ ca: [...rootCertificates, extraCaPem] }) : undefined;
  const hosts = new Map<string, Host>();
  const hostOf = (url: URL): Host => {
    let host = hosts.get(url.host);
    if (!host) {
      // one connector per host: its connections share its TLS session cache
      const connect = buildConnector({ ...(secureContext ? { secureContext } : {}), allowH2: false, timeout: timeoutMs });
      host = new Host(url.origin, { connect, pipelining: 1, allowH2: false, keepAliveTimeout: KEEP_ALIVE_MS }, maxConnections);
      hosts.set(url.host, host);
    }
    return host;
  };
  /** Each endpoint URL checked and parsed once: a poll's token endpoint is the same string every time. */
  const targets = new Map<string, Target>();
  const targetOf = (input: string): Target => {
    let t = targets.get(input);
    if (!t) {
      const url = assertHttpsUrl(input, 'IdP endpoint');
      t = { host: hostOf(url), path: url.pathname + url.search };
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(input, t);
    }
    return t;
  };
  const httpsRequest: HttpsRequest = (input, init = {}) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      let target: Target;
      try {
        target = targetOf(String(input));
      } catch (e) {
        reject(e);
        return;
      }
      const signal = init.signal ?? undefined;
      if (signal?.aborted) {
        reject(new Error('aborted'));
        return;
      }
      const headers: Record<string, string> = { ...init.headers };
      headers['user-agent'] ??= USER_AGENT;
      const body = init.body;
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const options: Dispatcher.DispatchOptions = { path: target.path, method: (init.method ?? 'GET') as Dispatcher.HttpMethod, headers, body: body ?? null };
      target.host.send(new Exchange(target.host, options, maxResponseBytes, timeoutMs, signal, resolve, reject));
    });
  const fetch: FetchLike = async (input, init = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((v, k) => (headers[k] = v));
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    return toResponse(await httpsRequest(input, { ...(init.method ? { method: init.method } : {}), headers, ...(body !== undefined ? { body } : {}), ...(init.signal ? { signal: init.signal } : {}) }));
  };
  return Object.assign(fetch, { request: httpsRequest });
}
