/**
 * The rules' refusals on the wire. The rules themselves are tested in
 * process (test/objects/, test/framework/: delegation bounds, POSIX ids, the
 * last administrator, names hosts reserve), where a call gets its error
 * through the API's one mapping (rpc/errors.ts) without a server
 * (test/support/in-process.ts). Here each kind of refusal is made over
 * HTTPS, in JSON-RPC and in XML-RPC, against a realm made alike, and the
 * error each carries (number, name, message, data) is the one the call in
 * process got: what the fast tier checks is what a client reads.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { grantRole } from '../support/caller.js';
import { InProcessRealm, type InProcessCaller } from '../support/in-process.js';
import { startAdminRealm, userSession, type TestRealm, addActiveUser } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import type { WireValue } from '../../src/rpc/codec/types.js';

const BASE = 900_000;

interface Refusal {
  as: 'admin' | 'uadm';
  method: string;
  args: WireValue[];
  options: Record<string, WireValue>;
  code: number;
  name: string;
}

const REFUSALS: Refusal[] = [
  // a delegate's reach (framework/access.ts)
  { as: 'uadm', method: 'user_del', args: ['admin'], options: {}, code: 2100, name: 'ACIError' },
  { as: 'uadm', method: 'user_mod', args: ['alice'], options: { setattr: [`gidNumber=${BASE}`] }, code: 2100, name: 'ACIError' },
  // a POSIX id another entry holds (objects/posix.ts)
  { as: 'admin', method: 'user_add', args: ['bob'], options: { first: 'B', last: 'B', uid: BASE + 3 }, code: 4002, name: 'DuplicateEntry' },
  // a principal name another entry holds (objects/principal-name.ts)
  { as: 'admin', method: 'user_mod', args: ['alice'], options: { addattr: ['krbPrincipalName=uadm@EXAMPLE.TEST'] }, code: 4002, name: 'DuplicateEntry' },
  // the last administrator (objects/last-admin.ts)
  { as: 'admin', method: 'user_disable', args: ['admin'], options: {}, code: 4308, name: 'LastMemberError' },
  { as: 'admin', method: 'group_del', args: ['admins'], options: {}, code: 4309, name: 'ProtectedEntryError' },
  // a name hosts reserve (objects/posix.ts)
  { as: 'admin', method: 'group_add', args: ['sudo'], options: {}, code: 3009, name: 'ValidationError' },
];

describe("the rules' refusals on the wire", () => {
  let realm: TestRealm;
  let local: InProcessRealm;
  const json = new Map<string, RpcSession>();
  const xml = new Map<string, RpcSession>();
  const inProcess = new Map<string, InProcessCaller>();

  before(async () => {
    const made = await startAdminRealm({ idStart: BASE });
    realm = made.realm;
    local = await InProcessRealm.open({ idStart: BASE });
    await addActiveUser(made.admin, 'uadm', 'Uadm-pass-123', { first: 'U', last: 'A' });
    await local.addActiveUser('uadm', 'Uadm-pass-123', { first: 'U', last: 'A' });
    for (const admin of [made.admin, local.admin]) {
      await admin.call('user_add', ['alice'], { first: 'A', last: 'L' });
      await grantRole(admin, 'helpdesk', 'User Administrators', { users: ['uadm'] });
    }
    for (const [login, password] of [['admin', realm.adminPassword], ['uadm', 'Uadm-pass-123']] as const) {
      json.set(login, await userSession(realm, login, password));
      const x = new RpcSession(realm.url, realm.ca, 'xml');
      assert.equal((await x.login(login, password)).status, 200);
      xml.set(login, x);
      inProcess.set(login, await local.login(login, password));
    }
  });
  after(async () => {
    await realm.stop();
    await local.close();
  });

  it('JSON-RPC and XML-RPC carry each refusal as the call in process gets it', async () => {
    for (const r of REFUSALS) {
      const what = `${r.as}: ${r.method} ${JSON.stringify(r.args)}`;
      const expected = (await inProcess.get(r.as)!.raw(r.method, r.args, r.options)).response.error;
      assert.ok(expected, `${what} is refused in process`);
      assert.deepEqual([expected.code, expected.name], [r.code, r.name], what);
      for (const session of [json.get(r.as)!, xml.get(r.as)!]) {
        const { status, response } = await session.raw(r.method, r.args, r.options);
        assert.equal(status, 200, what);
        assert.equal(response.result, null, what);
        assert.deepEqual(response.error, expected, `${what} over ${session.encoding}`);
      }
    }
  });
});
