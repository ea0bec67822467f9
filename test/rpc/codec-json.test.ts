/**
 * JSON-RPC codec: the exact docs/architecture.md envelopes, the request shapes the
 * server accepts, and malformed bodies, each refused with a CodecError whose
 * reason and message say what is wrong.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonRequest, decodeJsonResponse, encodeJsonRequest, encodeJsonResponse } from '../../src/rpc/codec/json.js';
import { CodecError, toPlain, type CodecFailure } from '../../src/rpc/codec/types.js';
import { throwsCodec } from '../support/codec-expect.js';

describe('JSON-RPC envelopes', () => {
  it('writes the response envelope exactly, success and error', () => {
    assert.equal(
      encodeJsonResponse({ result: { result: { cn: ['x'] }, value: 'x', summary: null }, error: null, id: 5, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' }),
      '{"result":{"result":{"cn":["x"]},"value":"x","summary":null},"error":null,"id":5,"principal":"admin@EXAMPLE.TEST","version":"0.1.0"}',
    );
    assert.equal(
      encodeJsonResponse({ result: null, error: { code: 4001, name: 'NotFound', message: 'x: not "found"', data: { key: 'x' } }, id: 'a', principal: null, version: '0.1.0' }),
      '{"result":null,"error":{"code":4001,"name":"NotFound","message":"x: not \\"found\\"","data":{"key":"x"}},"id":"a","principal":null,"version":"0.1.0"}',
    );
  });

  it('writes binary and dates in their JSON forms', () => {
    assert.equal(
      encodeJsonRequest({ method: 'user_add', args: [Buffer.from([0xde, 0xad]), new Date(Date.UTC(2026, 0, 2, 3, 4, 5))], options: { all: true }, id: 9 }),
      '{"method":"user_add","params":[[{"__base64__":"3q0="},{"__datetime__":"20260102030405Z"}],{"all":true}],"id":9}',
    );
  });

  it('accepts params with the options left out, an absent id, string ids, and a version option', () => {
    const r = decodeJsonRequest('{"method":"ping","params":[["a"]]}');
    assert.deepEqual(r.args, ['a']);
    assert.deepEqual(toPlain(r.options), {});
    assert.equal(Object.getPrototypeOf(r.options), null);
    assert.equal(r.id, null);
    assert.equal(decodeJsonRequest('{"id":"x-1","params":[[],{"version":"2.254"}],"method":"idp_show"}').id, 'x-1');
    assert.deepEqual(toPlain(decodeJsonRequest('{"method":"idp_show","params":[[],{"version":"2.254"}],"id":1}').options), { version: '2.254' });
  });

  it('accepts insignificant whitespace, a byte-order mark and escapes', () => {
    const r = decodeJsonRequest(Buffer.from('\ufeff \n{ "method" : "ping" ,\t"params" : [ [ "\\u00e9\\ud83d\\ude00\\n\\/" , -1.5e3 , 0 ] , { } ] , "id" : 0 }\r\n'));
    assert.deepEqual(r.args, ['é😀\n/', -1500, 0]);
  });

  it('decodes binary and dates from their JSON forms and refuses malformed ones', () => {
    const r = decodeJsonRequest('{"method":"ping","params":[[{"__base64__":""},{"__base64__":"AAH/"},{"__datetime__":"20240229235959Z"},{"__datetime__":"00010101000000Z"}],{}]}');
    assert.deepEqual(r.args, [Buffer.alloc(0), Buffer.from([0, 1, 255]), new Date(Date.UTC(2024, 1, 29, 23, 59, 59)), new Date('0001-01-01T00:00:00Z')]);
    const bad: [string, RegExp][] = [
      ['{"__base64__":"!!"}', /invalid base64/],
      ['{"__base64__":"AAH"}', /invalid base64/],
      ['{"__base64__":"A==="}', /invalid base64/],
      ['{"__base64__":5}', /must be a string/],
      ['{"__base64__":"AA==","x":1}', /mixes a reserved key/],
      ['{"__datetime__":"2026-01-01T00:00:00Z"}', /YYYYMMDDHHMMSSZ/],
      ['{"__datetime__":"20261301000000Z"}', /out of range/],
      ['{"__datetime__":"20250229000000Z"}', /does not exist/],
      ['{"__datetime__":"20250101246000Z"}', /out of range/],
    ];
    for (const [v, m] of bad) throwsCodec(() => decodeJsonRequest(`{"method":"ping","params":[[${v}],{}]}`), 'value', m);
  });
});

describe('JSON-RPC: malformed requests are CodecErrors that say what is wrong', () => {
  const cases: [string, string | Buffer, CodecFailure, RegExp][] = [
    ['empty body', '', 'parse', /invalid JSON at position 0: unexpected end of input/],
    ['truncated', '{"method":"ping","params":[[],{}]', 'parse', /invalid JSON at position 33: unexpected end of input/],
    ['truncated string', '{"method":"pi', 'parse', /unterminated string/],
    ['a stray comma', '{"method":"ping","params":[[1,2,,3],{}]}', 'parse', /invalid JSON at position 32: expected a value/],
    ['a trailing comma', '{"method":"ping","params":[[1,],{}]}', 'parse', /position 30: expected a value/],
    ['single quotes', "{'method':'ping'}", 'parse', /position 1: expected a member name/],
    ['a comment', '{"method":"ping"/* x */,"params":[[],{}]}', 'parse', /position 16/],
    ['data after the document', '{"method":"ping","params":[[],{}]} {}', 'parse', /after the end/],
    ['a raw control character in a string', '{"method":"ping","params":[["a\tb"],{}]}', 'parse', /control character/],
    ['a bad escape', '{"method":"ping","params":[["\\x41"],{}]}', 'parse', /invalid escape/],
    ['a short \\u escape', '{"method":"ping","params":[["\\u12"],{}]}', 'parse', /invalid \\u escape/],
    ['a raw NUL byte', Buffer.from('{"method":"ping",\u0000"params":[[],{}]}'), 'parse', /position 17/],
    ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 'parse', /not valid UTF-8/],
    ['overlong UTF-8', Buffer.concat([Buffer.from('{"method":"ping","params":[["'), Buffer.from([0xc0, 0xaf]), Buffer.from('"],{}]}')]), 'parse', /not valid UTF-8/],
    ['UTF-8 encoded surrogate', Buffer.concat([Buffer.from('["'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"]')]), 'parse', /not valid UTF-8/],
    ['leading zero', '{"method":"ping","params":[[01],{}]}', 'parse', /expected ',' or '\]'/],
    ['bare fraction', '{"method":"ping","params":[[.5],{}]}', 'parse', /expected a value/],
    ['plus sign', '{"method":"ping","params":[[+1],{}]}', 'parse', /expected a value/],
    ['NaN', '{"method":"ping","params":[[NaN],{}]}', 'parse', /expected a value/],
    ['an escaped NUL', '{"method":"ping","params":[["a\\u0000b"],{}]}', 'value', /a string at position 28 contains U\+0000/],
    ['an escaped control character', '{"method":"ping","params":[["\\u001b[31m"],{}]}', 'value', /U\+001B/],
    ['an unpaired surrogate', '{"method":"ping","params":[["\\ud800"],{}]}', 'value', /U\+D800/],
    ['U+FFFF', '{"method":"ping","params":[["\\uffff"],{}]}', 'value', /U\+FFFF/],
    ['an integer beyond 2^53', '{"method":"ping","params":[[12345678901234567890],{}]}', 'value', /integer at position 28 is beyond/],
    ['-2^53', '{"method":"ping","params":[[-9007199254740992],{}]}', 'value', /beyond/],
    ['a number out of range', '{"method":"ping","params":[[1e400],{}]}', 'value', /out of range/],
    ['wrong root: array', '[]', 'envelope', /must be a JSON object/],
    ['wrong root: string', '"ping"', 'envelope', /must be a JSON object/],
    ['wrong root: binary form', '{"__base64__":"AA=="}', 'envelope', /must be a JSON object/],
    ['no method', '{"params":[[],{}]}', 'envelope', /method must be a command name/],
    ['method not a string', '{"method":1,"params":[[],{}]}', 'envelope', /method must be a command name/],
    ['method with a dash', '{"method":"idp-add","params":[[],{}]}', 'envelope', /method must be a command name/],
    ['method too long', `{"method":"${'x'.repeat(65)}","params":[[],{}]}`, 'envelope', /method must be a command name/],
    ['no params', '{"method":"ping"}', 'envelope', /params must be \[args, options\]/],
    ['params an object', '{"method":"ping","params":{}}', 'envelope', /params must be \[args, options\]/],
    ['params empty', '{"method":"ping","params":[]}', 'envelope', /params must be \[args, options\]/],
    ['three params', '{"method":"ping","params":[[],{},{}]}', 'envelope', /params must be \[args, options\]/],
    ['args an object', '{"method":"ping","params":[{},{}]}', 'envelope', /params\[0\] \(the arguments\) must be an array/],
    ['options an array', '{"method":"ping","params":[[],[]]}', 'envelope', /params\[1\] \(the options\) must be an object/],
    ['options null', '{"method":"ping","params":[[],null]}', 'envelope', /params\[1\]/],
    ['options a date', '{"method":"ping","params":[[],{"__datetime__":"20260101000000Z"}]}', 'envelope', /params\[1\]/],
    ['id an object', '{"method":"ping","params":[[],{}],"id":{}}', 'envelope', /id must be a number, a string or null/],
    ['an unknown member', '{"method":"ping","params":[[],{}],"jsonrpc":"2.0"}', 'envelope', /unknown member "jsonrpc" in the request/],
    ['a duplicate member', '{"method":"ping","method":"user_del","params":[[],{}]}', 'value', /duplicate member "method" at position 17/],
    ['a duplicate option', '{"method":"ping","params":[[],{"all":true,"all":false}]}', 'value', /duplicate member "all"/],
    ['__proto__ as an option', '{"method":"ping","params":[[],{"__proto__":{"admin":true}}]}', 'value', /the key "__proto__" is not allowed/],
    ['__proto__ deep inside an argument', '{"method":"ping","params":[[{"a":[{"__proto__":{"polluted":1}}]}],{}]}', 'value', /"__proto__"/],
    ['constructor as an option', '{"method":"ping","params":[[],{"constructor":{"prototype":{"polluted":1}}}]}', 'value', /"constructor"/],
    ['prototype as an option', '{"method":"ping","params":[[],{"prototype":1}]}', 'value', /"prototype"/],
    ['an empty key', '{"method":"ping","params":[[],{"":1}]}', 'value', /empty member name/],
    ['a key longer than 256', `{"method":"ping","params":[[],{"${'k'.repeat(257)}":1}]}`, 'too-large', /member name at position \d+ is longer than 256/],
    ['10,000 open brackets', '['.repeat(10_000), 'too-deep', /nested deeper than 32/],
    ['10,000 nested objects', '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000), 'too-deep', /nested deeper than 32/],
  ];
  for (const [what, body, reason, message] of cases) {
    it(what, () => void throwsCodec(() => decodeJsonRequest(body), reason, message));
  }

  it('no decoded body touches Object.prototype', () => {
    for (const body of ['{"method":"ping","params":[[],{"__proto__":{"polluted":1}}]}', '{"__proto__":{"polluted":1},"method":"ping","params":[[],{}]}']) {
      assert.throws(() => decodeJsonRequest(body), CodecError);
    }
    assert.equal((Object.prototype as Record<string, unknown>).polluted, undefined);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('error messages do not repeat the values they refuse', () => {
    for (const body of ['{"method":"ping","params":[["secret\\u0000pw"],{}]}', '{"method":"ping","params":[[{"__base64__":"secret!!"}],{}]}', '{"method":"SECRET","params":[[],{}]}']) {
      try {
        decodeJsonRequest(body);
        assert.fail('accepted');
      } catch (e) {
        assert.ok(e instanceof CodecError);
        assert.doesNotMatch(e.message, /secret/i);
      }
    }
  });
});

describe('JSON-RPC: the client checks every envelope member of an answer', () => {
  const ok = '{"result":1,"error":null,"id":1,"principal":"a@B","version":"1"}';
  it('accepts a complete answer and ignores members added later', () => {
    assert.deepEqual(decodeJsonResponse(ok), { result: 1, error: null, id: 1, principal: 'a@B', version: '1' });
    assert.equal(decodeJsonResponse(ok.replace('}', ',"messages":[]}')).result, 1);
  });
  const cases: [string, string, RegExp][] = [
    ['not an object', '[1]', /must be a JSON object/],
    ['no result', ok.replace('"result":1,', ''), /no "result" member/],
    ['no version', ok.replace(',"version":"1"', ''), /no "version" member/],
    ['principal a number', ok.replace('"a@B"', '5'), /principal must be a string or null/],
    ['version null', ok.replace('"1"}', 'null}'), /version must be a string/],
    ['error a string', ok.replace('"error":null', '"error":"bad"'), /error must be an object or null/],
    ['error code a string', ok.replace('"error":null', '"error":{"code":"1","name":"X","message":"m"}'), /error.code must be an integer/],
    ['error code fractional', ok.replace('"error":null', '"error":{"code":1.5,"name":"X","message":"m"}'), /error.code must be an integer/],
    ['error without a message', ok.replace('"error":null', '"error":{"code":1,"name":"X"}'), /error.name and error.message must be strings/],
    ['error data an array', ok.replace('"error":null', '"error":{"code":1,"name":"X","message":"m","data":[]}'), /error.data must be an object/],
  ];
  for (const [what, body, message] of cases) {
    it(what, () => void throwsCodec(() => decodeJsonResponse(body), 'envelope', message));
  }
});
