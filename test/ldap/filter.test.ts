/**
 * LDAP filters in BER (src/ldap/filter.ts) against the directory's Filter:
 * the RFC 4515 examples through BER and back, approxMatch and extensible
 * matches, RFC 4526 absolute true/false evaluated by the directory's own
 * engine, malformed substrings and descriptions, the depth and item limits,
 * the assertion value hook, and the string form read back by the
 * directory's parser (seeded random filters).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MAX_FILTER_DEPTH, compileFilter, parseFilter, type Filter } from '../../src/directory/filter.js';
import { compileSchema, coreSchema } from '../../src/directory/schema.js';
import { BerReader, LdapDecodeError, LdapEncodeError, boolean, constructed, context, encodeBer, octetString, octets, sequence, utf8String, type BerPart } from '../../src/ldap/ber.js';
import { ResultCode } from '../../src/ldap/codes.js';
import { FilterTag, MAX_FILTER_ITEMS, decodeFilter, encodeFilter, formatFilter, type FilterDecodeOptions } from '../../src/ldap/filter.js';
import { prng } from '../support/prng.js';

const examples = JSON.parse(readFileSync(new URL('../directory/rfc4515-examples.json', import.meta.url), 'utf8')) as { accepted: { filter: string; ast: Filter }[] };

const decode = (bytes: Buffer, options?: FilterDecodeOptions): Filter => {
  const r = BerReader.of(bytes);
  const f = decodeFilter(r, options);
  r.finish('filter');
  return f;
};
const roundTrip = (f: Filter): Filter => decode(encodeBer(encodeFilter(f)));
const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');

function refusedWith(code: number, bytes: Buffer, why: RegExp, options?: FilterDecodeOptions): void {
  assert.throws(() => decode(bytes, options), (e) => e instanceof LdapDecodeError && e.resultCode === code && why.test(e.message), why.source);
}

const ava = (tag: number, attr: string, value: string | Buffer) => encodeBer(constructed(context(tag, true), [octetString(attr), octetString(value)]));
/** A MatchingRuleAssertion: [1] rule, [2] type, [3] value, [4] dnAttributes. */
function extensible(p: { rule?: string; type?: string; value: string; dn?: boolean }): Buffer {
  return encodeBer(
    constructed(context(FilterTag.extensibleMatch, true), [
      p.rule === undefined ? undefined : utf8String(context(1, false), p.rule),
      p.type === undefined ? undefined : utf8String(context(2, false), p.type),
      utf8String(context(3, false), p.value),
      p.dn === undefined ? undefined : boolean(p.dn, context(4, false)),
    ]),
  );
}
const substrings = (attr: string, ...parts: [number, string][]) =>
  encodeBer(constructed(context(FilterTag.substrings, true), [octetString(attr), sequence(...parts.map(([t, v]) => utf8String(context(t, false), v)))]));

