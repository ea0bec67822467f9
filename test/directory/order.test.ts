/**
 * Ordered searches (`orderBy`, in the manner of RFC 2891's sort control):
 * entries come in the order of the attribute's normalised values (the least
 * one of a multi-valued attribute; integers numerically), entries without it
 * last, ties in creation order; the size limit keeps the first entries of
 * that order. Checked against a sort done here, on small and large
 * candidate sets, the scan path, both scopes and an unindexed attribute,
 * on each backend.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { DirectoryError, type Directory, type SearchRequest, type WriteOp } from '../../src/directory/types.js';
import { backends, type Store } from '../support/backends.js';
import { prng } from '../support/prng.js';

const schemaDef = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'serial', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'age', syntax: 'integer', singleValue: true },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['serial', 'age', 'description'] },
    { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] },
  ],
});

const N = 3000;
const WORDS = ['alpha', 'Beta', 'a', 'A b', 'gamma', 'DELTA', 'b', 'ab', 'Zed', 'z'];

interface Person {
  i: number;
  cn: string[];
  sn: string;
  serial?: number;
  age?: number;
}

for (const backend of backends) {
  describe(`${backend.name}: ordered searches`, () => {
    let store: Store;
    let dir: Directory;
    const base = 'dc=example,dc=test';
    const people = `ou=people,${base}`;
    const persons: Person[] = [];

    before(async () => {
      store = await backend.store();
      dir = await store.open({ baseDn: base, schema: schemaDef, masterKey: randomBytes(32), create: true });
      await dir.add(people, { objectClass: ['top', 'organizationalUnit'], ou: ['people'] });
      const rnd = prng(20240611);
      const ops: WriteOp[] = [];
      for (let i = 0; i < N; i++) {
        const words = Array.from({ length: 1 + rnd(3) }, () => WORDS[rnd(WORDS.length)]!);
        // unique RDN values; some names are prefixes of others ("a" and "a b")
        const cn = [`${words.join(' ')} ${i.toString(36)}`];
        if (i % 50 === 0) cn.push(`aaa second name ${i}`);
        const p: Person = { i, cn, sn: `Family${i % 20}` };
        if (i % 3 !== 0) p.serial = rnd(2000) - 1000;
        if (i % 4 !== 0) p.age = rnd(120);
        persons.push(p);
        const attrs: Record<string, string[]> = { objectClass: ['top', 'person'], cn, sn: [p.sn] };
        if (p.serial !== undefined) attrs.serial = [String(p.serial)];
        if (p.age !== undefined) attrs.age = [String(p.age)];
        ops.push({ kind: 'add', dn: `cn=${cn[0]},${people}`, attrs });
      }
      // created in a shuffled order, so creation order is not name order
      for (let i = ops.length - 1; i > 0; i--) {
        const j = rnd(i + 1);
        [ops[i], ops[j]] = [ops[j]!, ops[i]!];
        [persons[i], persons[j]] = [persons[j]!, persons[i]!];
      }
      persons.forEach((p, k) => (p.i = k));
      await dir.batch(ops);
    });
    after(async () => {
      await dir.close();
      await store.remove();
    });

    const norm = (s: string) => s.trim().replace(/\s+/g, ' ').toLowerCase();
    const byCn = (a: Person, b: Person) => {
      const x = a.cn.map(norm).sort()[0]!;
      const y = b.cn.map(norm).sort()[0]!;
      return x < y ? -1 : x > y ? 1 : a.i - b.i;
    };
    const byNumber = (key: 'serial' | 'age') => (a: Person, b: Person) => {
      const x = a[key];
      const y = b[key];
      if (x === undefined || y === undefined) return x === y ? a.i - b.i : x === undefined ? 1 : -1;
      return x - y || a.i - b.i;
    };
    const names = (ps: Person[]) => ps.map((p) => p.cn[0]);
    const search = async (req: Partial<SearchRequest>) => {
      const r = await dir.search({ base: people, scope: 'one', ...req });
      return { names: r.entries.map((e) => e.attrs.cn![0]), truncated: r.truncated };
    };

    it('orders a large candidate set and keeps the first entries of the order', async () => {
      const expected = names([...persons].sort(byCn));
      const first = await search({ filter: '(objectClass=person)', orderBy: 'cn', sizeLimit: 10 });
      assert.deepEqual(first.names, expected.slice(0, 10));
      assert.equal(first.truncated, true);
      assert.deepEqual(await search({ filter: '(objectClass=person)', orderBy: 'cn', sizeLimit: 10 }), first, 'repeated calls agree');
      const all = await search({ filter: '(objectClass=person)', orderBy: 'cn' });
      assert.deepEqual(all.names, expected);
      assert.equal(all.truncated, false);
    });

    it('orders small candidate sets, substrings and the scan path', async () => {
      const family3 = [...persons].filter((p) => p.sn === 'Family3').sort(byCn);
      assert.deepEqual((await search({ filter: '(sn=family3)', orderBy: 'cn', sizeLimit: 5 })).names, names(family3.slice(0, 5)));
      const exact = await search({ filter: '(sn=family3)', orderBy: 'cn', sizeLimit: family3.length });
      assert.deepEqual(exact.names, names(family3));
      assert.equal(exact.truncated, false, 'exactly the limit is not truncated');
      const withB = [...persons].filter((p) => p.cn.some((c) => c.toLowerCase().includes('b'))).sort(byCn);
      assert.deepEqual((await search({ filter: '(cn=*b*)', orderBy: 'cn', sizeLimit: 20 })).names, names(withB.slice(0, 20)));
      const notFamily1 = [...persons].filter((p) => p.sn !== 'Family1').sort(byCn);
      assert.deepEqual((await search({ filter: '(!(sn=family1))', orderBy: 'cn', sizeLimit: 7 })).names, names(notFamily1.slice(0, 7)));
      const sub = await dir.search({ base, scope: 'sub', filter: '(cn=*)', orderBy: 'cn', sizeLimit: 4 });
      assert.deepEqual(sub.entries.map((e) => e.attrs.cn![0]), names([...persons].sort(byCn).slice(0, 4)));
    });

    it('orders integers numerically, entries without the attribute last, indexed or not', async () => {
      assert.deepEqual((await search({ filter: '(objectClass=person)', orderBy: 'serial' })).names, names([...persons].sort(byNumber('serial'))));
      assert.deepEqual((await search({ filter: '(objectClass=person)', orderBy: 'serial', sizeLimit: 12 })).names, names([...persons].sort(byNumber('serial')).slice(0, 12)));
      const family3 = [...persons].filter((p) => p.sn === 'Family3').sort(byNumber('serial'));
      assert.ok(family3.at(-2)!.serial === undefined, 'some have no serial');
      assert.deepEqual((await search({ filter: '(sn=family3)', orderBy: 'serial', sizeLimit: family3.length - 1 })).names, names(family3.slice(0, -1)));
      const nearlyAll = await search({ filter: '(objectClass=person)', orderBy: 'serial', sizeLimit: N - 5 });
      assert.deepEqual(nearlyAll.names, names([...persons].sort(byNumber('serial')).slice(0, N - 5)), 'entries without a serial follow, in creation order');
      assert.equal(nearlyAll.truncated, true);
      assert.deepEqual((await search({ filter: '(objectClass=person)', orderBy: 'age', sizeLimit: 15 })).names, names([...persons].sort(byNumber('age')).slice(0, 15)));
      const tail = [...persons].sort(byNumber('age')).slice(-5);
      assert.ok(tail.every((p) => p.age === undefined));
      assert.deepEqual((await search({ filter: '(objectClass=person)', orderBy: 'age' })).names.slice(-5), names(tail));
    });

    it('refuses an unknown attribute to order by', async () => {
      await assert.rejects(search({ orderBy: 'noSuchAttr' }), (e: unknown) => e instanceof DirectoryError && e.code === 'undefinedAttributeType');
    });
  });
}
