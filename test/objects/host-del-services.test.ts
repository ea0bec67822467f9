/**
 * Deleting a host deletes the services that run on it (service/<fqdn>), as
 * FreeIPA's host-del does: otherwise they keep their keys and the KDC keeps
 * issuing tickets for a machine the directory no longer knows. And, as in
 * FreeIPA, a service is added for a host the directory knows, unless
 * --force says the host is elsewhere; the server's own host entry is not
 * deleted.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

describe('host_del and the host\'s services', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  before(async () => ({ realm, admin } = await openAdminRealm()));
  after(async () => realm.close());

  it('removes HTTP/ and nfs/ of the host, and leaves other hosts\' services', async () => {
    await admin.call('host_add', ['web.example.test']);
    await admin.call('host_add', ['other.example.test']);
    await admin.call('service_add', ['HTTP/web.example.test']);
    await admin.call('service_add', ['nfs/web.example.test']);
    await admin.call('service_add', ['HTTP/other.example.test']);
    await admin.call('service_add', ['HTTP/sub.web.example.test'], { force: true });
    await admin.call('host_del', ['web.example.test']);
    for (const s of ['HTTP/web.example.test', 'nfs/web.example.test']) {
      await assert.rejects(admin.call('service_show', [s]), (e: Error & { code: number }) => e.code === 4001, s);
    }
    await admin.call('service_show', ['HTTP/other.example.test']);
    await admin.call('service_show', ['HTTP/sub.web.example.test']);
  });

  it('service_add for a host not in the directory is refused, and added with --force', async () => {
    await assert.rejects(admin.call('service_add', ['HTTP/ghost.example.test']), (e: Error & { code: number; message: string }) => e.code === 4001 && /ghost\.example\.test.*host-add.*--force/.test(e.message));
    await assert.rejects(admin.call('service_show', ['HTTP/ghost.example.test']), (e: Error & { code: number }) => e.code === 4001);
    const added = await admin.call('service_add', ['HTTP/ghost.example.test'], { force: true });
    assert.equal(added.value, 'HTTP/ghost.example.test@EXAMPLE.TEST');
  });

  it("host_del of the server's own host (localhost) is refused, naming the server; host_show shows it", async () => {
    const shown = await admin.call('host_show', ['localhost']);
    assert.equal(shown.value, 'localhost');
    await assert.rejects(admin.call('host_del', ['localhost']), (e: Error & { code: number; message: string }) => e.code === 3009 && /required by the dirid server localhost/.test(e.message));
    await admin.call('host_show', ['localhost']);
    await admin.call('service_show', ['HTTP/localhost']);
  });
});
