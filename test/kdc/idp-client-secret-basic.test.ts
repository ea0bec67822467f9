/**
 * An IdP that takes the client secret only in an HTTP Basic header
 * (client_secret_basic, RFC 6749 §2.3.1: the method every authorization
 * server must support, and oidc-provider's and many IdPs' default for a new
 * client). Every other fixture registers its client for client_secret_post,
 * the body, which is what dirid sent always; against this IdP each request
 * was refused invalid_client. Here the IdP signs with ES256 and its
 * discovery document lists only client_secret_basic:
 * - idp-add by issuer alone (typed with a trailing slash the IdP's issuer
 *   lacks) chooses client_secret_basic from discovery and stores the issuer
 *   as the document writes it;
 * - idp-check passes, and MIT kinit through the KDC gets a TGT;
 * - a reference set to client_secret_post fails idp-check with invalid_client,
 *   naming --client-auth=client_secret_basic, and its login is refused.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { kinitViaIdp } from '../support/pty.js';
import type { RpcSession } from '../support/rpc-client.js';
import { createCa } from '../../src/server/pki.js';

describe('an IdP that takes the client secret only in an HTTP Basic header', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let admin: RpcSession;
  let armor: string;
  let caFile: string;

  before(async () => {
    const ca = await createCa('Test IdP CA');
    idp = await startTestIdp({ accounts: ['basil-sub'], ca, signingAlg: 'ES256', clientAuthMethod: 'client_secret_basic', clientAuthMethods: ['client_secret_basic', 'private_key_jwt'] });
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-basic-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'x.cc')}` };
    armor = await hostArmor(realm, env);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  const deviceLine = async (ref: string) => {
    const r = await admin.call('idp_check', [ref]);
    return (r.result as Array<{ check: string; status: string; message: string }>).find((l) => l.check === 'Device authorization')!;
  };

  it('idp-add by issuer chooses client_secret_basic from discovery, and kinit gets a TGT', async () => {
    // the issuer typed with a trailing slash the IdP's does not have: the reference keeps the document's, which iss carries
    const r = await admin.call('idp_add', ['basic'], { issuer_url: `${idp.issuer}/`, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
    assert.deepEqual(r.result.diridpclientauth, ['client_secret_basic']);
    assert.deepEqual(r.result.diridpissuerurl, [idp.issuer]);
    const line = await deviceLine('basic');
    assert.equal(line.status, 'PASS', line.message);
    assert.match(line.message, /with the stored secret in an HTTP Basic header/);
    await admin.call('user_add', ['basil'], { first: 'Basil', last: 'B' });
    await admin.call('user_mod', ['basil'], { user_auth_type: ['idp'], idp: 'basic', idp_user_id: 'basil-sub' });
    const cc = `FILE:${join(realm.dataDir, 'basil.cc')}`;
    const k = await kinitViaIdp({ idp, armor, env }, 'basil', 'basil-sub', cc);
    assert.equal(k.code, 0, `${k.out}\n${realm.log.filter((x) => x.includes('client=basil@')).join('\n')}`);
    assert.match((await runTool('klist', ['-c', cc], env)).stdout, /Default principal: basil@EXAMPLE\.TEST/);
    assert.ok(realm.log.some((x) => /client=basil@EXAMPLE.TEST .*outcome=ISSUE .*preauth="idp: basic identified/.test(x)));
  });

  it('a reference sending the secret in the body is refused, and idp-check says how to send it', async () => {
    await admin.call('idp_add', ['inbody'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email', client_auth: 'client_secret_post' });
    const line = await deviceLine('inbody');
    assert.equal(line.status, 'FAIL');
    assert.match(line.message, /^invalid_client: .*in the request body .*--client-auth=client_secret_basic/);
    assert.ok(!line.message.includes(idp.clientSecret), 'the secret stays out of the message');
    // switching the reference over is all it takes
    await admin.call('idp_mod', ['inbody'], { client_auth: 'client_secret_basic' });
    assert.equal((await deviceLine('inbody')).status, 'PASS');
  });
});
