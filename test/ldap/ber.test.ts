/**
 * The LDAP BER reader and writer (src/ldap/ber.ts) element by element:
 * length forms, the BOOLEAN and INTEGER rules, primitive-only strings,
 * UTF-8, tags, nesting and trailing octets, and the writer's minimal
 * lengths.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BerReader, LdapDecodeError, MAX_BER_DEPTH, Tag, boolean, constructed, encodeBer, integer, nul, octetString, sequence } from '../../src/ldap/ber.js';

const hex = (h: string) => Buffer.from(h.replace(/\s+/g, ''), 'hex');
const reader = (h: string) => BerReader.of(hex(h));

describe('BER reader', () => {
  it('short, long, non-minimal long and eight-octet lengths', () => {
    for (const h of ['0403616263', '048103616263', '04840000000361626 3', '0488000000000000000361626 3']) {
      const r = reader(h);
      assert.equal(r.octets(Tag.octetString, 'x').toString(), 'abc', h);
      r.finish('x');
    }
    const long = Buffer.concat([hex('04820100'), Buffer.alloc(256, 0x61)]);
    assert.equal(BerReader.of(long).octets(Tag.octetString, 'x').length, 256);
  });

  it('refuses indefinite, reserved, truncated and overlong lengths', () => {
    for (const [h, why] of [
      ['2480 0400 0000', /indefinite/],
      ['0480', /indefinite/],
      ['04ff', /length of 127 octets/],
      ['0489000000000000000001', /length of 9 octets/],
      ['04', /truncated before its length/],
      ['0482 01', /truncated length/],
      ['0405 6162', /past the end/],
      ['0484ffffffff 00', /past the end/],
      ['0488ffffffffffffffff 00', /past the end/],
      ['', /missing/],
    ] as const) {
      assert.throws(() => reader(h).octets(Tag.octetString, 'x'), (e) => e instanceof LdapDecodeError && why.test(e.message), h);
    }
  });

  it('a child cannot reach past its parent', () => {
    const r = reader('3003 0405 616263 6465');
    assert.throws(() => r.sequence(Tag.sequence, 's').octets(Tag.octetString, 'x'), /past the end/);
  });

  it('OCTET STRING is primitive only; tags above 30 are refused', () => {
    assert.throws(() => reader('2405 0403616263').octets(Tag.octetString, 'x'), /constructed encoding where primitive is required/);
    assert.throws(() => reader('1f2000').octets(Tag.octetString, 'x'), /tag numbers above 30/);
    assert.throws(() => reader('0c03616263').octets(Tag.octetString, 'x'), /expected \[UNIVERSAL 4\], got \[UNIVERSAL 12\]/);
    assert.throws(() => reader('1000').sequence(Tag.sequence, 'x'), /primitive encoding where constructed is required/);
  });

  it('BOOLEAN: one octet, any non-zero value is TRUE', () => {
    assert.equal(reader('010100').boolean(Tag.boolean, 'b'), false);
    for (const v of ['01', '7f', '80', 'ff']) assert.equal(reader(`0101${v}`).boolean(Tag.boolean, 'b'), true);
    for (const h of ['0100', '01020000', '2103010100']) assert.throws(() => reader(h).boolean(Tag.boolean, 'b'), LdapDecodeError);
  });

  it('INTEGER: two’s complement, redundant sign octets tolerated, safe range and bounds enforced', () => {
    const int = (h: string, min = -(2 ** 53), max = 2 ** 53) => reader(h).integer(Tag.integer, 'i', min, max);
    assert.equal(int('020100'), 0);
    assert.equal(int('02017f'), 127);
    assert.equal(int('02020080'), 128);
    assert.equal(int('0201ff'), -1);
    assert.equal(int('020180'), -128);
    assert.equal(int('0204 7fffffff'), 2147483647);
    assert.equal(int('0205 0000000005'), 5);
    assert.equal(int('0203 ffff80'), -128);
    assert.equal(int('0207 1fffffffffffff'), Number.MAX_SAFE_INTEGER);
    assert.equal(int('0207 e0000000000001'), Number.MIN_SAFE_INTEGER);
    for (const h of ['0200', '0207 20000000000000', '0208 0100000000000000', '0209 00ffffffffffffffff', '0207 e0000000000000']) {
      assert.throws(() => int(h), /out of range|empty integer/, h);
    }
    assert.throws(() => int('0201ff', 0, 10), /-1 out of range \[0, 10\]/);
    assert.throws(() => int('02020100', 0, 10), /256 out of range/);
    assert.equal(reader('0a0102').integer(Tag.enumerated, 'e', 0, 2), 2);
    assert.throws(() => reader('0a0102').integer(Tag.integer, 'e', 0, 2), /expected/);
  });

  it('strings must be UTF-8', () => {
    assert.equal(reader('0402c384').string(Tag.octetString, 's'), 'Ä');
    for (const h of ['0401ff', '0402c328', '0403eda080', '0402c0af']) assert.throws(() => reader(h).string(Tag.octetString, 's'), /not valid UTF-8/, h);
  });

  it('NULL is empty; finish() refuses trailing octets', () => {
    reader('0500').null(Tag.null, 'n');
    assert.throws(() => reader('050100').null(Tag.null, 'n'), /NULL must be empty/);
    const r = reader('0500 0500');
    r.null(Tag.null, 'n');
    assert.throws(() => r.finish('m'), /2 unexpected octets/);
  });

  it('nesting deeper than MAX_BER_DEPTH is refused', () => {
    let bytes: Buffer = hex('0500');
    for (let i = 0; i < MAX_BER_DEPTH + 2; i++) bytes = encodeBer(sequence(bytes));
    let r = BerReader.of(bytes);
    assert.throws(() => {
      for (;;) r = r.sequence(Tag.sequence, 's');
    }, /nested deeper than 64/);
  });

  it('skipRest walks elements without looking inside', () => {
    const r = reader('3009 0400 3003 0a0100 0100');
    const s = r.sequence(Tag.sequence, 's');
    s.skipRest('s');
    assert.ok(s.atEnd);
    assert.throws(() => reader('3004 0400 0402').sequence(Tag.sequence, 's').skipRest('s'), /past the end/);
  });
});

describe('BER writer', () => {
  it('minimal lengths at the form boundaries', () => {
    for (const [n, head] of [
      [0, '0400'],
      [127, '047f'],
      [128, '048180'],
      [255, '0481ff'],
      [256, '04820100'],
      [65535, '0482ffff'],
      [65536, '0483010000'],
      [16777216, '048401000000'],
    ] as const) {
      const out = encodeBer(octetString(Buffer.alloc(n)));
      assert.equal(out.subarray(0, head.length / 2).toString('hex'), head, String(n));
      assert.equal(out.length, head.length / 2 + n);
    }
  });

  it('integers in the fewest octets, TRUE as 0xFF, NULL empty, text as UTF-8', () => {
    for (const [v, h] of [
      [0, '020100'],
      [127, '02017f'],
      [128, '02020080'],
      [-1, '0201ff'],
      [-128, '020180'],
      [-129, '0202ff7f'],
      [2147483647, '02047fffffff'],
      [Number.MAX_SAFE_INTEGER, '02071fffffffffffff'],
    ] as const) {
      const out = encodeBer(integer(Tag.integer, v));
      assert.equal(out.toString('hex'), h);
      assert.equal(BerReader.of(out).integer(Tag.integer, 'i', -(2 ** 53), 2 ** 53), v);
    }
    assert.equal(encodeBer(boolean(true)).toString('hex'), '0101ff');
    assert.equal(encodeBer(boolean(false)).toString('hex'), '010100');
    assert.equal(encodeBer(nul()).toString('hex'), '0500');
    assert.equal(encodeBer(octetString('Ä€')).toString('hex'), '0405c384e282ac');
    assert.equal(encodeBer(constructed(Tag.set, [octetString('a'), undefined, octetString('b')])).toString('hex'), '3106040161040162');
  });
});
