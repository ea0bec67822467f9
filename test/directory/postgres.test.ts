/**
 * What the PostgreSQL backend adds to the suites both backends run: two
 * handles on one database (two pools, as two servers have) see each other's
 * writes at once and their concurrent writes serialise without losing one;
 * racing to give two entries one principal name or IdP link (the realm's
 * uniqueness rules), one wins and the other is refused, every time;
 * a search never sees a write half done; a database without a directory is
 * refused; connections the server ends neither crash the process nor
 * leave a write half applied.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { openPostgresDirectory } from '../../src/directory/postgres.js';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { UniquenessViolation, type Attributes, type Directory, type SchemaDefinition, type WriteOp } from '../../src/directory/types.js';
import { verifyDirectory } from '../../src/directory/write-path.js';
import { realmSchema } from '../../src/objects/index.js';
import { backends, type Store } from '../support/backends.js';
import { directoryFailure } from '../support/expect.js';
import { postgresBin } from '../support/postgres.js';

const schema: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'member', syntax: 'dn', references: 'remove', indexed: true },
    { name: 'pin', syntax: 'secret' },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['description'] },
    { name: 'group', kind: 'structural', sup: 'top', must: ['cn'], may: ['member', 'description', 'pin'] },
  ],
});

const base = 'dc=example,dc=test';
const key = randomBytes(32);
const postgresql = backends.find((b) => b.name === 'postgresql');

const people = (prefix: string, n: number): WriteOp[] =>
  Array.from({ length: n }, (_, i) => ({ kind: 'add' as const, dn: `cn=${prefix}${i},${base}`, attrs: { objectClass: ['person'], sn: [prefix] } }));

const TERMINATE_OTHERS = 'SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()';

/** Ends every other connection to the store's database, as a server restart or an administrator would. */
const terminateOthers = (store: Store) => store.sql(TERMINATE_OTHERS);

/**
 * The same from another process, waiting until the server has ended them:
 * the event loop stands still meanwhile, so the pool has not yet noticed
 * when the next statement goes out on one of them.
 */
const terminateOthersUnnoticed = (store: Store) => execFileSync(join(postgresBin()!, 'psql'), [store.connectionString!, '-qAt', '-c', TERMINATE_OTHERS], { stdio: 'ignore' });

describe('PostgreSQL: several handles on one database', { skip: !postgresql && 'DIRID_TEST_BACKENDS leaves PostgreSQL out' }, () => {
  let store: Store;
  let a: Directory;
  let b: Directory;
  before(async () => {
    store = await postgresql!.store();
    a = await store.open({ baseDn: base, schema, masterKey: key, create: true });
    b = await store.open({ baseDn: base, schema, masterKey: key });
  });
  after(async () => {
    await a.close();
    await b.close();
  });

  it("sees the other handle's writes at once", async () => {
    await a.add(`cn=ann,${base}`, { objectClass: ['person'], sn: ['Smith'] });
    assert.deepEqual((await b.get(`cn=ann,${base}`))?.attrs.sn, ['Smith']);
    await b.modify(`cn=ann,${base}`, [{ op: 'replace', attr: 'sn', values: ['Jones'] }]);
    assert.deepEqual((await a.get(`cn=ann,${base}`))?.attrs.sn, ['Jones'], 'a cached parse of the old attributes is not reused');
    assert.deepEqual((await a.search({ base, scope: 'sub', filter: '(sn=jones)' })).entries.map((e) => e.dn), [`cn=ann,${base}`]);
    await b.delete(`cn=ann,${base}`);
    assert.equal(await a.get(`cn=ann,${base}`), null);
  });

  it("moves its generation when the other handle's write commits, not when one rolls back", async () => {
    const moved = async (from: number) => {
      for (let i = 0; i < 100 && a.generation === from; i++) await new Promise((r) => setTimeout(r, 20));
      return a.generation !== from;
    };
    // the listener connects in the background: once a write of b has reached a, it listens
    let g = a.generation;
    await b.add(`cn=warm,${base}`, { objectClass: ['person'], sn: ['Warm'] });
    assert.ok(await moved(g));
    await new Promise((r) => setTimeout(r, 100));
    g = a.generation;
    // a subtree watched on this handle: the other handle's commits do not say where they wrote, so each moves it
    const watched = a.subtreeGeneration(`cn=elsewhere,${base}`);
    await b.add(`cn=gen,${base}`, { objectClass: ['person'], sn: ['Gen'] });
    assert.ok(await moved(g), "another handle's commit reaches this handle's generation");
    assert.ok(a.subtreeGeneration(`cn=elsewhere,${base}`) > watched, "and every subtree it watches");
    g = a.generation;
    await directoryFailure(b.batch([{ kind: 'modify', dn: `cn=gen,${base}`, mods: [{ op: 'replace', attr: 'sn', values: ['Later'] }] }, { kind: 'add', dn: `cn=x,cn=missing,${base}`, attrs: { objectClass: ['person'], sn: ['x'] } }]));
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(a.generation, g, 'a rolled-back write notifies nobody');
    await b.delete(`cn=gen,${base}`);
    assert.ok(await moved(g));
  });

  it('serialises concurrent writes of both handles without losing one', async () => {
    const n = 40;
    await a.batch([...people('a', n), ...people('b', n), { kind: 'add', dn: `cn=team,${base}`, attrs: { objectClass: ['group'] } }]);
    const team = `cn=team,${base}`;
    // each handle adds its members one write at a time; the two handles' writes run at once
    await Promise.all([
      ...Array.from({ length: n }, (_, i) => a.modify(team, [{ op: 'add', attr: 'member', values: [`cn=a${i},${base}`] }])),
      ...Array.from({ length: n }, (_, i) => b.modify(team, [{ op: 'add', attr: 'member', values: [`cn=b${i},${base}`] }])),
    ]);
    const members = (await a.get(team))!.attrs.member ?? [];
    assert.equal(members.length, 2 * n, 'every member is there');
    assert.equal((await b.search({ base, scope: 'sub', filter: `(member=cn=b7,${base})` })).entries.length, 1, 'and indexed');
    // the same entry added by both at once: one wins, the other is told it exists
    const both = await Promise.allSettled([a.add(`cn=once,${base}`, { objectClass: ['group'] }), b.add(`cn=once,${base}`, { objectClass: ['group'] })]);
    assert.equal(both.filter((r) => r.status === 'fulfilled').length, 1);
    const refused = both.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    assert.equal((await directoryFailure(Promise.reject(refused.reason))).code, 'entryAlreadyExists');
  });

  it('never shows a search a write in progress', async () => {
    const n = 1500;
    const batch = a.batch(people('c', n));
    let done = false;
    void batch.finally(() => (done = true));
    const seen = new Set<number>();
    while (!done) {
      for (const d of [a, b]) seen.add((await d.search({ base, scope: 'sub', filter: '(sn=c)', attrs: ['1.1'] })).entries.length);
    }
    await batch;
    seen.add((await b.search({ base, scope: 'sub', filter: '(sn=c)', attrs: ['1.1'] })).entries.length);
    assert.deepEqual([...seen].filter((k) => k !== 0 && k !== n), [], 'only none or all of the batch');
    assert.ok(seen.has(n));
  });
});

