/**
 * Schema definitions: the checks compileSchema makes on a definition, the
 * compiled look-ups, and the per-syntax normalisation and index keys.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalTime, compareValues, compileSchema, coreSchema, indexKey, mergeSchemas, normalizeValue, validSyntax } from '../../src/directory/schema.js';
import type { AttributeType, ObjectClass, SchemaDefinition } from '../../src/directory/types.js';

const withCore = (attributeTypes: AttributeType[], objectClasses: ObjectClass[] = []): SchemaDefinition =>
  mergeSchemas(coreSchema, { attributeTypes, objectClasses });

describe('schema definitions', () => {
  it('compiles the core schema with aliases and inherited must/may', () => {
    const s = compileSchema(withCore([{ name: 'sn', syntax: 'string' }], [{ name: 'person', kind: 'structural', sup: 'top', must: ['commonName', 'sn'], may: ['description'] }]));
    assert.equal(s.attribute('COMMONNAME')?.name, 'cn');
    assert.equal(s.attribute('objectclass')?.name, 'objectClass');
    assert.equal(s.objectClass('PERSON')?.name, 'person');
    const { must, may } = s.allowed(['person']);
    assert.deepEqual([...must].sort(), ['cn', 'objectClass', 'sn']);
    assert.deepEqual([...may], ['description']);
    assert.equal(s.attribute('nosuch'), undefined);
  });

  it('refuses broken definitions', () => {
    const broken: [string, SchemaDefinition][] = [
      ['duplicate attribute', withCore([{ name: 'CN', syntax: 'string' }])],
      ['alias clashing with a name', withCore([{ name: 'x', aliases: ['uid'], syntax: 'string' }])],
      ['unknown syntax', withCore([{ name: 'x', syntax: 'blob' as never }])],
      ['bad name', withCore([{ name: '1x', syntax: 'string' }])],
      ['references on a string', withCore([{ name: 'x', syntax: 'string', references: 'remove' }])],
      ['indexed secret', withCore([{ name: 'x', syntax: 'secret', indexed: true }])],
      ['bad maxLength', withCore([{ name: 'x', syntax: 'string', maxLength: 0 }])],
      ['missing core', { attributeTypes: [{ name: 'cn', syntax: 'string' }], objectClasses: [] }],
      ['duplicate class', withCore([], [{ name: 'TOP', kind: 'abstract', must: [], may: [] }])],
      ['unknown kind', withCore([], [{ name: 'c', kind: 'weird' as never, must: [], may: [] }])],
      ['unknown superior', withCore([], [{ name: 'c', kind: 'structural', sup: 'nope', must: [], may: [] }])],
      ['unknown attribute in must', withCore([], [{ name: 'c', kind: 'structural', must: ['nope'], may: [] }])],
      [
        'cycle',
        withCore([], [
          { name: 'a', kind: 'structural', sup: 'b', must: [], may: [] },
          { name: 'b', kind: 'structural', sup: 'a', must: [], may: [] },
        ]),
      ],
      [
        'structural below auxiliary',
        withCore([], [
          { name: 'aux', kind: 'auxiliary', must: [], may: [] },
          { name: 's', kind: 'structural', sup: 'aux', must: [], may: [] },
        ]),
      ],
    ];
    for (const [why, def] of broken) assert.throws(() => compileSchema(def), /^Error: schema: /, why);
  });

  it('refuses uniqueness rules the write path could not enforce', () => {
    const attrs: AttributeType[] = [
      { name: 'badge', syntax: 'string', indexed: true },
      { name: 'no', syntax: 'integer', singleValue: true, indexed: true },
      { name: 'code', syntax: 'string', singleValue: true, indexed: true },
      { name: 'note', syntax: 'string' },
      { name: 'pin', syntax: 'secret' },
    ];
    const withRules = (unique: SchemaDefinition['unique']): SchemaDefinition => ({ ...withCore(attrs, [{ name: 'numbered', kind: 'auxiliary', must: [], may: ['no'] }]), unique });
    const key = (a: string[], extra: object = {}) => ({ attrs: a, refusal: '{holder}', ...extra });
    assert.doesNotThrow(() =>
      compileSchema(
        withRules([
          { name: 'badge', keys: [key(['BADGE'], { refusal: 'badge {badge} is held by {holder}' })] },
          { name: 'pair', keys: [key(['code', 'no']), key(['code', 'no'], { objectClass: 'numbered' })] },
        ]),
      ),
    );
    const broken: [string, SchemaDefinition][] = [
      ['unknown attribute', withRules([{ name: 'r', keys: [key(['nope'])] }])],
      ['not indexed', withRules([{ name: 'r', keys: [key(['note'])] }])],
      ['secret', withRules([{ name: 'r', keys: [key(['pin'])] }])],
      ['operational', withRules([{ name: 'r', keys: [key(['entryUUID'])] }])],
      ['multi-valued in a compound key', withRules([{ name: 'r', keys: [key(['badge', 'no'])] }])],
      ['an attribute twice in one key', withRules([{ name: 'r', keys: [key(['no', 'no'])] }])],
      ['keys of different syntaxes', withRules([{ name: 'r', keys: [key(['no']), key(['code'])] }])],
      ['keys of different lengths', withRules([{ name: 'r', keys: [key(['no']), key(['no', 'code'])] }])],
      ['unknown object class', withRules([{ name: 'r', keys: [key(['no'], { objectClass: 'nope' })] }])],
      ['refusal naming another attribute', withRules([{ name: 'r', keys: [key(['no'], { refusal: '{code} by {holder}' })] }])],
      ['no keys', withRules([{ name: 'r', keys: [] }])],
      ['no name', withRules([{ name: '', keys: [key(['no'])] }])],
      ['a rule twice', withRules([{ name: 'r', keys: [key(['no'])] }, { name: 'r', keys: [key(['code'])] }])],
    ];
    for (const [why, def] of broken) assert.throws(() => compileSchema(def), /^Error: schema: (uniqueness|a uniqueness)/, why);
  });
});

describe('syntaxes', () => {
  it('normalises and validates per syntax', () => {
    assert.equal(normalizeValue('string', '  Babs   JENSEN '), 'babs jensen');
    // the same folding whatever the white space: tabs, line ends, no-break and other Unicode spaces become one space
    for (const [v, want] of [['Babs Jensen', 'babs jensen'], ['posixGroup', 'posixgroup'], ['a\tb', 'a b'], ['a\u00a0b', 'a b'], ['a\u2003b', 'a b'], ['a \nb', 'a b'], [' a', 'a'], ['a ', 'a'], ['\ta', 'a'], ['a\u3000', 'a'], ['', ''], [' ', ''], ['A  B', 'a b'], ['ÄÖ Ü', 'äö ü']] as const) {
      assert.equal(normalizeValue('string', v), want, JSON.stringify(v));
      assert.equal(normalizeValue('string', v), v.trim().replace(/\s+/g, ' ').toLowerCase(), JSON.stringify(v));
    }
    assert.equal(normalizeValue('exact', ' AbC'), ' AbC');
    assert.equal(normalizeValue('integer', '-007'), '-7');
    assert.throws(() => normalizeValue('integer', ''));
    assert.throws(() => normalizeValue('integer', '1e3'));
    assert.equal(normalizeValue('dn', 'CN=X , DC=Y'), 'cn=x,dc=y');
    assert.equal(normalizeValue('time', '20261122103000.123+0130'), '20261122090000Z');
    assert.equal(canonicalTime('202611221030Z'), '20261122103000Z');
    for (const t of ['20261322103000Z', '20260230103000Z', '20261122243000Z', '2026112210300Z', '20261122103000']) assert.equal(canonicalTime(t), undefined, t);
    assert.ok(validSyntax('time', '20261122103000Z'));
    assert.ok(!validSyntax('time', '20261122103000+0000'), 'stored times are canonical UTC');
    assert.ok(validSyntax('boolean', 'TRUE') && !validSyntax('boolean', 'true'));
    assert.ok(validSyntax('binary', 'AAEC') && !validSyntax('binary', 'AAE'));
    assert.ok(!validSyntax('string', '') && !validSyntax('string', 'a\u0000'));
    assert.ok(!validSyntax('dn', 'cn') && validSyntax('dn', 'cn=a'));
  });

  it('orders integers numerically, in values and in index keys alike', () => {
    const numbers = ['-1000', '-999', '-10', '-9', '-1', '0', '1', '9', '10', '99', '100', '123456789012345678901234567890'];
    for (let i = 0; i < numbers.length; i++) {
      for (let j = 0; j < numbers.length; j++) {
        const byValue = Math.sign(compareValues('integer', numbers[i]!, numbers[j]!));
        const a = indexKey('integer', numbers[i]!);
        const b = indexKey('integer', numbers[j]!);
        assert.equal(Math.sign(a < b ? -1 : a > b ? 1 : 0), byValue, `${numbers[i]} vs ${numbers[j]}`);
        assert.equal(byValue, Math.sign(i - j));
      }
    }
  });

  it('orders strings by code point, as SQLite orders UTF-8', () => {
    const sorted = ['a', 'b', '\u00e9', '\uffee', '\u{1f600}'];
    for (let i = 1; i < sorted.length; i++) {
      assert.equal(compareValues('string', sorted[i - 1]!, sorted[i]!), -1);
      assert.equal(Buffer.compare(Buffer.from(sorted[i - 1]!), Buffer.from(sorted[i]!)), -1);
    }
  });
});
