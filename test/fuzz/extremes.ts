/**
 * Inputs at and past the limits, which random mutation seldom reaches: deep
 * nesting, many elements, huge announced lengths, long runs of one token,
 * for each family of formats (DER, LDAP BER, JSON, XML, filter text, HTTP
 * headers, length-prefixed framing). The short fuzz run checks each once
 * against the targets of its family: refused or accepted cleanly, each
 * within the 1 s bound.
 */

/** `depth` constructed elements of identifier `id` around a NULL, with definite lengths. */
export function nested(depth: number, id = 0x30): Buffer {
  let b = Buffer.from([0x05, 0x00]);
  for (let i = 0; i < depth; i++) b = Buffer.concat([header(id, b.length), b]);
  return b;
}

/** One constructed element holding `n` copies of `element`. */
export function repeated(n: number, element: Buffer, id = 0x30): Buffer {
  const body = Buffer.concat(Array.from({ length: n }, () => element));
  return Buffer.concat([header(id, body.length), body]);
}

function header(id: number, len: number): Buffer {
  if (len < 0x80) return Buffer.from([id, len]);
  const octets: number[] = [];
  for (let l = len; l > 0; l = Math.floor(l / 256)) octets.unshift(l & 0xff);
  return Buffer.from([id, 0x80 | octets.length, ...octets]);
}

const hex = (h: string) => Buffer.from(h, 'hex');
const text = (s: string) => Buffer.from(s, 'utf8');

const der = (): Buffer[] => [
  nested(24),
  nested(25),
  nested(2000),
  nested(2000, 0xa0),
  nested(300, 0x60),
  repeated(19_000, hex('0500')),
  repeated(300_000, hex('0500')),
  hex('3084ffffffff'),
  hex('3084000000'),
  hex('30850100000000'),
  hex('3f8fffffff7f00'),
  hex('1f80808080800100'),
  Buffer.concat([hex('6084000fffff'), Buffer.alloc(64)]),
  repeated(5000, repeated(1, hex('0500'), 0xa0)),
];

const ber = (): Buffer[] => [
  nested(64, 0xa0),
  nested(5000, 0xa0),
  nested(5000, 0xa2),
  nested(5000, 0xa1),
  repeated(20_000, hex('870163')),
  repeated(2000, nested(3, 0xa2), 0xa0),
  hex('3088ffffffffffffffff'),
  hex('30887fffffffffffffff'),
  hex('3089010000000000000000'),
  hex('3080'),
  Buffer.concat([hex('3082ffff020101'), Buffer.alloc(100)]),
  Buffer.concat([hex('30840003ffff'), Buffer.alloc(300_000)]),
];

const json = (): Buffer[] => [
  text('['.repeat(100_000)),
  text('{"a":'.repeat(50_000)),
  text(`{"method":"ping","params":[[1${'0'.repeat(100_000)}],{}],"id":1}`),
  text(`{"method":"ping","params":[[${'1,'.repeat(300_000)}1],{}],"id":1}`),
  text(`{"method":"ping","params":[[],{${Array.from({ length: 60_000 }, (_, i) => `"k${i}":1`).join(',')}}],"id":1}`),
  text(`{"method":"ping","params":[["${'\\u0041'.repeat(160_000)}"],{}],"id":1}`),
  text(`{"method":"ping","params":[[${'{"__base64__":"QUFB"},'.repeat(20_000)}1],{}],"id":1}`),
];

const XML_HEAD = '<methodCall><methodName>ping</methodName><params><param><value><array><data>';
const XML_TAIL = '</data></array></value></param></params></methodCall>';
const xml = (): Buffer[] => [
  text(XML_HEAD + '<value><array><data>'.repeat(20_000)),
  text(XML_HEAD + '<value><int>1</int></value>'.repeat(12_000) + XML_TAIL),
  text(XML_HEAD + '<value><nil/></value>'.repeat(20_000) + XML_TAIL),
  text(XML_HEAD + `<value><string>${'&amp;'.repeat(190_000)}</string></value>` + XML_TAIL),
  text('<methodCall>' + '<!---->'.repeat(140_000) + '</methodCall>'),
  text('<methodCall ' + 'a="1" '.repeat(170_000) + '>'),
  text(`<methodCall a="${'<'.repeat(999_000)}"/>`),
  text('<methodCall><![CDATA[' + ']'.repeat(500_000)),
  text('<' + 'a'.repeat(900_000)),
];

const filterText = (): Buffer[] => [
  text('(&'.repeat(8000) + ')'.repeat(8000)),
  text('(!'.repeat(40) + '(a=b)' + ')'.repeat(40)),
  text(`(cn=${'*a'.repeat(8000)})`),
  text(`(cn=${'\\c3'.repeat(5000)})`),
  text(`(|${'(a=b)'.repeat(3000)})`),
  text(`(${'a'.repeat(16_000)}=*)`),
];

const headers = (): Buffer[] => [text('a=b;'.repeat(4000)), text('='.repeat(16_384)), text(';'.repeat(20_000)), text(`dirid_session=${'A'.repeat(16_000)}`)];

const tcp = (): Buffer[] => [hex('7fffffff'), hex('80000000'), hex('00000000'.repeat(10_000)), Buffer.concat([hex('00000fff'), Buffer.alloc(0xfff)]), hex('0000100000')];

const dn = (): Buffer[] => [text('cn=a,'.repeat(819)), text('cn=' + '\\2c'.repeat(1300)), text('+cn=a'.repeat(800)), text(`cn=#${'04'.repeat(2000)}`), text(' '.repeat(4096)), text('a'.repeat(5000))];

const FAMILY: Record<string, () => Buffer[]> = {
  'krb-kdc-req': der,
  'krb-kdc-rep': der,
  'krb-ap-req': der,
  'krb-error': der,
  'krb-padata': der,
  'krb-fast': der,
  'krb-pkinit': der,
  kpasswd: () => [...der(), hex('ffff0001000100'), Buffer.concat([hex('ffff0001fff0'), Buffer.alloc(0xffff - 6)])],
  'kdc-tcp-framing': tcp,
  'gss-token': der,
  spnego: der,
  'gss-per-message': () => [Buffer.concat([hex('050406ff0000001c'), Buffer.alloc(65_536)]), Buffer.concat([hex('0404ffffffffffff'), Buffer.alloc(65_536)]), hex('0504ffff')],
  'http-negotiate': der,
  'sasl-gssapi': der,
  'json-rpc': json,
  'xml-rpc': xml,
  'http-cookie': headers,
  'ldap-message': ber,
  'ldap-framing': ber,
  'ldap-filter': ber,
  'ldap-values': ber,
  'text-filter': filterText,
  'sasl-frames': tcp,
  'kdc-fx-cookie': () => [Buffer.alloc(65_536), Buffer.concat([Buffer.from('DIRID1'), Buffer.alloc(100_000)])],
  'session-cookie': headers,
  dn,
};

/** The extreme inputs for a target (none for a target of no known family). */
export const extremes = (target: string): Buffer[] => FAMILY[target]?.() ?? [];
