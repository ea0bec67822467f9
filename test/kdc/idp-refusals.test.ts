/**
 * IdP refusals that the test OpenID Provider cannot be made to send
 * (unauthorized_client, invalid_scope at the device authorization endpoint):
 * a minimal HTTPS endpoint answers with them, as Keycloak or Entra ID would,
 * and the KDC passes them on to dirid kinit and the log.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

describe('IdP refusals of the device grant', () => {
  let realm: TestRealm;
  let server: Server;
  let base: string;
  let admin: RpcSession;
  let answer = 'unauthorized_client';
  before(async () => {
    const ca = await createCa('Refusing IdP CA');
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    server = createServer({ key: tls.keyPem, cert: tls.certPem }, (req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: answer, error_description: `refused: ${answer}` }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `https://localhost:${(server.address() as AddressInfo).port}`;
    const caFile = join(process.env.TMPDIR ?? '/tmp', `refusing-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['refusing'], { client_id: 'c', secret: 'refusing-secret-1', auth_uri: `${base}/auth`, dev_auth_uri: `${base}/device`, token_uri: `${base}/token` });
    await admin.call('user_add', ['gina'], { first: 'G', last: 'H' });
    await admin.call('user_mod', ['gina'], { user_auth_type: ['idp'], idp: 'refusing', idp_user_id: 'gina' });
  });
  after(async () => {
    await realm?.stop();
    server?.close();
  });

  const kinit = () =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
      const env = { ...process.env, KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
      const c = spawn(process.execPath, [DIRID, 'kinit', '-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', `FILE:${join(realm.dataDir, 'g.cc')}`, 'gina'], { env });
      let stderr = '';
      c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      c.stdin.end();
      c.on('exit', (code) => resolve({ code, stderr }));
    });

  for (const code of ['unauthorized_client', 'invalid_scope']) {
    it(`${code} reaches the user and the log`, async () => {
      answer = code;
      const r = await kinit();
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`dirid: ERROR: device authorization: the IdP answered ${code}`));
      assert.ok(realm.log.some((x) => new RegExp(`client=gina@EXAMPLE.TEST .*preauth="idp: device authorization: the IdP answered ${code}`).test(x)));
    });
  }
});
