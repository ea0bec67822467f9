/**
 * The HTTP client for IdP endpoints: a fetch-compatible function over
 * node:https that trusts the system CAs plus an optional extra bundle (the
 * server's "IdP CA bundle" option), with a timeout and a response size cap.
 * oauth4webapi and jose take it through their customFetch options.
 */
import { Agent, request } from 'node:https';
import { rootCertificates } from 'node:tls';

export type FetchLike = (url: string | URL, init?: { method?: string; headers?: Record<string, string> | Headers | [string, string][]; body?: string | URLSearchParams | null; signal?: AbortSignal | null; redirect?: string }) => Promise<Response>;

const MAX_BODY = 1024 * 1024;

export function httpsFetch(extraCaPem?: string, timeoutMs = 10_000): FetchLike {
  const ca = extraCaPem ? [...rootCertificates, extraCaPem] : undefined;
  // one agent: one TLS context and kept-alive connections for all IdP calls
  // (a context per request cost ~2 ms of CPU and tens of KiB each)
  const agent = new Agent({ keepAlive: true, maxSockets: 64, ...(ca ? { ca } : {}) });
  return (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(String(input));
      if (url.protocol !== 'https:') {
        reject(new TypeError('only https:// IdP endpoints are allowed'));
        return;
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((v, k) => (headers[k] = v));
      const body = init.body === undefined || init.body === null ? undefined : String(init.body);
      if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
      const req = request(url, { method: init.method ?? 'GET', headers, agent, timeout: timeoutMs }, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_BODY) req.destroy(new Error('IdP response too large'));
          else chunks.push(c);
        });
        res.on('end', () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve(new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), { status: res.statusCode ?? 500, headers: h }));
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('IdP request timed out')));
      req.on('error', reject);
      init.signal?.addEventListener('abort', () => req.destroy(new Error('aborted')));
      req.end(body);
    });
}
