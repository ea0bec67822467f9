/**
 * JSON-RPC and XML-RPC codecs: round trips of every value type, envelopes,
 * and a battery of malformed inputs (each a CodecError, never anything else).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonRequest, decodeJsonResponse, encodeJsonRequest, encodeJsonResponse } from '../../src/rpc/codec/json.js';
import { decodeXmlRequest, decodeXmlResponse, encodeXmlRequest, encodeXmlResponse } from '../../src/rpc/codec/xml.js';
import { CodecError, toPlain, type RpcRequest, type WireValue } from '../../src/rpc/codec/types.js';

const sample: WireValue[] = [
  'plain',
  '',
  '  spaces kept  ',
  'üñíçødé ✓ <&> "quotes"',
  0,
  -2147483648,
  2147483647,
  2 ** 40,
  -(2 ** 53 - 1),
  1.5,
  true,
  false,
  null,
  Buffer.from([0, 1, 2, 255]),
  new Date(Date.UTC(2026, 10, 22, 11, 30, 5)),
  [],
  ['a', ['b', [1]]],
  { empty: {}, nested: { list: [1, 'x', null] } },
];

const codecs = {
  json: {
    encReq: encodeJsonRequest,
    decReq: decodeJsonRequest,
    encRes: encodeJsonResponse,
    decRes: decodeJsonResponse,
  },
  xml: {
    encReq: encodeXmlRequest,
    decReq: decodeXmlRequest,
    encRes: encodeXmlResponse,
    decRes: decodeXmlResponse,
  },
};

for (const [name, c] of Object.entries(codecs)) {
  describe(`${name} codec`, () => {
    it('round-trips requests with every value type', () => {
      const req: RpcRequest = { method: 'idp_add', args: sample, options: { all: true, sizelimit: 5, setattr: ['a=b', 'c=d'] }, id: name === 'json' ? 7 : null };
      const back = c.decReq(c.encReq(req));
      assert.equal(back.method, 'idp_add');
      assert.deepEqual(toPlain(back.args), sample);
      assert.deepEqual(toPlain(back.options), req.options);
      assert.equal(back.id, req.id);
    });

    it('round-trips responses and errors', () => {
      const ok = c.decRes(c.encRes({ result: { result: { cn: ['x'] }, value: 'x', summary: 'Added "x"' }, error: null, id: 1, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' }));
      assert.deepEqual(ok.result, { result: { cn: ['x'] }, value: 'x', summary: 'Added "x"' });
      assert.equal(ok.principal, 'admin@EXAMPLE.TEST');
      assert.equal(ok.version, '0.1.0');
      assert.equal(ok.error, null);
      const err = c.decRes(c.encRes({ result: null, error: { code: 4001, name: 'NotFound', message: 'x: IdP reference not found', data: { reason: 'x' } }, id: 1, principal: null, version: '0.1.0' }));
      assert.deepEqual(err.error, { code: 4001, name: 'NotFound', message: 'x: IdP reference not found', data: { reason: 'x' } });
    });

    it('refuses malformed input with CodecError only', () => {
      const valid = c.encReq({ method: 'ping', args: [], options: {}, id: 0 });
      const bad = [
        '',
        valid.slice(0, valid.length / 2),
        valid.replace('ping', 'Not A Method'),
        valid.replace('ping', 'x'.repeat(100)),
        '\uFFFE\u0000',
        Buffer.from([0xff, 0xfe, 0x00, 0x41]),
        'x'.repeat(2 * 1024 * 1024),
        name === 'json' ? '['.repeat(10000) + ']'.repeat(10000) : '<value>'.repeat(10000),
        name === 'json' ? '{"method":"ping","params":[[],{"__proto__":{"admin":true}}]}' : '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "file:///etc/passwd">]><methodCall><methodName>ping</methodName></methodCall>',
        name === 'json' ? '{"method":"ping","params":[{},{}]}' : '<methodCall><methodName>ping</methodName><params><param><value><struct/></value></param></params></methodCall>',
        name === 'json' ? '{"method":"ping","params":[[{"__base64__":"!!"}],{}]}' : '<methodCall><methodName>ping</methodName><params><param><value><array><data><value><int>99999999999</int></value></data></array></value></param></params></methodCall>',
        name === 'json' ? '{"method":"ping","params":[[1e400],{}]}' : '<methodCall><methodName>ping</methodName><params><param><value><array><data><value><blob>1</blob></value></data></array></value></param></params></methodCall>',
      ];
      for (const b of bad) assert.throws(() => c.decReq(b), CodecError, String(b).slice(0, 60));
      assert.throws(() => c.decRes('<<<'), CodecError);
    });

    it('survives a bounded fuzz of mutated valid bodies', () => {
      let seed = 12345;
      const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
      const base = Buffer.from(c.encReq({ method: 'idp_find', args: ['crit', [1, 2]], options: { all: true, name: 'x', n: 3 }, id: 1 }));
      for (let i = 0; i < 2000; i++) {
        const b = Buffer.from(base);
        const edits = 1 + Math.floor(rnd() * 4);
        for (let e = 0; e < edits; e++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
        try {
          c.decReq(b);
        } catch (err) {
          assert.ok(err instanceof CodecError, `iteration ${i}: ${String(err)}`);
        }
      }
    });
  });
}
