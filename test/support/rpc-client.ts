/**
 * A minimal HTTPS RPC client for tests: password login for a session
 * cookie, then JSON-RPC or XML-RPC calls through the public endpoints, using
 * the project's own codecs on the client side.
 */
import { request } from 'node:https';
import { lookup as dnsLookup, type LookupOptions } from 'node:dns';
import { decodeJsonResponse, encodeJsonRequest } from '../../src/rpc/codec/json.js';
import { decodeXmlResponse, encodeXmlRequest } from '../../src/rpc/codec/xml.js';
import type { RpcResponse, WireValue } from '../../src/rpc/codec/types.js';
import { resultOf } from './caller.js';

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** Host names tests resolve themselves (e.g. a second server's name to 127.0.0.1), without touching the machine's resolver. */
export const testHosts = new Map<string, string>();

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

function testLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  const address = testHosts.get(hostname.toLowerCase());
  if (address === undefined) return void dnsLookup(hostname, { ...options, all: !!options.all }, callback as never);
  if (options.all) callback(null, [{ address, family: 4 }]);
  else callback(null, address, 4);
}

export function httpsPost(url: string, ca: string, body: string | Buffer, headers: Record<string, string>): Promise<HttpReply> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request(
      { method: 'POST', host: u.hostname, port: u.port, path: u.pathname, ca, lookup: testLookup as never, headers: { 'Content-Length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export class RpcSession {
  cookie: string | null = null;
  constructor(
    readonly base: string,
    readonly ca: string,
    readonly encoding: 'json' | 'xml' = 'json',
  ) {}

  referer(): string {
    return `${this.base}/dirid/`;
  }

  async login(user: string, password: string): Promise<HttpReply> {
    const reply = await httpsPost(`${this.base}/dirid/session/login_password`, this.ca, new URLSearchParams({ user, password }).toString(), {
      'Content-Type': 'application/x-www-form-urlencoded',
      Referer: this.referer(),
    });
    const set = reply.headers['set-cookie'];
    const first = Array.isArray(set) ? set[0] : set;
    if (reply.status === 200 && first) this.cookie = first.split(';')[0]!;
    return reply;
  }

  /** Sends one call; returns the decoded envelope and the HTTP status. */
  async raw(method: string, args: WireValue[] = [], options: Record<string, WireValue> = {}, path?: string): Promise<{ status: number; response: RpcResponse; http: HttpReply }> {
    const enc = this.encoding;
    const body = enc === 'json' ? encodeJsonRequest({ method, args, options, id: 1 }) : encodeXmlRequest({ method, args, options, id: null });
    const headers: Record<string, string> = {
      'Content-Type': enc === 'json' ? 'application/json' : 'text/xml',
      Referer: this.referer(),
    };
    if (this.cookie) headers.Cookie = this.cookie;
    const http = await httpsPost(`${this.base}${path ?? `/dirid/session/${enc}`}`, this.ca, body, headers);
    const response = enc === 'json' ? decodeJsonResponse(http.body) : decodeXmlResponse(http.body);
    return { status: http.status, response, http };
  }

  /** Calls and returns the result, throwing the RPC error as an Error with code. */
  async call(method: string, args: WireValue[] = [], options: Record<string, WireValue> = {}): Promise<any> {
    return resultOf((await this.raw(method, args, options)).response);
  }
}
