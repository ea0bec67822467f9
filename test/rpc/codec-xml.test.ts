/**
 * XML-RPC codec: bodies written by CPython's xmlrpc.client (test/data/rpc-codec),
 * the value forms of the XML-RPC specification, the fault form, and malformed
 * or hostile bodies (DOCTYPE, entities, deep nesting), each refused with a
 * CodecError whose reason and message say what is wrong.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeXmlRequest, decodeXmlResponse, encodeXmlRequest, encodeXmlResponse } from '../../src/rpc/codec/xml.js';
import { CodecError, toPlain, type CodecFailure, type WireValue } from '../../src/rpc/codec/types.js';
import { throwsCodec } from '../support/codec-expect.js';

const vector = (name: string) => readFileSync(new URL(`../data/rpc-codec/${name}`, import.meta.url));

const call = (params: string, method = 'ping') => `<?xml version="1.0"?><methodCall><methodName>${method}</methodName><params>${params}</params></methodCall>`;
const arg = (value: string) => call(`<param><value><array><data>${value}</data></array></value></param>`);
const one = (value: string): WireValue => decodeXmlRequest(arg(value)).args[0]!;

describe('XML-RPC: bodies from CPython xmlrpc.client', () => {
  it('a call with every value type, CR LF normalized as XML requires', () => {
    const r = decodeXmlRequest(vector('python-user-show-call.xml'));
    assert.equal(r.method, 'user_show');
    assert.equal(r.id, null);
    assert.deepEqual(toPlain(r.args), [
      'alice',
      7,
      -2147483648,
      true,
      null,
      1.5,
      Buffer.from([0, 1, 255]),
      new Date(Date.UTC(2026, 10, 22, 11, 30, 5)),
      { k: [1, 'a & <b>\n'] },
      [],
      {},
      'üñí ✓ 😀',
    ]);
    assert.deepEqual(toPlain(r.options), { all: true, version: '2.254' });
  });

  it('a call with an empty <params> means no arguments and no options', () => {
    const r = decodeXmlRequest(vector('python-ping-call.xml'));
    assert.equal(r.method, 'ping');
    assert.deepEqual(r.args, []);
    assert.deepEqual(toPlain(r.options), {});
  });

  it('a fault, and a success response', () => {
    assert.deepEqual(decodeXmlResponse(vector('python-fault.xml')), {
      result: null,
      error: { code: 4001, name: 'Fault', message: 'x: IdP reference not found', data: {} },
      id: null,
      principal: null,
      version: '',
    });
    assert.deepEqual(decodeXmlResponse(vector('python-response.xml')), { result: { cn: ['x'] }, error: null, id: null, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' });
  });
});

describe('XML-RPC: what we write', () => {
  it('a success response is one struct {result, principal, version}', () => {
    assert.equal(
      encodeXmlResponse({ result: { cn: ['x'] }, error: null, id: 1, principal: null, version: '0.1.0' }),
      "<?xml version='1.0' encoding='UTF-8'?>\n<methodResponse><params><param><value><struct>" +
        '<member><name>result</name><value><struct><member><name>cn</name><value><array><data><value><string>x</string></value></data></array></value></member></struct></value></member>' +
        '<member><name>principal</name><value><nil/></value></member>' +
        '<member><name>version</name><value><string>0.1.0</string></value></member>' +
        '</struct></value></param></params></methodResponse>\n',
    );
  });

  it('an error is a fault with faultCode, faultString, error_name and error_data', () => {
    const xml = encodeXmlResponse({ result: null, error: { code: 4001, name: 'NotFound', message: 'a < b & c', data: { key: 'x' } }, id: null, principal: 'a@B', version: '1' });
    assert.ok(
      xml.startsWith(
        "<?xml version='1.0' encoding='UTF-8'?>\n<methodResponse><fault><value><struct>" +
          '<member><name>faultCode</name><value><int>4001</int></value></member>' +
          '<member><name>faultString</name><value><string>a &lt; b &amp; c</string></value></member>' +
          '<member><name>error_name</name><value><string>NotFound</string></value></member>' +
          '<member><name>error_data</name><value><struct><member><name>key</name><value><string>x</string></value></member></struct></value></member>',
      ),
      xml,
    );
    assert.ok(xml.endsWith('</struct></value></fault></methodResponse>\n'));
  });

  it('escapes markup and writes CR as a character reference; integers past 32 bits as <i8>; dates in the spec form', () => {
    const xml = encodeXmlRequest({ method: 'ping', args: ['<a>&]]>\r', 2 ** 31, -(2 ** 31), new Date(Date.UTC(2026, 0, 2, 3, 4, 5))], options: {}, id: null });
    assert.ok(xml.includes('<string>&lt;a&gt;&amp;]]&gt;&#13;</string>'), xml);
    assert.ok(xml.includes('<i8>2147483648</i8>') && xml.includes('<int>-2147483648</int>'));
    assert.ok(xml.includes('<dateTime.iso8601>20260102T03:04:05</dateTime.iso8601>'));
  });
});

describe('XML-RPC: value forms', () => {
  it('bare text in <value> is a string, kept exactly; empty values are empty strings', () => {
    assert.equal(one('<value>  two  spaces </value>'), '  two  spaces ');
    assert.equal(one('<value></value>'), '');
    assert.equal(one('<value/>'), '');
    assert.equal(one('<value><string/></value>'), '');
    assert.equal(one('<value><string>\n\t x \n</string></value>'), '\n\t x \n');
  });

  it('whitespace and comments around a typed value are ignored', () => {
    assert.equal(one('<value>\n  <int> 42 </int>\n  <!-- c --></value>'), 42);
  });

  it('the five predefined entities, numeric references and CDATA', () => {
    assert.equal(one('<value><string>&lt;&gt;&amp;&quot;&apos;&#65;&#x1F600;&#13;&#x9;</string></value>'), '<>&"\'A😀\r\t');
    assert.equal(one('<value><string>a<![CDATA[<&amp;>]]>b</string></value>'), 'a<&amp;>b');
    assert.equal(one('<value>x<!-- hidden -->y</value>'), 'xy');
  });

  it('integers: int, i4, i8, signs', () => {
    assert.deepEqual(decodeXmlRequest(arg('<value><int>+7</int></value><value><i4>-2147483648</i4></value><value><i8>9007199254740991</i8></value><value><i8>-9007199254740991</i8></value>')).args, [7, -2147483648, 2 ** 53 - 1, -(2 ** 53 - 1)]);
  });

  it('booleans, doubles, nil, base64 with line breaks, dates with and without separators', () => {
    const args = decodeXmlRequest(
      arg(
        '<value><boolean>0</boolean></value><value><double>-1.25</double></value><value><double>.5</double></value><value><double>1e-7</double></value>' +
          '<value><nil/></value><value><nil></nil></value><value><base64>\nAAH/\nAAH/\n</base64></value>' +
          '<value><dateTime.iso8601>2026-11-22T11:30:05Z</dateTime.iso8601></value><value><dateTime.iso8601>20261122T113005</dateTime.iso8601></value>',
      ),
    ).args;
    assert.deepEqual(args, [false, -1.25, 0.5, 1e-7, null, null, Buffer.from([0, 1, 255, 0, 1, 255]), new Date(Date.UTC(2026, 10, 22, 11, 30, 5)), new Date(Date.UTC(2026, 10, 22, 11, 30, 5))]);
  });

  it('attributes are ignored, even with > inside quotes', () => {
    assert.equal(one('<value a="x>y"><int b=\'>\'>1</int></value>'), 1);
  });
});

describe('XML-RPC: malformed and hostile requests are CodecErrors that say what is wrong', () => {
  const cases: [string, string | Buffer, CodecFailure, RegExp][] = [
    ['empty body', '', 'parse', /invalid XML at line 1: the body is not one well-formed element/],
    ['truncated in a tag', call('<param><value><array><data></data></array></value></param>').slice(0, 60), 'parse', /invalid XML at position 49: unterminated end tag/],
    ['truncated between tags', call('<param><value><array><data></data></array></value></param>').slice(0, 91), 'parse', /invalid XML at line 1, column 1: the body is not one well-formed element/],
    ['not XML', '{"method":"ping"}', 'parse', /invalid XML at line 1, column 1/],
    ['mismatched tags', '<methodCall><methodName>ping</methodCall></methodName>', 'parse', /invalid XML at line 1, column 29: a tag is malformed, unclosed or does not match its start tag/],
    ['wrong root', '<methodResponse><params/></methodResponse>', 'envelope', /must be one <methodCall> element/],
    ['two roots', '<methodCall/><methodCall/>', 'envelope', /must be one <methodCall> element/],
    ['no methodName', '<methodCall><params/></methodCall>', 'envelope', /must start with <methodName>/],
    ['no params', '<methodCall><methodName>ping</methodName></methodCall>', 'envelope', /<methodName> and then <params>/],
    ['a bad method name', call('', 'Idp-Add'), 'envelope', /methodName must be a command name/],
    ['markup in methodName', '<methodCall><methodName>pi<b/>ng</methodName><params/></methodCall>', 'envelope', /unexpected <b> inside <methodName>/],
    ['text in params', call('hello'), 'envelope', /unexpected text in <params>/],
    ['three params', call('<param><value><array><data/></array></value></param><param><value><struct/></value></param><param><value/></param>'), 'envelope', /at most two <param>/],
    ['arguments a struct', call('<param><value><struct/></value></param>'), 'envelope', /first <param> \(the arguments\) must be an <array>/],
    ['options an array', call('<param><value><array><data/></array></value></param><param><value><array><data/></array></value></param>'), 'envelope', /second <param> \(the options\) must be a <struct>/],
    ['a param without value', call('<param/>'), 'envelope', /<param> must hold exactly one <value>/],
    ['an unknown value type', arg('<value><blob>1</blob></value>'), 'value', /unknown value type <blob>/],
    ['a __proto__ element', arg('<value><__proto__>1</__proto__></value>'), 'parse', /invalid XML|unknown/],
    ['text beside a typed value', arg('<value>x<int>1</int></value>'), 'envelope', /unexpected text in <value>/],
    ['two typed values', arg('<value><int>1</int><int>2</int></value>'), 'envelope', /one typed value/],
    ['markup inside a string', arg('<value><string>a<b/></string></value>'), 'envelope', /unexpected <b> inside <string>/],
    ['an int that is not a number', arg('<value><int>12a</int></value>'), 'value', /invalid <int>/],
    ['an int with a fraction', arg('<value><int>1.0</int></value>'), 'value', /invalid <int>/],
    ['an int past 32 bits', arg('<value><int>2147483648</int></value>'), 'value', /<int> out of range: use <i8>/],
    ['an i4 past 32 bits', arg('<value><i4>-99999999999</i4></value>'), 'value', /invalid <i4>|out of range/],
    ['an i8 past 2^53', arg('<value><i8>9007199254740993</i8></value>'), 'value', /beyond ±\(2\^53 - 1\)/],
    ['an i8 of 20 digits', arg('<value><i8>12345678901234567890</i8></value>'), 'value', /invalid <i8>/],
    ['a boolean spelled out', arg('<value><boolean>true</boolean></value>'), 'value', /<boolean> must be 0 or 1/],
    ['a double NaN', arg('<value><double>NaN</double></value>'), 'value', /invalid <double>/],
    ['a double out of range', arg('<value><double>1e999</double></value>'), 'value', /invalid <double>/],
    ['a double with hex', arg('<value><double>0x10</double></value>'), 'value', /invalid <double>/],
    ['a nil with content', arg('<value><nil>x</nil></value>'), 'value', /<nil\/> must be empty/],
    ['bad base64', arg('<value><base64>!!!!</base64></value>'), 'value', /invalid base64/],
    ['unpadded base64', arg('<value><base64>AAH</base64></value>'), 'value', /invalid base64/],
    ['a date with a bad month', arg('<value><dateTime.iso8601>20261301T00:00:00</dateTime.iso8601></value>'), 'value', /out of range/],
    ['a date that does not exist', arg('<value><dateTime.iso8601>20250229T00:00:00</dateTime.iso8601></value>'), 'value', /does not exist/],
    ['a date in another form', arg('<value><dateTime.iso8601>yesterday</dateTime.iso8601></value>'), 'value', /expected YYYYMMDDTHH:MM:SS/],
    ['an array without data', arg('<value><array><value/></array></value>'), 'envelope', /<array> must hold exactly one <data>/],
    ['data holding a member', arg('<value><array><data><member/></data></array></value>'), 'envelope', /<data> may only hold <value>/],
    ['a struct holding a value', arg('<value><struct><value/></struct></value>'), 'envelope', /<struct> may only hold <member>/],
    ['a member without a name', arg('<value><struct><member><value/></member></struct></value>'), 'envelope', /one <name> and then one <value>/],
    ['a member with two values', arg('<value><struct><member><name>a</name><value/><value/></member></struct></value>'), 'envelope', /one <name> and then one <value>/],
    ['duplicate member names', arg('<value><struct><member><name>a</name><value/></member><member><name>a</name><value/></member></struct></value>'), 'value', /duplicate member "a"/],
    ['__proto__ as a member name', arg('<value><struct><member><name>__proto__</name><value><struct><member><name>polluted</name><value>1</value></member></struct></value></member></struct></value>'), 'value', /the key "__proto__" is not allowed/],
    ['constructor as an option', call('<param><value><array><data/></array></value></param><param><value><struct><member><name>constructor</name><value/></member></struct></value></param>'), 'value', /"constructor"/],
    ['a reserved member name', arg('<value><struct><member><name>__base64__</name><value/></member></struct></value>'), 'value', /reserved/],
    ['an empty member name', arg('<value><struct><member><name></name><value/></member></struct></value>'), 'value', /keys must be 1 to 256/],
    ['a string longer than allowed', arg(`<value>${'x'.repeat(256 * 1024 + 1)}</value>`), 'too-large', /longer than 262144/],
    ['billion laughs', '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><methodCall><methodName>ping</methodName><params><param><value><array><data><value>&lol2;</value></data></array></value></param></params></methodCall>', 'parse', /DOCTYPE, ENTITY and other declarations are not allowed/],
    ['XXE', '<?xml version="1.0"?><!DOCTYPE m [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><methodCall><methodName>ping</methodName><params><param><value><array><data><value>&xxe;</value></data></array></value></param></params></methodCall>', 'parse', /DOCTYPE/],
    ['a lower-case doctype', '<!doctype methodCall><methodCall/>', 'parse', /declarations are not allowed/],
    ['a bare ENTITY declaration', '<methodCall><!ENTITY x "y"></methodCall>', 'parse', /declarations are not allowed/],
    ['an undefined entity', arg('<value>&xxe;</value>'), 'parse', /unknown or malformed entity reference/],
    ['an HTML entity', arg('<value>&nbsp;</value>'), 'parse', /unknown or malformed entity reference/],
    ['a bare ampersand', arg('<value>a & b</value>'), 'parse', /unknown or malformed entity reference|invalid XML/],
    ['a reference to NUL', arg('<value>&#0;</value>'), 'parse', /names a character XML does not allow/],
    ['a reference to a surrogate', arg('<value>&#xD800;</value>'), 'parse', /names a character XML does not allow/],
    ['a reference past Unicode', arg('<value>&#x110000;</value>'), 'parse', /names a character XML does not allow/],
    ['a raw NUL byte', Buffer.from(arg('<value>a\u0000b</value>')), 'parse', /contains U\+0000 at position \d+, which XML does not allow/],
    ['a raw escape character', arg('<value>\u001b[31m</value>'), 'parse', /U\+001B/],
    ['U+FFFE', arg('<value>\ufffe</value>'), 'parse', /U\+FFFE/],
    ['invalid UTF-8', Buffer.concat([Buffer.from(arg('<value>')), Buffer.from([0xc3, 0x28]), Buffer.from('</value>')]), 'parse', /not valid UTF-8/],
    ['a declared encoding other than UTF-8', '<?xml version="1.0" encoding="ISO-8859-1"?><methodCall/>', 'parse', /must be UTF-8/],
    ['an unterminated comment', '<methodCall><!-- x', 'parse', /unterminated comment/],
    ['an unterminated CDATA section', arg('<value><![CDATA[x</value>'), 'parse', /unterminated CDATA/],
    ['10,000 nested values', call(`<param>${'<value><array><data>'.repeat(10_000)}${'</data></array></value>'.repeat(10_000)}</param>`), 'too-deep', /nested deeper than 32/],
    ['10,000 nested unknown elements', `<methodCall><methodName>${'<a>'.repeat(10_000)}${'</a>'.repeat(10_000)}</methodName></methodCall>`, 'too-deep', /nested deeper/],
    ['depth hidden behind closing tags in a comment', `<methodCall><!--${'</a>'.repeat(5000)}-->${'<a>'.repeat(5000)}${'</a>'.repeat(5000)}</methodCall>`, 'too-deep', /nested deeper/],
    ['50,000 empty elements', `<methodCall>${'<x/>'.repeat(50_000)}</methodCall>`, 'too-large', /more than 40016 XML elements/],
    // refused by the scan before any parse: the broken end would otherwise be the parser's error, after it built every value
    ['10,001 values, then broken XML', call(`<param><value><array><data>${'<value><i4>1</i4></value>'.repeat(10_001)}</data></array></value></param></params><oops`), 'too-large', /more than 10000 values in one document/],
  ];
  for (const [what, body, reason, message] of cases) {
    it(what, () => void throwsCodec(() => decodeXmlRequest(body), reason, message));
  }

  it('error messages do not quote the body', () => {
    for (const body of [arg('<value>hunter2<secret</value>'), arg('<value><string>hunter2</strin></value>'), arg('<value>&hunter2;</value>'), '<methodCall><methodName>hunter2'])
      try {
        decodeXmlRequest(body);
        assert.fail('accepted');
      } catch (e) {
        assert.ok(e instanceof CodecError, String(e));
        assert.doesNotMatch(e.message, /hunter2|secret/);
      }
  });

  it('no decoded body touches Object.prototype', () => {
    assert.throws(() => decodeXmlRequest(arg('<value><struct><member><name>__proto__</name><value><struct><member><name>polluted</name><value>1</value></member></struct></value></member></struct></value>')), CodecError);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('XML-RPC: the client checks the answer', () => {
  const response = (inner: string) => `<methodResponse>${inner}</methodResponse>`;
  const fault = (members: string) => response(`<fault><value><struct>${members}</struct></value></fault>`);
  const cases: [string, string, RegExp][] = [
    ['wrong root', '<methodCall/>', /must be one <methodResponse>/],
    ['empty', response(''), /one <params> or one <fault>/],
    ['params and fault', response('<params/><fault/>'), /one <params> or one <fault>/],
    ['no param', response('<params/>'), /exactly one <param>/],
    ['a payload that is not a struct', response('<params><param><value>x</value></param></params>'), /must be a <struct>/],
    ['a payload without version', response('<params><param><value><struct><member><name>result</name><value/></member><member><name>principal</name><value><nil/></value></member></struct></value></param></params>'), /no "version" member/],
    ['a fault that is not a struct', response('<fault><value>x</value></fault>'), /a fault must hold a <struct>/],
    ['a fault without faultCode', fault('<member><name>faultString</name><value>x</value></member>'), /faultCode must be an integer/],
    ['a fault with a text faultString', fault('<member><name>faultCode</name><value><int>1</int></value></member><member><name>faultString</name><value><int>2</int></value></member>'), /faultString must be a string/],
    ['a fault with error_data an array', fault('<member><name>faultCode</name><value><int>1</int></value></member><member><name>faultString</name><value>x</value></member><member><name>error_data</name><value><array><data/></array></value></member>'), /error_data must be a struct/],
  ];
  for (const [what, body, message] of cases) {
    it(what, () => void throwsCodec(() => decodeXmlResponse(body), 'envelope', message));
  }
});
