/**
 * private_key_jwt end to end (docs/client-auth.md): an IdP reference set to
 * private_key_jwt gets a key pair; the admin takes its public key set from
 * idp-show (the same set the server publishes at the JWKS URL) and registers
 * it for the client at the test OpenID Provider (oidc-provider, the client
 * set to token_endpoint_auth_method private_key_jwt); a device-flow login
 * through the KDC then gets a TGT. A key the IdP does not know is refused
 * with invalid_client, in plain words by idp-check. The rollover: a new key
 * signs at once, the old one carries logins while the IdP does not know the
 * new one, and leaves the published set once the IdP accepted the new one.
 * No private key material is ever shown.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { DEVICE_GRANT, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { diridKinitViaIdp } from '../support/pty.js';

const CLIENT = 'dirid-pkjwt';

interface Line {
  check: string;
  status: string;
  message: string;
}

describe('private_key_jwt client authentication', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  // the provider's clients: the test registers the pkjwt client once dirid made its key
  const clients: Array<Record<string, unknown>> = [];
  const shown: string[] = [];

  const show = async (name: string): Promise<Record<string, unknown>> => {
    const r = await admin.call('idp_show', [name], { all: true });
    shown.push(JSON.stringify(r));
    return r.result as Record<string, unknown>;
  };
  const jwksOf = async (name: string): Promise<{ keys: Array<Record<string, unknown>> }> => JSON.parse(String((((await show(name)).client_jwks) as string[])[0]));
  /** What an admin does at the IdP: registers the key set for the client (the provider is rebuilt to take it). */
  const register = async (jwks: unknown) => registerClient({ jwks });
  /** the same with the client's key metadata as the admin gives it: the set itself, or its URL (`jwks_uri`) for the IdP to fetch */
  const registerClient = async (keys: { jwks: unknown } | { jwks_uri: string }) => {
    clients.length = 0;
    clients.push({ client_id: CLIENT, grant_types: [DEVICE_GRANT], response_types: [], redirect_uris: [], token_endpoint_auth_method: 'private_key_jwt', ...keys });
    await idp.rotateKey();
  };
  const get = (url: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      request(url, { ca: realm.ca }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
        .on('error', reject)
        .end();
    });
  const kinit = (approveAs?: string, user = 'pat') =>
    diridKinitViaIdp(idp, { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') }, ['-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', `FILE:${join(realm.dataDir, 'p.cc')}`, user], approveAs);
  const deviceLine = async (name: string): Promise<Line> => ((await admin.call('idp_check', [name])).result as Line[]).find((l) => l.check === 'Device authorization')!;

  before(async () => {
    idp = await startTestIdp({ accounts: ['pat-sub'], clients });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `pkjwt-idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    idp.trustForFetches(realm.ca);
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    const endpoints = { issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid' };
    await admin.call('idp_add', ['pkjwt'], { client_id: CLIENT, client_auth: 'private_key_jwt', ...endpoints });
    await admin.call('idp_add', ['otherkey'], { client_id: CLIENT, client_auth: 'private_key_jwt', client_key_alg: 'RS256', ...endpoints });
    await admin.call('user_add', ['pat'], { first: 'Pat', last: 'K' });
    await admin.call('user_mod', ['pat'], { user_auth_type: ['idp'], idp: 'pkjwt', idp_user_id: 'pat-sub' });
    await admin.call('user_add', ['quin'], { first: 'Quin', last: 'K' });
    await admin.call('user_mod', ['quin'], { user_auth_type: ['idp'], idp: 'otherkey', idp_user_id: 'pat-sub' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  it('idp-show gives the public key set and its URL, which serves the same set', async () => {
    const r = await show('pkjwt');
    assert.deepEqual(r.diridpclientauth, ['private_key_jwt']);
    assert.deepEqual(r.diridpclientkeyalg, ['ES256']);
    const jwks = await jwksOf('pkjwt');
    assert.equal(jwks.keys.length, 1);
    assert.equal(jwks.keys[0]!.kty, 'EC');
    assert.equal(jwks.keys[0]!.alg, 'ES256');
    assert.equal(jwks.keys[0]!.d, undefined);
    const url = String((r.client_jwks_url as string[])[0]);
    assert.equal(url, `${new URL(realm.url).origin}/dirid/idp/pkjwt/jwks.json`);
    const served = await get(url);
    assert.equal(served.status, 200);
    assert.match(String(served.headers['content-type']), /^application\/jwk-set\+json/);
    assert.match(String(served.headers['cache-control']), /max-age=\d+/);
    assert.deepEqual(JSON.parse(served.body), jwks);
    assert.equal((await jwksOf('otherkey')).keys[0]!.kty, 'RSA');
    assert.equal((await get(url.replace('/pkjwt/', '/nosuch/'))).status, 404);
  });

  it('with the key registered at the IdP, the device-flow login gets a TGT', async () => {
    await register(await jwksOf('pkjwt'));
    const check = await deviceLine('pkjwt');
    assert.equal(check.status, 'PASS', check.message);
    assert.match(check.message, /with a client assertion signed by key /);
    const r = await kinit('pat-sub');
    assert.equal(r.code, 0, r.stderr);
  });

  it('a key the IdP does not know: invalid_client, said plainly by idp-check and refused to kinit', async () => {
    const check = await deviceLine('otherkey');
    assert.equal(check.status, 'FAIL');
    assert.match(check.message, /^invalid_client: the IdP does not accept client "dirid-pkjwt" with a client assertion signed by its client key/);
    const r = await kinit(undefined, 'quin');
    assert.equal(r.code, 1);
    assert.match(r.stderr, /invalid_client/);
  });

  it('rollover: the new key is published beside the old, logins go on with the old until the IdP knows the new, then the old is dropped', async () => {
    const before = await jwksOf('pkjwt');
    const oldKid = before.keys[0]!.kid;
    await admin.call('idp_mod', ['pkjwt'], { rotate_client_key: true });
    const both = await jwksOf('pkjwt');
    assert.equal(both.keys.length, 2);
    assert.equal(both.keys[1]!.kid, oldKid);
    const newKid = both.keys[0]!.kid;
    assert.notEqual(newKid, oldKid);
    // not yet registered: idp-check says so, and logins use the old key
    const check = await deviceLine('pkjwt');
    assert.equal(check.status, 'PASS', check.message);
    assert.match(check.message, new RegExp(`signed by key ${oldKid}.*refused the new client key ${newKid}`));
    assert.equal((await kinit('pat-sub')).code, 0);
    assert.equal((await jwksOf('pkjwt')).keys.length, 2, 'the old key stays while the new one was not accepted');
    // the admin registers the published set (both keys); the next login uses the new one and the old one goes
    await register(both);
    assert.equal((await kinit('pat-sub')).code, 0);
    let after = await jwksOf('pkjwt');
    for (let i = 0; i < 50 && after.keys.length > 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = await jwksOf('pkjwt');
    }
    assert.deepEqual(after.keys.map((k) => k.kid), [newKid]);
    const url = String(((await show('pkjwt')).client_jwks_url as string[])[0]);
    assert.deepEqual(JSON.parse((await get(url)).body), after);
  });

  it('registered by its URL (jwks_uri), the key set is fetched by the IdP from dirid and the login gets a TGT', async () => {
    const url = (name: string) => `${new URL(realm.url).origin}/dirid/idp/${name}/jwks.json`;
    // another reference's key set at that URL: the IdP fetches it and refuses the assertion
    await registerClient({ jwks_uri: url('otherkey') });
    const refused = await deviceLine('pkjwt');
    assert.equal(refused.status, 'FAIL');
    assert.match(refused.message, /^invalid_client/);
    await registerClient({ jwks_uri: url('pkjwt') });
    const check = await deviceLine('pkjwt');
    assert.equal(check.status, 'PASS', check.message);
    const r = await kinit('pat-sub');
    assert.equal(r.code, 0, r.stderr);
  });

  it('--rotate-client-key and --client-key-alg need private_key_jwt; a secret reference needs its secret', async () => {
    const endpoints = { issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token };
    await assert.rejects(admin.call('idp_add', ['nosecret'], { client_id: 'x', ...endpoints }), /secret/);
    await admin.call('idp_add', ['withsecret'], { client_id: 'x', secret: 'a-secret-1234', ...endpoints });
    await assert.rejects(admin.call('idp_mod', ['withsecret'], { rotate_client_key: true }), /private_key_jwt/);
    await assert.rejects(admin.call('idp_mod', ['withsecret'], { client_key_alg: 'RS256' }), /private_key_jwt/);
    const r = await show('withsecret');
    assert.equal(r.client_jwks, undefined);
    // back from private_key_jwt to the secret: only with a secret
    await assert.rejects(admin.call('idp_mod', ['otherkey'], { client_auth: 'client_secret_post' }), /secret/);
    await admin.call('idp_mod', ['otherkey'], { client_auth: 'client_secret_post', secret: 'now-a-secret-1234' });
    assert.equal((await show('otherkey')).client_jwks, undefined);
    const served = await get(`${new URL(realm.url).origin}/dirid/idp/otherkey/jwks.json`);
    assert.equal(served.status, 404, 'a reference back on its secret publishes no key set');
  });

  it('no private key material is shown, found or logged', async () => {
    const found = await admin.call('idp_find', [], { all: true });
    shown.push(JSON.stringify(found));
    const raw = await admin.call('idp_show', ['pkjwt'], { all: true, raw: true });
    shown.push(JSON.stringify(raw));
    const all = shown.join('\n') + realm.log.join('\n');
    assert.ok(!/"d"\s*:/.test(all) && !/\\"d\\"/.test(all), 'a private key member was shown');
    assert.ok(!/dirIdpClientKey"/i.test(all), 'the sealed key attribute was shown');
  });
});
