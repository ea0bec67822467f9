/**
 * The token request of a device-code poll (src/oauth/device-flow.ts
 * deviceTokenRequest), sent through the HTTPS client's request function
 * rather than through oauth4webapi and the fetch API: what the IdP
 * receives is the request oauth4webapi would send (the same form, in the
 * same order, with the same Accept and Content-Type), for a client secret
 * and for private_key_jwt (a fresh assertion each poll); the client's
 * bounds still hold on that path (a response too large, an IdP too slow,
 * a CA not trusted), and the IdP's answers are read as before.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { IdpClient } from '../../src/oauth/client.js';
import { clientAuthOf } from '../../src/oauth/client-auth.js';
import { pollToken } from '../../src/oauth/device-flow.js';
import { authorizationServer } from '../../src/oauth/discovery.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { OAuthError, type ClientKey, type IdpConfig } from '../../src/oauth/types.js';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { newClientKey } from '../../src/objects/idp-client-key.js';

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

describe('the token request of a device-code poll', () => {
  let server: Server;
  let base: string;
  let caPem: string;
  const seen: Seen[] = [];
  /** what the token endpoint answers next: status and body */
  let answer: { status: number; body: string; delayMs?: number } = { status: 400, body: '{"error":"authorization_pending"}' };
  before(async () => {
    const ca = await createCa('token request test CA');
    caPem = ca.certPem;
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const { status, body, delayMs } = answer;
        setTimeout(() => res.writeHead(status, { 'content-type': 'application/json' }).end(body), delayMs ?? 0);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  const cfgOf = (extra: Partial<IdpConfig> = {}): IdpConfig => ({ name: 'req', clientId: 'dirid-kdc', clientSecret: 'the-secret', issuerUrl: base, devAuthUri: `${base}/device`, tokenUri: `${base}/token`, keysUri: `${base}/jwks`, userinfoUri: `${base}/me`, scope: 'openid', ...extra });

  /** the form and headers oauth4webapi sends for a device-code token request of `cfg` */
  async function oauth4webapiRequest(cfg: IdpConfig, deviceCode: string): Promise<{ body: URLSearchParams; headers: Record<string, string> }> {
    let captured: { body: URLSearchParams; headers: Record<string, string> } | undefined;
    const capture = (async (_url: string, init: { body: URLSearchParams; headers: Record<string, string> }) => {
      captured = { body: new URLSearchParams(init.body), headers: init.headers };
      return new Response('{"error":"authorization_pending"}', { status: 400, headers: { 'content-type': 'application/json' } });
    }) as unknown as typeof fetch;
    const as = await authorizationServer(cfg, new IdpClient(() => Promise.reject(new Error('no request'))), ['token']);
    await oauth.deviceCodeGrantRequest(as, { client_id: cfg.clientId }, clientAuthOf(cfg), deviceCode, { [oauth.customFetch]: capture });
    return captured!;
  }

  it('with a client secret: the form, its order and the headers oauth4webapi sends', async () => {
    seen.length = 0;
    const cfg = cfgOf();
    const code = 'device code with spaces & symbols ~!*';
    assert.deepEqual(await pollToken(cfg, code, new IdpClient(httpsFetch(caPem))), { status: 'pending' });
    const [request] = seen;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/token');
    const expected = await oauth4webapiRequest(cfg, code);
    assert.equal(request!.body, expected.body.toString());
    assert.deepEqual([...new URLSearchParams(request!.body).keys()], ['device_code', 'grant_type', 'client_id', 'client_secret']);
    assert.equal(new URLSearchParams(request!.body).get('device_code'), code);
    assert.equal(request!.headers['content-type'], expected.headers['content-type']);
    assert.equal(request!.headers.accept, expected.headers.accept);
    assert.equal(request!.headers['content-length'], String(Buffer.byteLength(request!.body)));
    assert.match(String(request!.headers['user-agent']), /\S/);
  });

  it('with private_key_jwt: client_id and a new assertion for the token endpoint at each poll, no secret', async () => {
    seen.length = 0;
    const key = (await newClientKey('ES256')) as ClientKey;
    const cfg = cfgOf({ clientSecret: undefined, clientAuth: 'private_key_jwt', clientKeys: [key] });
    const idp = new IdpClient(httpsFetch(caPem));
    await pollToken(cfg, 'code-1', idp);
    await pollToken(cfg, 'code-2', idp);
    const forms = seen.map((s) => new URLSearchParams(s.body));
    for (const form of forms) {
      assert.deepEqual([...form.keys()], ['device_code', 'grant_type', 'client_id', 'client_assertion_type', 'client_assertion']);
      assert.equal(form.get('client_id'), 'dirid-kdc');
      assert.equal(form.get('client_assertion_type'), 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      const claims = decodeJwt(form.get('client_assertion')!);
      assert.equal(claims.aud, `${base}/token`);
      assert.equal(claims.iss, 'dirid-kdc');
    }
    assert.notEqual(decodeJwt(forms[0]!.get('client_assertion')!).jti, decodeJwt(forms[1]!.get('client_assertion')!).jti);
    const expected = await oauth4webapiRequest(cfg, 'code-1');
    assert.deepEqual([...forms[0]!.keys()], [...expected.body.keys()]);
  });

  it('reads the answers as before: slow_down, a refusal with the code redacted', async () => {
    const idp = new IdpClient(httpsFetch(caPem));
    answer = { status: 400, body: '{"error":"slow_down"}' };
    assert.deepEqual(await pollToken(cfgOf(), 'slow-code', idp, { interval: 5 }), { status: 'slow_down', interval: 10 });
    answer = { status: 400, body: '{"error":"access_denied","error_description":"no for refused-code"}' };
    await assert.rejects(pollToken(cfgOf(), 'refused-code', idp), (e: unknown) => e instanceof OAuthError && e.code === 'access_denied' && !e.message.includes('refused-code'));
    answer = { status: 400, body: '{"error":"authorization_pending"}' };
  });

  it('keeps the HTTPS client bounds: response size, deadline, trusted CAs', async () => {
    const failure = async (p: Promise<unknown>, code: string) => {
      await assert.rejects(p, (e: unknown) => e instanceof OAuthError && e.code === code);
    };
    answer = { status: 400, body: JSON.stringify({ error: 'authorization_pending', padding: 'x'.repeat(4096) }) };
    await failure(pollToken(cfgOf(), 'big', new IdpClient(httpsFetch(caPem, 10_000, 1024))), 'idp_bad_response');
    answer = { status: 400, body: '{"error":"authorization_pending"}', delayMs: 2000 };
    const t0 = Date.now();
    await failure(pollToken(cfgOf(), 'slow', new IdpClient(httpsFetch(caPem, 300))), 'idp_unreachable');
    assert.ok(Date.now() - t0 < 1500);
    answer = { status: 400, body: '{"error":"authorization_pending"}' };
    await failure(pollToken(cfgOf(), 'untrusted', new IdpClient(httpsFetch())), 'idp_unreachable');
  });
});
