/**
 * `dirid kinit` when the KDC restarts the device flow in the middle of a
 * login: here the user's IdP link is changed while they are logging in, so
 * the KDC's next answer starts a new device authorization with a new code.
 * The client must show the new URL and code (the old one can no longer be
 * approved) and complete once the new one is approved. Real server and KDC,
 * test IdP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { runTool } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid kinit: a device flow restarted by the KDC', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;

  before(async () => {
    idp = await startTestIdp({ accounts: ['rita-sub'] });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca-restart-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), DIRID_KINIT_POLL_MS: '300' };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    for (const name of ['first', 'second']) {
      await admin.call('idp_add', [name], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid' });
    }
    await admin.call('user_add', ['rita'], { first: 'Rita', last: 'R' });
    await admin.call('user_mod', ['rita'], { user_auth_type: ['idp'], idp: 'first', idp_user_id: 'rita-sub' });
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  it('prints the new URL and code, says the login was restarted, and completes with the new code', async () => {
    const cc = `FILE:${join(realm.dataDir, 'rita.cc')}`;
    const child = spawn(process.execPath, [DIRID, 'kinit', '-k', join(realm.dataDir, 'realm', 'host.keytab'), '-c', cc, 'rita'], { env: { ...process.env, ...env } });
    child.stdin.end();
    let stdout = '';
    let stderr = '';
    const codes = (): string[] => [...stdout.matchAll(/enter the code ([^\s)]+)/g)].map((m) => m[1]!);
    let relinked = false;
    let approved = false;
    let relinkError: unknown;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      const seen = codes();
      if (seen.length === 1 && !relinked) {
        // the link changes while the first code is shown: the KDC's next answer starts a new flow
        relinked = true;
        admin.call('user_mod', ['rita'], { delattr: ['dirIdpConfigLink=first'], idp: 'second' }).catch((e: unknown) => (relinkError = e));
      }
      if (seen.length === 2 && !approved) {
        approved = true;
        void idp.approveDevice(seen[1]!, 'rita-sub');
      }
    });
    // without the fix the second code never shows; do not wait for the device code's expiry
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    clearTimeout(timer);
    assert.equal(relinkError, undefined);
    assert.equal(code, 0, stdout + stderr);
    const seen = codes();
    assert.equal(seen.length, 2, stdout);
    assert.notEqual(seen[0], seen[1]);
    assert.match(stdout, /\nThe login was restarted: the code shown before is no longer valid\.\nAuthenticate at https:\/\/\S+\n\(or open \S+ and enter the code [^\s)]+\)\nWaiting for the identity provider\.\.\.\n/);
    assert.match((await runTool('klist', ['-c', cc], env)).stdout, /Default principal: rita@EXAMPLE\.TEST/);
  });
});