describe('filter BER ↔ Filter', () => {
  it('every RFC 4515 example goes through BER unchanged', () => {
    for (const ex of examples.accepted) assert.deepEqual(roundTrip(parseFilter(ex.filter)), ex.ast, ex.filter);
  });

  it('hand-written BER of each item kind', () => {
    assert.deepEqual(decode(hex('a30b 0402636e 0405416c696365')), { kind: 'eq', attr: 'cn', value: 'Alice' });
    assert.deepEqual(decode(hex('870b 6f626a656374436c617373')), { kind: 'present', attr: 'objectClass' });
    assert.deepEqual(decode(hex('a50b 0403616765 040431303030')), { kind: 'ge', attr: 'age', value: '1000' });
    assert.deepEqual(decode(hex('a60a 0402636e 040462626262')), { kind: 'le', attr: 'cn', value: 'bbbb' });
    assert.deepEqual(decode(hex('a000')), { kind: 'and', items: [] });
    assert.deepEqual(decode(hex('a100')), { kind: 'or', items: [] });
    assert.deepEqual(decode(hex('a202 a000')), { kind: 'not', item: { kind: 'and', items: [] } });
  });

  it('approxMatch is read as equality', () => {
    assert.deepEqual(decode(ava(FilterTag.approxMatch, 'cn', 'Bob')), { kind: 'eq', attr: 'cn', value: 'Bob' });
  });

  it('extensibleMatch: only attr:=value (equality by the type’s own rule) is accepted', () => {
    assert.deepEqual(decode(extensible({ type: 'cn', value: 'Betty Rubble' })), { kind: 'eq', attr: 'cn', value: 'Betty Rubble' });
    assert.deepEqual(decode(extensible({ type: 'cn', value: 'x', dn: false })), { kind: 'eq', attr: 'cn', value: 'x' });
    for (const p of [
      { rule: 'caseExactMatch', type: 'cn', value: 'Fred Flintstone' },
      { rule: '2.4.6.8.10', type: 'sn', value: 'Barney Rubble', dn: true },
      { type: 'o', value: 'Ace Industry', dn: true },
      { rule: '1.2.3', value: 'Wilma Flintstone' },
      { rule: '1.2.840.113556.1.4.803', type: 'userAccountControl', value: '2' },
    ]) {
      refusedWith(ResultCode.unwillingToPerform, extensible(p), /extensible match .* is not supported/);
    }
    refusedWith(ResultCode.protocolError, extensible({ value: 'Dino' }), /neither a matching rule nor a type/);
    refusedWith(ResultCode.protocolError, encodeBer(constructed(context(FilterTag.extensibleMatch, true), [utf8String(context(2, false), 'cn')])), /value: missing/);
  });

  it('(&) and (|) are absolute TRUE and FALSE for the directory’s engine', () => {
    const schema = compileSchema(coreSchema);
    const entry = { attrs: { objectClass: ['top'], cn: ['x'] }, secrets: new Set<string>() };
    const truth = (bytes: string) => compileFilter(schema, decode(hex(bytes)))(entry);
    assert.equal(truth('a000'), true);
    assert.equal(truth('a100'), false);
    assert.equal(truth('a202a000'), false);
    assert.equal(truth('a202a100'), true);
    assert.equal(formatFilter(decode(hex('a000'))), '(&)');
    assert.equal(formatFilter(decode(hex('a100'))), '(|)');
  });

  it('substrings: order, emptiness and choices are checked', () => {
    assert.deepEqual(decode(substrings('cn', [0, 'a'], [1, 'b'], [1, 'c'], [2, 'd'])), { kind: 'sub', attr: 'cn', initial: 'a', any: ['b', 'c'], final: 'd' });
    assert.deepEqual(decode(substrings('cn', [2, 'd'])), { kind: 'sub', attr: 'cn', any: [], final: 'd' });
    for (const [parts, why] of [
      [[[1, 'b'], [0, 'a']], /initial must come first/],
      [[[0, 'a'], [0, 'a']], /initial must come first/],
      [[[2, 'a'], [1, 'b']], /nothing may follow final/],
      [[[2, 'a'], [2, 'b']], /nothing may follow final/],
      [[[1, '']], /empty substring/],
      [[], /empty list/],
      [[[3, 'x']], /unknown choice/],
    ] as [[number, string][], RegExp][]) {
      refusedWith(ResultCode.protocolError, substrings('cn', ...parts), why);
    }
  });

  it('attribute descriptions must have RFC 4512’s form; unknown choices and bad shapes are malformed', () => {
    for (const attr of ['', 'c n', '1cn', 'cn;', 'cn(', '1.', '01.2', 'ä']) {
      refusedWith(ResultCode.protocolError, ava(FilterTag.equalityMatch, attr, 'x'), /is not an attribute description/);
      refusedWith(ResultCode.protocolError, encodeBer(utf8String(context(FilterTag.present, false), attr)), /is not an attribute description/);
    }
    assert.deepEqual(decode(ava(FilterTag.equalityMatch, '2.5.4.3;lang-en', 'x')), { kind: 'eq', attr: '2.5.4.3;lang-en', value: 'x' });
    refusedWith(ResultCode.protocolError, hex('aa00'), /unknown choice/);
    refusedWith(ResultCode.protocolError, hex('8000'), /unknown choice/);
    refusedWith(ResultCode.protocolError, hex('a309 0402636e 0401 78 0400'), /unexpected octets/);
    refusedWith(ResultCode.protocolError, hex('a204 a000 a000'), /unexpected octets/);
    refusedWith(ResultCode.protocolError, hex('a200'), /missing/);
    refusedWith(ResultCode.protocolError, hex('a307 0402636e 2401 00'), /constructed|expected/);
  });

  it('assertion values: UTF-8 by default (else unwillingToPerform), or what the hook makes of the bytes', () => {
    refusedWith(ResultCode.unwillingToPerform, ava(FilterTag.equalityMatch, 'photo', Buffer.from([0xff, 0xd8])), /not valid UTF-8; this directory holds text values only/);
    assert.deepEqual(decode(ava(FilterTag.equalityMatch, 'bin', Buffer.from([0, 0, 0, 4]))), { kind: 'eq', attr: 'bin', value: '\u0000\u0000\u0000\u0004' });
    const hook = (attr: string, v: Buffer) => (attr === 'photo' ? v.toString('base64') : v.toString('utf8'));
    assert.deepEqual(decode(ava(FilterTag.equalityMatch, 'photo', Buffer.from([0xff, 0xd8])), { assertionValue: hook }), { kind: 'eq', attr: 'photo', value: '/9g=' });
    const subs = encodeBer(constructed(context(FilterTag.substrings, true), [octetString('photo'), sequence(octets(context(0, false), Buffer.from([0xff])))]));
    assert.deepEqual(decode(subs, { assertionValue: hook }), { kind: 'sub', attr: 'photo', initial: '/w==', any: [] });
  });

  it('an empty substring filter cannot be encoded', () => {
    assert.throws(() => encodeFilter({ kind: 'sub', attr: 'cn', any: [] }), LdapEncodeError);
  });
});

