/**
 * The write path's rules do not depend on SQLite: one test body runs against
 * the SQLite store and against a Map-based storage written here, once
 * answering at once and once answering with promises after a turn of the
 * event loop (as a network backend would). Schema violations, operational
 * attributes, referential integrity on delete and rename, descendants that
 * move, sealed secrets (the storage never holds a plaintext), atomic
 * batches, `generation`, with concurrent callers, writes that queue and
 * readers that never see a write in progress, and the uniqueness plugin
 * (keys of one attribute, of several, shared by two attributes, limited to
 * an object class) with what verifyDirectory reports.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { directoryFailure } from '../support/expect.js';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { isWithin, normalizeDn } from '../../src/directory/dn.js';
import { compileFilter, parseFilter } from '../../src/directory/filter.js';
import { indexKeys } from '../../src/directory/plan.js';
import { coreSchema, generalizedTime, mergeSchemas } from '../../src/directory/schema.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { DirectoryStorage, Maybe, OutgoingReference, Reference, Sealed, StorageTx } from '../../src/directory/storage.js';
import { DirectoryError, UniquenessViolation, type Attributes, type Directory, type Entry, type Schema, type SchemaDefinition, type SearchRequest, type SearchResult } from '../../src/directory/types.js';
import { openDirectory, verifyDirectory } from '../../src/directory/write-path.js';

const schemaDef: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'age', syntax: 'integer', singleValue: true },
    { name: 'manager', syntax: 'dn', singleValue: true, references: 'restrict', indexed: true },
    { name: 'member', syntax: 'dn', references: 'remove', indexed: true },
    { name: 'pin', syntax: 'secret', singleValue: true },
    { name: 'badge', syntax: 'string', indexed: true },
    { name: 'staffNo', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'teamNo', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'loginAt', syntax: 'dn', singleValue: true, indexed: true, references: 'restrict' },
    { name: 'loginId', syntax: 'exact', singleValue: true, indexed: true },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['age', 'manager', 'pin', 'badge', 'staffNo', 'loginAt', 'loginId'] },
    { name: 'group', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'teamNo'] },
    { name: 'numbered', kind: 'auxiliary', must: ['teamNo'], may: [] },
    { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] },
  ],
  unique: [
    { name: 'badge', keys: [{ attrs: ['badge'], refusal: 'badge "{badge}" is already held by {holder}' }] },
    // one number space: a person's staffNo and a numbered group's teamNo
    {
      name: 'number',
      keys: [
        { attrs: ['staffNo'], refusal: 'staff number {staffNo} is already used by {holder}' },
        { attrs: ['teamNo'], objectClass: 'numbered', refusal: 'team number {teamNo} is already used by {holder}' },
      ],
    },
    { name: 'login', keys: [{ attrs: ['loginId', 'loginAt'], refusal: 'login "{loginId}" at "{loginAt}" is already linked to {holder}' }] },
  ],
});

interface Row {
  readonly id: number;
  readonly uuid: string;
  readonly dn: string;
  readonly ndn: string;
  readonly parent: number | null;
  readonly attrs: Attributes;
  readonly sealed: Sealed | null;
  readonly refs: readonly OutgoingReference[];
}

function deepFreeze<T>(x: T): T {
  if (x && typeof x === 'object') {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/**
 * Storage in Maps. A transaction works on a copy of the committed rows and
 * replaces them when it ends well; rows are frozen, so the write path
 * cannot change what it was given. Every value handed to the storage is
 * logged as JSON, to look for plaintexts in. With `async`, each operation
 * answers after a turn of the event loop, and two transactions at once are
 * an error (the write path must queue them).
 */
class MapStorage implements DirectoryStorage<Row> {
  private rows = new Map<number, Row>();
  private nextId = 1;
  private open = false;
  readonly log: string[] = [];
  constructor(
    private readonly schema: Schema,
    private readonly async: boolean,
  ) {}

  private answer<T>(v: T): Maybe<T> {
    return this.async ? new Promise((resolve) => setImmediate(() => resolve(v))) : v;
  }

