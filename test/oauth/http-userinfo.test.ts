/**
 * The IdP HTTP client and UserInfo handling against a misbehaving HTTPS
 * server: only JSON objects are accepted, a `sub` differing from the ID
 * token's is refused, oversized and slow answers are cut off, requests
 * carry the bearer token and a User-Agent, and a request done lets go of
 * the caller's abort signal.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { fetchUserinfo } from '../../src/oauth/userinfo.js';
import { OAuthError, type OAuthErrorCode } from '../../src/oauth/types.js';

describe('IdP HTTP client and UserInfo', () => {
  let server: Server;
  let base: string;
  let caPem: string;
  let lastHeaders: IncomingHttpHeaders = {};
  before(async () => {
    const ca = await createCa('UserInfo test CA');
    caPem = ca.certPem;
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
      lastHeaders = req.headers;
      const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
      switch (req.url) {
        case '/ok': return json(200, { sub: 'alice', login: 'alice-gh', id: 4711 });
        case '/array': return json(200, ['alice']);
        case '/broken': return res.writeHead(200, { 'content-type': 'application/json' }).end('{"sub":');
        case '/html': return res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
        case '/jwt': return res.writeHead(200, { 'content-type': 'application/jwt' }).end('eyJhbGciOiJSUzI1NiJ9.e30.c2ln');
        case '/big': return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ sub: 'x'.repeat(4096) }));
        case '/slow': return; // never answers
        default: return json(401, { error: 'invalid_token' });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });

  const failure = async (p: Promise<unknown>, code: OAuthErrorCode): Promise<OAuthError> => {
    try {
      await p;
    } catch (e) {
      assert.ok(e instanceof OAuthError, String(e));
      assert.equal(e.code, code, e.message);
      assert.ok(!e.message.includes('access-token-123'), e.message);
      return e;
    }
    return assert.fail(`expected OAuthError ${code}`);
  };

  it('returns UserInfo claims, sending the bearer token and a User-Agent', async () => {
    const claims = await fetchUserinfo(`${base}/ok`, 'access-token-123', httpsFetch(caPem));
    assert.deepEqual(claims, { sub: 'alice', login: 'alice-gh', id: 4711 });
    assert.equal(lastHeaders.authorization, 'Bearer access-token-123');
    assert.match(String(lastHeaders['user-agent']), /\S/);
    assert.deepEqual(await fetchUserinfo(`${base}/ok`, 'access-token-123', httpsFetch(caPem), { expectedSub: 'alice' }), claims);
  });

  it('refuses answers that are not a JSON object, and a differing sub', async () => {
    const fetch = httpsFetch(caPem);
    for (const path of ['/array', '/broken', '/html', '/jwt', '/denied']) await failure(fetchUserinfo(`${base}${path}`, 'access-token-123', fetch), 'idp_bad_response');
    await failure(fetchUserinfo(`${base}/ok`, 'access-token-123', fetch, { expectedSub: 'bob' }), 'userinfo_mismatch');
  });

  it('cuts off oversized and slow answers', async () => {
    const tooBig = await failure(fetchUserinfo(`${base}/big`, 'access-token-123', httpsFetch(caPem, 10_000, 1024)), 'idp_bad_response');
    assert.match(tooBig.message, /too large/);
    const t0 = Date.now();
    await failure(fetchUserinfo(`${base}/slow`, 'access-token-123', httpsFetch(caPem, 300)), 'idp_unreachable');
    assert.ok(Date.now() - t0 < 3000);
  });

  it("lets go of the caller's abort signal once a request is answered or has failed", async () => {
    const fetch = httpsFetch(caPem, 300);
    const answered = new AbortController();
    await (await fetch(`${base}/ok`, { signal: answered.signal })).json();
    assert.equal(getEventListeners(answered.signal, 'abort').length, 0, 'a listener left on the signal keeps the request reachable until it fires');
    const timedOut = new AbortController();
    await assert.rejects(fetch(`${base}/slow`, { signal: timedOut.signal }));
    assert.equal(getEventListeners(timedOut.signal, 'abort').length, 0);
  });

  it('reaches only https:// URLs and only servers whose CA it trusts', async () => {
    await failure(fetchUserinfo(`http://localhost:1/ok`, 'access-token-123', httpsFetch(caPem)), 'insecure_endpoint');
    await failure(fetchUserinfo(`${base}/ok`, 'access-token-123', httpsFetch()), 'idp_unreachable');
  });
});
