/**
 * IdP logins through the KDC with ID tokens signed by other algorithms than
 * RS256 (issue 11 item 5): MIT kinit with SSSD's idp plugin against
 * oidc-provider signing with ES256 (reference with explicit endpoints, as
 * idp-add usually stores them) and EdDSA (reference with only an issuer,
 * endpoints by discovery). Before the fix the KDC refused the ES256 token
 * with `unexpected JWT "alg" header parameter`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type SigningAlg, type TestIdp } from '../support/oidc-idp.js';
import { runTool } from '../support/mit-tools.js';
import { kinitViaIdp } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { createCa } from '../../src/server/pki.js';


describe('IdP login through the KDC with EC and EdDSA ID tokens', () => {
  let realm: TestRealm;
  const idps = new Map<SigningAlg, TestIdp>();
  let env: NodeJS.ProcessEnv;
  let admin: RpcSession;
  let armor: string;

  before(async () => {
    const ca = await createCa('Test IdP CA');
    for (const alg of ['ES256', 'EdDSA'] as const) idps.set(alg, await startTestIdp({ accounts: ['alice-sub'], ca, signingAlg: alg }));
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-alg-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'x.cc')}` };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    const es = idps.get('ES256')!;
    await admin.call('idp_add', ['es256idp'], { client_id: es.clientId, secret: es.clientSecret, issuer_url: es.issuer, auth_uri: es.endpoints.auth, dev_auth_uri: es.endpoints.devAuth, token_uri: es.endpoints.token, keys_uri: es.endpoints.keys, scope: 'openid email' });
    const ed = idps.get('EdDSA')!;
    await admin.call('idp_add', ['eddsaidp'], { client_id: ed.clientId, secret: ed.clientSecret, issuer_url: ed.issuer, scope: 'openid email' });
    for (const [user, ref] of [['alice', 'es256idp'], ['carol', 'eddsaidp']] as const) {
      await admin.call('user_add', [user], { first: user, last: 'L' });
      await admin.call('user_mod', [user], { user_auth_type: ['idp'], idp: ref, idp_user_id: 'alice-sub' });
    }
    armor = `FILE:${join(realm.dataDir, 'armor.cc')}`;
    const a = await runTool('kinit', ['-k', '-t', join(data, 'host.keytab'), '-c', armor, 'host/localhost'], env);
    assert.equal(a.code, 0, a.stderr);
  });
  after(async () => {
    await realm?.stop();
    for (const i of idps.values()) await i.stop();
  });


  for (const [alg, user, ref] of [['ES256', 'alice', 'es256idp'], ['EdDSA', 'carol', 'eddsaidp']] as const) {
    it(`kinit -T gets a TGT when the IdP signs ID tokens with ${alg} (${ref})`, async () => {
      const cc = `FILE:${join(realm.dataDir, `${user}.cc`)}`;
      const r = await kinitViaIdp({ idp: idps.get(alg)!, armor, env }, user, 'alice-sub', cc, true);
      assert.equal(r.code, 0, `${r.out}\n${realm.log.filter((x) => x.includes('preauth')).join('\n')}`);
      const l = await runTool('klist', ['-c', cc], env);
      assert.match(l.stdout, new RegExp(`Default principal: ${user}@EXAMPLE\\.TEST`));
      assert.ok(realm.log.some((x) => new RegExp(`client=${user}@EXAMPLE.TEST .*outcome=ISSUE .*preauth="idp: ${ref} identified`).test(x)));
    });
  }
});
