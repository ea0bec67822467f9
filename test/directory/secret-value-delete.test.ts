/**
 * A delete of a secret's given value (RFC 4511 §4.6 semantics, on sealed
 * values: entry.ts applyModifications, opened by the write path) removes
 * exactly that value, and fails as noSuchAttribute when the value is not
 * there: a one-time password is consumed by the write that checked it, and
 * of two writers racing for one value, on one handle or on two handles of
 * one store (two servers sharing a PostgreSQL database), one wins and the
 * other fails, with everything else of its write undone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { directoryFailure } from '../support/expect.js';
import { backends, type Store } from '../support/backends.js';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import type { Directory, SchemaDefinition } from '../../src/directory/types.js';

const schema: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'pin', syntax: 'secret', singleValue: true },
    { name: 'pins', syntax: 'secret' },
    { name: 'serial', syntax: 'integer', singleValue: true },
  ],
  objectClasses: [{ name: 'device', kind: 'structural', sup: 'top', must: ['cn'], may: ['pin', 'pins', 'serial'] }],
});

for (const backend of backends) {
  describe(`${backend.name}: deleting a secret's value`, () => {
    const base = 'dc=example,dc=test';
    const key = randomBytes(32);
    let store: Store;
    let one: Directory;
    let two: Directory;
    before(async () => {
      store = await backend.store();
      one = await store.open({ baseDn: base, schema, masterKey: key, create: true });
      two = await store.open({ baseDn: base, schema, masterKey: key });
    });
    after(async () => {
      await one?.close();
      await two?.close();
      await store?.remove();
    });

    it('removes exactly the value given, and fails when it is not there', async () => {
      const dn = `cn=d1,${base}`;
      await one.add(dn, { objectClass: ['device'], pin: ['1234'], pins: ['a', 'b'] });
      const wrong = await directoryFailure(one.modify(dn, [{ op: 'delete', attr: 'pin', values: ['9999'] }, { op: 'replace', attr: 'serial', values: ['1'] }]));
      assert.equal(wrong.code, 'noSuchAttribute');
      assert.deepEqual(await one.readSecret(dn, 'pin'), ['1234'], 'a wrong value removes nothing');
      assert.equal((await one.get(dn))!.attrs.serial, undefined, 'and the rest of the write is undone');
      await one.modify(dn, [{ op: 'delete', attr: 'pin', values: ['1234'] }, { op: 'delete', attr: 'pins', values: ['b'] }]);
      assert.deepEqual(await one.readSecret(dn, 'pin'), []);
      assert.deepEqual(await one.readSecret(dn, 'pins'), ['a'], 'the other values stay');
      assert.equal((await directoryFailure(one.modify(dn, [{ op: 'delete', attr: 'pin', values: ['1234'] }]))).code, 'noSuchAttribute', 'used once');
    });

    it('lets one of two writers racing for a value have it, on two handles of one store', async () => {
      const dn = `cn=d2,${base}`;
      await one.add(dn, { objectClass: ['device'], pin: ['one-time'] });
      const take = (dir: Directory, serial: string) => dir.modify(dn, [{ op: 'delete', attr: 'pin', values: ['one-time'] }, { op: 'replace', attr: 'serial', values: [serial] }]);
      const results = await Promise.allSettled([take(one, '1'), take(two, '2'), take(one, '3'), take(two, '4')]);
      const won = results.flatMap((r, i) => (r.status === 'fulfilled' ? [String(i + 1)] : []));
      assert.equal(won.length, 1, `exactly one write took the value: ${JSON.stringify(results.map((r) => r.status))}`);
      for (const r of results) if (r.status === 'rejected') assert.equal((r.reason as { code?: string }).code, 'noSuchAttribute');
      assert.deepEqual((await two.get(dn))!.attrs.serial, won, 'only the winner wrote');
    });
  });
}
