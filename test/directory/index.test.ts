/**
 * Index use on a store of 20,000 entries, on each backend: an indexed
 * equality answers quickly, and on random filters the index path, the
 * store's scan path and the evaluator run over every entry agree exactly.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { compileFilter, parseFilter } from '../../src/directory/filter.js';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { prefixUpperBound } from '../../src/directory/plan.js';
import type { Directory, Entry, SchemaDefinition, WriteOp } from '../../src/directory/types.js';
import { backends, type Store } from '../support/backends.js';
import { prng } from '../support/prng.js';

const schemaDef: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'mail', syntax: 'string', indexed: true },
    { name: 'serial', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'token', syntax: 'exact', indexed: true },
    { name: 'since', syntax: 'time', singleValue: true, indexed: true },
    { name: 'age', syntax: 'integer', singleValue: true },
    { name: 'note', syntax: 'string' },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['mail', 'serial', 'token', 'since', 'age', 'note', 'uid', 'description'] },
    { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] },
  ],
});

const N = 20_000;

function randomFilter(rnd: (n: number) => number, depth = 0): string {
  const leaf = (): string => {
    switch (rnd(14)) {
      case 0:
        return `(sn=Family${rnd(60)})`;
      case 1:
        return `(sn=FAMILY${rnd(6)}*)`;
      case 2:
        return `(mail=*${rnd(200)}@*)`;
      case 3:
        return `(mail=u${rnd(50)}*test)`;
      case 4:
        return `(serial>=${rnd(N) - 5000})`;
      case 5:
        return `(serial<=${rnd(N) - 5000})`;
      case 6:
        return `(token=${['T', 't'][rnd(2)]}${rnd(5)})`;
      case 7:
        return `(since>=2026${String(1 + rnd(12)).padStart(2, '0')}01000000Z)`;
      case 8:
        return `(age>=${rnd(100)})`;
      case 9:
        return `(uid=*)`;
      case 10:
        return `(cn=user ${rnd(N)})`;
      case 11:
        return `(nosuch=${rnd(3)})`;
      case 12:
        return `(serial=${rnd(N) - 5000})`;
      default:
        return `(note=*${['a', 'ab', 'abc', 'odd'][rnd(4)]}*)`;
    }
  };
  if (depth >= 3) return leaf();
  switch (rnd(6)) {
    case 0:
    case 1:
      return `(&${Array.from({ length: 1 + rnd(3) }, () => randomFilter(rnd, depth + 1)).join('')})`;
    case 2:
      return `(|${Array.from({ length: 1 + rnd(3) }, () => randomFilter(rnd, depth + 1)).join('')})`;
    case 3:
      return `(!${randomFilter(rnd, depth + 1)})`;
    default:
      return leaf();
  }
}

for (const backend of backends) {
  describe(`${backend.name}: indexes on 20,000 entries`, () => {
    let store: Store;
    let dir: Directory;
    let all: Entry[];
    const base = 'dc=example,dc=test';
    const people = `ou=people,${base}`;
    before(async () => {
      store = await backend.store();
      dir = await store.open({ baseDn: base, schema: schemaDef, masterKey: randomBytes(32), create: true });
      const rnd = prng(7);
      const ops: WriteOp[] = [{ kind: 'add', dn: people, attrs: { objectClass: ['organizationalUnit'] } }];
      for (let i = 0; i < N; i++) {
        const attrs: Record<string, string[]> = {
          objectClass: ['person'],
          sn: [`Family${i % 60}`],
          serial: [String(i - 5000)],
          token: [`T${i % 5}`],
          mail: [`u${i}@example.test`],
          since: [`2026${String(1 + (i % 12)).padStart(2, '0')}${String(1 + (i % 28)).padStart(2, '0')}120000Z`],
        };
        if (i % 3 === 0) attrs.age = [String(i % 97)];
        if (i % 4 === 0) attrs.uid = [`user${i}`];
        if (i % 5 === 0) attrs.note = [['abc', 'xaby', 'odd one', 'zzz'][rnd(4)]!];
        ops.push({ kind: 'add', dn: `cn=User ${i},${people}`, attrs });
      }
      await dir.batch(ops);
      all = (await dir.search({ base, scope: 'sub', filter: '(!(description=never))' })).entries;
      assert.equal(all.length, N + 2);
    });
    after(async () => {
      await dir.close();
      await store.remove();
    });

    it('answers an indexed equality quickly', async () => {
      const t0 = performance.now();
      let found = 0;
      for (let i = 0; i < 200; i++) found += (await dir.search({ base, scope: 'sub', filter: `(mail=u${i * 97}@example.test)` })).entries.length;
      const perQuery = (performance.now() - t0) / 200;
      assert.equal(found, 200);
      // a scan of 20,000 entries takes tens of milliseconds; the index answers in well under one
      assert.ok(perQuery < 5, `indexed equality took ${perQuery.toFixed(2)} ms per query`);
      const t1 = performance.now();
      const scan = await dir.search({ base, scope: 'sub', filter: '(|(mail=u97@example.test)(description=x))' });
      assert.equal(scan.entries.length, 1);
      assert.ok(performance.now() - t1 > perQuery, 'the scan path is slower than the index path');
    });

    it('gives identical results through indexes, through a scan, and by evaluating every entry', async () => {
      const schema = dir.schema;
      const seed = Number(process.env.DIRID_FILTER_SEED ?? Date.now() % 100_000);
      const rnd = prng(seed);
      let nonEmpty = 0;
      for (let k = 0; k < 40; k++) {
        const f = randomFilter(rnd);
        const viaIndex = (await dir.search({ base, scope: 'sub', filter: f })).entries.map((e) => e.dn);
        // an OR with an unindexed term cannot use indexes: the store scans every entry
        const viaScan = (await dir.search({ base, scope: 'sub', filter: `(|${f}(description=no-entry-has-this))` })).entries.map((e) => e.dn);
        const test = compileFilter(schema, parseFilter(f));
        const byEvaluator = all.filter((e) => test({ attrs: e.attrs, secrets: new Set() })).map((e) => e.dn);
        assert.deepEqual(viaIndex, byEvaluator, `${f} (seed ${seed})`);
        assert.deepEqual(viaScan, byEvaluator, `${f} (seed ${seed})`);
        if (byEvaluator.length) nonEmpty++;
      }
      assert.ok(nonEmpty > 10, 'the random filters select something');
    });

    it('uses one-level scope and size limits on the index path', async () => {
      const r = await dir.search({ base: people, scope: 'one', filter: '(sn=family7)', sizeLimit: 50 });
      assert.equal(r.entries.length, 50);
      assert.equal(r.truncated, true);
      assert.equal(r.limit, 'size');
      assert.equal((await dir.search({ base, scope: 'one', filter: '(sn=family7)' })).entries.length, 0);
    });

    it('gives a size-limited search of one range, substring or presence term its first matches in id order, whatever the scope leaves out', async () => {
      const schema = dir.schema;
      const filters = ['(sn=FAMILY1*)', '(uid=*)', '(mail=*5@*)', '(serial>=100)', '(note=*ab*)'];
      for (const f of filters) {
        const test = compileFilter(schema, parseFilter(f));
        const matching = all.filter((e) => test({ attrs: e.attrs, secrets: new Set() }));
        for (const [b, scope, inScope] of [
          [people, 'one', () => true],
          [base, 'sub', () => true],
          // nothing is a child of the base but ou=people: every candidate is passed over
          [base, 'one', (e: Entry) => e.dn === people],
        ] as const) {
          const want = matching.filter(inScope).map((e) => e.dn);
          for (const sizeLimit of [1, 10, 40, 1000]) {
            const r = await dir.search({ base: b, scope, filter: f, sizeLimit });
            assert.deepEqual(r.entries.map((e) => e.dn), want.slice(0, sizeLimit), `${f} ${scope} from ${b}, size limit ${sizeLimit}`);
            assert.equal(r.truncated, want.length > sizeLimit, `${f} ${scope} from ${b}, size limit ${sizeLimit}`);
          }
        }
      }
    });

    it('stops a long scan at its time limit', async () => {
      const t0 = performance.now();
      const r = await dir.search({ base, scope: 'sub', filter: '(|(note=*b*)(description=x))', timeLimit: 0.002 });
      const took = performance.now() - t0;
      assert.equal(r.truncated, true);
      assert.equal(r.limit, 'time');
      assert.ok(r.entries.length < N / 5);
      assert.ok(took < 500, `stopped after ${took.toFixed(1)} ms`);
    });
  });
}

describe('prefix ranges', () => {
  it('bound every string with the prefix, in UTF-8 order', () => {
    const utf8 = (x: string) => Buffer.from(x, 'utf8');
    for (const prefix of ['a', 'abc', 'z', '\u00ff', '\ud7ff', '\uffff', 'a\u{10ffff}', '\u{1f600}']) {
      const upper = prefixUpperBound(prefix)!;
      assert.ok(Buffer.compare(utf8(prefix), utf8(upper)) < 0, prefix);
      for (const tail of ['', 'a', '\uffff', '\u{10ffff}', '\u{10ffff}\u{10ffff}zz']) {
        assert.ok(Buffer.compare(utf8(prefix + tail), utf8(upper)) < 0, `${JSON.stringify(prefix + tail)} below ${JSON.stringify(upper)}`);
      }
    }
    assert.equal(prefixUpperBound('\u{10ffff}'), undefined);
    assert.equal(prefixUpperBound('ab'), 'ac');
  });
});

