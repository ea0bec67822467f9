/**
 * Two servers in one process share no state (issue 12): each has its own
 * IdP client, so a discovery document one server's idp-add fetched is in
 * that server's cache only, and the other server fetches its own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { RpcSession } from '../support/rpc-client.js';

describe('two servers in one process', () => {
  let idp: TestIdp;
  let one: TestRealm;
  let other: TestRealm;
  let caFile: string;

  before(async () => {
    idp = await startTestIdp();
    caFile = join(process.env.TMPDIR ?? '/tmp', `two-servers-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    one = await startTestRealm({ idpCaFile: caFile });
    other = await startTestRealm({ realm: 'OTHER.TEST', domain: 'other.test', idpCaFile: caFile });
  });
  after(async () => {
    await one?.stop();
    await other?.stop();
    await idp?.stop();
    if (caFile) rmSync(caFile, { force: true });
  });

  const addByDiscovery = async (realm: TestRealm) => {
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    // an issuer and no endpoints: discovery runs at the write (and a failure would fail it)
    const r = await admin.call('idp_add', ['discovered'], { client_id: idp.clientId, secret: idp.clientSecret, issuer_url: idp.issuer });
    assert.equal(r.value, 'discovered');
  };

  it('keep the discovery documents of their idp-add apart', async () => {
    assert.notEqual(one.server.idp, other.server.idp, 'each server has an IdP client of its own');
    await addByDiscovery(one);
    assert.ok(one.server.idp.discovery.has(idp.issuer), 'the first server cached the document its idp-add discovered');
    assert.equal(other.server.idp.discovery.has(idp.issuer), false, 'the other server has not seen it');
    await addByDiscovery(other);
    assert.ok(other.server.idp.discovery.has(idp.issuer), 'the other server discovered it itself');
  });
});
