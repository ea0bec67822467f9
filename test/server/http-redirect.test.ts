/**
 * Plain HTTP (server/http-redirect.ts): every request is redirected to the
 * same path and query on the API's HTTPS address, as curl shows; nothing is
 * served in clear, a request body is not waited for, and what is not an
 * HTTP request for a path gets 400.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';

/** Raw bytes to the port: what comes back until the server closes, and how long that took. */
function raw(port: number, bytes: string, ms = 5000): Promise<{ text: string; closed: boolean; ms: number }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const s = connect(port, '127.0.0.1');
    let text = '';
    const t = setTimeout(() => {
      s.destroy();
      resolve({ text, closed: false, ms: Date.now() - started });
    }, ms);
    s.on('connect', () => s.write(bytes));
    s.on('data', (d: Buffer) => (text += d.toString('latin1')));
    s.on('close', () => {
      clearTimeout(t);
      resolve({ text, closed: true, ms: Date.now() - started });
    });
    s.on('error', () => {});
  });
}

describe('plain HTTP redirects to the API over HTTPS', () => {
  let realm: TestRealm;
  let port: number;
  let https: string;

  before(async () => {
    realm = await startTestRealm();
    port = realm.server.httpPort;
    https = `https://localhost:${realm.server.httpsPort}`;
  });
  after(async () => realm?.stop());

  it('listens on the port it chose and logs it', () => {
    assert.ok(port > 0 && port !== realm.server.httpsPort);
    assert.ok(realm.log.some((l) => l.endsWith(` server listening realm=EXAMPLE.TEST service=http url=http://127.0.0.1:${port}/ redirects_to=${https}/`)), realm.log.join('\n'));
  });

  it('curl -sI shows a 301 to the same path and query over HTTPS', async () => {
    const r = await runTool('curl', ['-sI', `http://127.0.0.1:${port}/dirid/json?x=1`], {});
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^HTTP\/1\.1 301 Moved Permanently\r\n/);
    assert.match(r.stdout, new RegExp(`^Location: ${https}/dirid/json\\?x=1\\r$`, 'mi'));
    assert.match(r.stdout, /^Connection: close\r$/mi);
    // whatever Host the request names, the redirect goes to the server's own name
    const other = await runTool('curl', ['-sI', '-H', 'Host: evil.example', `http://127.0.0.1:${port}/a/b?c=d&e`], {});
    assert.match(other.stdout, new RegExp(`^Location: ${https}/a/b\\?c=d&e\\r$`, 'mi'));
  });

  it('other methods get 308 (repeat the method over HTTPS), and following it reaches the API', async () => {
    const post = await runTool('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', '--data-binary', '{"method":"ping"}', `http://127.0.0.1:${port}/dirid/json`], {});
    assert.equal(post.stdout, `308 ${https}/dirid/json`);
    const followed = await runTool('curl', ['-s', '-o', '/dev/null', '-L', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-w', '%{url_effective} %{scheme}', `http://127.0.0.1:${port}/dirid/json`], {});
    assert.equal(followed.code, 0, followed.stderr);
    assert.equal(followed.stdout, `${https}/dirid/json HTTPS`);
  });

  it('a request body is not waited for: the answer comes at once and the connection closes', async () => {
    const r = await raw(port, 'POST /dirid/json HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n{"partial');
    assert.match(r.text, /^HTTP\/1\.1 308 Permanent Redirect\r\n/);
    assert.ok(r.closed, 'closed by the server');
    assert.ok(r.ms < 4000, `closed after ${r.ms} ms`);
  });

  it('what is not a request for a path gets 400', async () => {
    for (const request of [
      'GARBAGE\r\n\r\n',
      'GET http://evil.example/ HTTP/1.1\r\nHost: evil.example\r\n\r\n',
      'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n',
      'CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n',
      `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(10_000)}\r\n\r\n`,
    ]) {
      const r = await raw(port, request);
      assert.match(r.text, /^HTTP\/1\.1 400 Bad Request\r\n/, JSON.stringify(request.slice(0, 40)));
      assert.doesNotMatch(r.text, /Location:/i);
      assert.ok(r.closed);
    }
  });
});
