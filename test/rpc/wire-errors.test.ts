/**
 * Errors on the wire (rpc/errors.ts): an unexpected exception, thrown by a
 * command or by the server around it, reaches JSON-RPC and XML-RPC clients
 * as InternalError 903 with no detail (no message, no stack), on the
 * Negotiate and the session endpoints alike, and the login endpoints answer
 * with the same message in text; the detail is in the server log only.
 * The real request handler runs on a loopback HTTP server with a registry
 * holding a command that fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { CommandRegistry, type Command, type Principal } from '../../src/framework/command.js';
import { createRpcHandler, type RpcServerOptions } from '../../src/rpc/server.js';
import { SessionCodec, SESSION_COOKIE } from '../../src/rpc/session.js';
import { toRpcError } from '../../src/rpc/errors.js';
import { publicError } from '../../src/framework/errors.js';
import { CodecError } from '../../src/rpc/codec/types.js';
import { decodeJsonResponse, encodeJsonRequest } from '../../src/rpc/codec/json.js';
import { decodeXmlResponse, encodeXmlRequest } from '../../src/rpc/codec/xml.js';
import { createLogger } from '../../src/log/logger.js';

/** Words that must never leave the server: they are in the failures' messages only. */
const SECRET = 'sealed-detail-7f3a';
const INTERNAL = { code: 903, name: 'InternalError', message: 'an internal error has occurred', data: {} };
const alice: Principal = { name: 'alice@EXAMPLE.TEST', dn: 'uid=alice,cn=users,cn=accounts,dc=example,dc=test', uid: 'alice' };

