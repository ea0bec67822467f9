/**
 * Pieces of the Search operation (src/ldap-server/search.ts) tested on
 * their own: the bound of a filter's text length, which spares writing the
 * text of every filter only to measure it, never falls below the length of
 * the text (values full of characters that escaping triples included), and
 * the attributes a selection asks the directory for.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Filter } from '../../src/directory/filter.js';
import { formatFilter } from '../../src/ldap/filter.js';
import { directoryAttributes, filterTextBound } from '../../src/ldap-server/search.js';
import { selection } from '../../src/ldap-server/attributes.js';
import { compileSchema, coreSchema } from '../../src/directory/schema.js';

describe('search: filter text bound', () => {
  it('is at least the length of the text, and equals it for values that all need escaping', () => {
    const worst = '*()\\\u0000\u001f\u007f';
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const value = () => Array.from({ length: rnd(12) }, () => (rnd(3) === 0 ? worst[rnd(worst.length)] : 'aÄ€😀x'[rnd(5)])).join('');
    const leaf = (): Filter => {
      const attr = ['cn', 'uid', 'member', 'x-attr;lang-en'][rnd(4)]!;
      switch (rnd(5)) {
        case 0:
          return { kind: 'eq', attr, value: value() };
        case 1:
          return { kind: rnd(2) ? 'ge' : 'le', attr, value: value() };
        case 2:
          return { kind: 'present', attr };
        default:
          return { kind: 'sub', attr, any: Array.from({ length: rnd(3) }, value), ...(rnd(2) ? { initial: value() } : {}), ...(rnd(2) ? { final: value() } : {}) };
      }
    };
    const tree = (depth: number): Filter => {
      if (depth === 0 || rnd(3) === 0) return leaf();
      const k = rnd(3);
      if (k === 2) return { kind: 'not', item: tree(depth - 1) };
      return { kind: k ? 'and' : 'or', items: Array.from({ length: rnd(4) }, () => tree(depth - 1)) };
    };
    for (let i = 0; i < 2000; i++) {
      const f = tree(4);
      assert.ok(filterTextBound(f) >= formatFilter(f).length, formatFilter(f));
    }
    const all: Filter = { kind: 'and', items: [{ kind: 'eq', attr: 'cn', value: '***' }, { kind: 'sub', attr: 'cn', initial: '((', any: ['\\'], final: ')' }, { kind: 'present', attr: 'sn' }, { kind: 'ge', attr: 'uid', value: '*' }] };
    assert.equal(filterTextBound(all), formatFilter(all).length);
  });
});

describe('search: what the directory is asked for', () => {
  const schema = compileSchema(coreSchema);
  it('everything for * or no list, the named ones in their canonical spelling, + for operational ones, nothing for 1.1', () => {
    const ask = (...names: string[]) => directoryAttributes(selection(schema, names));
    assert.equal(ask(), undefined);
    assert.equal(ask('*'), undefined);
    assert.equal(ask('*', '+'), undefined);
    assert.deepEqual(ask('commonName', 'UID'), ['cn', 'uid']);
    assert.deepEqual(ask('cn', '+'), ['cn', '+']);
    assert.deepEqual(ask('+'), ['+']);
    assert.deepEqual(ask('1.1'), ['1.1']);
    assert.deepEqual(ask('noSuchAttribute'), ['1.1']);
  });
});
