/**
 * The failed-login count is one count for every server of a realm
 * (account/state.ts, issue 32 item 5): servers sharing one PostgreSQL
 * directory each have their own directory handle and their own queue per
 * entry, so a count read by two of them at once must not lose a failure.
 * Here two handles on one PostgreSQL store count failures together,
 * interleaved: every failure is counted once, and the account is locked at
 * the maximum whichever handle counted the last one. (A SQLite directory
 * has one server, which holds its data directory's lock, and one handle.)
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { backends, type Store } from '../support/backends.js';
import { Accounts, verdict, type LockoutPolicy } from '../../src/account/state.js';
import { realmSchema, realmTree } from '../../src/objects/index.js';
import type { Directory } from '../../src/directory/types.js';

const BASE = 'dc=example,dc=test';
const USER = `uid=ann,cn=users,cn=accounts,${BASE}`;

for (const backend of backends.filter((b) => b.name === 'postgresql')) {
  describe(`${backend.name}: failed logins counted through two directory handles`, () => {
    let store: Store;
    let one: Directory;
    let two: Directory;
    const masterKey = randomBytes(32);

    before(async () => {
      store = await backend.store();
      one = await store.open({ baseDn: BASE, schema: realmSchema, masterKey, create: true });
      await one.batch(realmTree({ baseDn: BASE, realm: 'EXAMPLE.TEST' }).containers);
      await one.add(USER, {
        objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser', 'krbPrincipalAux'],
        uid: ['ann'],
        cn: ['Ann Test'],
        sn: ['Test'],
        krbPrincipalName: ['ann@EXAMPLE.TEST'],
      });
      two = await store.open({ baseDn: BASE, schema: realmSchema, masterKey });
    });
    after(async () => {
      await one?.close();
      await two?.close();
      await store?.remove();
    });

    it('counts every failure once, and locks at the maximum', async () => {
      const policy: LockoutPolicy = { maxFailures: 40, failureIntervalSec: 0, lockoutSec: 0 };
      const a = new Accounts(one);
      const b = new Accounts(two);
      const account = (await a.get(USER))!;
      const now = Date.now();
      await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? a : b).failedPassword(account, policy, now)));
      const after = (await b.get(USER))!;
      assert.equal(after.failedLogins, 40);
      assert.deepEqual(verdict(after, policy, now), { state: 'locked' });
    });
  });
}