function failing(name: string, fail: () => never): Command {
  return { name, doc: 'fails', args: [], options: {}, access: 'authenticated', output: 'summary', run: async () => fail() };
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

describe('errors on the RPC wire', () => {
  let server: Server;
  let base: string;
  const log: string[] = [];
  const sessions = new SessionCodec(randomBytes(32));
  let failSession = false;
  let failLogin = false;

  before(async () => {
    const registry = new CommandRegistry();
    registry.register(
      failing('boom', () => {
        throw new TypeError(`cannot read ${SECRET}`);
      }),
      failing('boom_string', () => {
        throw `plain ${SECRET}`;
      }),
      failing('refuse', () => {
        throw publicError('ValidationError', { name: 'x', error: 'bad' });
      }),
    );
    const opts: RpcServerOptions = {
      registry,
      dir: {} as RpcServerOptions['dir'],
      server: { version: '1.2.3', apiVersion: '2.0', realm: 'EXAMPLE.TEST', domain: 'example.test', searchSizeLimit: 100, searchTimeLimit: 2 },
      sessions,
      async passwordLogin() {
        if (failLogin) throw new Error(`login store ${SECRET}`);
        return alice;
      },
      async negotiate(token) {
        if (token !== 'R09PRA==') throw new Error('bad token');
        return { principal: alice };
      },
      async checkSession() {
        if (failSession) throw new RangeError(`session check ${SECRET}`);
        return null;
      },
      log: createLogger({ write: (l) => log.push(l), component: 'rpc' }),
    };
    server = createServer(createRpcHandler(opts));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const { port } = server.address() as { port: number };
    base = `http://127.0.0.1:${port}`;
  });
  after(async () => new Promise<void>((r) => server.close(() => r())));

  function post(path: string, body: string, headers: Record<string, string>): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const u = new URL(base);
      const req = request({ method: 'POST', host: u.hostname, port: u.port, path, headers: { Referer: `https://${u.host}/dirid/`, 'Content-Length': String(Buffer.byteLength(body)), ...headers } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }));
      });
      req.on('error', reject);
      req.end(body);
    });
  }

  /** A session cookie on the session endpoints, a Negotiate token on the others. */
  const authFor = (path: string): Record<string, string> => (path.includes('/session/') ? { Cookie: `${SESSION_COOKIE}=${sessions.seal(alice, { entry: 'alice-entry', stamp: '' })}` } : { Authorization: 'Negotiate R09PRA==' });

  async function callJson(path: string, method: string): Promise<Reply> {
    return post(path, encodeJsonRequest({ method, args: [], options: {}, id: 7 }), { 'Content-Type': 'application/json', ...authFor(path) });
  }
  async function callXml(path: string, method: string): Promise<Reply> {
    return post(path, encodeXmlRequest({ method, args: [], options: {}, id: null }), { 'Content-Type': 'text/xml', ...authFor(path) });
  }

  /** The body carries nothing of the failure: not its words, not its type, not a stack frame. */
  function noDetail(body: string): void {
    assert.doesNotMatch(body, new RegExp(SECRET));
    assert.doesNotMatch(body, /TypeError|RangeError|Error:|\bat .*\(|\.ts:\d+/);
  }

  /** The server log holds the failure's words and, for an Error, its stack. */
  function logged(since: number, stack: boolean): void {
    const lines = log.slice(since).filter((l) => l.includes(' rpc internal_error '));
    assert.equal(lines.length, 1, log.slice(since).join('\n'));
    assert.match(lines[0]!, new RegExp(SECRET));
    if (stack) assert.match(lines[0]!, / stack=".*\\n\s+at /, 'the stack is logged');
  }

  for (const path of ['/dirid/json', '/dirid/session/json']) {
    it(`JSON-RPC on ${path}: a command's unexpected exception is InternalError 903 without detail, logged`, async () => {
      for (const [method, stack] of [['boom', true], ['boom_string', false]] as const) {
        const since = log.length;
        const r = await callJson(path, method);
        assert.equal(r.status, 200);
        const env = decodeJsonResponse(Buffer.from(r.body));
        assert.deepEqual(env.error, INTERNAL);
        assert.equal(env.id, 7);
        assert.equal(env.principal, alice.name);
        noDetail(r.body);
        logged(since, stack);
        assert.match(log.at(-1)!, new RegExp(`rpc request principal=${alice.name} command=${method} encoding=json outcome=InternalError\\(903\\)`));
      }
    });
  }

  for (const path of ['/dirid/xml', '/dirid/session/xml']) {
    it(`XML-RPC on ${path}: the same InternalError fault, without detail, logged`, async () => {
      const since = log.length;
      const r = await callXml(path, 'boom');
      assert.equal(r.status, 200);
      assert.match(r.body, /<fault>/);
      assert.deepEqual(decodeXmlResponse(Buffer.from(r.body)).error, INTERNAL);
      noDetail(r.body);
      logged(since, true);
    });
  }

  it('a public error goes out as it is and nothing is logged as internal', async () => {
    const since = log.length;
    const env = decodeJsonResponse(Buffer.from((await callJson('/dirid/session/json', 'refuse')).body));
    assert.deepEqual(env.error, { code: 3009, name: 'ValidationError', message: "invalid 'x': bad", data: { name: 'x', error: 'bad' } });
    assert.equal(log.slice(since).filter((l) => l.includes(' rpc internal_error ')).length, 0);
  });

  it('a failure around the command (the session check) answers InternalError in the endpoint\'s encoding, HTTP 500', async () => {
    failSession = true;
    try {
      for (const [call, enc] of [[callJson, 'json'], [callXml, 'xml']] as const) {
        const since = log.length;
        const r = await call(`/dirid/session/${enc}`, 'refuse');
        assert.equal(r.status, 500);
        assert.match(r.type, enc === 'json' ? /^application\/json/ : /^text\/xml/);
        const env = enc === 'json' ? decodeJsonResponse(Buffer.from(r.body)) : decodeXmlResponse(Buffer.from(r.body));
        assert.deepEqual(env.error, INTERNAL);
        noDetail(r.body);
        logged(since, true);
      }
    } finally {
      failSession = false;
    }
  });

  it('the login endpoint answers an unexpected failure with the same message in text, HTTP 500', async () => {
    failLogin = true;
    try {
      const since = log.length;
      const r = await post('/dirid/session/login_password', 'user=alice&password=secret-pw', { 'Content-Type': 'application/x-www-form-urlencoded' });
      assert.equal(r.status, 500);
      assert.equal(r.body, `${INTERNAL.message}\n`);
      logged(since, true);
    } finally {
      failLogin = false;
    }
  });

  it("a request target that does not parse is the client's error, in the text form, not logged as internal, and the server keeps serving", async () => {
    const since = log.length;
    const r = await post('//a:b', '', {});
    assert.equal(r.status, 400);
    assert.equal(r.body, 'invalid request: the request target is not a path\n');
    assert.equal(log.slice(since).filter((l) => l.includes(' rpc internal_error ')).length, 0);
    assert.deepEqual(decodeJsonResponse(Buffer.from((await callJson('/dirid/session/json', 'refuse')).body)).error?.code, 3009);
  });

  it('refusals (401) use the same wire form', async () => {
    const r = await post('/dirid/session/json', encodeJsonRequest({ method: 'boom', args: [], options: {}, id: 1 }), { 'Content-Type': 'application/json' });
    assert.equal(r.status, 401);
    assert.deepEqual(decodeJsonResponse(Buffer.from(r.body)).error, toRpcError(publicError('NotAuthenticated'), createLogger({ write: () => assert.fail('nothing to log') })));
    const k = await post('/dirid/session/login_kerberos', '', {});
    assert.equal(k.status, 401);
    assert.equal(k.body, 'Insufficient access: not authenticated\n');
  });

  it('toRpcError: a public error as is, a codec failure as ProtocolError, anything else as InternalError with the original logged', () => {
    const lines: string[] = [];
    const keep = createLogger({ write: (l) => lines.push(l), component: 'rpc' });
    assert.deepEqual(toRpcError(publicError('NotFound', { reason: 'x: user not found' }), keep), { code: 4001, name: 'NotFound', message: 'x: user not found', data: { reason: 'x: user not found' } });
    assert.deepEqual(toRpcError(new CodecError('parse', 'not JSON'), keep), { code: 909, name: 'ProtocolError', message: 'invalid request: not JSON', data: { reason: 'not JSON' } });
    assert.equal(lines.length, 0);
    for (const thrown of [new Error(SECRET), SECRET, { secret: SECRET }, null, undefined]) {
      assert.deepEqual(toRpcError(thrown, keep), INTERNAL);
    }
    assert.equal(lines.length, 5);
    assert.match(lines[0]!, new RegExp(` rpc internal_error level=error error=${SECRET} stack="Error: ${SECRET}\\\\n\\s+at `));
  });
});