describe('PostgreSQL: two handles racing for one key', { skip: !postgresql && 'DIRID_TEST_BACKENDS leaves PostgreSQL out' }, () => {
  const ROUNDS = 25;
  let a: Directory;
  let b: Directory;
  const user = (login: string, extra: Attributes = {}): Attributes => ({
    objectClass: ['top', 'person', 'organizationalPerson', 'inetOrgPerson', 'dirUser', 'krbPrincipalAux'],
    cn: [login],
    sn: [login],
    ...extra,
  });
  const userDn = (login: string) => `uid=${login},${base}`;
  /** Both writes at once: exactly one commits, the other is refused by `rule`, naming the winner; returns the winner's DN. */
  const oneWins = async (rule: string, writes: [Promise<unknown>, Promise<unknown>], dns: [string, string], words: (holder: string) => string) => {
    const [x, y] = await Promise.allSettled(writes);
    assert.equal([x, y].filter((r) => r.status === 'fulfilled').length, 1, `exactly one of ${dns.join(' and ')} committed`);
    const [winner, lost] = x.status === 'fulfilled' ? [dns[0], y] : [dns[1], x];
    const e = (lost as PromiseRejectedResult).reason as unknown;
    assert.ok(e instanceof UniquenessViolation, String(e));
    assert.deepEqual([e.code, e.rule, e.holder], ['constraintViolation', rule, winner]);
    assert.equal(e.message, words(`the entry "${winner}"`));
    return winner;
  };

  before(async () => {
    const store = await postgresql!.store();
    a = await store.open({ baseDn: base, schema: realmSchema, masterKey: key, create: true });
    b = await store.open({ baseDn: base, schema: realmSchema, masterKey: key });
    await a.add(`cn=corp,${base}`, { objectClass: ['dirIdp'], dirIdpClientId: ['dirid'] });
  });
  after(async () => {
    await a?.close();
    await b?.close();
  });

  it('two new entries with one principal name: one is added, the other refused naming it', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const name = `race${i}@EXAMPLE.TEST`;
      const dns: [string, string] = [userDn(`pa${i}`), userDn(`pb${i}`)];
      const winner = await oneWins('principal name', [a.add(dns[0], user(`pa${i}`, { krbPrincipalName: [name] })), b.add(dns[1], user(`pb${i}`, { krbPrincipalName: [name] }))], dns, (h) => `principal name "${name}" is already held by ${h}`);
      const holders = await b.search({ base, scope: 'sub', filter: `(krbPrincipalName=${name})`, attrs: ['1.1'] });
      assert.deepEqual(holders.entries.map((e) => e.dn), [winner]);
      assert.equal(await a.get(dns[0] === winner ? dns[1] : dns[0]), null, 'the refused add wrote nothing');
    }
  });

  it('two users linked to one IdP subject: one is linked, the other refused naming it', async () => {
    const logins = Array.from({ length: ROUNDS }, (_, i) => [`la${i}`, `lb${i}`]).flat();
    await a.batch(logins.map((l) => ({ kind: 'add' as const, dn: userDn(l), attrs: user(l) })));
    const link = (sub: string) => [
      { op: 'add' as const, attr: 'objectClass', values: ['dirIdpUser'] },
      { op: 'add' as const, attr: 'dirIdpConfigLink', values: [`cn=corp,${base}`] },
      { op: 'add' as const, attr: 'dirIdpSub', values: [sub] },
    ];
    for (let i = 0; i < ROUNDS; i++) {
      const sub = `subject-${i}`;
      const dns: [string, string] = [userDn(`la${i}`), userDn(`lb${i}`)];
      const winner = await oneWins('IdP link', [a.modify(dns[0], link(sub)), b.modify(dns[1], link(sub))], dns, (h) => `IdP user ID "${sub}" of IdP reference "corp" is already linked to ${h}`);
      const linked = await a.search({ base, scope: 'sub', filter: `(&(dirIdpConfigLink=cn=corp,${base})(dirIdpSub=${sub}))`, attrs: ['1.1'] });
      assert.deepEqual(linked.entries.map((e) => e.dn), [winner]);
    }
    assert.deepEqual(await verifyDirectory(b), []);
  });
});

