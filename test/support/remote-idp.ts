/**
 * A lean stand-in for a remote IdP, for bench/idp-flows.ts: a small HTTPS
 * server in a child process of its own (so the bench can pin it and it
 * costs the load generator's event loop nothing) that answers what a KDC's
 * device flows ask of an IdP and little else. The device authorization
 * endpoint hands out device codes and keeps every one until it expires; the
 * token endpoint answers a code it handed out and that has not expired
 * `authorization_pending` (HTTP 400, as RFC 8628 §3.5 and real IdPs do),
 * an expired one `expired_token`, an unknown one `invalid_grant`, and a
 * request without the client's credentials `invalid_client` (HTTP 401).
 * The client authenticates with client_secret_post; a client assertion
 * (private_key_jwt) is accepted on its client_id alone, unverified: the
 * stand-in measures the KDC's side, not the IdP's checks. No device code
 * is ever approved. It keeps connections alive (60 s idle) and counts, as
 * test/support/oidc-idp.ts does, the TLS connections it accepted, those
 * that resumed a session, and requests by path.
 *
 *   startRemoteIdp({ deviceCodeTtl, core }) in the bench; this file run
 *   with `--serve JSON` is the child.
 */
import { spawnSync, fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer, type ServerOptions } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCa, issueServerCert } from '../../src/server/pki.js';

export interface RemoteIdpStats {
  connections: number;
  resumed: number;
  requests: Record<string, number>;
}

export interface RemoteIdp {
  /** the child process's id (its CPU time is in /proc) */
  pid: number;
  issuer: string;
  caPem: string;
  clientId: string;
  clientSecret: string;
  endpoints: { devAuth: string; token: string; keys: string };
  /** what it has served so far (asked of the child over IPC) */
  stats(): Promise<RemoteIdpStats>;
  stop(): Promise<void>;
}

interface Job {
  keyPem: string;
  certPem: string;
  clientId: string;
  clientSecret: string;
  deviceCodeTtl: number;
}

const CLIENT_ID = 'dirid-kdc';
const CLIENT_SECRET = 'stand-in-client-secret-123';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** Starts the stand-in in a child process, pinned to `core` when given. */
export async function startRemoteIdp(o: { deviceCodeTtl?: number; core?: number } = {}): Promise<RemoteIdp> {
  const ca = await createCa('Stand-in IdP CA');
  const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const job: Job = { keyPem: tls.keyPem, certPem: tls.certPem, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, deviceCodeTtl: o.deviceCodeTtl ?? 600 };
  const child: ChildProcess = fork(new URL(import.meta.url).pathname, ['--serve', JSON.stringify(job)], { execArgv: ['--import', 'tsx'] });
  if (o.core !== undefined) spawnSync('taskset', ['-a', '-p', '-c', String(o.core), String(child.pid)]);
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`the stand-in IdP exited (${code})`)));
  });
  const issuer = `https://localhost:${port}`;
  return {
    pid: child.pid!,
    issuer,
    caPem: ca.certPem,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    endpoints: { devAuth: `${issuer}/device/auth`, token: `${issuer}/token`, keys: `${issuer}/jwks` },
    stats: () =>
      new Promise<RemoteIdpStats>((resolve) => {
        child.once('message', (m: RemoteIdpStats) => resolve(m));
        child.send('stats');
      }),
    async stop() {
      const gone = new Promise((r) => child.once('exit', r));
      child.disconnect();
      await gone;
    },
  };
}

function serve(job: Job): void {
  /** device code → epoch ms it expires at */
  const codes = new Map<string, number>();
  const counts: RemoteIdpStats = { connections: 0, resumed: 0, requests: {} };
  const json = (res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...extra });
    res.end(JSON.stringify(body));
  };
  /** the client of a form: client_secret_post, or a client assertion taken on its client_id */
  const authenticated = (form: URLSearchParams) =>
    form.get('client_id') === job.clientId && (form.get('client_secret') === job.clientSecret || (form.get('client_assertion_type') === JWT_BEARER && !!form.get('client_assertion')));
  const handle = (req: IncomingMessage, res: ServerResponse, path: string, text: string) => {
    const issuer = `https://localhost:${(server.address() as AddressInfo).port}`;
    if (path === '/.well-known/openid-configuration') {
      json(res, 200, { issuer, device_authorization_endpoint: `${issuer}/device/auth`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`, grant_types_supported: [DEVICE_GRANT] });
      return;
    }
    if (path === '/jwks') {
      json(res, 200, { keys: [] });
      return;
    }
    if (req.method !== 'POST' || (path !== '/device/auth' && path !== '/token')) {
      json(res, 404, { error: 'not_found' });
      return;
    }
    const form = new URLSearchParams(text);
    if (!authenticated(form)) {
      json(res, 401, { error: 'invalid_client' }, { 'www-authenticate': 'Basic realm="stand-in"' });
      return;
    }
    const now = Date.now();
    if (path === '/device/auth') {
      const deviceCode = randomBytes(32).toString('base64url');
      const userCode = randomBytes(4).toString('hex').toUpperCase();
      codes.set(deviceCode, now + job.deviceCodeTtl * 1000);
      json(res, 200, { device_code: deviceCode, user_code: userCode, verification_uri: `${issuer}/device`, verification_uri_complete: `${issuer}/device?user_code=${userCode}`, expires_in: job.deviceCodeTtl, interval: 5 });
      return;
    }
    if (form.get('grant_type') !== DEVICE_GRANT) {
      json(res, 400, { error: 'unsupported_grant_type' });
      return;
    }
    const until = codes.get(form.get('device_code') ?? '');
    if (until === undefined) json(res, 400, { error: 'invalid_grant', error_description: 'unknown device code' });
    else if (until <= now) json(res, 400, { error: 'expired_token' });
    else json(res, 400, { error: 'authorization_pending' });
  };
  const options: ServerOptions = { key: job.keyPem, cert: job.certPem, keepAliveTimeout: 60_000 };
  const server = createServer(options, (req, res) => {
    const path = req.url?.split('?')[0] ?? '';
    counts.requests[path] = (counts.requests[path] ?? 0) + 1;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, path, Buffer.concat(chunks).toString('utf8')));
  });
  server.on('secureConnection', (socket) => {
    counts.connections++;
    if (socket.isSessionReused()) counts.resumed++;
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
  process.on('message', (m) => {
    if (m === 'stats') process.send!({ connections: counts.connections, resumed: counts.resumed, requests: { ...counts.requests } });
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv[2] === '--serve') serve(JSON.parse(process.argv[3]!) as Job);
