/**
 * The SQLite store answers point reads and small searches from the entries
 * it has read before (sqlite.ts, `known`). These tests read an entry first,
 * so that it is known, then write it in every way a write can (modify,
 * a batch that rolls back, rename of the entry or of its parent, delete and
 * add again, secrets added), and check that every later read, by DN and
 * by search, gives what is committed. And a size-limited search, which
 * reads its candidates in growing chunks, returns the same first entries
 * as an unlimited one.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory, SchemaDefinition } from '../../src/directory/types.js';
import Database from 'better-sqlite3';
import { directoryFailure } from '../support/expect.js';

const schema: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'mail', syntax: 'string', indexed: true },
    { name: 'pin', syntax: 'secret', singleValue: true },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['mail', 'pin'] },
    { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] },
  ],
});

describe('SQLite store: entries read before a write', () => {
  let tmp: string;
  let dir: Directory;
  const base = 'dc=example,dc=test';
  const people = `ou=people,${base}`;
  const dn = (cn: string, parent = people) => `cn=${cn},${parent}`;
  const add = (cn: string, sn: string, extra: Record<string, string[]> = {}, parent = people) => dir.add(dn(cn, parent), { objectClass: ['top', 'person'], sn: [sn], ...extra });
  const cnsWhere = async (filter: string, base2 = people) => (await dir.search({ base: base2, scope: 'sub', filter })).entries.map((e) => e.attrs.cn![0]).sort();

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-known-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema, masterKey: randomBytes(32), create: true });
    await dir.add(people, { objectClass: ['top', 'organizationalUnit'], ou: ['people'] });
  });
  after(async () => {
    await dir.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('a modify is seen by the next get and by searches on the old and the new value', async () => {
    await add('ann', 'Old');
    assert.deepEqual((await dir.get(dn('ann')))?.attrs.sn, ['Old']);
    assert.deepEqual(await cnsWhere('(sn=Old)'), ['ann']);
    await dir.modify(dn('ann'), [{ op: 'replace', attr: 'sn', values: ['New'] }]);
    assert.deepEqual((await dir.get(dn('ann')))?.attrs.sn, ['New']);
    assert.deepEqual(await cnsWhere('(sn=Old)'), []);
    assert.deepEqual(await cnsWhere('(sn=New)'), ['ann']);
  });

  it('a modify moves only the changed index keys, and every index (equality, substring) follows', async () => {
    await add('gil', 'Alderman', { mail: ['gil@example.test'] });
    assert.deepEqual(await cnsWhere('(sn=*lderm*)'), ['gil']);
    await dir.modify(dn('gil'), [{ op: 'replace', attr: 'sn', values: ['Brightwater'] }]);
    assert.deepEqual(await cnsWhere('(sn=*lderm*)'), []);
    assert.deepEqual(await cnsWhere('(sn=Alderman)'), []);
    assert.deepEqual(await cnsWhere('(sn=*ghtwat*)'), ['gil']);
    assert.deepEqual(await cnsWhere('(sn=bright*)'), ['gil']);
    // the keys the modify left alone still answer
    assert.deepEqual(await cnsWhere('(mail=gil@example.test)'), ['gil']);
    assert.deepEqual(await cnsWhere('(mail=*l@exam*)'), ['gil']);
    // and the index holds the entry's keys as they are now, no stale one (the evaluator would hide it from results)
    const db = new Database(join(tmp, 'db'), { readonly: true });
    try {
      const keys = (db.prepare('SELECT idx.attr, idx.norm FROM idx JOIN entries ON entries.id = idx.entry WHERE entries.ndn = ? ORDER BY 1, 2').raw().all(`cn=gil,${people}`) as string[][]).map((k) => k.join('='));
      assert.ok(keys.includes('sn=brightwater') && keys.includes('mail=gil@example.test'), keys.join(' '));
      assert.ok(!keys.some((k) => k.includes('alderman')), keys.join(' '));
      assert.equal(new Set(keys).size, keys.length, 'no key twice');
    } finally {
      db.close();
    }
  });

  it('a batch that rolls back leaves the entries as they were read', async () => {
    await add('bob', 'Before');
    assert.deepEqual((await dir.get(dn('bob')))?.attrs.sn, ['Before']);
    await directoryFailure(
      dir.batch([
        { kind: 'modify', dn: dn('bob'), mods: [{ op: 'replace', attr: 'sn', values: ['During'] }] },
        // reads bob as the batch left him
        { kind: 'modify', dn: dn('bob'), mods: [{ op: 'add', attr: 'mail', values: ['bob@example.test'] }] },
        { kind: 'add', dn: dn('nobody', `ou=missing,${base}`), attrs: { objectClass: ['top', 'person'], sn: ['x'] } },
      ]),
    );
    assert.deepEqual((await dir.get(dn('bob')))?.attrs.sn, ['Before']);
    assert.equal((await dir.get(dn('bob')))?.attrs.mail, undefined);
    assert.deepEqual(await cnsWhere('(sn=During)'), []);
    assert.deepEqual(await cnsWhere('(sn=Before)'), ['bob']);
  });

  it('a renamed entry is gone under its old DN and found under its new one', async () => {
    await add('cat', 'Cat');
    assert.ok(await dir.get(dn('cat')));
    await dir.rename(dn('cat'), 'cn=kit');
    assert.equal(await dir.get(dn('cat')), null);
    assert.deepEqual((await dir.get(dn('kit')))?.attrs.cn, ['kit']);
    assert.deepEqual(await cnsWhere('(sn=Cat)'), ['kit']);
  });

  it("renaming a parent moves its known children's DNs", async () => {
    await dir.add(`ou=team,${people}`, { objectClass: ['top', 'organizationalUnit'], ou: ['team'] });
    await add('dan', 'Dan', {}, `ou=team,${people}`);
    assert.ok(await dir.get(dn('dan', `ou=team,${people}`)));
    await dir.rename(`ou=team,${people}`, 'ou=crew');
    assert.equal(await dir.get(dn('dan', `ou=team,${people}`)), null);
    assert.equal((await dir.get(dn('dan', `ou=crew,${people}`)))?.dn, `cn=dan,ou=crew,${people}`);
    await assert.rejects(dir.search({ base: `ou=team,${people}`, scope: 'sub' }), /no entry/);
    assert.deepEqual(await cnsWhere('(sn=Dan)', `ou=crew,${people}`), ['dan']);
  });

  it('an entry deleted and added again under the same DN is the new one', async () => {
    await add('eve', 'First');
    const first = await dir.get(dn('eve'), ['entryUUID', 'sn']);
    await dir.delete(dn('eve'));
    assert.equal(await dir.get(dn('eve')), null);
    await add('eve', 'Second');
    const second = await dir.get(dn('eve'), ['entryUUID', 'sn']);
    assert.deepEqual(second?.attrs.sn, ['Second']);
    assert.notDeepEqual(second?.attrs.entryUUID, first?.attrs.entryUUID);
  });

  it('a secret added to a known entry can be read and tested', async () => {
    await add('fay', 'Fay');
    assert.ok(await dir.get(dn('fay')));
    assert.deepEqual(await dir.readSecret(dn('fay'), 'pin'), []);
    await dir.modify(dn('fay'), [{ op: 'replace', attr: 'pin', values: ['1234'] }]);
    assert.deepEqual(await dir.readSecret(dn('fay'), 'pin'), ['1234']);
    assert.deepEqual(await cnsWhere('(&(sn=Fay)(pin=*))'), ['fay']);
  });

  it('a write between reads of one event-loop turn is committed at once and seen by the reads after it', async () => {
    // the reads of one turn share a read transaction (sqlite.ts, readTx); a write must not join it
    await add('ivy', 'Turn1');
    const other = new Database(join(tmp, 'db'), { readonly: true });
    try {
      const committedSn = () => JSON.parse((other.prepare('SELECT attrs FROM entries WHERE ndn = ?').pluck().get(`cn=ivy,${people}`) as string) ?? '{}').sn;
      await new Promise((resolve) => setImmediate(resolve));
      // not known yet: read from SQLite, which opens the turn's read transaction
      assert.deepEqual(await cnsWhere('(sn=Turn1)'), ['ivy']);
      await dir.modify(dn('ivy'), [{ op: 'replace', attr: 'sn', values: ['Turn2'] }]);
      // still the same turn (no check phase has passed): another connection sees the commit
      assert.deepEqual(committedSn(), ['Turn2']);
      assert.deepEqual(await cnsWhere('(sn=Turn2)'), ['ivy']);
      assert.deepEqual(await cnsWhere('(sn=Turn1)'), []);
      assert.deepEqual((await dir.get(dn('ivy')))?.attrs.sn, ['Turn2']);
      // and a read transaction left open would keep a later turn's write from being seen by the other connection: it is not
      await new Promise((resolve) => setImmediate(resolve));
      await dir.modify(dn('ivy'), [{ op: 'replace', attr: 'sn', values: ['Turn3'] }]);
      assert.deepEqual(committedSn(), ['Turn3']);
    } finally {
      other.close();
    }
  });

  it('a size-limited search returns the first matches of an unlimited one', async () => {
    // 60 candidates of the index, every third a match: the chunks read must go past the first
    for (let i = 0; i < 60; i++) await add(`many${String(i).padStart(2, '0')}`, `Many${i}`, i % 3 === 0 ? { mail: [`m${i}@example.test`] } : {});
    const filter = '(&(sn=Many*)(mail=*))';
    const all = (await dir.search({ base: people, scope: 'sub', filter })).entries.map((e) => e.dn);
    assert.equal(all.length, 20);
    for (const limit of [1, 5, 19]) {
      const r = await dir.search({ base: people, scope: 'sub', filter, sizeLimit: limit });
      assert.deepEqual(
        r.entries.map((e) => e.dn),
        all.slice(0, limit),
      );
      assert.equal(r.truncated, true);
    }
    const exact = await dir.search({ base: people, scope: 'sub', filter, sizeLimit: 20 });
    assert.equal(exact.entries.length, 20);
    assert.equal(exact.truncated, false);
    // one term alone: its rows are read as the index gives them, stopping at the limit
    for (const lone of ['(sn=Many*)', '(sn=*any1*)', '(mail=*)', '(sn>=Many5)']) {
      const every = (await dir.search({ base: people, scope: 'sub', filter: lone })).entries.map((e) => e.dn);
      assert.ok(every.length > 5, lone);
      const first = await dir.search({ base: people, scope: 'sub', filter: lone, sizeLimit: 5 });
      assert.deepEqual(first.entries.map((e) => e.dn), every.slice(0, 5), lone);
      assert.equal(first.truncated, true, lone);
      const all = await dir.search({ base: people, scope: 'sub', filter: lone, sizeLimit: every.length });
      assert.deepEqual(all.entries.map((e) => e.dn), every, lone);
      assert.equal(all.truncated, false, lone);
    }
  });
});