describe('PostgreSQL: opening', { skip: !postgresql && 'DIRID_TEST_BACKENDS leaves PostgreSQL out' }, () => {
  it('refuses a database without a directory, and one under another base', async () => {
    const store = await postgresql!.store();
    await assert.rejects(store.open({ baseDn: base, schema, masterKey: key }), /holds no directory/);
    assert.deepEqual(await store.sql("SELECT to_regclass('entries') AS t"), [{ t: null }], 'a refused open creates nothing');
    const dir = await store.open({ baseDn: 'dc=other', schema, masterKey: key, create: true });
    await dir.close();
    await assert.rejects(store.open({ baseDn: base, schema, masterKey: key }), new RegExp(`holds no directory under ${base}`));
    const again = await store.open({ baseDn: 'dc=other', schema, masterKey: key });
    assert.ok(await again.get('dc=other'));
    await again.close();
  });

  it('refuses an unreachable server with an error that does not show the password', async () => {
    const e = await openPostgresDirectory({ connectionString: 'postgresql://dirid:sw0rdfish-password@127.0.0.1:1/dirid', baseDn: base, schema, masterKey: key }).then(
      () => assert.fail('opened'),
      (x: unknown) => x as Error,
    );
    assert.ok(!String(e.message).includes('sw0rdfish'), e.message);
  });
});

describe('PostgreSQL: connections the server ends', { skip: !postgresql && 'DIRID_TEST_BACKENDS leaves PostgreSQL out' }, () => {
  let store: Store;
  let dir: Directory;
  const errors: Error[] = [];
  before(async () => {
    store = await postgresql!.store();
    dir = await openPostgresDirectory({ connectionString: store.connectionString!, baseDn: base, schema, masterKey: key, create: true, onError: (e) => errors.push(e) });
  });
  after(async () => {
    await dir.close();
  });

  it('reports idle connections that die and carries on with new ones', async () => {
    // several idle connections in the pool, ended as a server restart ends them
    const idle = () => Promise.all(Array.from({ length: 4 }, () => dir.search({ base, scope: 'sub' })));
    await idle();
    await terminateOthers(store);
    for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(errors.length > 0, 'the pool reported the ended connections');
    // reads and writes that meet an ended connection before the pool noticed try again on a new one
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['get', () => dir.get(base)],
      ['secret', () => dir.readSecret(base, 'pin')],
      ['search', () => dir.search({ base, scope: 'sub', filter: '(cn=after)' })],
      ['add', () => dir.add(`cn=after,${base}`, { objectClass: ['group'] })],
      ['modify', () => dir.modify(`cn=after,${base}`, [{ op: 'replace', attr: 'description', values: ['x'] }])],
    ];
    for (const [name, run] of steps) {
      await idle();
      terminateOthersUnnoticed(store);
      await assert.doesNotReject(run(), name);
    }
    assert.deepEqual((await dir.get(`cn=after,${base}`))?.attrs.description, ['x']);
  });

  it('rolls back a write whose connection ends, and the next write works', async () => {
    const n = 3000;
    const batch = dir.batch(people('d', n)).then(
      () => assert.fail('the batch committed before its connection ended'),
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 150));
    await terminateOthers(store);
    // the server's notice, or the client's when the connection ended between two statements
    assert.match(String(await batch), /terminating connection|connection error/);
    assert.equal((await dir.search({ base, scope: 'sub', filter: '(sn=d)' })).entries.length, 0, 'nothing of the batch');
    await dir.add(`cn=later,${base}`, { objectClass: ['group'] });
    assert.ok(await dir.get(`cn=later,${base}`));
  });
});
