/**
 * Distinguished names (RFC 4514): parsing with escapes, formatting round
 * trips, normalisation, and the tree relations derived from them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { escapeRdnValue, formatDn, isChildOf, isDescendant, isWithin, normalizeDn, normalizeParsed, parentDn, parseDn, rdnOf, sameDn } from '../../src/directory/dn.js';
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
    // one RDN below, and no deeper
    const users = normalizeDn('cn=users,cn=accounts,dc=x');
    assert.ok(isChildOf(normalizeDn('uid=Alice,cn=users,cn=accounts,dc=x'), users));
    assert.ok(!isChildOf(users, users), 'not its own child');
    assert.ok(!isChildOf(normalizeDn('cn=a,uid=alice,cn=users,cn=accounts,dc=x'), users), 'a grandchild');
    assert.ok(!isChildOf(normalizeDn('uid=alice,cn=xusers,cn=accounts,dc=x'), users));
    assert.ok(isChildOf(normalizeDn('uid=a\\,b,cn=users,cn=accounts,dc=x'), users), 'an escaped comma inside the RDN');
    assert.ok(!isChildOf(normalizeDn('cn=a\\\\,uid=b,cn=users,cn=accounts,dc=x'), users), 'an escaped backslash, then a separator: two RDNs');
    assert.ok(isChildOf('dc=x', ''), 'a child of the root');
  });

  it('rejects malformed DNs with invalidDNSyntax', () => {
    const bad = ['cn', 'cn=', '=x', 'cn=a,', 'cn=a\\', 'cn=a\\zz', 'cn=a"b', 'cn=#04', '1bad=x', 'cn=a;b', 'cn=a<b', ',cn=a', 'cn=a,,dc=x', 'cn=\\ff', 'c n=x', 'cn=#', 'cn=#0C05636166', 'cn=#0C0463616665ZZ', 'cn=#020101', 'cn=#0C00', 'cn=#0C0263', 'cn=#1301FF', 'x'.repeat(5000) + '=y'];
    for (const dn of bad) assert.throws(() => parseDn(dn), (e: DirectoryError) => e instanceof DirectoryError && e.code === 'invalidDNSyntax', dn);
  });
});

describe('normalizeDn fast path', () => {
  it('gives what the full parse gives, for plain DNs and for every DN the fast path must leave alone', () => {
    const fixed = [
      'uid=Alice,cn=users,cn=accounts,dc=Example,dc=TEST',
      'UID=user5,CN=Users,DC=x',
      'cn=a b,dc=x',
      'cn= a,dc=x',
      'cn=a ,dc=x',
      'cn=a\\,b,dc=x',
      'cn=#41,dc=x',
      'cn=a+sn=b,dc=x',
      'sn=b+cn=a,dc=x',
      'cn=Ünïcödé,dc=x',
      '2.5.4.3=a,dc=x',
      'cn=a;b,dc=x',
      'cn="q",dc=x',
      'cn=a\\00,dc=x',
      'krbPrincipalName=HTTP/Web.Example.Test@EXAMPLE.TEST,cn=services,dc=x',
      `cn=${'x'.repeat(5000)},dc=x`,
    ];
    // random DNs over an alphabet rich in the characters that matter
    const alphabet = 'aaaZZZ000999--__..@@//' + ' =,+"\\<>;#\u00e9\u0000\t';
    let seed = 12345;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    const random = Array.from({ length: 3000 }, () => {
      const rdns = Array.from({ length: 1 + rnd(3) }, () => `${['cn', 'UID', 'dc', 'o'][rnd(4)]}=${Array.from({ length: 1 + rnd(6) }, () => alphabet[rnd(alphabet.length)]).join('')}`);
      return rdns.join(',');
    });
    let compared = 0;
    for (const dn of [...fixed, ...random]) {
      let slow: string | Error;
      try {
        slow = normalizeParsed(dn);
      } catch (e) {
        slow = e as Error;
      }
      if (slow instanceof Error) {
        assert.throws(() => normalizeDn(dn), `${JSON.stringify(dn)}: the full parse refuses it, the fast path must too`);
        continue;
      }
      assert.equal(normalizeDn(dn), slow, JSON.stringify(dn));
      compared++;
    }
    assert.ok(compared > 500, `only ${compared} DNs compared`);
  });
});
