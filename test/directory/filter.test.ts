/**
 * RFC 4515 filters: the RFC's own examples (data file), malformed input with
 * positions, limits, and three-valued evaluation with each syntax's matching.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileFilter, escapeFilterValue, evaluate, matches, parseFilter, FALSE, TRUE, UNDEFINED, MAX_FILTER_DEPTH } from '../../src/directory/filter.js';
import { compileSchema, coreSchema, mergeSchemas } from '../../src/directory/schema.js';
import { DirectoryError, type SchemaDefinition } from '../../src/directory/types.js';

const examples = JSON.parse(readFileSync(new URL('./rfc4515-examples.json', import.meta.url), 'utf8')) as {
  accepted: { filter: string; ast: unknown }[];
  extensible: string[];
};

const schema = compileSchema(
  mergeSchemas(coreSchema, {
    attributeTypes: [
      { name: 'sn', aliases: ['surname'], syntax: 'string' },
      { name: 'age', syntax: 'integer', singleValue: true },
      { name: 'token', syntax: 'exact' },
      { name: 'manager', syntax: 'dn' },
      { name: 'locked', syntax: 'boolean' },
      { name: 'expires', syntax: 'time' },
      { name: 'pin', syntax: 'secret' },
    ],
    objectClasses: [],
  } satisfies SchemaDefinition),
);

const filterError = (e: unknown) => e instanceof DirectoryError && e.code === 'filterError' && /position \d+/.test(e.message);

describe('filter parser', () => {
  it('parses every RFC 4515 §4 example to the expected tree', () => {
    assert.ok(examples.accepted.length >= 11);
    for (const ex of examples.accepted) assert.deepEqual(parseFilter(ex.filter), ex.ast, ex.filter);
  });

  it('refuses the extensible-match examples with filterError', () => {
    assert.equal(examples.extensible.length, 6);
    for (const f of examples.extensible) assert.throws(() => parseFilter(f), filterError, f);
  });

  it('refuses malformed filters and says where', () => {
    const bad = [
      '', 'cn=x', '(cn=x', '(cn=x))', '(&(cn=x)', '(=x)', '(cn=\\zz)', '(cn=\\4)', '(cn=a**b)', '((cn=x))', '(c n=x)',
      '(cn=a(b)', '(cn>=a*)', '(cn~=*)', '(!)', '(!(a=b)(c=d))', '(cn=\\ff)', '(cn=x)(cn=y)', '(1.2.=x)', '(-cn=x)', '(cn;=x)',
      '(cn=a\u0000b)', ')', '(',
    ];
    for (const f of bad) assert.throws(() => parseFilter(f), filterError, JSON.stringify(f));
    assert.throws(() => parseFilter('(cn=abc\\zz)'), /position 7/);
    assert.throws(() => parseFilter('(cn=ok)junk'), /position 7/);
  });

  it('limits depth and length', () => {
    const nest = (d: number) => '(!'.repeat(d) + '(cn=x)' + ')'.repeat(d);
    assert.doesNotThrow(() => parseFilter(nest(MAX_FILTER_DEPTH)));
    assert.throws(() => parseFilter(nest(MAX_FILTER_DEPTH + 1)), filterError);
    assert.throws(() => parseFilter(nest(100_000)), filterError, 'no stack overflow on absurd nesting');
    assert.throws(() => parseFilter(`(cn=${'a'.repeat(20_000)})`), filterError);
  });

  it('accepts options, OIDs, absolute true/false and surrounding spaces', () => {
    assert.deepEqual(parseFilter('(cn;lang-en=x)'), { kind: 'eq', attr: 'cn;lang-en', value: 'x' });
    assert.deepEqual(parseFilter('(2.5.4.3>=m)'), { kind: 'ge', attr: '2.5.4.3', value: 'm' });
    assert.deepEqual(parseFilter('(&)'), { kind: 'and', items: [] });
    assert.deepEqual(parseFilter('(|)'), { kind: 'or', items: [] });
    assert.deepEqual(parseFilter(' (cn=x) '), { kind: 'eq', attr: 'cn', value: 'x' });
    assert.deepEqual(parseFilter('(cn~=smith)'), { kind: 'eq', attr: 'cn', value: 'smith' });
  });

  it('escapes values so that they parse back to themselves', () => {
    for (const v of ['a*b', '(x)', 'back\\slash', 'nul\u0000', 'é ü', '']) {
      assert.deepEqual(parseFilter(`(cn=${escapeFilterValue(v)})`), { kind: 'eq', attr: 'cn', value: v });
    }
  });
});

describe('filter evaluation', () => {
  const entry = {
    attrs: {
      objectClass: ['top', 'person'],
      cn: ['Babs Jensen', 'Barbara  Jensen'],
      sn: ['Jensen'],
      age: ['42'],
      token: ['AbC'],
      manager: ['CN=Boss,DC=Example'],
      locked: ['FALSE'],
      expires: ['20261122103000Z'],
    },
    secrets: new Set(['pin']),
  };
  const t = (f: string) => matches(schema, parseFilter(f), entry);
  const v = (f: string) => evaluate(schema, parseFilter(f), entry);

  it('tests an equality on many values by their normalised forms, kept per list and made again when the list changes', () => {
    const managers = Array.from({ length: 12 }, (_, i) => `CN=Boss${i},DC=Example`);
    const many = { attrs: { manager: managers }, secrets: new Set<string>() };
    const test = compileFilter(schema, parseFilter('(manager=cn=boss7, dc=example)'));
    assert.equal(test(many), true);
    assert.equal(test(many), true, 'again, from the kept forms');
    assert.equal(compileFilter(schema, parseFilter('(manager=cn=boss12,dc=example)'))(many), false);
    managers.push('cn=BOSS12,dc=example');
    assert.equal(compileFilter(schema, parseFilter('(manager=cn=boss12,dc=example)'))(many), true, 'a value added since');
    managers.splice(0, managers.length, ...managers.map((m) => m.replace('Boss', 'Chief')));
    assert.equal(test(many), false, 'values replaced since');
  });

  it('matches strings case-insensitively with insignificant spaces', () => {
    assert.equal(t('(cn=babs jensen)'), true);
    assert.equal(t('(cn=barbara jensen)'), true, 'inner spaces collapse');
    assert.equal(t('(commonName=BABS JENSEN)'), true, 'aliases');
    assert.equal(t('(CN=Babs Jensen)'), true, 'attribute names are case-insensitive');
    assert.equal(t('(cn=Tim Howes)'), false);
    assert.equal(t('(&(objectClass=Person)(|(sn=Jensen)(cn=Babs J*)))'), true);
    assert.equal(t('(surname~=jensen)'), true);
  });

  it('matches substrings in order without overlap', () => {
    assert.equal(t('(cn=b*s j*n)'), true);
    assert.equal(t('(cn=*jens*)'), true);
    assert.equal(t('(cn=*jens)'), false);
    assert.equal(t('(cn=*en*en)'), true);
    assert.equal(t('(sn=jen*sen)'), true);
    assert.equal(t('(sn=jens*sen)'), false, 'initial and final may not overlap');
    assert.equal(t('(cn=*sen*bab*)'), false, 'any parts in order');
  });

  it('uses exact, numeric, chronological, DN and boolean matching', () => {
    assert.equal(t('(token=abc)'), false, 'exact syntax is case-sensitive');
    assert.equal(t('(token=AbC)'), true);
    assert.equal(t('(token=A*)'), true);
    assert.equal(t('(age>=40)'), true);
    assert.equal(t('(age>=100)'), false);
    assert.equal(t('(age<=9)'), false, 'numeric, not lexical, ordering');
    assert.equal(t('(age=042)'), true);
    assert.equal(t('(expires>=20261122103000Z)'), true);
    assert.equal(t('(expires<=20261122113000+0100)'), true, 'offsets are converted to UTC');
    assert.equal(t('(expires>=20261122103001Z)'), false);
    assert.equal(t('(manager=cn=boss, dc=example)'), true, 'DNs compare normalised');
    assert.equal(t('(locked=false)'), true);
  });

  it('is three-valued: unknown attributes and impossible assertions are Undefined, also under NOT', () => {
    assert.equal(v('(nosuch=x)'), UNDEFINED);
    assert.equal(v('(!(nosuch=x))'), UNDEFINED);
    assert.equal(t('(!(nosuch=x))'), false);
    assert.equal(v('(age=old)'), UNDEFINED);
    assert.equal(v('(!(age=old))'), UNDEFINED);
    assert.equal(v('(age=*4*)'), UNDEFINED, 'integers have no substring rule');
    assert.equal(v('(locked>=TRUE)'), UNDEFINED, 'booleans have no ordering rule');
    assert.equal(v('(|(nosuch=x)(cn=babs jensen))'), TRUE);
    assert.equal(v('(&(nosuch=x)(cn=nobody))'), FALSE);
    assert.equal(v('(&(nosuch=x)(cn=babs jensen))'), UNDEFINED);
    assert.equal(v('(!(description=x))'), TRUE, 'a known attribute without values is FALSE, so NOT is TRUE');
    assert.equal(v('(&)'), TRUE);
    assert.equal(v('(|)'), FALSE);
  });

  it('lets secrets answer presence only', () => {
    assert.equal(t('(pin=*)'), true);
    assert.equal(matches(schema, parseFilter('(pin=*)'), { attrs: entry.attrs, secrets: new Set() }), false);
    for (const f of ['(pin=1234)', '(pin=12*)', '(pin>=0)', '(!(pin=1234))']) {
      assert.throws(() => compileFilter(schema, parseFilter(f)), (e: DirectoryError) => e.code === 'filterError' && !e.message.includes('1234'), f);
    }
  });
});
