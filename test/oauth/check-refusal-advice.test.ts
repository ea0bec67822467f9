/**
 * idp-check's advice fits what the IdP may mean (src/oauth/check.ts): an
 * IdP that answers a wrong client credential with 403 unauthorized_client
 * (glewlwyd does, at its device and token endpoints) gets a Device
 * authorization line that names both causes, a wrong secret (or, for
 * private_key_jwt, an unregistered client key) and a client not allowed the
 * device grant, not the grant alone. Run in-process against oidc-provider,
 * whose invalid_client answers are rewritten to glewlwyd's shape.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { checkIdp, type CheckLine } from '../../src/oauth/check.js';
import { IdpClient } from '../../src/oauth/client.js';
import { httpsFetch } from '../../src/oauth/http.js';
import type { ClientKey, IdpConfig } from '../../src/oauth/types.js';
import { newClientKey } from '../../src/objects/idp-client-key.js';

const device = (lines: CheckLine[]) => lines.find((l) => l.check === 'Device authorization')!;

describe('idp-check advice on unauthorized_client', () => {
  let idp: TestIdp;
  let client: IdpClient;
  const reference = (): IdpConfig => ({
    name: 'glewlwyd-like',
    clientId: idp.clientId,
    clientSecret: 'not-the-secret-of-dirid-kdc',
    issuerUrl: idp.issuer,
    devAuthUri: idp.endpoints.devAuth,
    tokenUri: idp.endpoints.token,
    keysUri: idp.endpoints.keys,
    userinfoUri: idp.endpoints.userinfo,
    authUri: idp.endpoints.auth,
    scope: 'openid',
  });

  before(async () => {
    idp = await startTestIdp();
    // glewlwyd's answer to a client it does not authenticate: 403 unauthorized_client
    idp.rewriteDeviceAnswers((a) => (a.body.error === 'invalid_client' ? { status: 403, body: { error: 'unauthorized_client', error_description: 'client not authorized' } } : a));
    client = new IdpClient(httpsFetch(idp.caPem));
  });
  after(async () => idp?.stop());

  it('a wrong secret answered unauthorized_client: both the secret and the grant are named', async () => {
    const lines = await checkIdp(reference(), client);
    const line = device(lines);
    assert.equal(line.status, 'FAIL');
    assert.equal(
      line.message,
      'unauthorized_client: the IdP refuses client "dirid-kdc", as some IdPs answer a wrong credential too: either the stored client secret is wrong or expired, or the client may not use the device authorization grant (allow it for the client at the IdP) (the IdP said: client not authorized)',
    );
    assert.deepEqual(lines.filter((l) => l.status === 'FAIL').map((l) => l.check), ['Device authorization']);
  });

  it('a client key the IdP does not know answered unauthorized_client: the key and the grant are named', async () => {
    const key = (await newClientKey('ES256')) as ClientKey;
    const { clientSecret: _unused, ...rest } = reference();
    const line = device(await checkIdp({ ...rest, clientAuth: 'private_key_jwt', clientKeys: [key] }, client));
    assert.equal(line.status, 'FAIL');
    assert.match(line.message, new RegExp(`^unauthorized_client: the IdP refuses client "dirid-kdc", as some IdPs answer a wrong credential too: either its client key \\(key ID ${key.kid}\\) is not registered at the IdP \\(register the key set that idp-show prints\\), or the client may not use the device authorization grant`));
  });
});
