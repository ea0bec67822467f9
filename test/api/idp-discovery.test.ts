/**
 * An IdP reference given by its issuer (specification §2.1 --issuer-url,
 * OpenID Connect Discovery 1.0 §4): idp-add runs discovery at once against a
 * real OpenID Provider (oidc-provider) and stores the endpoints it found, so
 * idp-show shows what logins will use; when discovery fails the command
 * fails, names the discovery URL and stores nothing. idp-mod completes a
 * reference the same way when it leaves a login endpoint to discovery, and
 * a new issuer given alone brings its own endpoints.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createCa } from '../../src/server/pki.js';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';

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

describe('idp-add with --issuer-url runs OIDC discovery', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  /** another provider under the same CA, with keys of its own */
  let other: TestIdp;
  let admin: RpcSession;
  const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-discovery-ca-${process.pid}.pem`);

  before(async () => {
    const ca = await createCa('Test IdP CA');
    idp = await startTestIdp({ ca });
    other = await startTestIdp({ ca, keyIdPrefix: 'other-key', signingAlg: 'ES256' });
    writeFileSync(caFile, idp.caPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    await other?.stop();
    rmSync(caFile, { force: true });
  });

  const discovered = (at: TestIdp = idp) => ({
    diridpauthendpoint: [at.endpoints.auth],
    diridpdevauthendpoint: [at.endpoints.devAuth],
    diridptokenendpoint: [at.endpoints.token],
    diridpuserinfoendpoint: [at.endpoints.userinfo],
    diridpkeysendpoint: [at.endpoints.keys],
    diridpissuerurl: [at.issuer],
  });
  const endpointsOf = (e: Record<string, unknown>) => Object.fromEntries(Object.keys(discovered()).map((k) => [k, e[k]]));

  it('stores the endpoints discovery found, and idp-show shows them', async () => {
    const r = await admin.call('idp_add', ['disco'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
    assert.equal(r.summary, 'Added IdP reference "disco"');
    assert.deepEqual(endpointsOf(r.result), discovered());
    const shown = await admin.call('idp_show', ['disco']);
    assert.deepEqual(endpointsOf(shown.result), discovered());
  });

  it('stores the issuer as the document writes it, which ID tokens carry in iss', async () => {
    // https://localhost:PORT/ and https://localhost:PORT are one URL to discovery; a login compares iss as a string
    const r = await admin.call('idp_add', ['slashed'], { issuer_url: `${idp.issuer}/`, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
    assert.deepEqual(endpointsOf(r.result), discovered());
  });

  it('keeps an endpoint that was given and fills the others', async () => {
    const r = await admin.call('idp_add', ['partial'], { issuer_url: idp.issuer, dev_auth_uri: 'https://device.example.test/auth', client_id: 'c', secret: 's3cret' });
    assert.deepEqual(endpointsOf(r.result), { ...discovered(), diridpdevauthendpoint: ['https://device.example.test/auth'] });
  });

  it('fails, naming the discovery URL, and stores nothing when the issuer has no discovery document', async () => {
    const issuer = `${idp.issuer}/no-such-tenant`;
    const e = await rpcError(admin.call('idp_add', ['nodoc'], { issuer_url: issuer, client_id: 'c', secret: 's3cret' }));
    assert.ok(e.message.includes(`${issuer}/.well-known/openid-configuration`), e.message);
    // in words, as idp-check says it (not the client library's "not a conform ... response")
    assert.ok(e.message.endsWith('failed: answered HTTP 404 instead of a discovery document (is the issuer URL right?)'), e.message);
    assert.equal((await rpcError(admin.call('idp_show', ['nodoc']))).code, 4001);
  });

  it('fails the same way when the issuer does not answer', async () => {
    const issuer = `https://127.0.0.1:${await closedPort()}/realms/main`;
    const e = await rpcError(admin.call('idp_add', ['down'], { issuer_url: issuer, client_id: 'c', secret: 's3cret' }));
    assert.ok(e.message.includes(`${issuer}/.well-known/openid-configuration`), e.message);
    assert.equal((await rpcError(admin.call('idp_show', ['down']))).code, 4001);
  });

  it('fails when the document names another issuer', async () => {
    // the same provider under another name for its host: the document says https://localhost:PORT
    const issuer = idp.issuer.replace('localhost', '127.0.0.1');
    const e = await rpcError(admin.call('idp_add', ['mismatch'], { issuer_url: issuer, client_id: 'c', secret: 's3cret' }));
    assert.ok(e.message.includes(`${issuer}/.well-known/openid-configuration`), e.message);
    assert.match(e.message, /Issuer does not match/);
    assert.ok(e.message.includes(`names issuer ${idp.issuer}, which ID tokens carry in iss: give exactly that as the issuer URL`), e.message);
    assert.equal((await rpcError(admin.call('idp_show', ['mismatch']))).code, 4001);
  });

  it('idp-mod that leaves a login endpoint to the issuer takes it from discovery', async () => {
    await admin.call('idp_add', ['moved'], { client_id: 'c', secret: 's3cret', auth_uri: 'https://old.example.test/auth', token_uri: 'https://old.example.test/token' });
    const r = await admin.call('idp_mod', ['moved'], { issuer_url: idp.issuer, delattr: ['dirIdpTokenEndpoint=https://old.example.test/token'] });
    assert.deepEqual(r.result.diridptokenendpoint, [idp.endpoints.token]);
    assert.deepEqual(r.result.diridpauthendpoint, ['https://old.example.test/auth'], 'a given endpoint stays');
    const issuer = `${idp.issuer}/no-such-tenant`;
    const e = await rpcError(admin.call('idp_mod', ['moved'], { issuer_url: issuer, delattr: ['dirIdpTokenEndpoint'] }));
    assert.ok(e.message.includes(`${issuer}/.well-known/openid-configuration`), e.message);
    const unchanged = await admin.call('idp_show', ['moved']);
    assert.deepEqual(unchanged.result.diridptokenendpoint, [idp.endpoints.token]);
    assert.deepEqual(unchanged.result.diridpissuerurl, [idp.issuer]);
    // removing an endpoint discovery gives back leaves it as discovery has it
    const again = await admin.call('idp_mod', ['moved'], { delattr: ['dirIdpTokenEndpoint'] });
    assert.deepEqual(again.result.diridptokenendpoint, [idp.endpoints.token]);
    assert.deepEqual((await admin.call('idp_show', ['moved'])).result.diridptokenendpoint, [idp.endpoints.token]);
  });

  it('idp-mod with a new issuer alone takes every endpoint from the new issuer', async () => {
    await admin.call('idp_add', ['moving'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
    // the old IdP's endpoints kept beside the new issuer would send every login to the old IdP and refuse its tokens (iss)
    const r = await admin.call('idp_mod', ['moving'], { issuer_url: other.issuer });
    assert.deepEqual(endpointsOf(r.result), discovered(other));
    assert.deepEqual(endpointsOf((await admin.call('idp_show', ['moving'])).result), discovered(other));
    // a new issuer without a discovery document fails the change, says how to keep the endpoints, and changes nothing
    const issuer = `${other.issuer}/no-such-tenant`;
    const e = await rpcError(admin.call('idp_mod', ['moving'], { issuer_url: issuer }));
    assert.ok(e.message.includes(`${issuer}/.well-known/openid-configuration`), e.message);
    assert.match(e.message, /unless the same idp-mod gives endpoints/);
    assert.deepEqual(endpointsOf((await admin.call('idp_show', ['moving'])).result), discovered(other));
  });

  it('idp-mod with a new issuer and an endpoint keeps the endpoints it does not give', async () => {
    await admin.call('idp_add', ['byhand'], { client_id: 'c', secret: 's3cret', dev_auth_uri: 'https://idp.example.test/device', token_uri: 'https://idp.example.test/token', keys_uri: 'https://idp.example.test/keys', issuer_url: 'https://idp.example.test' });
    const r = await admin.call('idp_mod', ['byhand'], { issuer_url: 'https://idp.example.test/v2', token_uri: 'https://idp.example.test/v2/token' });
    assert.deepEqual(r.result.diridptokenendpoint, ['https://idp.example.test/v2/token']);
    assert.deepEqual(r.result.diridpdevauthendpoint, ['https://idp.example.test/device']);
    assert.deepEqual(r.result.diridpkeysendpoint, ['https://idp.example.test/keys']);
    assert.deepEqual(r.result.diridpissuerurl, ['https://idp.example.test/v2']);
  });
});
