/**
 * A change to an IdP reference takes effect at the very next answer of a
 * pending flow: the KDC keeps the references it read while the directory
 * is unchanged (kdc/idp-preauth.ts idpConfigOf), never past a write. End to
 * end, a minimal HTTPS IdP records each token request (its endpoint and the
 * secret it carries) and refuses it, so each answer is over after one; then
 * the same cache over a directory alone, with a delete and a secret change.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { realmSchema } from '../../src/server/store.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory } from '../../src/directory/types.js';
import { asReqBody, asWithKeys, type Credentials } from '../../src/kerberos/client.js';
import { armoredAsReq, processArmored } from '../../src/kerberos/fast-client.js';
import { PaType } from '../../src/kerberos/iana.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { sendUdp } from '../../src/kerberos/transport.js';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';
import { idpConfigOf } from '../../src/kdc/idp-preauth.js';
import { KdcError } from '../../src/kdc/errors.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

describe('IdP reference changes reach the next answer', () => {
  let realm: TestRealm;
  let server: Server;
  let base: string;
  let admin: RpcSession;
  /** the token requests the IdP got: path and client_secret */
  const tokenRequests: Array<{ path: string; secret: string | null }> = [];
  let send: (m: Buffer) => Promise<Buffer>;
  let armor: Credentials;

  before(async () => {
    const ca = await createCa('Reference IdP CA');
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        if (req.url === '/device') {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ device_code: `dc-${randomBytes(8).toString('hex')}`, user_code: 'ABCD-EFGH', verification_uri: `${base}/verify`, expires_in: 600, interval: 1 }));
          return;
        }
        tokenRequests.push({ path: req.url ?? '', secret: form.get('client_secret') });
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'access_denied', error_description: `refused at ${req.url}` }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
    const caFile = join(process.env.TMPDIR ?? '/tmp', `reference-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    rmSync(caFile, { force: true });
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['changing'], { client_id: 'c', secret: 'first-secret-1', auth_uri: `${base}/auth`, dev_auth_uri: `${base}/device`, token_uri: `${base}/token` });
    await admin.call('user_add', ['hugo'], { first: 'H', last: 'U' });
    await admin.call('user_mod', ['hugo'], { user_auth_type: ['idp'], idp: 'changing', idp_user_id: 'hugo' });
    const kdc = { host: '127.0.0.1', port: realm.server.kdcPort };
    send = (m) => sendUdp(kdc, m, [3000, 6000]);
    const hostKeys = readKeytab(readFileSync(join(realm.dataDir, 'realm', 'host.keytab'))).map((k) => ({ etype: k.etype, value: k.key }));
    armor = await asWithKeys(send, { nameType: 3, nameString: ['host', 'localhost'] }, 'EXAMPLE.TEST', hostKeys);
  });
  after(async () => {
    await realm?.stop();
    server?.close();
  });

  const hugo = { nameType: 1, nameString: ['hugo'] };
  /** One armored AS-REQ for hugo with `padata`: the KRB-ERROR's code and the padata of its FAST reply. */
  async function asReq(padata: PaData[]) {
    const body = asReqBody(hugo, 'EXAMPLE.TEST', {});
    const req = armoredAsReq(armor, body, padata);
    const r = processArmored(await send(req.msg), req, body, req.armorKey);
    assert.equal(r.kind, 'error');
    return r.kind === 'error' ? { code: r.error.errorCode, padata: r.padata } : { code: 0, padata: [] };
  }
  const answer = (cookie: PaData) => asReq([{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie]);
  const refusalsIn = (path: string) => realm.log.filter((l) => l.includes('client=hugo@') && l.includes(`refused at ${path}`)).length;

  it('a new token endpoint and secret are used by the next answer of a flow started before the change', async () => {
    const started = await asReq([]);
    const cookie = started.padata.find((p) => p.type === PaType.FX_COOKIE);
    assert.ok(cookie, 'the flow started with a cookie');
    assert.ok(started.padata.some((p) => p.type === PaType.REDHAT_IDP_OAUTH2));

    const first = await answer(cookie);
    assert.equal(first.code, 24, 'KDC_ERR_PREAUTH_FAILED');
    assert.deepEqual(tokenRequests, [{ path: '/token', secret: 'first-secret-1' }]);
    assert.equal(refusalsIn('/token'), 1);

    await admin.call('idp_mod', ['changing'], { token_uri: `${base}/token2`, secret: 'second-secret-2' });
    await answer(cookie);
    assert.deepEqual(tokenRequests.at(-1), { path: '/token2', secret: 'second-secret-2' }, 'the answer after idp-mod used the reference as modified');
    assert.equal(refusalsIn('/token2'), 1);

    await admin.call('idp_mod', ['changing'], { secret: 'third-secret-3' });
    await answer(cookie);
    assert.deepEqual(tokenRequests.at(-1), { path: '/token2', secret: 'third-secret-3' }, 'a new secret alone is used at once');
    assert.equal(tokenRequests.length, 3);
  });
});

describe('idpConfigOf over a directory', () => {
  const base = 'dc=example,dc=test';
  const dn = `cn=corp,cn=idps,${base}`;
  let tmp: string;
  let dir: Directory;
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'idp-config-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema: realmSchema, masterKey: randomBytes(32), create: true });
    await dir.add(`cn=idps,${base}`, { objectClass: ['top', 'dirContainer'], cn: ['idps'] });
    await dir.add(dn, { objectClass: ['top', 'dirIdp'], cn: ['corp'], dirIdpClientId: ['c'], dirIdpClientSecret: ['one-secret-1'], dirIdpTokenEndpoint: ['https://idp.example/token'], dirIdpDevAuthEndpoint: ['https://idp.example/device'] });
  });
  after(async () => {
    await dir?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('reads the reference again after any write, and refuses it once deleted', async () => {
    const a = await idpConfigOf(dir, dn);
    assert.equal(a.clientSecret, 'one-secret-1');
    assert.equal(a.tokenUri, 'https://idp.example/token');
    assert.ok(Object.isFrozen(a), 'the shared reference cannot be changed by one of its users');
    assert.equal(await idpConfigOf(dir, dn), a, 'unchanged directory: the reference as read');

    await dir.modify(dn, [{ op: 'replace', attr: 'dirIdpClientSecret', values: ['two-secret-2'] }]);
    const b = await idpConfigOf(dir, dn);
    assert.equal(b.clientSecret, 'two-secret-2');
    await dir.modify(dn, [{ op: 'replace', attr: 'dirIdpTokenEndpoint', values: ['https://idp.example/token2'] }]);
    assert.equal((await idpConfigOf(dir, dn)).tokenUri, 'https://idp.example/token2');

    await dir.delete(dn);
    await assert.rejects(idpConfigOf(dir, dn), (e: unknown) => e instanceof KdcError && e.message === 'the linked IdP reference does not exist');
  });
});
