/**
 * Distinguished names (RFC 4514): parsing with escapes, formatting round
 * trips, normalisation, and the tree relations derived from them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { escapeRdnValue, formatDn, isDescendant, isWithin, normalizeDn, parentDn, parseDn, rdnOf, sameDn } from '../../src/directory/dn.js';
import { DirectoryError } from '../../src/directory/types.js';

describe('DNs (RFC 4514)', () => {
  it('parses escapes, multi-valued RDNs and hex pairs', () => {
    assert.deepEqual(parseDn('cn=Smith\\, John+uid=js,ou=People,dc=Example,dc=Test'), [
      [
        { type: 'cn', value: 'Smith, John' },
        { type: 'uid', value: 'js' },
      ],
      [{ type: 'ou', value: 'People' }],
      [{ type: 'dc', value: 'Example' }],
      [{ type: 'dc', value: 'Test' }],
    ]);
    assert.equal(parseDn('cn=caf\\C3\\A9,dc=x')[0]![0]!.value, 'café');
    assert.equal(parseDn('cn=\\C3\\A9\\C3\\A9  ,dc=x')[0]![0]!.value, 'éé', 'unescaped trailing spaces are not part of the value');
    assert.equal(parseDn('cn=a\\ ,dc=x')[0]![0]!.value, 'a ', 'an escaped trailing space is');
    assert.equal(parseDn('cn=\\#1,dc=x')[0]![0]!.value, '#1');
    assert.equal(parseDn('cn=a\\2Cb,dc=x')[0]![0]!.value, 'a,b');
    assert.deepEqual(parseDn(''), [], 'the root DN');
    assert.deepEqual(parseDn('2.5.4.3=x'), [[{ type: '2.5.4.3', value: 'x' }]]);
    // '#' + BER (RFC 4514 §2.4): UTF8String, PrintableString, BMPString
    assert.deepEqual(parseDn('cn=#0C0463616665,dc=x')[0], [{ type: 'cn', value: 'cafe' }]);
    assert.deepEqual(parseDn('cn=#130141+uid=#0c026869')[0], [{ type: 'cn', value: 'A' }, { type: 'uid', value: 'hi' }]);
    assert.equal(parseDn('cn=#1E0400E90041')[0]![0]!.value, 'éA');
    assert.equal(normalizeDn('cn=#0C0463616665,dc=x'), normalizeDn('CN=Cafe,DC=x'));
  });

  it('round-trips values that need escaping', () => {
    for (const v of [' lead', 'trail ', '#hash', 'a,b+c"d\\e<f>g;h=i', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST', 'nul\u0000x', 'ünï ćødé', '  ', 'a#b']) {
      const dn = `cn=${escapeRdnValue(v)},dc=x`;
      assert.equal(parseDn(dn)[0]![0]!.value, v, JSON.stringify(v));
      assert.equal(formatDn(parseDn(dn)), dn);
      assert.equal(normalizeDn(normalizeDn(dn)), normalizeDn(dn), 'normalising is idempotent');
    }
    assert.equal(escapeRdnValue(' #a,b '), '\\ #a\\,b\\ ');
  });

  it('normalises types, values, spacing and AVA order', () => {
    assert.equal(normalizeDn('CN=A B , DC=Ex'), 'cn=a b,dc=ex');
    assert.equal(normalizeDn('uid=js+cn=x,dc=a'), normalizeDn('cn=X+uid=JS,dc=a'));
    assert.equal(normalizeDn('cn=a\\2cb,dc=x'), normalizeDn('CN=A\\,B,DC=X'));
    assert.ok(sameDn('cn=Ünï,dc=x', 'cn=ünï,DC=X'));
    assert.ok(!sameDn('cn=a,dc=x', 'cn=a,dc=y'));
  });

  it('derives parents, RDNs and descent', () => {
    assert.equal(parentDn('cn=a\\,b,ou=p,dc=x'), 'ou=p,dc=x');
    assert.equal(parentDn('dc=x'), '');
    assert.equal(rdnOf('cn=a\\,b+uid=u,ou=p,dc=x'), 'cn=a\\,b+uid=u');
    assert.throws(() => rdnOf(''), (e: DirectoryError) => e.code === 'invalidDNSyntax');
    assert.ok(isDescendant('cn=a,ou=P,dc=x', 'ou=p,DC=X'));
    assert.ok(isDescendant('cn=a,ou=p,dc=x', 'dc=x'));
    assert.ok(!isDescendant('ou=p,dc=x', 'ou=p,dc=x'), 'not its own descendant');
    assert.ok(!isDescendant('cn=a,ou=px,dc=x', 'ou=p,dc=x'));
    assert.ok(!isDescendant('cn=a\\,ou=p\\,dc=x', 'ou=p,dc=x'), 'an escaped comma is no separator');
    assert.equal(parseDn('cn=a=b,dc=x')[0]![0]!.value, 'a=b', 'an unescaped "=" belongs to the value');
    assert.ok(!isWithin(normalizeDn('cn=a\\,dc=x'), 'dc=x'));
    assert.ok(isWithin(normalizeDn('cn=a\\\\,dc=x'), 'dc=x'), 'an escaped backslash before a separator');
  });

  it('rejects malformed DNs with invalidDNSyntax', () => {
    const bad = ['cn', 'cn=', '=x', 'cn=a,', 'cn=a\\', 'cn=a\\zz', 'cn=a"b', 'cn=#04', '1bad=x', 'cn=a;b', 'cn=a<b', ',cn=a', 'cn=a,,dc=x', 'cn=\\ff', 'c n=x', 'cn=#', 'cn=#0C05636166', 'cn=#0C0463616665ZZ', 'cn=#020101', 'cn=#0C00', 'cn=#0C0263', 'cn=#1301FF', 'x'.repeat(5000) + '=y'];
    for (const dn of bad) assert.throws(() => parseDn(dn), (e: DirectoryError) => e instanceof DirectoryError && e.code === 'invalidDNSyntax', dn);
  });
});