describe('limits', () => {
  const nest = (depth: number): Filter => {
    let f: Filter = { kind: 'present', attr: 'cn' };
    for (let i = 0; i < depth; i++) f = i % 2 ? { kind: 'not', item: f } : { kind: 'and', items: [f] };
    return f;
  };
  const wide = (n: number): Filter => ({ kind: 'or', items: Array.from({ length: n - 1 }, (_, i) => ({ kind: 'eq', attr: 'uid', value: `u${i}` })) });

  it('depth: the directory’s MAX_FILTER_DEPTH by default, configurable', () => {
    assert.deepEqual(roundTrip(nest(MAX_FILTER_DEPTH)), nest(MAX_FILTER_DEPTH));
    refusedWith(ResultCode.adminLimitExceeded, encodeBer(encodeFilter(nest(MAX_FILTER_DEPTH + 1))), /nested deeper than 32/);
    refusedWith(ResultCode.adminLimitExceeded, encodeBer(encodeFilter(nest(5))), /nested deeper than 4/, { maxDepth: 4 });
  });

  it('a depth bomb fails without walking it', () => {
    // 100,000 nested NOTs around a presence test, lengths in long form
    let inner: BerPart = encodeBer(utf8String(context(FilterTag.present, false), 'cn'));
    const parts: Buffer[] = [];
    let size = (inner as Buffer).length;
    for (let i = 0; i < 100_000; i++) {
      const head = Buffer.from([0xa2, 0x84, 0, 0, 0, 0]);
      head.writeUInt32BE(size, 2);
      parts.push(head);
      size += 6;
    }
    inner = Buffer.concat([...parts.reverse(), inner as Buffer]);
    refusedWith(ResultCode.adminLimitExceeded, inner, /nested deeper than 32/);
  });

  it('items: MAX_FILTER_ITEMS by default, configurable; 100,000 items fail early', () => {
    assert.equal(MAX_FILTER_ITEMS, 1024);
    assert.equal((roundTrip(wide(MAX_FILTER_ITEMS)) as { items: Filter[] }).items.length, MAX_FILTER_ITEMS - 1);
    refusedWith(ResultCode.adminLimitExceeded, encodeBer(encodeFilter(wide(MAX_FILTER_ITEMS + 1))), /more than 1024 items/);
    refusedWith(ResultCode.adminLimitExceeded, encodeBer(encodeFilter(wide(11))), /more than 10 items/, { maxItems: 10 });
    const huge = encodeBer(encodeFilter(wide(100_000)));
    let values = 0;
    const counting = (_attr: string, v: Buffer) => (values++, v.toString());
    refusedWith(ResultCode.adminLimitExceeded, huge, /more than 1024 items/, { assertionValue: counting });
    assert.equal(values, MAX_FILTER_ITEMS - 1, 'stops at the limit');
  });
});

