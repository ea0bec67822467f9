/**
 * The operators' endpoints on the HTTPS API's port (docs/operations.md),
 * answered before the API's own routes:
 * - `GET /dirid/health`, without login, for load balancers: 200 and
 *   `{"status":"ok"}` with the version, the store's answer (a read of the
 *   base entry: a round trip to PostgreSQL) and each listener, once every
 *   listener is up and while the server is not stopping; 503 with the same
 *   fields otherwise.
 * - `GET /dirid/metrics`, the Prometheus text exposition (metrics.ts), to
 *   clients in server.conf's metrics_allow networks only (default: this
 *   machine); others get 403.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BlockList, isIPv4 } from 'node:net';
import type { Directory } from '../directory/types.js';
import type { ServerMetrics } from './metrics.js';

/** How long the store has to answer a health check. */
export const HEALTH_STORE_TIMEOUT_MS = 2000;

export interface OpsState {
  /** every listener is up */
  ready: boolean;
  stopping: boolean;
  /** each listener: listening or not */
  listeners: Record<string, boolean>;
}

export interface OpsEndpoints {
  version: string;
  dir: Directory;
  metrics: ServerMetrics;
  /** the networks /dirid/metrics answers now (read again at a reload) */
  allowed(): BlockList;
  state(): OpsState;
}

/** The networks of server.conf's metrics_allow (config.ts checked each item). */
export function allowList(items: readonly string[]): BlockList {
  const list = new BlockList();
  for (const item of items) {
    const [addr, prefix] = item.split('/') as [string, string | undefined];
    const type = isIPv4(addr) ? 'ipv4' : 'ipv6';
    list.addSubnet(addr, prefix === undefined ? (type === 'ipv4' ? 32 : 128) : Number(prefix), type);
  }
  return list;
}

/** Whether `address` (as a socket gives it: an IPv4 client of a dual-stack socket comes as ::ffff:a.b.c.d) is in `list`. */
export function allowedAddress(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return list.check(mapped[1]!, 'ipv4');
  return list.check(address, isIPv4(address) ? 'ipv4' : 'ipv6');
}

function answer(res: ServerResponse, req: IncomingMessage, status: number, contentType: string, body: string): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

async function storeAnswer(dir: Directory): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    const base = await Promise.race([
      dir.get(dir.baseDn, ['objectClass']),
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${HEALTH_STORE_TIMEOUT_MS} ms`)), HEALTH_STORE_TIMEOUT_MS))),
    ]);
    return base ? 'ok' : 'the base entry is missing';
  } catch (e) {
    return `unreachable: ${e instanceof Error ? e.message.slice(0, 200) : 'error'}`;
  } finally {
    clearTimeout(timer);
  }
}

/** `next` (the API) behind the operators' endpoints. */
export function withOpsEndpoints(o: OpsEndpoints, next: (req: IncomingMessage, res: ServerResponse) => void): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    if (path !== '/dirid/health' && path !== '/dirid/metrics') return next(req, res);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Length': 0 });
      res.end();
      return;
    }
    void (async () => {
      if (path === '/dirid/health') {
        const s = o.state();
        const store = await storeAnswer(o.dir);
        const up = s.ready && !s.stopping && store === 'ok' && Object.values(s.listeners).every(Boolean);
        const status = up ? 'ok' : s.stopping ? 'stopping' : !s.ready ? 'starting' : 'unavailable';
        return answer(res, req, up ? 200 : 503, 'application/json', JSON.stringify({ status, version: o.version, store, listeners: s.listeners }) + '\n');
      }
      if (!allowedAddress(o.allowed(), req.socket.remoteAddress)) {
        return answer(res, req, 403, 'text/plain; charset=utf-8', 'metrics are not served to this address (server.conf metrics_allow)\n');
      }
      const m = await o.metrics.text();
      answer(res, req, 200, m.contentType, m.body);
    })().catch(() => {
      if (!res.headersSent) answer(res, req, 500, 'text/plain; charset=utf-8', 'internal error\n');
    });
  };
}
