/**
 * The directory on each storage backend (SQLite, PostgreSQL): CRUD, schema
 * enforcement (each result code), referential integrity, atomic batches,
 * scopes and limits, and secrets at rest. Index use on a large store is in
 * index.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { directoryFailure } from '../support/expect.js';
import { statSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { backends, type Store } from '../support/backends.js';
import { coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { DirectoryError, type Directory, type DirectoryErrorCode, type SchemaDefinition } from '../../src/directory/types.js';

const testSchema: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', aliases: ['surname'], syntax: 'string', indexed: true },
    { name: 'mail', syntax: 'string', indexed: true },
    { name: 'age', syntax: 'integer', singleValue: true },
    { name: 'serial', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'token', syntax: 'exact', indexed: true },
    { name: 'manager', syntax: 'dn', singleValue: true, references: 'restrict', indexed: true },
    { name: 'member', syntax: 'dn', references: 'remove', indexed: true },
    { name: 'pin', syntax: 'secret', singleValue: true },
    { name: 'otherPin', syntax: 'secret' },
    { name: 'note', syntax: 'string', maxLength: 10 },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['mail', 'age', 'serial', 'token', 'manager', 'pin', 'otherPin', 'note', 'uid'] },
    { name: 'group', kind: 'structural', sup: 'top', must: ['cn'], may: ['member'] },
    { name: 'extra', kind: 'auxiliary', must: [], may: ['description'] },
    { name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] },
  ],
});

const code = async (p: Promise<unknown>): Promise<DirectoryErrorCode> => (await directoryFailure(p)).code;

for (const backend of backends) {
  describe(`${backend.name} store`, () => {
    let store: Store;
    let dir: Directory;
    const base = 'dc=example,dc=test';
    const people = `ou=people,${base}`;
    const key = randomBytes(32);
    const open = (masterKey = key) => store.open({ baseDn: base, schema: testSchema, masterKey });
    before(async () => {
      store = await backend.store();
      dir = await store.open({ baseDn: base, schema: testSchema, masterKey: key, create: true });
      await dir.add(people, { objectClass: ['top', 'organizationalUnit'], ou: ['people'] });
    });
    after(async () => {
      await dir.close();
      await store.remove();
    });
    const person = (cn: string, extra: Record<string, string[]> = {}) => dir.add(`cn=${cn},${people}`, { objectClass: ['top', 'person'], sn: [cn.split(' ').pop()!], ...extra });

    it('creates the base entry and refuses to open an empty store without create', async () => {
      const b = await dir.get('DC=Example,DC=Test');
      assert.deepEqual(b?.attrs.objectClass, ['top', 'domain']);
      assert.deepEqual(b?.attrs.dc, ['example']);
      const empty = await backend.store();
      try {
        await assert.rejects(empty.open({ baseDn: base, schema: testSchema, masterKey: key }));
        await assert.rejects(empty.open({ baseDn: base, schema: testSchema, masterKey: randomBytes(16), create: true }), /32 bytes/);
      } finally {
        await empty.remove();
      }
    });

    it('adds, reads, modifies and deletes, keeping operational attributes', async () => {
      const g0 = dir.generation;
      await person('Ann Smith', { MAIL: ['ann@example.test'], age: ['30'], Surname: ['Smythe'] });
      assert.ok(dir.generation > g0, 'a write moves the generation');
      const e = await dir.get(`CN=ann smith,OU=People,${base}`);
      assert.ok(e);
      assert.equal(e.dn, `cn=Ann Smith,${people}`);
      assert.deepEqual(e.attrs.cn, ['Ann Smith'], 'the RDN value is added to the entry');
      assert.deepEqual(e.attrs.mail, ['ann@example.test'], 'stored under the canonical name');
      assert.deepEqual(e.attrs.sn, ['Smith', 'Smythe'], 'aliases map to the canonical name');
      assert.match(e.attrs.entryUUID![0]!, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.match(e.attrs.createTimestamp![0]!, /^\d{14}Z$/);
      assert.deepEqual((await dir.get(`cn=Ann Smith,${people}`, ['commonName']))!.attrs, { cn: ['Ann Smith'] });
      assert.deepEqual((await dir.get(`cn=Ann Smith,${people}`, ['1.1']))!.attrs, {});
      assert.deepEqual(Object.keys((await dir.get(`cn=Ann Smith,${people}`, ['+', 'sn']))!.attrs).sort(), ['createTimestamp', 'entryUUID', 'modifyTimestamp', 'sn']);
      e.attrs.mail!.push('tampered');
      assert.deepEqual((await dir.get(`cn=Ann Smith,${people}`))!.attrs.mail, ['ann@example.test'], 'callers get copies');

      const dn = `cn=Ann Smith,${people}`;
      await dir.modify(dn, [
        { op: 'add', attr: 'mail', values: ['ann2@example.test'] },
        { op: 'delete', attr: 'sn', values: ['SMYTHE'] },
        { op: 'replace', attr: 'age', values: ['31'] },
      ]);
      const m = (await dir.get(dn))!;
      assert.deepEqual(m.attrs.mail, ['ann@example.test', 'ann2@example.test']);
      assert.deepEqual(m.attrs.sn, ['Smith']);
      assert.deepEqual(m.attrs.age, ['31']);
      assert.deepEqual(m.attrs.entryUUID, e.attrs.entryUUID);
      await dir.modify(dn, [{ op: 'delete', attr: 'age' }, { op: 'replace', attr: 'note', values: [] }]);
      assert.equal((await dir.get(dn))!.attrs.age, undefined);

      await person('Temp Entry');
      await dir.delete(`cn=temp entry,${people}`);
      assert.equal(await dir.get(`cn=Temp Entry,${people}`), null);
      assert.equal(await code(dir.delete(`cn=Temp Entry,${people}`)), 'noSuchObject');
    });

    it('answers each schema violation with its code, changing nothing', async () => {
      const dn = `cn=Ann Smith,${people}`;
      const before = await dir.get(dn);
      const cases: [DirectoryErrorCode, () => Promise<unknown>, string?][] = [
        ['entryAlreadyExists', () => person('Ann Smith')],
        ['noSuchObject', () => dir.add(`cn=x,ou=nowhere,${base}`, { objectClass: ['person'], sn: ['x'] })],
        ['noSuchObject', () => dir.add('cn=x,dc=elsewhere', { objectClass: ['person'], sn: ['x'] })],
        ['noSuchObject', () => dir.modify(`cn=nobody,${people}`, [{ op: 'add', attr: 'mail', values: ['x@y'] }])],
        ['objectClassViolation', () => dir.add(`cn=x,${people}`, { objectClass: ['person'] }), 'sn'],
        ['objectClassViolation', () => dir.add(`cn=x,${people}`, { objectClass: ['extra'] })],
        ['objectClassViolation', () => dir.add(`cn=x,${people}`, { objectClass: ['nosuchclass', 'person'], sn: ['x'] })],
        ['objectClassViolation', () => dir.add(`cn=x,${people}`, { objectClass: ['person', 'group'], sn: ['x'] })],
        ['objectClassViolation', () => person('x', { description: ['not allowed'] }), 'description'],
        ['undefinedAttributeType', () => person('x', { bogus: ['1'] })],
        ['undefinedAttributeType', () => dir.modify(dn, [{ op: 'add', attr: 'bogus', values: ['1'] }])],
        ['constraintViolation', () => person('x', { age: ['1', '2'] }), 'age'],
        ['constraintViolation', () => person('x', { note: ['much too long here'] }), 'note'],
        ['constraintViolation', () => person('x', { entryUUID: ['forged'] }), 'entryUUID'],
        ['constraintViolation', () => dir.modify(dn, [{ op: 'replace', attr: 'modifyTimestamp', values: ['20200101000000Z'] }]), 'modifyTimestamp'],
        ['constraintViolation', () => dir.modify(dn, [{ op: 'add', attr: 'age', values: ['31'] }, { op: 'add', attr: 'age', values: ['32'] }]), 'age'],
        ['constraintViolation', () => dir.modify(dn, [{ op: 'replace', attr: 'cn', values: ['Other'] }]), 'cn'],
        ['invalidAttributeSyntax', () => person('x', { age: ['old'] }), 'age'],
        ['invalidAttributeSyntax', () => person('x', { manager: ['not a dn'] }), 'manager'],
        ['attributeOrValueExists', () => person('x', { mail: ['a@x', 'A@X'] }), 'mail'],
        ['attributeOrValueExists', () => dir.modify(dn, [{ op: 'add', attr: 'MAIL', values: ['ANN@example.test'] }]), 'mail'],
        ['noSuchAttribute', () => dir.modify(dn, [{ op: 'delete', attr: 'mail', values: ['other@x'] }]), 'mail'],
        ['noSuchAttribute', () => dir.modify(dn, [{ op: 'delete', attr: 'token' }]), 'token'],
        ['objectClassViolation', () => dir.modify(dn, [{ op: 'delete', attr: 'sn' }]), 'sn'],
        ['notAllowedOnNonLeaf', () => dir.delete(people)],
        ['invalidDNSyntax', () => dir.add('cn=x,,dc=test', { objectClass: ['person'], sn: ['x'] })],
        ['invalidDNSyntax', () => dir.get('no equals sign')],
        ['invalidDNSyntax', () => dir.rename(dn, 'cn=a,cn=b')],
        ['filterError', () => dir.search({ base, scope: 'sub', filter: '(bad' })],
        ['filterError', () => dir.search({ base, scope: 'sub', filter: '(pin=secret)' })],
        ['unwillingToPerform', () => dir.delete(base)],
        ['referenceTargetMissing', () => person('x', { manager: [`cn=nobody,${people}`] }), 'manager'],
      ];
      for (const [want, run, attr] of cases) {
        const e = await directoryFailure(run());
        assert.equal(e.code, want, `${e.message} (${run.toString().slice(6, 90)})`);
        if (attr) assert.equal(e.attr, attr, e.message);
      }
      assert.deepEqual(await dir.get(dn), before);
      assert.equal(await dir.get(`cn=x,${people}`), null);
      // the auxiliary class opens description
      await dir.modify(dn, [
        { op: 'add', attr: 'objectClass', values: ['extra'] },
        { op: 'add', attr: 'description', values: ['now allowed'] },
      ]);
      assert.deepEqual((await dir.get(dn))!.attrs.description, ['now allowed']);
    });

    it('keeps references intact: restrict, remove, and renames', async () => {
      const boss = `cn=Boss Man,${people}`;
      const worker = `cn=Wor Ker,${people}`;
      const team = `cn=team,${base}`;
      await person('Boss Man');
      await person('Wor Ker', { manager: [boss.toUpperCase()] });
      await dir.add(team, { objectClass: ['top', 'group'], member: [boss, worker] });
      const snapshot = async () => [await dir.get(boss), await dir.get(worker), await dir.get(team)];
      const before = await snapshot();
      const refused = await directoryFailure(dir.delete(boss));
      assert.equal(refused.code, 'referenced');
      assert.equal(refused.attr, 'manager');
      assert.deepEqual(await snapshot(), before, 'a refused delete changes nothing, not even the remove-references');

      const newDn = await dir.rename(boss, 'cn=Big Boss');
      assert.equal(newDn, `cn=Big Boss,${people}`);
      assert.equal(await dir.get(boss), null);
      assert.deepEqual((await dir.get(worker))!.attrs.manager, [newDn]);
      assert.deepEqual((await dir.get(team))!.attrs.member, [newDn, worker]);
      assert.deepEqual((await dir.get(newDn))!.attrs.cn, ['Big Boss'], 'the old RDN value leaves, the new one joins');
      assert.equal((await dir.search({ base, scope: 'sub', filter: `(manager=CN=big boss,ou=people,${base})` })).entries.length, 1, 'the index follows');
      assert.equal((await dir.search({ base, scope: 'sub', filter: `(manager=${boss})` })).entries.length, 0);

      await dir.delete(worker);
      assert.deepEqual((await dir.get(team))!.attrs.member, [newDn], "'remove' references are dropped");
      await dir.delete(newDn);
      assert.equal((await dir.get(team))!.attrs.member, undefined);
      assert.equal((await dir.search({ base, scope: 'sub', filter: `(member=${newDn})` })).entries.length, 0);
    });

    it('renames subtrees with their descendants and the references to them', async () => {
      await dir.add(`ou=sub,${base}`, { objectClass: ['top', 'organizationalUnit'] });
      await dir.add(`ou=inner,ou=sub,${base}`, { objectClass: ['top', 'organizationalUnit'] });
      await dir.add(`cn=Deep One,ou=inner,ou=sub,${base}`, { objectClass: ['top', 'person'], sn: ['One'] });
      await dir.add(`cn=g2,${base}`, { objectClass: ['top', 'group'], member: [`cn=Deep One,ou=inner,ou=sub,${base}`, `ou=sub,${base}`] });
      await dir.rename(`ou=sub,${base}`, 'ou=moved');
      assert.ok(await dir.get(`cn=Deep One,ou=inner,ou=moved,${base}`));
      assert.equal(await dir.get(`cn=Deep One,ou=inner,ou=sub,${base}`), null);
      assert.deepEqual((await dir.get(`cn=g2,${base}`))!.attrs.member, [`cn=Deep One,ou=inner,ou=moved,${base}`, `ou=moved,${base}`]);
      const found = await dir.search({ base: `ou=moved,${base}`, scope: 'sub', filter: '(objectClass=*)' });
      assert.deepEqual(found.entries.map((e) => e.dn).sort(), [`cn=Deep One,ou=inner,ou=moved,${base}`, `ou=inner,ou=moved,${base}`, `ou=moved,${base}`]);
      assert.equal(await code(dir.rename(`ou=moved,${base}`, 'ou=people')), 'entryAlreadyExists');
      // a delete of a referenced descendant still removes the 'remove' reference
      await dir.delete(`cn=Deep One,ou=inner,ou=moved,${base}`);
      assert.deepEqual((await dir.get(`cn=g2,${base}`))!.attrs.member, [`ou=moved,${base}`]);
    });

    it('applies a batch atomically: a failing op rolls back the earlier ones', async () => {
      const dn = `cn=Ann Smith,${people}`;
      const before = await dir.get(dn);
      const err = await directoryFailure(
        dir.batch([
          { kind: 'add', dn: `cn=Batch A,${people}`, attrs: { objectClass: ['person'], sn: ['BatchA'] } },
          { kind: 'modify', dn, mods: [{ op: 'add', attr: 'mail', values: ['batch@example.test'] }] },
          { kind: 'add', dn: `cn=Batch B,${people}`, attrs: { objectClass: ['person'], sn: ['BatchB'] } },
          { kind: 'rename', dn: `cn=Batch B,${people}`, newRdn: 'cn=Batch C' },
          { kind: 'delete', dn: `cn=Batch A,${people}` },
          { kind: 'modify', dn: `cn=Batch C,${people}`, mods: [{ op: 'add', attr: 'age', values: ['1', '2'] }] },
        ]),
      );
      assert.equal(err.code, 'constraintViolation');
      assert.equal(await dir.get(`cn=Batch A,${people}`), null);
      assert.equal(await dir.get(`cn=Batch B,${people}`), null);
      assert.equal(await dir.get(`cn=Batch C,${people}`), null);
      assert.deepEqual(await dir.get(dn), before);
      assert.equal((await dir.search({ base, scope: 'sub', filter: '(|(sn=batch*)(mail=batch@example.test))' })).entries.length, 0, 'indexes rolled back too');
      // and a good batch applies in order
      await dir.batch([
        { kind: 'add', dn: `cn=Batch A,${people}`, attrs: { objectClass: ['person'], sn: ['BatchA'] } },
        { kind: 'modify', dn: `cn=Batch A,${people}`, mods: [{ op: 'add', attr: 'age', values: ['7'] }] },
        { kind: 'rename', dn: `cn=Batch A,${people}`, newRdn: 'cn=Batch Z' },
      ]);
      assert.deepEqual((await dir.get(`cn=Batch Z,${people}`))!.attrs.age, ['7']);
    });

    it('searches with scopes, size limits and the attributes asked for', async () => {
      await dir.batch(
        Array.from({ length: 300 }, (_, i) => ({
          kind: 'add' as const,
          dn: `cn=User ${i},${people}`,
          attrs: { objectClass: ['person'], sn: [`Family${i % 7}`], serial: [String(i - 100)], mail: [`u${i}@example.test`] },
        })),
      );
      assert.deepEqual((await dir.search({ base: people, scope: 'base' })).entries.map((e) => e.dn), [people]);
      assert.equal((await dir.search({ base: people, scope: 'base', filter: '(cn=*)' })).entries.length, 0);
      assert.equal((await dir.search({ base, scope: 'one', filter: '(objectClass=person)' })).entries.length, 0);
      assert.equal((await dir.search({ base: people, scope: 'one', filter: '(sn=family1)' })).entries.length, 43);
      const sized = await dir.search({ base, scope: 'sub', filter: '(sn=family3*)', sizeLimit: 10 });
      assert.equal(sized.entries.length, 10);
      assert.equal(sized.truncated, true);
      assert.equal(sized.limit, 'size');
      const exact = await dir.search({ base, scope: 'sub', filter: '(sn=family3)', sizeLimit: 43 });
      assert.equal(exact.entries.length, 43);
      assert.equal(exact.truncated, false, 'exactly the limit is not truncated');
      assert.equal(exact.limit, undefined);
      assert.equal((await dir.search({ base, scope: 'sub', filter: '(serial>=190)' })).entries.length, 10, 'numeric ordering through the index');
      assert.equal((await dir.search({ base, scope: 'sub', filter: '(serial<=-95)' })).entries.length, 6, 'negative numbers too');
      const picked = await dir.search({ base, scope: 'sub', filter: '(mail=u7@example.test)', attrs: ['SURNAME', 'pin', 'nosuch'] });
      assert.deepEqual(picked.entries[0]!.attrs, { sn: ['Family0'] });
      assert.equal(await code(dir.search({ base: `ou=none,${base}`, scope: 'sub' })), 'noSuchObject');
    });

    it('matches substrings holding LIKE wildcards and backslashes literally, through the index', async () => {
      const odd = ['a_c@x', 'abc@x', '50%off@x', '500ff@x', 'back\\slash@x', 'backslash@x'];
      await dir.batch(odd.map((m, i) => ({ kind: 'add' as const, dn: `cn=Odd ${i},${people}`, attrs: { objectClass: ['person'], sn: ['Odd'], mail: [m] } })));
      const mails = async (filter: string) => (await dir.search({ base, scope: 'sub', filter, attrs: ['mail'] })).entries.map((e) => e.attrs.mail![0]).sort();
      assert.deepEqual(await mails('(mail=*_c@*)'), ['a_c@x']);
      assert.deepEqual(await mails('(mail=a_*)'), ['a_c@x']);
      assert.deepEqual(await mails('(mail=*0%*)'), ['50%off@x']);
      assert.deepEqual(await mails('(mail=*k\\5cs*)'), ['back\\slash@x']);
      assert.deepEqual(await mails('(mail=*lash@x)'), ['back\\slash@x', 'backslash@x']);
      await dir.batch(odd.map((_, i) => ({ kind: 'delete' as const, dn: `cn=Odd ${i},${people}` })));
    });

    it('stops at a time limit and returns what it found so far', async () => {
      const filter = `(|${Array.from({ length: 200 }, (_, i) => `(description=*nothing${i}*)`).join('')}(sn=family*))`;
      const full = await dir.search({ base, scope: 'sub', filter });
      assert.equal(full.truncated, false);
      const timed = await dir.search({ base, scope: 'sub', filter, timeLimit: 0.0002 });
      assert.equal(timed.truncated, true);
      assert.equal(timed.limit, 'time');
      assert.ok(timed.entries.length < full.entries.length);
      const all = new Set(full.entries.map((e) => e.dn));
      for (const e of timed.entries) assert.ok(all.has(e.dn), 'partial results are real results');
    });

    it('encrypts secrets, binds them to entry and attribute, and never returns them', async () => {
      const dn = `cn=Secret Keeper,${people}`;
      const plain1 = 'pin-plaintext-98765';
      const plain2 = 'pin-rotated-11111';
      const other = 'other-secret-24680';
      await person('Secret Keeper', { pin: [plain1], otherPin: [other] });
      assert.equal((await dir.get(dn))!.attrs.pin, undefined);
      assert.equal((await dir.get(dn, ['pin', 'otherPin']))!.attrs.pin, undefined, 'not even when asked for by name');
      assert.deepEqual(await dir.readSecret(dn, 'PIN'), [plain1]);
      const hits = await dir.search({ base, scope: 'sub', filter: '(pin=*)', attrs: ['*', 'pin'] });
      assert.deepEqual(hits.entries.map((e) => e.dn), [dn]);
      assert.equal(JSON.stringify(hits).includes(plain1), false);
      assert.equal((await dir.search({ base, scope: 'sub', filter: '(&(pin=*)(!(cn=secret keeper)))' })).entries.length, 0);
      await dir.modify(dn, [{ op: 'replace', attr: 'pin', values: [plain2] }]);
      assert.deepEqual(await dir.readSecret(dn, 'pin'), [plain2]);
      assert.equal(await code(dir.modify(dn, [{ op: 'add', attr: 'pin', values: ['x'] }])), 'constraintViolation');
      await dir.rename(dn, 'cn=Secret Keeper2');
      const renamed = `cn=Secret Keeper2,${people}`;
      await dir.rename(renamed, 'cn=Secret Keeper');
      assert.deepEqual(await dir.readSecret(dn, 'pin'), [plain2], 'a rename keeps secrets readable');
      assert.deepEqual(await dir.readSecret(`cn=Ann Smith,${people}`, 'pin'), []);
      assert.equal(await code(dir.readSecret(dn, 'mail')), 'undefinedAttributeType');
      await person('Other Entry');

      // after writes, before the directory closes (SQLite: the WAL holds the new pages)
      if (backend.name === 'sqlite') assert.ok(statSync(`${store.path}-wal`).size > 0, 'the WAL was written');
      assert.notDeepEqual(await store.atRest(['Secret Keeper']), [], 'the files read are those the entries are in');
      assert.deepEqual(await store.atRest([plain1, plain2, other]), []);
      await dir.close();
      assert.deepEqual(await store.atRest([plain1, plain2, other]), [], 'after the checkpoint of closing');

      // move sealed values: to another entry, and to another attribute of the same entry
      const sealed = JSON.parse((await store.sql('SELECT secrets FROM entries WHERE dn = ?', [dn]))[0]!.secrets as string) as Record<string, string[]>;
      await store.sql('UPDATE entries SET secrets = ? WHERE dn = ?', [JSON.stringify({ pin: sealed.pin }), `cn=Other Entry,${people}`]);
      await store.sql('UPDATE entries SET secrets = ? WHERE dn = ?', [JSON.stringify({ pin: sealed.pin, otherPin: sealed.pin }), dn]);
      dir = await open();
      assert.deepEqual(await dir.readSecret(dn, 'pin'), [plain2]);
      for (const p of [dir.readSecret(`cn=Other Entry,${people}`, 'pin'), dir.readSecret(dn, 'otherPin')]) {
        const e = await directoryFailure(p);
        assert.equal(e.code, 'unwillingToPerform');
        assert.ok(!e.message.includes(plain2));
      }
      // damaged storage gives a clean error too
      await dir.close();
      await store.sql('UPDATE entries SET secrets = ? WHERE dn = ?', ['{"pin":[42]}', `cn=Other Entry,${people}`]);
      await store.sql('UPDATE entries SET secrets = ? WHERE dn = ?', ['not json', `cn=Ann Smith,${people}`]);
      dir = await open();
      assert.equal(await code(dir.readSecret(`cn=Other Entry,${people}`, 'pin')), 'unwillingToPerform');
      assert.equal(await code(dir.readSecret(`cn=Ann Smith,${people}`, 'pin')), 'unwillingToPerform');
      const wrongKey = await open(randomBytes(32));
      assert.equal(await code(wrongKey.readSecret(dn, 'pin')), 'unwillingToPerform');
      await wrongKey.close();
    });
  });

  describe(`${backend.name} store: bad input and schema changes`, () => {
    const base = 'dc=example,dc=test';
    it('answers malformed calls with DirectoryErrors', async () => {
      const store = await backend.store();
      const dir = await store.open({ baseDn: base, schema: testSchema, masterKey: randomBytes(32), create: true });
      try {
        const dn = `cn=x,${base}`;
        await dir.add(dn, { objectClass: ['group'] });
        const bad: (() => Promise<unknown>)[] = [
          () => dir.add(`cn=y,${base}`, { objectClass: 'group' as never }),
          () => dir.add(`cn=y,${base}`, null as never),
          () => dir.add(`cn=y,${base}`, { objectClass: ['group'], description: [{ toString: () => 'x' }] as never }),
          () => dir.add(`cn=y,${base}`, { objectClass: ['group'], ['x'.repeat(100_000)]: ['1'] }),
          () => dir.modify(dn, [{ op: 'frobnicate', attr: 'member', values: [] } as never]),
          () => dir.modify(dn, [{ op: 'add', attr: 'description', values: 'x' as never }]),
          () => dir.modify(dn, [null as never]),
          () => dir.modify(dn, 'x' as never),
          () => dir.batch([{ kind: 'explode', dn } as never]),
          () => dir.batch('x' as never),
          () => dir.search({ base, scope: 'everything' as never }),
          () => dir.search({ base, scope: 'sub', filter: 42 as never }),
          () => dir.get(`cn=${'x'.repeat(5000)},${base}`),
        ];
        for (const run of bad) await assert.rejects(run(), (e: unknown) => e instanceof DirectoryError, run.toString());
        assert.deepEqual((await dir.get(dn))!.attrs.objectClass, ['group']);
      } finally {
        await dir.close();
        await store.remove();
      }
    });

    it('rebuilds its indexes when the schema starts indexing an attribute', async () => {
      const store = await backend.store();
      const key = randomBytes(32);
      const def = (indexed: boolean) =>
        mergeSchemas(coreSchema, {
          attributeTypes: [{ name: 'code', syntax: 'integer', indexed }],
          objectClasses: [{ name: 'thing', kind: 'structural', sup: 'top', must: ['cn'], may: ['code'] }],
        });
      let dir = await store.open({ baseDn: base, schema: def(false), masterKey: key, create: true });
      await dir.batch(Array.from({ length: 50 }, (_, i) => ({ kind: 'add' as const, dn: `cn=t${i},${base}`, attrs: { objectClass: ['thing'], code: [String(i * 3)] } })));
      await dir.close();
      dir = await store.open({ baseDn: base, schema: def(true), masterKey: key });
      try {
        assert.deepEqual((await dir.search({ base, scope: 'sub', filter: '(code=42)' })).entries.map((e) => e.dn), [`cn=t14,${base}`]);
        assert.equal((await dir.search({ base, scope: 'sub', filter: '(code>=120)' })).entries.length, 10);
        assert.equal(Number((await store.sql("SELECT count(*) AS n FROM idx WHERE attr = 'code'"))[0]!.n), 50, 'the index was filled');
      } finally {
        await dir.close();
        await store.remove();
      }
    });
  });
}
