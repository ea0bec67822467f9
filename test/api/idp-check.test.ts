/**
 * idp-check NAME (docs/device-flow.md, "Checking an IdP reference") against
 * a real OpenID Provider (oidc-provider): every check passes for a good
 * reference; a wrong secret, a scope the client may not have, a client
 * without the device grant, an endpoint where nothing listens and an
 * endpoint whose certificate comes from a CA the server does not trust
 * each fail their check in plain words, and a server that never answers
 * fails them within the check's deadline. The secret reaches neither the
 * result nor the server log, the reference is the same afterwards, and
 * only the writers of IdP references may run it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { CHECK_DEADLINE_MS } from '../../src/oauth/check.js';

interface Line {
  check: string;
  status: 'PASS' | 'FAIL' | 'SKIP';
  message: string;
}

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** An HTTPS server whose certificate comes from a CA of its own, which the dirid server is not told about. */
async function untrustedServer(): Promise<{ url: string; server: Server }> {
  const ca = await createCa('Untrusted test CA');
  const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const server = createHttpsServer({ key: tls.keyPem, cert: tls.certPem }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `https://localhost:${(server.address() as AddressInfo).port}/userinfo`, server };
}

const byCheck = (lines: Line[]) => Object.fromEntries(lines.map((l) => [l.check, l]));

