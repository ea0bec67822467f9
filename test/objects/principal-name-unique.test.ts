/**
 * A principal name stays on one entry in the whole tree, as krbPrincipalName
 * is unique in FreeIPA's: the KDC finds a principal only when exactly one
 * entry has its name, so a second holder would take both out of service.
 * service_add of the server's host principal (host/<server>), a host whose
 * host/ name a service holds, and an alias (--addattr/--setattr
 * krbPrincipalName) that another user, a service or the realm's krbtgt holds,
 * are each a DuplicateEntry naming the holder, even for an administrator;
 * the holder keeps its name.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';

const duplicate = (holder: RegExp) => (e: Error & { code?: number }) => e.code === 4002 && holder.test(e.message);

describe('a principal name belongs to one entry', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  before(async () => {
    ({ realm, admin } = await openAdminRealm());
    await admin.call('user_add', ['alice'], { first: 'A', last: 'A' });
    await admin.call('user_add', ['bob'], { first: 'B', last: 'B' });
  });
  after(async () => realm.close());

  it("service_add host/localhost, the name of the server's host entry, is a duplicate", async () => {
    await assert.rejects(admin.call('service_add', ['host/localhost@EXAMPLE.TEST']), duplicate(/held by host "localhost"/));
    const host = await admin.call('host_find', [], {});
    assert.ok(host.result.some((h: { principal: string[] }) => h.principal.includes('host/localhost@EXAMPLE.TEST')));
    await assert.rejects(admin.call('service_show', ['host/localhost@EXAMPLE.TEST']), (e: Error & { code?: number }) => e.code === 4001);
  });

  it('host_add of a host whose host/ name a service holds is a duplicate', async () => {
    await admin.call('service_add', ['host/web.example.test@EXAMPLE.TEST'], { force: true });
    await assert.rejects(admin.call('host_add', ['web.example.test']), duplicate(/held by service "host\/web\.example\.test@EXAMPLE\.TEST"/));
    await assert.rejects(admin.call('host_show', ['web.example.test']), (e: Error & { code?: number }) => e.code === 4001);
  });

  it("an alias another user, a service or the realm's krbtgt holds is a duplicate, even for an administrator", async () => {
    await assert.rejects(admin.call('user_mod', ['alice'], { addattr: ['krbPrincipalName=bob@EXAMPLE.TEST'] }), duplicate(/held by user "bob"/));
    await assert.rejects(admin.call('user_mod', ['alice'], { addattr: ['krbPrincipalName=HTTP/localhost@EXAMPLE.TEST'] }), duplicate(/held by service "HTTP\/localhost@EXAMPLE\.TEST"/));
    await assert.rejects(admin.call('user_mod', ['alice'], { setattr: ['krbPrincipalName=krbtgt/EXAMPLE.TEST@EXAMPLE.TEST'] }), duplicate(/krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/));
    const shown = await admin.call('user_show', ['alice'], { all: true });
    assert.deepEqual(shown.result.krbprincipalname, ['alice@EXAMPLE.TEST']);
  });

  it('a name no other entry holds is still taken as an alias, and then no one else may take it', async () => {
    await admin.call('user_mod', ['alice'], { addattr: ['krbPrincipalName=alice.a@EXAMPLE.TEST'] });
    await assert.rejects(admin.call('user_mod', ['bob'], { addattr: ['krbPrincipalName=alice.a@EXAMPLE.TEST'] }), duplicate(/held by user "alice"/));
  });
});
