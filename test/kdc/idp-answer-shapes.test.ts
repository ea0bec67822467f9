/**
 * Providers that answer the device flow in their own shapes, as the
 * templates' providers do: Google's device authorization answer names the
 * page `verification_url` (not RFC 8628's `verification_uri`), and its
 * token endpoint answers a pending code with HTTP 428 and `slow_down` with
 * HTTP 403. The test IdP rewrites oidc-provider's answers to those shapes;
 * MIT kinit with SSSD's idp plugin must still show the page and code, and
 * get a TGT once the user approves. Before the fix the KDC refused the
 * device authorization answer ("verification_uri" must be a string).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { answerInGoogleShapes, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { kinitViaIdp } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';

describe("a provider's own answer shapes (Google's)", () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let armor: string;
  let caFile: string;
  let statuses: number[] = [];

  before(async () => {
    idp = await startTestIdp({ accounts: ['gina-sub'], pollInterval: 1 });
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-shapes-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf') };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['g'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys, scope: 'openid email' });
    await admin.call('user_add', ['gina'], { first: 'Gina', last: 'G' });
    await admin.call('user_mod', ['gina'], { user_auth_type: ['idp'], idp: 'g', idp_user_id: 'gina-sub' });
    armor = await hostArmor(realm, env);
    statuses = answerInGoogleShapes(idp);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  it('kinit shows the verification_url and code, and gets a TGT through 428 pending answers', async () => {
    const cc = `FILE:${join(realm.dataDir, 'gina.cc')}`;
    // ENTER before approving: the KDC polls a code still pending, and Google's 428 must read as pending, not as a failure
    const r = await kinitViaIdp({ idp, armor, env }, 'gina', 'gina-sub', cc, true);
    assert.equal(r.code, 0, `${r.out}\n${realm.log.filter((x) => x.includes('client=gina@')).join('\n')}`);
    assert.match(r.out, new RegExp(`${idp.issuer.replace(/[.]/g, '\\.')}/device`), 'the page the provider named is shown');
    const l = await runTool('klist', ['-c', cc], env);
    assert.match(l.stdout, /Default principal: gina@EXAMPLE\.TEST/);
    assert.ok(statuses.includes(428), `a poll was answered pending with HTTP 428: ${statuses.join(' ')}`);
    assert.equal(statuses.at(-1), 200, 'the tokens came');
  });
});
