/**
 * Talking to a dirid server: the server named by the configured xmlrpc_uri,
 * over HTTPS trusting only the realm's CA. The client speaks JSON-RPC to the
 * same server (as FreeIPA's client does): the XML parser alone took 40 ms of
 * a 180 ms `dirid ping`. Authentication is a cached
 * session cookie when there is one, else Kerberos Negotiate (which also
 * yields a new cookie). When a server does not answer, the next one from
 * DNS SRV records is tried (discovery.ts). With -v it says what it does.
 */
import { request } from 'node:https';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { decodeJsonResponse, encodeJsonRequest } from '../rpc/codec/json.js';
import type { RpcResponse, WireValue } from '../rpc/codec/types.js';
import { cacheDir, type ClientConfig } from './config.js';
import { CliError } from './errors.js';
import { cachedPrincipal, NOT_AUTHENTICATED } from './principal.js';
import { serverCandidates } from './discovery.js';

export interface Session {
  call(method: string, args: WireValue[], options: Record<string, WireValue>): Promise<RpcResponse>;
  /** base URL of the server that answered */
  server: string;
}

interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export class ConnectError extends Error {}

const TLS_ERRORS = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'CERT_HAS_EXPIRED', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_SIGNATURE_FAILURE', 'UNABLE_TO_GET_ISSUER_CERT']);

function post(url: URL, ca: string, body: string, headers: Record<string, string>): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { method: 'POST', host: url.hostname, port: url.port || 443, path: url.pathname, ca, timeout: 15_000, headers: { 'Content-Length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new ConnectError('timeout')));
    req.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code && TLS_ERRORS.has(e.code)) reject(new CliError(`cannot connect to '${url.origin}': certificate verification failure (${e.message})`));
      else if (e.code === 'ECONNREFUSED' || e.code === 'ENOTFOUND' || e.code === 'EHOSTUNREACH' || e.code === 'ETIMEDOUT' || e.code === 'ECONNRESET' || e instanceof ConnectError) reject(new ConnectError(e.message));
      else reject(e);
    });
    req.end(body);
  });
}

function cookieFile(server: string, principal: string): string {
  const id = createHash('sha256').update(`${server}\u0000${principal}`).digest('hex').slice(0, 24);
  return join(cacheDir(), 'sessions', `${id}.json`);
}

function loadCookie(server: string, principal: string | null): string | null {
  if (!principal) return null;
  try {
    const v = JSON.parse(readFileSync(cookieFile(server, principal), 'utf8')) as { cookie: string; expires: number };
    return v.expires > Date.now() + 5000 ? v.cookie : null;
  } catch {
    return null;
  }
}

function saveCookie(server: string, principal: string, setCookie: string | string[] | undefined): void {
  const header = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  const m = header ? /^(dirid_session=[^;]+);.*Max-Age=(\d+)/i.exec(header) : null;
  if (!m) return;
  const f = cookieFile(server, principal);
  mkdirSync(join(cacheDir(), 'sessions'), { recursive: true, mode: 0o700 });
  writeFileSync(f, JSON.stringify({ cookie: m[1], expires: Date.now() + Number(m[2]) * 1000 }), { mode: 0o600 });
  chmodSync(f, 0o600);
}

function dropCookie(server: string, principal: string): void {
  rmSync(cookieFile(server, principal), { force: true });
}

export interface ConnectOptions {
  verbose: boolean;
  /** `ping --server HOST` */
  server?: string;
  log?: (line: string) => void;
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
    throw new CliError(`cannot read the CA certificate ${conf.caFile}`);
  }
  const candidates = await serverCandidates(conf, o.server);
  let lastError: unknown;
  for (const base of candidates) {
    if (o.verbose) log(`dirid: INFO: trying ${base}`);
    const session = makeSession(conf, new URL(base), ca, o.verbose ? log : null);
    try {
      const response = await session.call(first.method, first.args, first.options);
      return { session, response };
    } catch (e) {
      if (!(e instanceof ConnectError)) throw e;
      lastError = e;
      if (o.verbose) log(`dirid: WARNING: Connection to ${base} failed`);
    }
  }
  throw new CliError(`cannot connect to any dirid server${lastError instanceof Error ? ` (${lastError.message})` : ''}`);
}

function makeSession(conf: ClientConfig, url: URL, ca: string, log: ((l: string) => void) | null): Session {
  const origin = url.origin;
  const base = `${origin}${url.pathname}`;
  const referer = `${origin}/dirid/json`;
  const principal = cachedPrincipal();
  return {
    server: base,
    async call(method, args, options) {
      if (log) log(`dirid: INFO: Forwarding '${method}' to server '${base}'`);
      const body = encodeJsonRequest({ method, args, options, id: 0 });
      const headers = { 'Content-Type': 'application/json', Accept: 'application/json', Referer: referer, 'User-Agent': 'dirid-cli' };
      const cookie = loadCookie(origin, principal);
      if (cookie && principal) {
        const r = await post(new URL(`${origin}/dirid/session/json`), ca, body, { ...headers, Cookie: cookie });
        if (r.status !== 401) return decodeJsonResponse(r.body);
        dropCookie(origin, principal);
      }
      // Kerberos code loads only when there is no session to reuse
      const { negotiateFor } = await import('./negotiate.js');
      const neg = await negotiateFor(url.hostname, conf.realm);
      const r = await post(new URL(`${origin}/dirid/json`), ca, body, { ...headers, Authorization: `Negotiate ${neg.token}` });
      if (r.status === 401) throw new CliError(NOT_AUTHENTICATED);
      neg.verify(r.headers['www-authenticate'] as string | undefined);
      saveCookie(origin, neg.principal, r.headers['set-cookie']);
      return decodeJsonResponse(r.body);
    },
  };
}