describe('idp-check', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  let untrusted: { url: string; server: Server };
  const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-check-ca-${process.pid}.pem`);
  const wrongSecret = 'not-the-secret-of-dirid-kdc';
  const secrets = () => [idp.clientSecret, wrongSecret, idp.narrowScope.clientSecret, idp.noDeviceGrant.clientSecret];
  const explicit = () => ({
    auth_uri: idp.endpoints.auth,
    dev_auth_uri: idp.endpoints.devAuth,
    token_uri: idp.endpoints.token,
    userinfo_uri: idp.endpoints.userinfo,
    keys_uri: idp.endpoints.keys,
    issuer_url: idp.issuer,
    client_id: idp.clientId,
    secret: idp.clientSecret,
    scope: 'openid email',
  });
  const check = async (name: string): Promise<{ lines: Line[]; summary: string; value: string }> => {
    const r = await admin.call('idp_check', [name]);
    return { lines: r.result as Line[], summary: r.summary as string, value: r.value as string };
  };
  const failures = (lines: Line[]) => lines.filter((l) => l.status === 'FAIL');

  before(async () => {
    idp = await startTestIdp({ grantRefusal: 'unauthorized_client' });
    untrusted = await untrustedServer();
    writeFileSync(caFile, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    await new Promise((r) => untrusted?.server.close(r));
    rmSync(caFile, { force: true });
  });

  it('passes every check of a good reference given by its issuer, naming the signing key', async () => {
    await admin.call('idp_add', ['good'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
    const { lines, summary, value } = await check('good');
    assert.equal(value, 'good');
    assert.deepEqual(
      lines.map((l) => [l.check, l.status]),
      [
        ['Discovery', 'PASS'],
        ['Authorization URI', 'PASS'],
        ['Device authorization URI', 'PASS'],
        ['Token URI', 'PASS'],
        ['User info URI', 'PASS'],
        ['JWKS endpoint', 'PASS'],
        ['Signing keys', 'PASS'],
        ['Device authorization', 'PASS'],
      ],
      JSON.stringify(lines, null, 1),
    );
    const c = byCheck(lines);
    assert.match(c.Discovery!.message, new RegExp(`^${idp.issuer}/\\.well-known/openid-configuration names issuer ${idp.issuer} and `));
    assert.ok(c['Token URI']!.message.startsWith(`${idp.endpoints.token} answered over HTTPS with a trusted certificate (HTTP `), c['Token URI']!.message);
    assert.equal(c['Signing keys']!.message, `1 key to verify ID tokens: kid ${idp.signingKid()} (RS256)`);
    assert.match(c['Device authorization']!.message, /^the IdP accepted client "dirid-kdc" with the stored secret and scope "openid email" and issued a device code, left unused to expire/);
    assert.equal(summary, 'Checked IdP reference "good": 8 passed, 0 failed, 0 skipped');
  });

  it('skips discovery, and what is not set and not needed, for a reference with explicit endpoints and no issuer', async () => {
    await admin.call('idp_add', ['plain'], { auth_uri: idp.endpoints.auth, token_uri: idp.endpoints.token, userinfo_uri: idp.endpoints.userinfo, client_id: idp.clientId, secret: idp.clientSecret, scope: 'email' });
    const { lines, summary } = await check('plain');
    const c = byCheck(lines);
    assert.equal(c.Discovery!.status, 'SKIP');
    assert.deepEqual(c['Device authorization URI'], { check: 'Device authorization URI', status: 'SKIP', message: 'not set: logins use the Authorization URI' });
    assert.equal(c['User info URI']!.status, 'PASS');
    assert.deepEqual(c['JWKS endpoint'], { check: 'JWKS endpoint', status: 'SKIP', message: 'not set: users are identified from UserInfo alone' });
    assert.equal(c['Signing keys']!.status, 'SKIP');
    // the authorization URI stands in for the device endpoint, as in a login, and oidc-provider's /auth is no device endpoint
    assert.equal(c['Device authorization']!.status, 'FAIL');
    assert.match(c['Device authorization']!.message, /^the answer is not a device authorization \(/);
    assert.equal(summary, 'Checked IdP reference "plain": 3 passed, 1 failed, 4 skipped');
  });

  it('fails the user info check when nothing would identify the user: no UserInfo and no openid scope', async () => {
    await admin.call('idp_add', ['noident'], { dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, client_id: idp.clientId, secret: idp.clientSecret, scope: 'email' });
    const { lines } = await check('noident');
    assert.deepEqual(failures(lines).map((l) => l.check), ['User info URI']);
    assert.match(byCheck(lines)['User info URI']!.message, /^not set: with no openid in the scope there is no ID token either, so nothing identifies the user$/);
    assert.equal(byCheck(lines)['JWKS endpoint']!.status, 'SKIP');
  });

  it('a wrong client secret: invalid_client, in plain words', async () => {
    await admin.call('idp_add', ['badsecret'], { ...explicit(), secret: wrongSecret });
    const { lines, summary } = await check('badsecret');
    assert.deepEqual(failures(lines).map((l) => l.check), ['Device authorization']);
    assert.match(byCheck(lines)['Device authorization']!.message, /^invalid_client: the IdP does not accept client "dirid-kdc" with the stored secret in the request body \(a wrong or expired secret, an unknown client ID, or an IdP that takes the secret only in an HTTP Basic header: --client-auth=client_secret_basic\)/);
    assert.match(summary, /: 7 passed, 1 failed, 0 skipped$/);
  });

  it('a scope the client may not have: invalid_scope', async () => {
    await admin.call('idp_add', ['narrow'], { ...explicit(), client_id: idp.narrowScope.clientId, secret: idp.narrowScope.clientSecret });
    const { lines } = await check('narrow');
    assert.deepEqual(failures(lines).map((l) => l.check), ['Device authorization']);
    assert.match(byCheck(lines)['Device authorization']!.message, /^invalid_scope: the IdP refuses scope "openid email" for client "narrow-scope"/);
  });

  it('a client without the device grant: unauthorized_client', async () => {
    await admin.call('idp_add', ['nogrant'], { ...explicit(), client_id: idp.noDeviceGrant.clientId, secret: idp.noDeviceGrant.clientSecret });
    const { lines } = await check('nogrant');
    assert.deepEqual(failures(lines).map((l) => l.check), ['Device authorization']);
    assert.match(byCheck(lines)['Device authorization']!.message, /^unauthorized_client: the IdP refuses client "no-device-grant", as some IdPs answer a wrong credential too: either the stored client secret is wrong or expired, or the client may not use the device authorization grant \(allow it for the client at the IdP\)/);
  });

  it('an endpoint where nothing listens: connection refused', async () => {
    const token = `https://localhost:${await closedPort()}/token`;
    await admin.call('idp_add', ['refused'], { ...explicit(), token_uri: token });
    const { lines } = await check('refused');
    assert.deepEqual(failures(lines), [{ check: 'Token URI', status: 'FAIL', message: `${token}: connection refused: nothing listens at ${new URL(token).host}` }]);
  });

  it('an endpoint whose certificate comes from a CA the server does not trust: certificate verification failure', async () => {
    await admin.call('idp_add', ['untrusted'], { ...explicit(), userinfo_uri: untrusted.url });
    const { lines } = await check('untrusted');
    const failed = failures(lines);
    assert.deepEqual(failed.map((l) => l.check), ['User info URI']);
    assert.match(failed[0]!.message, /: certificate verification failure: the certificate of localhost:\d+ is not issued by a CA this server trusts \(the system CAs and --idp-ca-file\)/);
  });

  it('a server that never answers: "no answer", and the whole check ends within its deadline', async () => {
    // accepts connections and says nothing, not even the TLS handshake
    const held: Socket[] = [];
    const silent = createServer((sock) => held.push(sock));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const base = `https://localhost:${(silent.address() as AddressInfo).port}`;
    try {
      await admin.call('idp_add', ['silent'], { ...explicit(), issuer_url: `${base}/realms/x`, token_uri: `${base}/token` });
      const started = Date.now();
      const { lines } = await check('silent');
      const took = Date.now() - started;
      assert.ok(took < CHECK_DEADLINE_MS + 1_500, `took ${took} ms`);
      const c = byCheck(lines);
      assert.deepEqual(failures(lines).map((l) => l.check), ['Discovery', 'Token URI']);
      assert.equal(c.Discovery!.message, `${base}/realms/x/.well-known/openid-configuration: no answer: ${new URL(base).host} did not answer in time`);
      assert.equal(c['Token URI']!.message, `${base}/token: no answer: ${new URL(base).host} did not answer in time`);
    } finally {
      for (const sock of held) sock.destroy();
      await new Promise((r) => silent.close(r));
    }
  });

  it('a discovery document that names another issuer: "Issuer does not match"', async () => {
    const issuer = idp.issuer.replace('localhost', '127.0.0.1');
    await admin.call('idp_add', ['otheriss'], { ...explicit(), issuer_url: issuer });
    const { lines } = await check('otheriss');
    assert.deepEqual(failures(lines), [
      {
        check: 'Discovery',
        status: 'FAIL',
        message: `${issuer}/.well-known/openid-configuration: Issuer does not match: the discovery document at ${issuer} names issuer ${idp.issuer}, which ID tokens carry in iss: give exactly that as the issuer URL`,
      },
    ]);
  });

  it('an issuer that differs from the document\'s by a trailing slash: discovery reads it, but iss would not match', async () => {
    // the same URL to discovery (and oauth4webapi), not to an ID token's iss, which is compared as a string
    await admin.call('idp_add', ['slash'], { ...explicit(), issuer_url: `${idp.issuer}/` });
    const { lines } = await check('slash');
    assert.deepEqual(failures(lines), [
      {
        check: 'Discovery',
        status: 'FAIL',
        message: `${idp.issuer}/.well-known/openid-configuration names issuer ${idp.issuer}, and ID tokens carry it so in iss, but the reference says ${idp.issuer}/: set --issuer-url ${idp.issuer}`,
      },
    ]);
  });

  it('discovery that fails and a JWKS endpoint that answers with an error fail their checks', async () => {
    await admin.call('idp_add', ['nokeys'], { ...explicit(), issuer_url: `${idp.issuer}/elsewhere` });
    idp.failJwks(true);
    try {
      const { lines } = await check('nokeys');
      const c = byCheck(lines);
      assert.equal(c.Discovery!.status, 'FAIL');
      assert.equal(c.Discovery!.message, `${idp.issuer}/elsewhere/.well-known/openid-configuration: answered HTTP 404 instead of a discovery document (is the issuer URL right?)`);
      assert.deepEqual(c['JWKS endpoint'], { check: 'JWKS endpoint', status: 'FAIL', message: `${idp.endpoints.keys} answered HTTP 503 instead of its key set` });
      assert.equal(c['Signing keys']!.status, 'SKIP');
      assert.equal(c['Device authorization']!.status, 'PASS');
    } finally {
      idp.failJwks(false);
    }
  });

  it('changes nothing, and the secret reaches neither the result nor the server log', async () => {
    const dir = realm.server.dir;
    const dn = `cn=good,cn=idp,${dir.baseDn}`;
    // the stored entry with its timestamps and entryUUID, and the sealed secret
    const stored = async () => ({ entry: await dir.get(dn), secret: await dir.readSecret(dn, 'dirIdpClientSecret'), shown: await admin.call('idp_show', ['good'], { all: true, raw: true }) });
    const before = await stored();
    assert.ok(before.entry?.attrs.modifyTimestamp, 'the entry has a modification time to compare');
    const logFrom = realm.log.length;
    const results = [];
    for (const name of ['good', 'badsecret', 'narrow', 'nogrant', 'refused', 'untrusted']) results.push(await admin.call('idp_check', [name]));
    assert.deepEqual(await stored(), before);
    const seen = JSON.stringify(results) + realm.log.join('\n');
    for (const s of secrets()) assert.ok(!seen.includes(s), 'a client secret was shown');
    assert.ok(realm.log.slice(logFrom).some((l) => / command=idp_check .*outcome=ok/.test(l)), 'the calls are logged');
  });

  it('an unknown reference is not found; readers who may not manage IdP references may not check them', async () => {
    assert.equal((await rpcError(admin.call('idp_check', ['nosuch']))).code, 4001);
    await addActiveUser(admin, 'reader', 'Reader-pass-1', { first: 'Rea', last: 'Der' });
    const reader = new RpcSession(realm.url, realm.ca);
    assert.equal((await reader.login('reader', 'Reader-pass-1')).status, 200);
    assert.equal((await reader.call('idp_show', ['good'])).value, 'good');
    const e = await rpcError(reader.call('idp_check', ['good']));
    assert.equal(e.code, 2100);
    assert.equal(e.message, "Insufficient access: not allowed to perform 'idp-check'");
  });
});
