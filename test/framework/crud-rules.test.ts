/**
 * Rules every derived command follows, checked on several objects: X-del of
 * several names is all or nothing unless --continue (specification §4.2),
 * and X-find returns entries ordered by their primary key, so --sizelimit N
 * gives the first N names and repeated calls agree (§4.3, §8).
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const SECRET = 'crud-rules-secret-5Kp';

describe('derived commands: deleting several names, find order and limits', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
  });
  after(async () => realm.close());

  const addIdp = (name: string) => admin.call('idp_add', [name], { client_id: 'c', secret: SECRET, auth_uri: 'https://idp.example.test/auth', token_uri: 'https://idp.example.test/token' });
  const idpNames = async () => ((await admin.call('idp_find', [], { pkey_only: true })).result as Array<{ cn: string[] }>).map((e) => e.cn[0]);

  it('idp-del a nosuch b deletes nothing and names what is missing', async () => {
    await addIdp('del-a');
    await addIdp('del-b');
    const e = await rpcError(admin.call('idp_del', ['del-a', 'nosuch', 'del-b']));
    assert.equal(e.code, 4001);
    assert.equal(e.message, 'nosuch: IdP reference not found');
    assert.deepEqual(await idpNames(), ['del-a', 'del-b']);
  });

  it('a referenced name keeps every other name of the same call', async () => {
    await admin.call('user_add', ['linked'], { first: 'Linked', last: 'User' });
    await admin.call('user_mod', ['linked'], { user_auth_type: ['idp'], idp: 'del-b', idp_user_id: 'linked-sub' });
    const e = await rpcError(admin.call('idp_del', ['del-a', 'del-b']));
    assert.equal(e.code, 4210);
    assert.equal(e.message, 'This entry is being referenced by other entries: IdP reference "del-b" is still linked to user linked; change that with user-mod first');
    assert.deepEqual(await idpNames(), ['del-a', 'del-b']);
  });

  it('a reference several users link to names the first five and says there are more', async () => {
    await addIdp('crowded');
    for (const u of ['u6', 'u1', 'u4', 'u2', 'u5', 'u3']) {
      await admin.call('user_add', [u], { first: 'U', last: u });
      await admin.call('user_mod', [u], { user_auth_type: ['idp'], idp: 'crowded', idp_user_id: `${u}-sub` });
    }
    const e = await rpcError(admin.call('idp_del', ['crowded']));
    assert.equal(e.code, 4210);
    assert.match(e.message, /^This entry is being referenced by other entries: IdP reference "crowded" is still linked to users (u\d, ){4}u\d and more; change that with user-mod first$/);
    for (const u of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6']) await admin.call('user_del', [u]);
    assert.deepEqual((await admin.call('idp_del', ['crowded'])).value, ['crowded']);
  });

  it('with --continue deletes what it can and lists the failures', async () => {
    await addIdp('del-c');
    const r = await admin.call('idp_del', ['del-a', 'nosuch', 'del-b', 'del-c'], { continue: true });
    assert.deepEqual(r.value, ['del-a', 'del-c']);
    assert.deepEqual(r.result.failed, ['nosuch', 'del-b']);
    assert.equal(r.summary, 'Deleted IdP reference "del-a,del-c"');
    assert.deepEqual(await idpNames(), ['del-b']);
  });

  it('the same rule for users and groups, and a name given twice is deleted once', async () => {
    await admin.call('user_add', ['u1'], { first: 'U', last: 'One' });
    await admin.call('group_add', ['g1'], {});
    assert.equal((await rpcError(admin.call('user_del', ['u1', 'nosuch']))).message, 'nosuch: user not found');
    assert.equal((await admin.call('user_show', ['u1'])).value, 'u1');
    assert.equal((await rpcError(admin.call('group_del', ['g1', 'nosuch']))).message, 'nosuch: group not found');
    assert.equal((await admin.call('group_show', ['g1'])).value, 'g1');
    const twice = await admin.call('user_del', ['u1', 'u1']);
    assert.equal(twice.summary, 'Deleted user "u1"');
  });

  it('find is ordered by name, whatever the order of creation, and --sizelimit keeps the first names', async () => {
    for (const n of ['zulu', 'alpha', 'mike', 'bravo', 'yankee', 'charlie']) await addIdp(n);
    const all = await idpNames();
    assert.deepEqual(all, ['alpha', 'bravo', 'charlie', 'del-b', 'mike', 'yankee', 'zulu']);
    for (let i = 0; i < 3; i++) {
      const two = await admin.call('idp_find', [], { sizelimit: 2 });
      assert.deepEqual(two.result.map((e: { cn: string[] }) => e.cn[0]), ['alpha', 'bravo']);
      assert.equal(two.truncated, true);
      assert.equal(two.count, 2);
    }
    const pk = await admin.call('idp_find', [], { sizelimit: 3, pkey_only: true });
    assert.deepEqual(pk.result, [{ cn: ['alpha'] }, { cn: ['bravo'] }, { cn: ['charlie'] }]);
    const criteria = await admin.call('idp_find', ['a'], { sizelimit: 2 });
    assert.deepEqual(criteria.result.map((e: { cn: string[] }) => e.cn[0]), ['alpha', 'bravo']);
  });

  it('user-find and group-find too', async () => {
    for (const n of ['zed', 'amy', 'kim', 'bea']) await admin.call('user_add', [n], { first: n, last: 'Person' });
    const users = await admin.call('user_find', [], { sizelimit: 3 });
    assert.deepEqual(users.result.map((e: { uid: string[] }) => e.uid[0]), ['admin', 'amy', 'bea']);
    const people = await admin.call('user_find', ['person'], { sizelimit: 2 });
    assert.deepEqual(people.result.map((e: { uid: string[] }) => e.uid[0]), ['amy', 'bea']);
    for (const n of ['zeta', 'beta']) await admin.call('group_add', [n], {});
    const groups = await admin.call('group_find', [], { sizelimit: 2 });
    assert.deepEqual(groups.result.map((e: { cn: string[] }) => e.cn[0]), ['admins', 'beta']);
  });
  it("service-add refuses the KDC's own names (krbtgt/, kadmin/, WELLKNOWN/), which would shadow the realm's principals", async () => {
    for (const name of ['krbtgt/OTHER.TEST', 'kadmin/changepw', 'kadmin/admin', 'WELLKNOWN/ANONYMOUS']) {
      const e = await rpcError(admin.call('service_add', [name]));
      assert.equal(e.code, 3009, name);
      assert.match(e.message, /KDC's own/, name);
    }
    const ok = await admin.call('service_add', ['krbtgtish/web.example.test'], { force: true });
    assert.equal(ok.summary, 'Added service "krbtgtish/web.example.test@EXAMPLE.TEST"');
  });
});
