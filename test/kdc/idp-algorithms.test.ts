/**
 * IdP logins through the KDC with ID tokens signed by other algorithms than
 * RS256 (issue 11 item 5; RS256 is idp-login.test.ts): MIT kinit with
 * SSSD's idp plugin against oidc-provider signing with ES256, PS256 and
 * EdDSA, each through a reference with explicit endpoints (as idp-add
 * usually stores them) and one with only an issuer (endpoints by
 * discovery). Before the fix the KDC refused these tokens with
 * `unexpected JWT "alg" header parameter`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type SigningAlg, type TestIdp } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { kinitViaIdp } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { createCa } from '../../src/server/pki.js';

const ALGORITHMS = ['ES256', 'PS256', 'EdDSA'] as const;
const HOW = ['explicit', 'discovery'] as const;

/** the reference and the user of one algorithm and one way to find the endpoints */
const refOf = (alg: SigningAlg, how: (typeof HOW)[number]) => `${alg.toLowerCase()}${how === 'explicit' ? 'idp' : 'disco'}`;
const userOf = (alg: SigningAlg, how: (typeof HOW)[number]) => `u${alg.toLowerCase()}${how === 'explicit' ? 'x' : 'd'}`;

describe('IdP login through the KDC with EC, RSA-PSS and EdDSA ID tokens', () => {
  let realm: TestRealm;
  const idps = new Map<SigningAlg, TestIdp>();
  let env: NodeJS.ProcessEnv;
  let admin: RpcSession;
  let armor: string;
  let caFile: string;

  before(async () => {
    const ca = await createCa('Test IdP CA');
    for (const alg of ALGORITHMS) idps.set(alg, await startTestIdp({ accounts: ['alice-sub'], ca, signingAlg: alg }));
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-alg-ca-${process.pid}.pem`);
    writeFileSync(caFile, ca.certPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'x.cc')}` };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    for (const [alg, idp] of idps) {
      const common = { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer, scope: 'openid email' };
      const explicit = { auth_uri: idp.endpoints.auth, dev_auth_uri: idp.endpoints.devAuth, token_uri: idp.endpoints.token, keys_uri: idp.endpoints.keys };
      for (const how of HOW) {
        await admin.call('idp_add', [refOf(alg, how)], how === 'explicit' ? { ...common, ...explicit } : common);
        await admin.call('user_add', [userOf(alg, how)], { first: 'U', last: alg });
        await admin.call('user_mod', [userOf(alg, how)], { user_auth_type: ['idp'], idp: refOf(alg, how), idp_user_id: 'alice-sub' });
      }
    }
    armor = await hostArmor(realm, env);
  });
  after(async () => {
    await realm?.stop();
    for (const i of idps.values()) await i.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  for (const alg of ALGORITHMS) {
    for (const how of HOW) {
      it(`kinit -T gets a TGT when the IdP signs ID tokens with ${alg} (endpoints ${how === 'explicit' ? 'configured' : 'by discovery'})`, async () => {
        const [user, ref] = [userOf(alg, how), refOf(alg, how)];
        const cc = `FILE:${join(realm.dataDir, `${user}.cc`)}`;
        const r = await kinitViaIdp({ idp: idps.get(alg)!, armor, env }, user, 'alice-sub', cc);
        assert.equal(r.code, 0, `${r.out}\n${realm.log.filter((x) => x.includes(`client=${user}@`)).join('\n')}`);
        const l = await runTool('klist', ['-c', cc], env);
        assert.match(l.stdout, new RegExp(`Default principal: ${user}@EXAMPLE\\.TEST`));
        assert.ok(realm.log.some((x) => new RegExp(`client=${user}@EXAMPLE.TEST .*outcome=ISSUE .*preauth="idp: ${ref} identified`).test(x)));
      });
    }
  }
});
