/**
 * The client's HTTPS transport against a stand-in server on an ephemeral
 * port: headers (Referer, User-Agent, Accept-Language), Negotiate through a
 * pluggable Authenticator, the session-cookie cache (0600, reuse, drop and
 * retry on 401, per principal), trust of the configured CA only,
 * failover with -v lines (also from a down server the KDC has no principal
 * for), and clean errors for non-RPC answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { encodeJsonResponse, decodeJsonRequest } from '../../src/rpc/codec/json.js';
import { acceptLanguage, connect, cookieFile, loadCookie, noAuthenticator, parseSessionCookie, type Authenticator } from '../../src/cli/transport.js';
import type { ClientConfig } from '../../src/cli/config.js';
import { CliError } from '../../src/cli/errors.js';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  method: string;
}

describe('transport', () => {
  let dir: string;
  let server: Server;
  let port: number;
  let conf: ClientConfig;
  const seen: Seen[] = [];
  let mode: 'rpc' | 'text400' | 'down503' = 'rpc';
  const savedCache = process.env.XDG_CACHE_HOME;
  const savedLang = process.env.LANG;
  const origin = () => `https://localhost:${port}`;

  /** an Authenticator that counts its tokens */
  const tokens = (principal: string | null = 'admin@EXAMPLE.TEST') => {
    const a = { count: 0, hosts: [] as string[] };
    const auth: Authenticator = {
      async negotiateToken(host) {
        a.count++;
        a.hosts.push(host);
        return 'R09PRA==';
      },
      principal: () => principal,
    };
    return Object.assign(a, { auth });
  };
  const ping = { method: 'ping', args: [], options: {} };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dirid-transport-'));
    process.env.XDG_CACHE_HOME = join(dir, 'cache');
    process.env.LANG = 'de_DE.UTF-8';
    const ca = await createCa('Transport Test CA');
    const cert = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    writeFileSync(join(dir, 'ca.crt'), ca.certPem);
    server = createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ path: req.url ?? '', headers: req.headers, method: req.method ?? '' });
        if (mode === 'text400') return res.writeHead(400, { 'Content-Type': 'text/plain' }).end('Missing or invalid HTTP Referer\n');
        if (mode === 'down503') return res.writeHead(503, { 'Content-Type': 'text/plain' }).end('maintenance\n');
        const request = decodeJsonRequest(Buffer.concat(chunks));
        const reply = (status: number, principal: string | null, headers: Record<string, string> = {}) =>
          res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', ...headers }).end(
            encodeJsonResponse({ result: status === 200 ? { result: null, value: null, summary: `pong ${request.method}` } : null, error: status === 200 ? null : { code: 1000, name: 'NotAuthenticated', message: 'Insufficient access: not authenticated' }, id: request.id, principal, version: '0.1.0' }),
          );
        if (req.url === '/dirid/json') {
          if (req.headers.authorization === 'Negotiate R09PRA==') return reply(200, 'admin@EXAMPLE.TEST', { 'Set-Cookie': 'dirid_session=fresh123; Path=/dirid; Max-Age=1200; Secure; HttpOnly' });
          return reply(401, null, { 'WWW-Authenticate': 'Negotiate' });
        }
        if (req.url === '/dirid/session/json') {
          if (req.headers.cookie === 'dirid_session=fresh123') return reply(200, 'admin@EXAMPLE.TEST');
          return reply(401, null);
        }
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
    conf = { xmlrpcUri: `https://localhost:${port}/dirid/xml`, realm: 'EXAMPLE.TEST', domain: 'example.test', caFile: join(dir, 'ca.crt'), source: 'test' };
  });
  after(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    for (const [k, v] of [['XDG_CACHE_HOME', savedCache], ['LANG', savedLang]] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('Negotiate on /dirid/json with Referer, User-Agent and Accept-Language; the cookie is kept, mode 0600', async () => {
    const t = tokens();
    const { response, session } = await connect(conf, { verbose: false, authenticator: t.auth }, ping);
    assert.equal((response.result as { summary: string }).summary, 'pong ping');
    assert.equal(session.server, `${origin()}/dirid/xml`);
    assert.deepEqual(t.hosts, ['localhost']);
    const last = seen.at(-1)!;
    assert.equal(last.path, '/dirid/json');
    assert.equal(last.method, 'POST');
    assert.equal(last.headers.referer, `${origin()}/dirid/json`);
    assert.match(last.headers['user-agent'] ?? '', /^dirid\/\d+\.\d+\.\d+$/);
    assert.equal(last.headers['accept-language'], 'de-de');
    assert.equal(last.headers['content-type'], 'application/json');
    const f = cookieFile(origin());
    assert.ok(f.startsWith(join(dir, 'cache', 'dirid', 'sessions') + '/'));
    assert.equal(statSync(f).mode & 0o777, 0o600);
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(f, 'utf8'))).sort(), ['cookie', 'expires', 'principal']);
  });

  it('reuses the cached cookie on /dirid/session/json without a new token', async () => {
    const t = tokens();
    const { session } = await connect(conf, { verbose: false, authenticator: t.auth }, ping);
    await session.call('idp_find', [], {});
    assert.equal(t.count, 0);
    assert.deepEqual(seen.slice(-2).map((s) => [s.path, s.headers.cookie]), [
      ['/dirid/session/json', 'dirid_session=fresh123'],
      ['/dirid/session/json', 'dirid_session=fresh123'],
    ]);
  });

  it('a cookie stored for another principal is not used', async () => {
    const t = tokens('bob@EXAMPLE.TEST');
    await connect(conf, { verbose: false, authenticator: t.auth }, ping);
    assert.equal(t.count, 1);
    assert.equal(seen.at(-1)!.path, '/dirid/json');
  });

  it('a rejected cookie is dropped and Negotiate is tried once', async () => {
    writeFileSync(cookieFile(origin()), JSON.stringify({ cookie: 'dirid_session=stale', expires: Date.now() + 600_000, principal: 'admin@EXAMPLE.TEST' }));
    const t = tokens();
    const before = seen.length;
    await connect(conf, { verbose: false, authenticator: t.auth }, ping);
    assert.deepEqual(seen.slice(before).map((s) => s.path), ['/dirid/session/json', '/dirid/json']);
    assert.equal(t.count, 1);
    assert.equal(loadCookie(origin(), 'admin@EXAMPLE.TEST'), 'dirid_session=fresh123');
  });

  it('without a cookie and without Kerberos: "Insufficient access: not authenticated"', async () => {
    rmSync(join(dir, 'cache'), { recursive: true, force: true });
    await assert.rejects(connect(conf, { verbose: false, authenticator: noAuthenticator }, ping), (e: unknown) => e instanceof CliError && e.message === 'Insufficient access: not authenticated');
  });

  it('a token the server refuses: "Insufficient access: not authenticated"', async () => {
    const bad: Authenticator = { negotiateToken: async () => 'QkFE' };
    await assert.rejects(connect(conf, { verbose: false, authenticator: bad }, ping), (e: unknown) => e instanceof CliError && e.message === 'Insufficient access: not authenticated');
    assert.equal(existsSync(cookieFile(origin())), false);
  });

  it('a server certificate from another CA: certificate verification failure', async () => {
    const other = await createCa('Someone Else');
    writeFileSync(join(dir, 'other.crt'), other.certPem);
    await assert.rejects(connect({ ...conf, caFile: join(dir, 'other.crt') }, { verbose: false, authenticator: tokens().auth }, ping), (e: unknown) => e instanceof CliError && /certificate verification failure/.test(e.message));
  });

  it('a missing CA file is a clear error', async () => {
    await assert.rejects(connect({ ...conf, caFile: join(dir, 'nope.crt') }, { verbose: false }, ping), (e: unknown) => e instanceof CliError && e.message === `cannot read the CA certificate file ${join(dir, 'nope.crt')}`);
  });

  it('fails over from a closed port to a server from SRV, saying so with -v', async () => {
    const tmp = createTcpServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const deadPort = (tmp.address() as { port: number }).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    const lines: string[] = [];
    const srvLookup = { resolveSrv: async (name: string) => (name === '_dirid._tcp.example.test' ? [{ name: 'localhost', port, priority: 0, weight: 0 }] : []) };
    const { session } = await connect({ ...conf, xmlrpcUri: `https://localhost:${deadPort}/dirid/xml` }, { verbose: true, log: (l) => lines.push(l), authenticator: tokens().auth, srvLookup }, ping);
    assert.equal(session.server, `${origin()}/dirid/xml`);
    assert.deepEqual(lines, [
      `dirid: INFO: trying https://localhost:${deadPort}/dirid/xml`,
      `dirid: INFO: Forwarding 'ping' to server 'https://localhost:${deadPort}/dirid/xml'`,
      `dirid: WARNING: Connection to https://localhost:${deadPort}/dirid/xml failed`,
      `dirid: INFO: trying ${origin()}/dirid/xml`,
      `dirid: INFO: Forwarding 'ping' to server '${origin()}/dirid/xml'`,
    ]);
  });

  it('a configured server that is down and has no service principal: failover, not a Kerberos error', async () => {
    const tmp = createTcpServer();
    await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', () => r()));
    const deadPort = (tmp.address() as { port: number }).port;
    await new Promise<void>((r) => tmp.close(() => r()));
    // as the Kerberos authenticator answers for a host the KDC does not know
    const auth: Authenticator = {
      async negotiateToken(host) {
        if (host !== 'localhost') throw new CliError(`Insufficient access: not authenticated (server HTTP/${host}@EXAMPLE.TEST not found)`);
        return 'R09PRA==';
      },
      principal: () => 'admin@EXAMPLE.TEST',
    };
    const lines: string[] = [];
    const srvLookup = { resolveSrv: async (name: string) => (name === '_dirid._tcp.example.test' ? [{ name: 'localhost', port, priority: 0, weight: 0 }] : []) };
    const { session } = await connect({ ...conf, xmlrpcUri: `https://127.0.0.1:${deadPort}/dirid/xml` }, { verbose: true, log: (l) => lines.push(l), authenticator: auth, srvLookup }, ping);
    assert.equal(session.server, `${origin()}/dirid/xml`);
    assert.ok(lines.includes(`dirid: WARNING: Connection to https://127.0.0.1:${deadPort}/dirid/xml failed`), lines.join('\n'));
    // without a second server, the error is the connection's
    await assert.rejects(
      connect({ ...conf, xmlrpcUri: `https://127.0.0.1:${deadPort}/dirid/xml` }, { verbose: false, authenticator: auth, srvLookup: { resolveSrv: async () => [] } }, ping),
      (e: unknown) => e instanceof CliError && /^cannot connect to any dirid server/.test(e.message) && !/principal|not authenticated/.test(e.message),
    );
  });

  it('no server answers: one clear error', async () => {
    mode = 'down503';
    try {
      await assert.rejects(connect(conf, { verbose: false, authenticator: tokens().auth, srvLookup: { resolveSrv: async () => [] } }, ping), (e: unknown) => e instanceof CliError && e.message === 'cannot connect to any dirid server (last error: HTTP 503)');
    } finally {
      mode = 'rpc';
    }
  });

  it('an answer that is not JSON-RPC is reported with its HTTP status', async () => {
    mode = 'text400';
    try {
      await assert.rejects(connect(conf, { verbose: false, authenticator: tokens().auth }, ping), (e: unknown) => e instanceof CliError && e.message === 'the server answered HTTP 400: Missing or invalid HTTP Referer');
    } finally {
      mode = 'rpc';
    }
  });
});

