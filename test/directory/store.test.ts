/**
 * The directory store: DNs, filters, schema enforcement, referential
 * integrity, atomic batches, size and time limits, index use, and secrets
 * at rest.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import Database from 'better-sqlite3';
import { escapeRdnValue, normalizeDn, parseDn, formatDn } from '../../src/directory/dn.js';
import { matches, parseFilter } from '../../src/directory/filter.js';
import { compileSchema, coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import { DirectoryError, type Directory, type SchemaDefinition } from '../../src/directory/types.js';

const testSchema: SchemaDefinition = mergeSchemas(coreSchema, {
  attributeTypes: [
    { name: 'sn', syntax: 'string', indexed: true },
    { name: 'mail', syntax: 'string', indexed: true },
    { name: 'age', syntax: 'integer', singleValue: true },
    { name: 'serial', syntax: 'integer', singleValue: true, indexed: true },
    { name: 'token', syntax: 'exact', indexed: true },
    { name: 'manager', syntax: 'dn', singleValue: true, references: 'restrict', indexed: true },
    { name: 'member', syntax: 'dn', references: 'remove', indexed: true },
    { name: 'pin', syntax: 'secret', singleValue: true },
    { name: 'note', syntax: 'string', maxLength: 10 },
  ],
  objectClasses: [
    { name: 'person', kind: 'structural', sup: 'top', must: ['cn', 'sn'], may: ['mail', 'age', 'serial', 'token', 'manager', 'pin', 'note', 'uid'] },
    { name: 'group', kind: 'structural', sup: 'top', must: ['cn'], may: ['member'] },
    { name: 'extra', kind: 'auxiliary', must: [], may: ['description'] },
  ],
});

const code = async (p: Promise<unknown>): Promise<string> => {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DirectoryError, String(e));
    return e.code;
  }
  return assert.fail('expected a DirectoryError');
};

describe('DNs (RFC 4514)', () => {
  it('parses escapes and normalises case and spacing', () => {
    assert.deepEqual(parseDn('cn=Smith\\, John+uid=js,ou=People,dc=Example,dc=Test'), [
      [
        { type: 'cn', value: 'Smith, John' },
        { type: 'uid', value: 'js' },
      ],
      [{ type: 'ou', value: 'People' }],
      [{ type: 'dc', value: 'Example' }],
      [{ type: 'dc', value: 'Test' }],
    ]);
    assert.equal(normalizeDn('CN=A B , DC=Ex'), 'cn=a b,dc=ex');
    assert.equal(normalizeDn('uid=js+cn=x,dc=a'), normalizeDn('cn=X+uid=JS,dc=a'));
    assert.equal(parseDn('cn=caf\\C3\\A9,dc=x')[0]![0]!.value, 'café');
    assert.equal(parseDn('cn=\\C3\\A9\\C3\\A9  ,dc=x')[0]![0]!.value, 'éé');
  });
  it('round-trips values that need escaping', () => {
    for (const v of [' lead', 'trail ', '#hash', 'a,b+c"d\\e<f>g;h=i', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST']) {
      const dn = `cn=${escapeRdnValue(v)},dc=x`;
      assert.equal(parseDn(dn)[0]![0]!.value, v);
      assert.equal(formatDn(parseDn(dn)), dn);
    }
  });
  it('rejects malformed DNs', () => {
    for (const bad of ['cn', 'cn=', '=x', 'cn=a,', 'cn=a\\', 'cn=a\\zz', 'cn=a"b', 'cn=#04', '1bad=x']) {
      assert.throws(() => parseDn(bad), (e: DirectoryError) => e.code === 'invalidDNSyntax', bad);
    }
  });
});

describe('filters (RFC 4515)', () => {
  const schema = compileSchema(testSchema);
  const entry = { attrs: { objectClass: ['top', 'person'], cn: ['Babs Jensen'], sn: ['Jensen'], mail: ['babs@example.test'], age: ['42'], token: ['AbC'] }, secrets: new Set(['pin']) };
  const t = (f: string) => matches(schema, parseFilter(f), entry);
  it('parses and evaluates the RFC 4515 §4 examples and more', () => {
    assert.equal(t('(cn=Babs Jensen)'), true);
    assert.equal(t('(!(cn=Tim Howes))'), true);
    assert.equal(t('(&(objectClass=Person)(|(sn=Jensen)(cn=Babs J*)))'), true);
    assert.equal(t('(o=univ*of*mich*)'), false);
    assert.equal(t('(cn=*)'), true);
    assert.equal(t('(cn=b*s j*n)'), true);
    assert.equal(t('(cn=*jens*)'), true);
    assert.equal(t('(cn=*jens)'), false);
    assert.equal(t('(age>=40)'), true);
    assert.equal(t('(age>=100)'), false);
    assert.equal(t('(age<=9)'), false, 'numeric, not lexical, ordering');
    assert.equal(t('(token=abc)'), false, 'exact syntax is case-sensitive');
    assert.equal(t('(token=AbC)'), true);
    assert.equal(t('(pin=*)'), true, 'secrets answer presence');
    assert.equal(t('(pin=1234)'), false, 'but never equality');
    assert.equal(t('(cn=\\42abs Jensen)'), true);
    assert.equal(t('(sn~=jensen)'), true);
    assert.deepEqual(parseFilter('(seeAlso=)'), { kind: 'eq', attr: 'seeAlso', value: '' });
    assert.deepEqual(parseFilter('(cn=*\\2a*)'), { kind: 'sub', attr: 'cn', any: ['*'] });
  });
  it('rejects malformed filters with a position', () => {
    for (const bad of ['cn=x', '(cn=x', '(cn=x))', '(&(cn=x)', '(cn:dn:=x)', '(=x)', '(cn=\\zz)', '(|)', '(cn=a**b)', '((cn=x))', '(c n=x)', '('.repeat(40) + 'cn=x' + ')'.repeat(40)]) {
      assert.throws(() => parseFilter(bad), (e: DirectoryError) => e.code === 'filterError' && /position \d+/.test(e.message), bad);
    }
  });
});

describe('SQLite store', () => {
  let tmp: string;
  let dir: Directory;
  const base = 'dc=example,dc=test';
  const people = `ou=people,${base}`;
  const key = randomBytes(32);
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-store-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema: mergeSchemas(testSchema, { attributeTypes: [], objectClasses: [{ name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] }] }), masterKey: key, create: true });
    await dir.add(people, { objectClass: ['top', 'organizationalUnit'], ou: ['people'] });
  });
  after(async () => {
    await dir.close();
    rmSync(tmp, { recursive: true, force: true });
  });
  const person = (cn: string, extra: Record<string, string[]> = {}) => dir.add(`cn=${cn},${people}`, { objectClass: ['top', 'person'], sn: [cn.split(' ').pop()!], ...extra });

  it('adds, reads and keeps operational attributes', async () => {
    await person('Ann Smith', { mail: ['ann@example.test'], age: ['30'] });
    const e = await dir.get(`CN=ann smith,OU=People,${base}`);
    assert.ok(e);
    assert.equal(e.dn, `cn=Ann Smith,${people}`);
    assert.deepEqual(e.attrs.cn, ['Ann Smith'], 'the RDN value is added to the entry');
    assert.match(e.attrs.entryUUID![0]!, /^[0-9a-f-]{36}$/);
    assert.match(e.attrs.createTimestamp![0]!, /^\d{14}Z$/);
    assert.deepEqual((await dir.get(`cn=Ann Smith,${people}`, ['commonName']))!.attrs, { cn: ['Ann Smith'] });
  });

  it('enforces the schema', async () => {
    assert.equal(await code(person('Ann Smith')), 'entryAlreadyExists');
    assert.equal(await code(dir.add(`cn=x,ou=nowhere,${base}`, { objectClass: ['person'], sn: ['x'] })), 'noSuchObject');
    assert.equal(await code(dir.add(`cn=x,${people}`, { objectClass: ['person'] })), 'objectClassViolation');
    assert.equal(await code(dir.add(`cn=x,${people}`, { objectClass: ['extra'] })), 'objectClassViolation');
    assert.equal(await code(dir.add(`cn=x,${people}`, { objectClass: ['person', 'group'], sn: ['x'] })), 'objectClassViolation');
    assert.equal(await code(person('x', { description: ['not allowed'] })), 'objectClassViolation');
    assert.equal(await code(person('x', { bogus: ['1'] })), 'undefinedAttributeType');
    assert.equal(await code(person('x', { age: ['1', '2'] })), 'constraintViolation');
    assert.equal(await code(person('x', { age: ['old'] })), 'invalidAttributeSyntax');
    assert.equal(await code(person('x', { note: ['much too long here'] })), 'constraintViolation');
    assert.equal(await code(person('x', { mail: ['a@x', 'A@X'] })), 'attributeOrValueExists');
    assert.equal(await code(person('x', { entryUUID: ['forged'] })), 'constraintViolation');
    const dn = `cn=Ann Smith,${people}`;
    assert.equal(await code(dir.modify(dn, [{ op: 'add', attr: 'age', values: ['31'] }])), 'constraintViolation');
    assert.equal(await code(dir.modify(dn, [{ op: 'add', attr: 'MAIL', values: ['ANN@example.test'] }])), 'attributeOrValueExists');
    assert.equal(await code(dir.modify(dn, [{ op: 'delete', attr: 'mail', values: ['other@x'] }])), 'noSuchAttribute');
    assert.equal(await code(dir.modify(dn, [{ op: 'delete', attr: 'sn' }])), 'objectClassViolation');
    assert.equal(await code(dir.modify(dn, [{ op: 'replace', attr: 'cn', values: ['Other'] }])), 'constraintViolation');
    await dir.modify(dn, [
      { op: 'add', attr: 'objectClass', values: ['extra'] },
      { op: 'add', attr: 'description', values: ['now allowed'] },
    ]);
    assert.deepEqual((await dir.get(dn))!.attrs.description, ['now allowed']);
    assert.equal(await code(dir.delete(people)), 'notAllowedOnNonLeaf');
  });

  it('keeps references intact: restrict, remove, and renames', async () => {
    const boss = `cn=Boss Man,${people}`;
    await person('Boss Man');
    await person('Wor Ker', { manager: [boss] });
    assert.equal(await code(person('Lost One', { manager: [`cn=nobody,${people}`] })), 'referenceTargetMissing');
    await dir.add(`cn=team,${base}`, { objectClass: ['top', 'group'], member: [boss, `cn=Wor Ker,${people}`] });
    const before = await dir.get(boss);
    assert.equal(await code(dir.delete(boss)), 'referenced');
    assert.deepEqual(await dir.get(boss), before, 'a refused delete changes nothing');
    assert.deepEqual((await dir.get(`cn=team,${base}`))!.attrs.member!.length, 2);
    const newDn = await dir.rename(boss, 'cn=Big Boss');
    assert.equal(newDn, `cn=Big Boss,${people}`);
    assert.deepEqual((await dir.get(`cn=Wor Ker,${people}`))!.attrs.manager, [newDn]);
    assert.ok((await dir.get(`cn=team,${base}`))!.attrs.member!.includes(newDn));
    assert.deepEqual((await dir.get(newDn))!.attrs.cn, ['Big Boss']);
    const found = await dir.search({ base, scope: 'sub', filter: `(manager=CN=big boss,ou=people,${base})` });
    assert.equal(found.entries.length, 1, 'the reference index follows the rename');
    await dir.delete(`cn=Wor Ker,${people}`);
    assert.deepEqual((await dir.get(`cn=team,${base}`))!.attrs.member, [newDn], "'remove' references are dropped");
    await dir.delete(newDn);
    assert.equal((await dir.get(`cn=team,${base}`))!.attrs.member, undefined);
  });

  it('renames subtrees', async () => {
    await dir.add(`ou=sub,${base}`, { objectClass: ['top', 'organizationalUnit'] });
    await dir.add(`cn=Deep One,ou=sub,${base}`, { objectClass: ['top', 'person'], sn: ['One'] });
    await dir.add(`cn=g2,${base}`, { objectClass: ['top', 'group'], member: [`cn=Deep One,ou=sub,${base}`] });
    await dir.rename(`ou=sub,${base}`, 'ou=moved');
    assert.ok(await dir.get(`cn=Deep One,ou=moved,${base}`));
    assert.equal(await dir.get(`cn=Deep One,ou=sub,${base}`), null);
    assert.deepEqual((await dir.get(`cn=g2,${base}`))!.attrs.member, [`cn=Deep One,ou=moved,${base}`]);
    assert.equal(await code(dir.rename(`ou=moved,${base}`, 'ou=people')), 'entryAlreadyExists');
  });

  it('applies a batch atomically', async () => {
    const count = async () => (await dir.search({ base, scope: 'sub', filter: '(sn=Batch*)' })).entries.length;
    assert.equal(await code(dir.batch([
      { kind: 'add', dn: `cn=Batch A,${people}`, attrs: { objectClass: ['person'], sn: ['BatchA'] } },
      { kind: 'add', dn: `cn=Batch B,${people}`, attrs: { objectClass: ['person'], sn: ['BatchB'] } },
      { kind: 'modify', dn: `cn=Batch A,${people}`, mods: [{ op: 'add', attr: 'age', values: ['1', '2'] }] },
    ])), 'constraintViolation');
    assert.equal(await count(), 0);
  });

  it('searches with scopes, size limits and time limits, index and scan alike', async () => {
    const ops = [];
    for (let i = 0; i < 3000; i++) {
      ops.push({ kind: 'add' as const, dn: `cn=User ${i},${people}`, attrs: { objectClass: ['person'], sn: [`Family${i % 37}`], serial: [String(i)], token: [`T${i % 5}`], mail: [`u${i}@example.test`] } });
    }
    await dir.batch(ops);
    assert.equal((await dir.search({ base: people, scope: 'base' })).entries.length, 1);
    assert.equal((await dir.search({ base, scope: 'one', filter: '(objectClass=person)' })).entries.length, 0);
    const sized = await dir.search({ base, scope: 'sub', filter: '(sn=family3*)', sizeLimit: 10 });
    assert.equal(sized.entries.length, 10);
    assert.equal(sized.truncated, true);
    assert.equal(sized.limit, 'size');
    const exact = await dir.search({ base, scope: 'sub', filter: '(sn=family3)', sizeLimit: 0 });
    assert.equal(exact.truncated, false);
    assert.equal(exact.entries.length, Math.ceil((3000 - 3) / 37));
    // the index path (sn is indexed) and the scan path (inside a NOT) agree on random filters
    const rnd = (n: number) => Math.floor(Math.random() * n);
    for (let k = 0; k < 25; k++) {
      const f = [
        `(&(|(sn=family${rnd(37)})(mail=u${rnd(300)}*)(serial=${rnd(3000)}))(token=T${rnd(5)}))`,
        `(&(mail=*${rnd(3000)}@example*)(objectClass=person))`,
        `(|(sn=*mily${rnd(37)})(mail=u${rnd(30)}*test))`,
        `(mail=*${rnd(10)}*)`,
      ][k % 4]!;
      const viaIndex = (await dir.search({ base, scope: 'sub', filter: f })).entries.map((e) => e.dn).sort();
      // an OR with an unindexed term cannot use indexes: the store scans every entry
      const viaScan = (await dir.search({ base, scope: 'sub', filter: `(|${f}(description=no-entry-has-this))` })).entries.map((e) => e.dn).sort();
      assert.deepEqual(viaIndex, viaScan, f);
    }
    // a time limit cuts a long scan short and says so
    const slowFilter = `(|${Array.from({ length: 200 }, (_, i) => `(description=*nothing${i}*)`).join('')})`;
    const timed = await dir.search({ base, scope: 'sub', filter: slowFilter, timeLimit: 0.001 as number });
    assert.equal(timed.truncated, true);
    assert.equal(timed.limit, 'time');
    assert.equal((await dir.search({ base, scope: 'sub', filter: '(serial>=2990)' })).entries.length, 10);
    assert.equal(await code(dir.search({ base, scope: 'sub', filter: '(bad' })), 'filterError');
    assert.equal(await code(dir.search({ base: `ou=none,${base}`, scope: 'sub' })), 'noSuchObject');
  });

  it('encrypts secrets, binds them to entry and attribute, and never returns them', async () => {
    const dn = `cn=Secret Keeper,${people}`;
    await person('Secret Keeper', { pin: ['pin-plaintext-98765'] });
    assert.equal((await dir.get(dn))!.attrs.pin, undefined);
    assert.equal((await dir.get(dn, ['pin']))!.attrs.pin, undefined);
    assert.deepEqual(await dir.readSecret(dn, 'pin'), ['pin-plaintext-98765']);
    assert.equal((await dir.search({ base, scope: 'sub', filter: '(pin=*)' })).entries.length, 1);
    await dir.modify(dn, [{ op: 'replace', attr: 'pin', values: ['pin-rotated-11111'] }]);
    assert.deepEqual(await dir.readSecret(dn, 'pin'), ['pin-rotated-11111']);
    await person('Other Entry');
    // move the sealed value to another entry: it must not decrypt there
    await dir.close();
    const raw = new Database(join(tmp, 'db'));
    const sealed = (raw.prepare('SELECT secrets FROM entries WHERE dn = ?').get(dn) as { secrets: string }).secrets;
    raw.prepare('UPDATE entries SET secrets = ? WHERE dn = ?').run(sealed, `cn=Other Entry,${people}`);
    raw.close();
    for (const f of ['db', 'db-wal']) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(tmp, f));
      } catch {
        continue;
      }
      assert.equal(bytes.indexOf('pin-plaintext-98765'), -1, f);
      assert.equal(bytes.indexOf('pin-rotated-11111'), -1, f);
    }
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema: mergeSchemas(testSchema, { attributeTypes: [], objectClasses: [{ name: 'organizationalUnit', kind: 'structural', sup: 'top', must: ['ou'], may: [] }] }), masterKey: key });
    assert.deepEqual(await dir.readSecret(dn, 'pin'), ['pin-rotated-11111']);
    assert.equal(await code(dir.readSecret(`cn=Other Entry,${people}`, 'pin')), 'unwillingToPerform');
    const wrongKey = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema: testSchema, masterKey: randomBytes(32) });
    assert.equal(await code(wrongKey.readSecret(dn, 'pin')), 'unwillingToPerform');
    await wrongKey.close();
  });
});