  private find(rows: Map<number, Row>, ndn: string): Row | undefined {
    for (const r of rows.values()) if (r.ndn === ndn) return r;
    return undefined;
  }

  transaction<T>(body: (tx: StorageTx<Row>) => Maybe<T>): Maybe<T> {
    if (this.open) throw new Error('two transactions at once');
    this.open = true;
    const work = new Map(this.rows);
    let next = this.nextId;
    const put = (r: Row) => {
      this.log.push(JSON.stringify(r));
      work.set(r.id, deepFreeze(r));
    };
    const row = (id: number) => {
      const r = work.get(id);
      if (!r) throw new Error(`no row ${id}`);
      return r;
    };
    const refsWhere = (test: (target: string) => boolean) => {
      const out: Reference<number>[] = [];
      for (const r of work.values()) for (const ref of r.refs) if (test(ref.target)) out.push({ ...ref, entry: r.id });
      return out;
    };
    const tx: StorageTx<Row> = {
      entry: (ndn) => this.answer(this.find(work, ndn)),
      entryById: (id) => this.answer(work.get(id)),
      attrs: (e) => this.answer(row(e.id).attrs),
      sealed: (e) => this.answer(row(e.id).sealed ?? {}),
      children: (id) => this.answer([...work.values()].filter((r) => r.parent === id)),
      hasChildren: (id) => this.answer([...work.values()].some((r) => r.parent === id)),
      insert: (e) => {
        const id = next++;
        put({ id, uuid: e.uuid, dn: e.dn, ndn: e.ndn, parent: e.parent, attrs: e.attrs, sealed: e.sealed, refs: e.refs });
        return this.answer(id);
      },
      update: (id, attrs, refs, sealed) => {
        put({ ...row(id), attrs, refs, sealed: sealed === undefined ? row(id).sealed : sealed });
        return this.answer(undefined);
      },
      move: (id, dn, ndn) => {
        put({ ...row(id), dn, ndn });
        return this.answer(undefined);
      },
      remove: (id) => {
        work.delete(id);
        return this.answer(undefined);
      },
      refsTo: (ndn) => this.answer(refsWhere((t) => t === ndn)),
      refsWithin: (ndn) => this.answer(refsWhere((t) => isWithin(t, ndn))),
      holding: (attr, k) => this.answer([...work.values()].filter((r) => indexKeys(this.schema, r.attrs).some(([a, x]) => a === attr && x === k)).map((r) => r.id)),
    };
    const commit = (out: T): T => {
      this.rows = work;
      this.nextId = next;
      return out;
    };
    let out: Maybe<T>;
    try {
      out = body(tx);
    } catch (e) {
      this.open = false;
      throw e;
    }
    if (out instanceof Promise) {
      return out.then(commit).finally(() => {
        this.open = false;
      });
    }
    this.open = false;
    return commit(out);
  }

  async get(dn: string): Promise<Entry | null> {
    const r = this.find(this.rows, normalizeDn(dn));
    return r ? { dn: r.dn, attrs: structuredClone(r.attrs) } : null;
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const test = compileFilter(this.schema, typeof req.filter === 'object' ? req.filter : parseFilter(req.filter ?? '(objectClass=*)'));
    const base = this.find(this.rows, normalizeDn(req.base));
    if (!base) throw new DirectoryError('noSuchObject', `no entry ${req.base}`, { dn: req.base });
    const inScope = (r: Row) => (req.scope === 'base' ? r === base : req.scope === 'one' ? r.parent === base.id : isWithin(r.ndn, base.ndn));
    const entries = [...this.rows.values()]
      .filter((r) => inScope(r) && test({ attrs: r.attrs, secrets: new Set(Object.keys(r.sealed ?? {})) }))
      .map((r) => ({ dn: r.dn, attrs: structuredClone(r.attrs) }));
    return { entries, truncated: false };
  }

