/**
 * Deleting a host deletes the services that run on it (service/<fqdn>), as
 * FreeIPA's host-del does: otherwise they keep their keys and the KDC keeps
 * issuing tickets for a machine the directory no longer knows.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';

describe('host_del and the host\'s services', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  before(async () => ({ realm, admin } = await startAdminRealm()));
  after(async () => realm.stop());

  it('removes HTTP/ and nfs/ of the host, and leaves other hosts\' services', async () => {
    await admin.call('host_add', ['web.example.test']);
    await admin.call('service_add', ['HTTP/web.example.test']);
    await admin.call('service_add', ['nfs/web.example.test']);
    await admin.call('service_add', ['HTTP/other.example.test']);
    await admin.call('host_del', ['web.example.test']);
    for (const s of ['HTTP/web.example.test', 'nfs/web.example.test']) {
      await assert.rejects(admin.call('service_show', [s]), (e: Error & { code: number }) => e.code === 4001, s);
    }
    await admin.call('service_show', ['HTTP/other.example.test']);
  });
});