describe('cookies and locale', () => {
  it('parses dirid_session with Max-Age (preferred) or Expires; ignores others', () => {
    const now = 1_000_000;
    assert.deepEqual(parseSessionCookie('dirid_session=abc; Path=/dirid; Max-Age=60; Secure', now), { cookie: 'dirid_session=abc', expires: now + 60_000 });
    assert.deepEqual(parseSessionCookie(['other=1; Max-Age=5', 'dirid_session=x; Expires=Thu, 01 Jan 2037 00:00:00 GMT; Max-Age=10'], now), { cookie: 'dirid_session=x', expires: now + 10_000 });
    assert.deepEqual(parseSessionCookie('dirid_session=x; Expires=Thu, 01 Jan 2037 00:00:00 GMT', now), { cookie: 'dirid_session=x', expires: Date.UTC(2037, 0, 1) });
    assert.equal(parseSessionCookie('dirid_session=x; Path=/', now), null);
    assert.equal(parseSessionCookie('dirid_session=a b; Max-Age=5', now), null);
    assert.equal(parseSessionCookie(undefined, now), null);
  });
  it('Accept-Language from LC_ALL, LC_MESSAGES or LANG', () => {
    assert.equal(acceptLanguage({ LANG: 'fr_CA.UTF-8' }), 'fr-ca');
    assert.equal(acceptLanguage({ LC_ALL: 'pt_BR', LANG: 'fr_FR' }), 'pt-br');
    assert.equal(acceptLanguage({ LANG: 'C.UTF-8' }), 'en-us');
    assert.equal(acceptLanguage({ LANG: 'POSIX' }), 'en-us');
    assert.equal(acceptLanguage({}), 'en-us');
  });
});