  async sealedSecrets(dn: string): Promise<{ dn: string; uuid: string; sealed: Sealed } | null> {
    const r = this.find(this.rows, normalizeDn(dn));
    return r ? { dn: r.dn, uuid: r.uuid, sealed: r.sealed ?? {} } : null;
  }

  async close(): Promise<void> {}
}

interface Backend {
  name: string;
  /** storage calls answer with promises: other callers run while a write is in flight */
  async: boolean;
  open(): Promise<{ dir: Directory; stored: () => string; done: () => Promise<void> }>;
}

const base = 'dc=example,dc=test';
const key = randomBytes(32);
const mapBackend = (async: boolean): Backend => ({
  name: async ? 'Map storage answering with promises' : 'Map storage answering at once',
  async,
  async open() {
    let storage: MapStorage | undefined;
    const dir = await openDirectory({ baseDn: base, schema: schemaDef, masterKey: key, create: true }, (schema) => (storage = new MapStorage(schema, async)));
    return { dir, stored: () => storage!.log.join('\n'), done: () => dir.close() };
  },
});
const tmp = mkdtempSync(join(tmpdir(), 'dirid-write-path-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
const sqliteBackend: Backend = {
  name: 'SQLite',
  async: false,
  async open() {
    const path = join(tmp, `db${randomBytes(4).toString('hex')}`);
    const dir = await openSqliteDirectory({ path, baseDn: base, schema: schemaDef, masterKey: key, create: true });
    // everything written so far: the database file and its write-ahead log
    const stored = () => [path, `${path}-wal`].filter(existsSync).map((f) => readFileSync(f).toString('latin1')).join('\n');
    return { dir, stored, done: () => dir.close() };
  },
};


for (const backend of [sqliteBackend, mapBackend(false), mapBackend(true)]) {
  describe(`write path over ${backend.name}`, () => {
    const people = `ou=people,${base}`;
    const person = (dir: Directory, cn: string, extra: Attributes = {}) => dir.add(`cn=${cn},${people}`, { objectClass: ['top', 'person'], sn: [cn.split(' ').pop()!], ...extra });
    const start = async () => {
      const s = await backend.open();
      await s.dir.add(people, { objectClass: ['top', 'organizationalUnit'] });
      return s;
    };

    it('creates the base entry, adds with operational attributes and counts generations', async () => {
      const { dir, done } = await start();
      try {
        assert.deepEqual((await dir.get(base))!.attrs.objectClass, ['top', 'domain']);
        const g0 = dir.generation;
        await person(dir, 'Ann Smith', { age: ['30'] });
        assert.equal(dir.generation, g0 + 1, 'one committed write, one step');
        const e = (await dir.get(`CN=ann smith,${people}`))!;
        assert.equal(e.dn, `cn=Ann Smith,${people}`);
        assert.deepEqual(e.attrs.cn, ['Ann Smith'], 'the RDN value joins the entry');
        assert.match(e.attrs.entryUUID![0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        assert.match(e.attrs.createTimestamp![0]!, /^\d{14}Z$/);
        assert.match(e.attrs.modifyTimestamp![0]!, /^\d{14}Z$/);
        await dir.modify(e.dn, [{ op: 'replace', attr: 'age', values: ['31'] }]);
        const m = (await dir.get(e.dn))!;
        assert.deepEqual(m.attrs.age, ['31']);
        assert.deepEqual(m.attrs.entryUUID, e.attrs.entryUUID);
        assert.deepEqual(m.attrs.createTimestamp, e.attrs.createTimestamp);
        const g1 = dir.generation;
        await directoryFailure(person(dir, 'Ann Smith'));
        assert.equal(dir.generation, g1 + 1, 'a rolled-back write moves the generation too');
      } finally {
        await done();
      }
    });

    it('rejects schema violations with their codes and changes nothing', async () => {
      const { dir, done } = await start();
      try {
        await person(dir, 'Ann Smith');
        const dn = `cn=Ann Smith,${people}`;
        const before = await dir.get(dn);
        const cases: [string, () => Promise<unknown>, string | undefined, string | undefined][] = [
          ['entryAlreadyExists', () => person(dir, 'ann smith'), undefined, `cn=ann smith,${people}`],
          ['noSuchObject', () => dir.add(`cn=x,ou=nowhere,${base}`, { objectClass: ['person'], sn: ['x'] }), undefined, `cn=x,ou=nowhere,${base}`],
          ['noSuchObject', () => dir.add('cn=x,dc=elsewhere', { objectClass: ['person'], sn: ['x'] }), undefined, 'cn=x,dc=elsewhere'],
          ['objectClassViolation', () => dir.add(`cn=x,${people}`, { objectClass: ['person'] }), 'sn', undefined],
          ['undefinedAttributeType', () => person(dir, 'x', { bogus: ['1'] }), 'bogus', undefined],
          ['constraintViolation', () => person(dir, 'x', { age: ['1', '2'] }), 'age', undefined],
          ['constraintViolation', () => person(dir, 'x', { entryUUID: ['forged'] }), 'entryUUID', undefined],
          ['constraintViolation', () => dir.modify(dn, [{ op: 'replace', attr: 'cn', values: ['Other'] }]), 'cn', undefined],
          ['invalidAttributeSyntax', () => person(dir, 'x', { age: ['old'] }), 'age', undefined],
          ['noSuchAttribute', () => dir.modify(dn, [{ op: 'delete', attr: 'age' }]), 'age', undefined],
          ['referenceTargetMissing', () => person(dir, 'x', { manager: [`cn=Nobody,${people}`] }), 'manager', `cn=Nobody,${people}`],
          ['notAllowedOnNonLeaf', () => dir.delete(people), undefined, people],
          ['unwillingToPerform', () => dir.delete(base), undefined, base],
          ['invalidDNSyntax', () => dir.rename(dn, 'cn=a,cn=b'), undefined, 'cn=a,cn=b'],
        ];
        for (const [code, run, attr, errDn] of cases) {
          const e = await directoryFailure(run());
          assert.equal(e.code, code, e.message);
          assert.equal(e.attr, attr, e.message);
          assert.equal(e.dn, errDn, e.message);
        }
        assert.deepEqual(await dir.get(dn), before);
        assert.equal(await dir.get(`cn=x,${people}`), null);
      } finally {
        await done();
      }
    });

    it('moves the generation of a subtree only when a commit writes within or above it', async () => {
      const { dir, done } = await start();
      try {
        const boss = `cn=Boss Man,${people}`;
        const team = `cn=team,${base}`;
        await person(dir, 'Boss Man');
        await dir.add(team, { objectClass: ['top', 'group'], member: [people] });
        await dir.add(`ou=other,${base}`, { objectClass: ['top', 'organizationalUnit'], ou: ['other'] });
        const g0 = dir.subtreeGeneration(people);
        assert.equal(g0, dir.generation, 'watched from the first call: taken as written now');
        assert.equal(dir.subtreeGeneration(team), dir.generation);
        await dir.add(`cn=x,ou=other,${base}`, { objectClass: ['top', 'group'], cn: ['x'] });
        assert.equal(dir.subtreeGeneration(people), g0, 'a write elsewhere');
        await assert.rejects(dir.batch([{ kind: 'modify', dn: boss, mods: [{ op: 'replace', attr: 'age', values: ['7'] }] }, { kind: 'delete', dn: `cn=nobody,${people}` }]));
        assert.equal(dir.subtreeGeneration(people), g0, 'a write that rolled back');
        await dir.modify(boss, [{ op: 'replace', attr: 'age', values: ['50'] }]);
        const g1 = dir.subtreeGeneration(people);
        assert.ok(g1 > g0, 'a write within');
        assert.equal(g1, dir.generation);
        const t0 = dir.subtreeGeneration(team);
        // a rename rewrites the references to it: the referrer is written too
        await dir.modify(team, [{ op: 'add', attr: 'member', values: [boss] }]);
        const t1 = dir.subtreeGeneration(team);
        assert.ok(t1 > t0);
        await dir.rename(boss, 'cn=Big Boss');
        assert.ok(dir.subtreeGeneration(team) > t1, "a rename elsewhere rewrote the team's member");
        // a write above: the subtree itself moves
        const g2 = dir.subtreeGeneration(people);
        await dir.rename(people, 'ou=folks');
        assert.ok(dir.subtreeGeneration(people) > g2, 'renamed away from above');
        await dir.rename(`ou=folks,${base}`, people.split(',')[0]!);
      } finally {
        await done();
      }
    });

    it('keeps references intact: restrict, remove, renames of entries and subtrees', async () => {
      const { dir, done } = await start();
      try {
        const boss = `cn=Boss Man,${people}`;
        const worker = `cn=Wor Ker,${people}`;
        const team = `cn=team,${base}`;
        await person(dir, 'Boss Man');
        await person(dir, 'Wor Ker', { manager: [boss.toUpperCase()] });
        await dir.add(team, { objectClass: ['top', 'group'], member: [boss, worker, people] });
        const refused = await directoryFailure(dir.delete(boss));
        assert.equal(refused.code, 'referenced');
        assert.equal(refused.attr, 'manager');
        assert.equal(refused.dn, boss);
        assert.deepEqual((await dir.get(team))!.attrs.member, [boss, worker, people], 'a refused delete drops no reference');

        // a referrer rewritten by a rename is modified: its modifyTimestamp moves (seconds: wait for the next one)
        const teamModified = (await dir.get(team))!.attrs.modifyTimestamp![0]!;
        while (generalizedTime() === teamModified) await new Promise((r) => setTimeout(r, 50));
        const bigBoss = await dir.rename(boss, 'cn=Big Boss');
        assert.ok((await dir.get(team))!.attrs.modifyTimestamp![0]! > teamModified, 'the rename modified the referrer');
        assert.ok((await dir.get(worker))!.attrs.modifyTimestamp![0]! > teamModified);
        assert.equal(bigBoss, `cn=Big Boss,${people}`);
        assert.equal(await dir.get(boss), null);
        assert.deepEqual((await dir.get(bigBoss))!.attrs.cn, ['Big Boss'], 'the old RDN value leaves, the new one joins');
        assert.deepEqual((await dir.get(worker))!.attrs.manager, [bigBoss]);
        assert.deepEqual((await dir.get(team))!.attrs.member, [bigBoss, worker, people]);

        // the subtree moves, and references to its entries follow
        const staff = await dir.rename(people, 'ou=staff');
        const moved = (dn: string) => dn.replace(people, staff);
        assert.ok(await dir.get(moved(worker)));
        assert.equal(await dir.get(worker), null);
        assert.deepEqual((await dir.get(moved(worker)))!.attrs.manager, [moved(bigBoss)]);
        assert.deepEqual((await dir.get(team))!.attrs.member, [moved(bigBoss), moved(worker), staff]);
        const found = await dir.search({ base: staff, scope: 'sub', filter: '(objectClass=person)' });
        assert.deepEqual(found.entries.map((e) => e.dn).sort(), [moved(bigBoss), moved(worker)]);

        await dir.delete(moved(worker));
        assert.deepEqual((await dir.get(team))!.attrs.member, [moved(bigBoss), staff], "a delete drops 'remove' references");
        await dir.delete(moved(bigBoss));
        assert.deepEqual((await dir.get(team))!.attrs.member, [staff]);
      } finally {
        await done();
      }
    });

    it('seals secrets before the storage sees them', async () => {
      const { dir, stored, done } = await start();
      try {
        const dn = `cn=Secret Keeper,${people}`;
        const plain1 = 'pin-plaintext-98765';
        const plain2 = 'pin-rotated-11111';
        await person(dir, 'Secret Keeper', { pin: [plain1] });
        assert.equal((await dir.get(dn))!.attrs.pin, undefined, 'never returned as an attribute');
        assert.deepEqual(await dir.readSecret(dn, 'pin'), [plain1]);
        await dir.modify(dn, [{ op: 'replace', attr: 'pin', values: [plain2] }]);
        const renamed = await dir.rename(dn, 'cn=Keeper Two');
        assert.deepEqual(await dir.readSecret(renamed, 'PIN'), [plain2], 'a rename keeps secrets readable');
        assert.equal((await dir.search({ base, scope: 'sub', filter: '(pin=*)' })).entries.length, 1);
        const bytes = stored();
        assert.ok(bytes.includes('v1:'), 'the storage holds sealed values');
        for (const p of [plain1, plain2]) assert.equal(bytes.includes(p), false, `the storage saw ${p}`);
      } finally {
        await done();
      }
    });

    it('applies a batch atomically: a failure rolls back every earlier op', async () => {
      const { dir, done } = await start();
      try {
        await person(dir, 'Ann Smith');
        const dn = `cn=Ann Smith,${people}`;
        const before = await dir.get(dn);
        const g0 = dir.generation;
        const err = await directoryFailure(
          dir.batch([
            { kind: 'add', dn: `cn=Batch A,${people}`, attrs: { objectClass: ['person'], sn: ['A'] } },
            { kind: 'modify', dn, mods: [{ op: 'add', attr: 'age', values: ['5'] }] },
            { kind: 'rename', dn: `cn=Batch A,${people}`, newRdn: 'cn=Batch B' },
            { kind: 'add', dn: `cn=Batch C,${people}`, attrs: { objectClass: ['person'], sn: ['C'], manager: [`cn=Batch A,${people}`] } },
          ]),
        );
        assert.equal(err.code, 'referenceTargetMissing', 'the renamed entry is gone from its old DN inside the batch');
        assert.equal(dir.generation, g0 + 1);
        assert.equal(await dir.get(`cn=Batch A,${people}`), null);
        assert.equal(await dir.get(`cn=Batch B,${people}`), null);
        assert.deepEqual(await dir.get(dn), before);
        await dir.batch([
          { kind: 'add', dn: `cn=Batch A,${people}`, attrs: { objectClass: ['person'], sn: ['A'] } },
          { kind: 'rename', dn: `cn=Batch A,${people}`, newRdn: 'cn=Batch B' },
          { kind: 'add', dn: `cn=Batch C,${people}`, attrs: { objectClass: ['person'], sn: ['C'], manager: [`cn=Batch B,${people}`] } },
        ]);
        assert.deepEqual((await dir.get(`cn=Batch C,${people}`))!.attrs.manager, [`cn=Batch B,${people}`]);
      } finally {
        await done();
      }
    });

    it('queues concurrent writes and shows readers only committed data', async () => {
      const { dir, done } = await start();
      try {
        // the same DN twice at once: one add wins, the other finds it there
        const both = await Promise.allSettled([person(dir, 'Twin'), person(dir, 'Twin')]);
        assert.deepEqual(both.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
        const lost = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        assert.equal((lost.reason as DirectoryError).code, 'entryAlreadyExists');
        // a reader during a batch of 20 adds sees none or all of them
        const ops = Array.from({ length: 20 }, (_, i) => ({ kind: 'add' as const, dn: `cn=Many ${i},${people}`, attrs: { objectClass: ['person'], sn: ['Many'] } }));
        let finished = false;
        const writing = dir.batch(ops).then(() => {
          finished = true;
        });
        const seen = new Set<number>();
        while (!finished) {
          seen.add((await dir.search({ base: people, scope: 'one', filter: '(sn=many)' })).entries.length);
          await new Promise((resolve) => setImmediate(resolve));
        }
        await writing;
        for (const n of seen) assert.ok(n === 0 || n === 20, `a reader saw ${n} of 20 entries`);
        if (backend.async) assert.ok(seen.has(0), 'the reader ran while the batch was in flight');
        assert.equal((await dir.search({ base: people, scope: 'one', filter: '(sn=many)' })).entries.length, 20);
        // a write that fails in the queue does not hold up the next one
        const [bad, good] = await Promise.allSettled([person(dir, 'Bad', { age: ['x'] }), person(dir, 'Good')]);
        assert.equal(bad.status, 'rejected');
        assert.equal(good.status, 'fulfilled');
        assert.ok(await dir.get(`cn=Good,${people}`));
      } finally {
        await done();
      }
    });

    it('refuses a key another entry holds, in the rule\'s words, naming the holder, and writes nothing', async () => {
      const { dir, done } = await start();
      /** the write fails as a UniquenessViolation of `rule` on `attr`, held by `holder`, in `words` */
      const refused = async (write: Promise<unknown>, rule: string, attr: string, holder: string, words: string) => {
        const e = await directoryFailure(write);
        assert.ok(e instanceof UniquenessViolation, e.message);
        assert.deepEqual([e.code, e.rule, e.attr, e.holder], ['constraintViolation', rule, attr, holder]);
        assert.equal(e.describe('HOLDER'), words);
        assert.equal(e.message, words.replace('HOLDER', `the entry "${holder}"`));
        return e;
      };
      try {
        const ann = `cn=Ann,${people}`;
        const bob = `cn=Bob,${people}`;
        await person(dir, 'Ann', { badge: ['A-1', 'A-2'], staffNo: ['7'] });
        await person(dir, 'Bob', { badge: ['B-1'] });
        const g0 = dir.generation;
        const e = await refused(person(dir, 'Cy', { badge: ['C-1', 'a-2'] }), 'badge', 'badge', ann, 'badge "a-2" is already held by HOLDER');
        assert.equal(e.dn, `cn=Cy,${people}`);
        assert.equal(dir.generation, g0 + 1);
        assert.equal(await dir.get(`cn=Cy,${people}`), null);
        // keys compare as their syntax compares values: integers numerically
        await refused(person(dir, 'Cy', { staffNo: ['007'] }), 'number', 'staffNo', ann, 'staff number 007 is already used by HOLDER');
        await refused(dir.modify(bob, [{ op: 'add', attr: 'badge', values: [' A-1 '] }]), 'badge', 'badge', ann, 'badge " A-1 " is already held by HOLDER');
        assert.deepEqual((await dir.get(bob))!.attrs.badge, ['B-1']);
        // the keys an entry holds are its own to keep, through modifies and renames
        await dir.modify(ann, [{ op: 'replace', attr: 'badge', values: ['a-1', 'A-2'] }, { op: 'replace', attr: 'age', values: ['40'] }]);
        const ann2 = await dir.rename(ann, 'cn=Ann Two');
        await dir.modify(ann2, [{ op: 'replace', attr: 'staffNo', values: ['7'] }]);
        // one space for two attributes: a numbered group's teamNo against a person's staffNo, and back
        await refused(dir.add(`cn=seven,${base}`, { objectClass: ['group', 'numbered'], teamNo: ['7'] }), 'number', 'teamNo', ann2, 'team number 7 is already used by HOLDER');
        await dir.add(`cn=nine,${base}`, { objectClass: ['group', 'numbered'], teamNo: ['9'] });
        await refused(dir.modify(bob, [{ op: 'add', attr: 'staffNo', values: ['9'] }]), 'number', 'staffNo', `cn=nine,${base}`, 'staff number 9 is already used by HOLDER');
        // a group without the object class holds no key, until it takes the class
        await dir.add(`cn=free,${base}`, { objectClass: ['group'], teamNo: ['7'] });
        await refused(dir.modify(`cn=free,${base}`, [{ op: 'add', attr: 'objectClass', values: ['numbered'] }]), 'number', 'teamNo', ann2, 'team number 7 is already used by HOLDER');
        // a key of two attributes: only both together; a DN shows as its first RDN's value, as the write gave it
        const corp = `ou=corp,${base}`;
        await dir.add(corp, { objectClass: ['organizationalUnit'] });
        await dir.add(`ou=other,${base}`, { objectClass: ['organizationalUnit'] });
        await dir.modify(bob, [{ op: 'add', attr: 'loginAt', values: [corp] }, { op: 'add', attr: 'loginId', values: ['bob'] }]);
        await person(dir, 'Di', { loginAt: [`ou=other,${base}`], loginId: ['bob'] });
        await person(dir, 'Ed', { loginAt: [corp], loginId: ['Bob'] });
        await refused(person(dir, 'Fy', { loginAt: [corp.toUpperCase()], loginId: ['bob'] }), 'login', 'loginId', bob, 'login "bob" at "CORP" is already linked to HOLDER');
        await refused(dir.modify(`cn=Ed,${people}`, [{ op: 'replace', attr: 'loginId', values: ['bob'] }]), 'login', 'loginId', bob, 'login "bob" at "corp" is already linked to HOLDER');
        // inside a batch, an earlier operation's key is held: the whole batch rolls back
        await refused(
          dir.batch([
            { kind: 'add', dn: `cn=Gil,${people}`, attrs: { objectClass: ['person'], sn: ['G'], badge: ['G-1'] } },
            { kind: 'add', dn: `cn=Hal,${people}`, attrs: { objectClass: ['person'], sn: ['H'], badge: ['g-1'] } },
          ]),
          'badge',
          'badge',
          `cn=Gil,${people}`,
          'badge "g-1" is already held by HOLDER',
        );
        assert.equal(await dir.get(`cn=Gil,${people}`), null);
        // a key given up in a batch is free for the next operation of it; a deleted entry's keys are free
        await dir.batch([
          { kind: 'modify', dn: bob, mods: [{ op: 'delete', attr: 'badge' }] },
          { kind: 'add', dn: `cn=Gil,${people}`, attrs: { objectClass: ['person'], sn: ['G'], badge: ['b-1'] } },
        ]);
        await dir.delete(`cn=nine,${base}`);
        await dir.modify(bob, [{ op: 'add', attr: 'staffNo', values: ['9'] }]);
        assert.deepEqual(await verifyDirectory(dir), []);
      } finally {
        await done();
      }
    });
  });
}

describe('verifyDirectory', () => {
  it('reports keys held twice and references naming no entry in a store written before its rules, which still opens and writes', async () => {
    const path = join(tmp, 'legacy');
    const open = (schema: SchemaDefinition) => openSqliteDirectory({ path, baseDn: base, schema, masterKey: key, create: true });
    // the same schema without its uniqueness rules, nor referential integrity
    const loose = { ...schemaDef, unique: [], attributeTypes: schemaDef.attributeTypes.map((a) => ({ ...a, references: undefined })) };
    let dir = await open(loose);
    await dir.add(`cn=Ann,${base}`, { objectClass: ['person'], sn: ['A'], badge: ['x'], staffNo: ['5'], manager: [`cn=Nobody,${base}`] });
    await dir.add(`cn=Bob,${base}`, { objectClass: ['person'], sn: ['B'], badge: ['X'] });
    await dir.add(`cn=five,${base}`, { objectClass: ['group', 'numbered'], teamNo: ['5'] });
    await dir.close();
    dir = await open(schemaDef);
    try {
      assert.deepEqual((await verifyDirectory(dir)).sort(), [
        `referential integrity: cn=Ann,${base}: manager names cn=nobody,${base}, which does not exist`,
        `uniqueness: badge X: held by cn=Ann,${base} and by cn=Bob,${base}`,
        `uniqueness: number 5: held by cn=Ann,${base} and by cn=five,${base}`,
      ]);
      // the entries that share a key may still be written, as long as the write gives them no new one
      await dir.modify(`cn=Bob,${base}`, [{ op: 'replace', attr: 'sn', values: ['Bee'] }]);
      assert.ok((await directoryFailure(dir.modify(`cn=Bob,${base}`, [{ op: 'add', attr: 'staffNo', values: ['5'] }]))) instanceof UniquenessViolation);
    } finally {
      await dir.close();
    }
  });
});