describe('RFC 4515 string form', () => {
  it('escapes the specials and control characters; keeps other text', () => {
    assert.equal(formatFilter({ kind: 'eq', attr: 'cn', value: 'a*b(c)d\\e\u0000f\ng\u007fé€' }), '(cn=a\\2ab\\28c\\29d\\5ce\\00f\\0ag\\7fé€)');
    assert.equal(formatFilter({ kind: 'sub', attr: 'cn', initial: '*', any: ['a', ')'], final: 'z' }), '(cn=\\2a*a*\\29*z)');
    assert.equal(formatFilter({ kind: 'sub', attr: 'cn', any: ['x'] }), '(cn=*x*)');
    assert.equal(formatFilter({ kind: 'ge', attr: 'n', value: '1' }) + formatFilter({ kind: 'le', attr: 'n', value: '2' }), '(n>=1)(n<=2)');
  });

  it('the directory’s parser reads back what formatFilter writes; BER round trips (random filters, fixed seed)', () => {
    const rnd = prng(4515);
    const chars = ['a', 'b', 'Z', '0', ' ', '*', '(', ')', '\\', '\u0000', '\n', 'é', '€', '😀', '=', '~', '<', '>', '&', '|', '!'];
    const attrs = ['cn', 'uid', 'objectClass', '2.5.4.3', 'cn;lang-en', 'x-attr'];
    const text = (min: number) => Array.from({ length: min + rnd(6) }, () => chars[rnd(chars.length)]).join('');
    const gen = (depth: number): Filter => {
      const k = rnd(depth > 3 ? 5 : 8);
      const attr = attrs[rnd(attrs.length)]!;
      switch (k) {
        case 0:
          return { kind: 'eq', attr, value: text(0) };
        case 1:
          return { kind: rnd(2) ? 'ge' : 'le', attr, value: text(0) };
        case 2:
          return { kind: 'present', attr };
        case 3: {
          const f: Filter = { kind: 'sub', attr, any: Array.from({ length: rnd(3) }, () => text(1)) };
          if (rnd(2)) f.initial = text(1);
          if (rnd(2) || (f.any.length === 0 && f.initial === undefined)) f.final = text(1);
          return f;
        }
        case 4:
          return { kind: 'eq', attr, value: '' };
        case 5:
          return { kind: 'not', item: gen(depth + 1) };
        default:
          return { kind: k === 6 ? 'and' : 'or', items: Array.from({ length: rnd(4) }, () => gen(depth + 1)) };
      }
    };
    for (let i = 0; i < 2000; i++) {
      const f = gen(0);
      const s = formatFilter(f);
      assert.deepEqual(parseFilter(s), f, s);
      assert.deepEqual(roundTrip(f), f, s);
    }
  });

  it('a filter decoded from BER formats to its string and parses back', () => {
    const bytes = hex('a02f a40b 0403756964 3004 8002616c a315 040b6f626a656374436c617373 0406706572736f6e a209 a307 0402636e 040178');
    const f = decode(bytes);
    assert.equal(formatFilter(f), '(&(uid=al*)(objectClass=person)(!(cn=x)))');
    assert.deepEqual(parseFilter(formatFilter(f)), f);
  });
});
