/**
 * The HTTP client for IdP endpoints: a fetch-compatible function over
 * node:https that trusts Node's root CAs plus an optional extra bundle (the
 * server's "IdP CA bundle" option), refuses anything but https:// URLs with
 * a host, bounds each request by a deadline and each response by a size cap,
 * and names itself in User-Agent (some APIs, GitHub's, refuse requests
 * without one). Each IdP host has its keep-alive agent: its connections
 * are reused from request to request (a device flow's polls, whichever
 * flow they are for), a new connection resumes the TLS session of an
 * earlier one, and at most MAX_CONNECTIONS_PER_IDP requests are in flight
 * to one host, the next ones waiting for a connection. One TLS context,
 * built once, serves every connection, and each endpoint URL is checked
 * and parsed once. oauth4webapi and jose take the
 * function through their customFetch options; under it is a plain request
 * function (`request`) answering status, headers and body, which the token
 * poll uses directly (no Headers, Response or body stream per poll).
 * docs/device-flow.md.
 */
import type { ClientRequest, IncomingHttpHeaders } from 'node:http';
import { Agent, request, type RequestOptions } from 'node:https';
import { urlToHttpOptions } from 'node:url';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
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

/** An endpoint URL as the client requests it: the URL, and the request options node:https makes of one. */
interface Target {
  url: URL;
  options: Readonly<RequestOptions>;
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

export function httpsFetch(extraCaPem?: string, timeoutMs = DEFAULT_TIMEOUT_MS, maxResponseBytes = DEFAULT_MAX_RESPONSE_BYTES, maxConnections = MAX_CONNECTIONS_PER_IDP): HttpsFetch {
  // The extra CAs go in a TLS context of their own, made once. Given as the
  // `ca` option instead, Node would parse the whole root bundle into a new
  // context for each connection, and the agent would paste the bundle (some
  // 200 kB) into the pool key it computes several times per request: most
  // of what a poll cost the KDC.
  const secureContext: SecureContext | undefined = extraCaPem ? createSecureContext({ ca: [...rootCertificates, extraCaPem] }) : undefined;
  const agents = new Map<string, Agent>();
  /**
   * Each endpoint URL checked and parsed once, with the request options
   * node:https would make of it at every request: a poll's token endpoint
   * is the same string every time.
   */
  const targets = new Map<string, Target>();
  const targetOf = (input: string): Target => {
    let t = targets.get(input);
    if (!t) {
      const url = assertHttpsUrl(input, 'IdP endpoint');
      t = { url, options: urlToHttpOptions(url) };
      if (targets.size >= MAX_TARGETS) targets.clear();
      targets.set(input, t);
    }
    return t;
  };
  const agentFor = (url: URL): Agent => {
    let agent = agents.get(url.host);
    if (!agent) {
      // lifo: the connections used last are used first, so those a lull leaves idle are the ones the IdP closes
      agent = new Agent({ keepAlive: true, maxSockets: maxConnections, maxFreeSockets: maxConnections, scheduling: 'lifo' });
      agents.set(url.host, agent);
    }
    return agent;
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
      const agent = agentFor(target.url);
      const headers: Record<string, string> = { ...init.headers };
      headers['user-agent'] ??= USER_AGENT;
      const body = init.body;
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const method = init.method ?? 'GET';
      let settled = false;
      let req: ClientRequest;
      const signal = init.signal ?? undefined;
      const onAbort = (): void => fail(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
      /**
       * The request's end, answered or not: its deadline goes, and so does
       * its listener on the caller's signal (oauth4webapi's 15 s timeout),
       * which would keep the whole request, its answer included, reachable
       * until that signal fired.
       */
      const finish = (): void => {
        settled = true;
        clearTimeout(deadline);
        signal?.removeEventListener('abort', onAbort);
      };
      const fail = (err: Error): void => {
        if (settled) return;
        finish();
        req.destroy();
        reject(err);
      };
      /**
       * One try. A kept-alive connection the IdP closed just as it was
       * reused is reset before any answer: the IdP never saw the request,
       * so it goes again once, on a new connection.
       */
      const send = (retried: boolean): void => {
        let answered = false;
        req = request({ ...target.options, method, headers, agent, ...(secureContext ? { secureContext } : {}) }, (res) => {
          answered = true;
          const declared = Number(res.headers['content-length'] ?? 0);
          if (declared > maxResponseBytes) {
            fail(new OAuthError('idp_bad_response', 'IdP response too large'));
            return;
          }
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxResponseBytes) fail(new OAuthError('idp_bad_response', 'IdP response too large'));
            else chunks.push(c);
          });
          res.on('end', () => {
            if (settled) return;
            finish();
            resolve({ status: res.statusCode ?? 500, headers: res.headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) });
          });
          res.on('error', (e) => fail(e));
        });
        const sent = req;
        sent.on('error', (e) => {
          if (!retried && !answered && !settled && sent.reusedSocket && (e as NodeJS.ErrnoException).code === 'ECONNRESET') send(true);
          else fail(e);
        });
        sent.end(body);
      };
      const deadline = setTimeout(() => fail(new OAuthError('idp_unreachable', 'IdP request timed out')), timeoutMs);
      if (signal) {
        if (signal.aborted) {
          finish();
          reject(new Error('aborted'));
          return;
        }
        signal.addEventListener('abort', onAbort, { once: true });
      }
      send(false);
    });
  const fetch: FetchLike = async (input, init = {}) => {
    const headers: Record<string, string> = {};
    new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((v, k) => (headers[k] = v));
    const body = init.body === undefined || init.body === null ? undefined : String(init.body);
    return toResponse(await httpsRequest(input, { ...(init.method ? { method: init.method } : {}), headers, ...(body !== undefined ? { body } : {}), ...(init.signal ? { signal: init.signal } : {}) }));
  };
  return Object.assign(fetch, { request: httpsRequest });
}
