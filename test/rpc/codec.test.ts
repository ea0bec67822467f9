/**
 * Both RPC codecs, side by side: every value type round-trips (client encode
 * -> server decode, server encode -> client decode), the shared limits hold at
 * their exact boundaries, and a fixed-seed fuzz of mutated valid bodies gives
 * only success or CodecError.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeJsonRequest, decodeJsonResponse, encodeJsonRequest, encodeJsonResponse } from '../../src/rpc/codec/json.js';
import { decodeXmlRequest, decodeXmlResponse, encodeXmlRequest, encodeXmlResponse } from '../../src/rpc/codec/xml.js';
import { CodecError, defaultLimits, toPlain, type CodecLimits, type RpcRequest, type RpcResponse, type WireValue } from '../../src/rpc/codec/types.js';
import { throwsCodec } from '../support/codec-expect.js';

const sample: WireValue[] = [
  'plain',
  '',
  '  spaces kept \t\n ',
  'line\r\nends\rkept',
  'üñíçødé ✓ 😀 <&> "quotes" \'apos\' ]]> &amp;',
  0,
  1,
  -2147483648,
  2147483647,
  2147483648,
  -2147483649,
  2 ** 40,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
  1.5,
  -0.000001,
  123456.789,
  1e-300,
  5e-324,
  true,
  false,
  null,
  Buffer.alloc(0),
  Buffer.from([0, 1, 2, 255]),
  Buffer.from('x'.repeat(1000)),
  new Date(Date.UTC(2026, 10, 22, 11, 30, 5)),
  new Date(Date.UTC(1970, 0, 1)),
  new Date(Date.UTC(9999, 11, 31, 23, 59, 59)),
  [],
  {},
  ['a', ['b', [1, [[]]]]],
  { empty: {}, list: [], nested: { list: [1, 'x', null, { deeper: [true] }] }, 'with space': 1, Ünïcode: '✓', hasOwnProperty: 'ok', toString: 'ok' },
];

interface Codec {
  encReq: (r: RpcRequest, l?: Partial<CodecLimits>) => string;
  decReq: (b: Buffer | string, l?: Partial<CodecLimits>) => RpcRequest;
  encRes: (r: RpcResponse, l?: Partial<CodecLimits>) => string;
  decRes: (b: Buffer | string, l?: Partial<CodecLimits>) => RpcResponse;
}

const codecs: Record<'json' | 'xml', Codec> = {
  json: { encReq: encodeJsonRequest, decReq: decodeJsonRequest, encRes: encodeJsonResponse, decRes: decodeJsonResponse },
  xml: { encReq: encodeXmlRequest, decReq: decodeXmlRequest, encRes: encodeXmlResponse, decRes: decodeXmlResponse },
};

function nested(levels: number, leaf: WireValue): WireValue {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = [v];
  return v;
}

function nestedStruct(levels: number): WireValue {
  let v: WireValue = 'leaf';
  for (let i = 0; i < levels; i++) v = { k: v };
  return v;
}

/** Dates lose milliseconds on both wires. */
const wholeSeconds = (d: Date) => new Date(Math.floor(d.getTime() / 1000) * 1000);

for (const [name, c] of Object.entries(codecs)) {
  describe(`${name} codec: round trips`, () => {
    it('carries every value type client -> server, each as an argument and as an option', () => {
      const options: Record<string, WireValue> = { all: true, sizelimit: 5, setattr: ['a=b', 'c=d'], version: '2.254' };
      sample.forEach((v, i) => (options[`opt${i}`] = v));
      const req: RpcRequest = { method: 'idp_add', args: sample, options, id: name === 'json' ? 7 : null };
      const back = c.decReq(c.encReq(req));
      assert.equal(back.method, 'idp_add');
      assert.deepEqual(toPlain(back.args), sample);
      assert.deepEqual(toPlain(back.options), options);
      assert.equal(back.id, req.id);
    });

    it('gives the server null-prototype objects', () => {
      const back = c.decReq(c.encReq({ method: 'user_mod', args: [{ a: 1 }], options: { o: { p: 2 } }, id: null }));
      assert.equal(Object.getPrototypeOf(back.options), null);
      assert.equal(Object.getPrototypeOf(back.args[0]), null);
      assert.equal(Object.getPrototypeOf((back.options as Record<string, WireValue>).o), null);
    });

    it('carries every value type server -> client as the result', () => {
      const res: RpcResponse = { result: { result: sample, value: 'x', summary: null }, error: null, id: 3, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' };
      const back = c.decRes(c.encRes(res));
      assert.deepEqual(back.result, res.result);
      assert.equal(back.error, null);
      assert.equal(back.principal, 'admin@EXAMPLE.TEST');
      assert.equal(back.version, '0.1.0');
      assert.equal(back.id, name === 'json' ? 3 : null);
    });

    it('carries a null principal and scalar results', () => {
      for (const result of [null, 'text', 0, true, Buffer.from('b'), []] as WireValue[]) {
        const back = c.decRes(c.encRes({ result, error: null, id: null, principal: null, version: '1' }));
        assert.deepEqual(back.result, result);
        assert.equal(back.principal, null);
      }
    });

    it('carries errors (JSON error object, XML-RPC fault) with code, name, message and data', () => {
      const error = { code: 4001, name: 'NotFound', message: 'x: IdP reference not found', data: { reason: 'x', n: 2, list: ['a'], when: new Date(Date.UTC(2020, 0, 2, 3, 4, 5)) } };
      const back = c.decRes(c.encRes({ result: null, error, id: 1, principal: 'admin@EXAMPLE.TEST', version: '0.1.0' }));
      assert.deepEqual(back.error, error);
      assert.equal(back.result, null);
      assert.equal(back.principal, 'admin@EXAMPLE.TEST');
      assert.equal(back.version, '0.1.0');
      const noData = c.decRes(c.encRes({ result: null, error: { code: 1000, name: 'NotAuthenticated', message: 'no' }, id: null, principal: null, version: '0.1.0' }));
      assert.deepEqual(noData.error, { code: 1000, name: 'NotAuthenticated', message: 'no', data: {} });
    });

    it('sends -0 as the integer 0', () => {
      const back = c.decReq(c.encReq({ method: 'ping', args: [-0], options: {}, id: null }));
      assert.ok(Object.is(back.args[0], 0));
    });

    it('drops milliseconds from dates', () => {
      const d = new Date(Date.UTC(2021, 5, 6, 7, 8, 9, 999));
      const back = c.decReq(c.encReq({ method: 'ping', args: [d], options: {}, id: null }));
      assert.deepEqual(back.args[0], wholeSeconds(d));
    });

    it('accepts Uint8Array as binary', () => {
      const bytes = new Uint8Array([9, 8, 7]).subarray(1);
      const back = c.decReq(c.encReq({ method: 'ping', args: [bytes as unknown as WireValue], options: {}, id: null }));
      assert.deepEqual(back.args[0], Buffer.from([8, 7]));
    });
  });

  describe(`${name} codec: encoders refuse what the wire cannot carry`, () => {
    const enc = (v: unknown) => () => c.encReq({ method: 'ping', args: [v as WireValue], options: {}, id: null });
    it('integers beyond 2^53 (doubles that large too: JavaScript cannot tell them apart), non-finite numbers', () => {
      throwsCodec(enc(2 ** 53), 'value', /2\^53/);
      throwsCodec(enc(1e300), 'value', /2\^53/);
      throwsCodec(enc(-(2 ** 60)), 'value', /2\^53/);
      throwsCodec(enc(NaN), 'value', /finite/);
      throwsCodec(enc(Infinity), 'value', /finite/);
    });
    it('strings with characters XML 1.0 forbids (NUL, controls, U+FFFE, unpaired surrogates)', () => {
      for (const s of ['a\u0000b', '\u0001', '\u001f', '\ufffe', '\uffff', 'x\ud800', '\udc00y']) throwsCodec(enc(s), 'value', /U\+[0-9A-F]{4}/);
      throwsCodec(enc({ ['bad\u0007key']: 1 }), 'value', /U\+0007/);
    });
    it('values that are not wire values', () => {
      for (const v of [undefined, () => 1, 10n, Symbol('s'), new Map(), new (class Thing {})(), new Date(NaN), new Date(Date.UTC(10000, 0, 1))]) throwsCodec(enc(v), 'value');
    });
    it('forbidden and reserved keys', () => {
      for (const k of ['__proto__', 'constructor', 'prototype', '__base64__', '__datetime__', '']) {
        const o = Object.create(null) as Record<string, WireValue>;
        o[k] = 1;
        throwsCodec(enc(o), 'value');
      }
    });
    it('cycles and over-deep values, without exhausting the stack', () => {
      const a: WireValue[] = [];
      a.push(a);
      throwsCodec(enc(a), 'too-deep');
      throwsCodec(() => c.encReq({ method: 'ping', args: [nested(defaultLimits.maxDepth, 1)], options: {}, id: null }), 'too-deep');
      throwsCodec(() => c.encRes({ result: nestedStruct(defaultLimits.maxDepth + 1), error: null, id: null, principal: null, version: '1' }), 'too-deep');
    });
    it('bad method names and envelopes', () => {
      throwsCodec(() => c.encReq({ method: 'Idp-Add', args: [], options: {}, id: null }), 'envelope');
      throwsCodec(() => c.encReq({ method: 'ping', args: {} as unknown as WireValue[], options: {}, id: null }), 'envelope');
      throwsCodec(() => c.encReq({ method: 'ping', args: [], options: [] as unknown as Record<string, WireValue>, id: null }), 'envelope');
      throwsCodec(() => c.encRes({ result: null, error: { code: 1.5, name: 'X', message: 'm' }, id: null, principal: null, version: '1' }), 'value');
    });
  });

  describe(`${name} codec: limits`, () => {
    it('maxDepth is exact: args nest maxDepth containers, not one more', () => {
      const limits = { maxDepth: 5 };
      // args and options are level 1, so four more levels fit
      const fits = c.encReq({ method: 'ping', args: [nested(4, 'x')], options: { o: nestedStruct(4) }, id: null }, limits);
      assert.deepEqual(toPlain(c.decReq(fits, limits).args), [nested(4, 'x')]);
      throwsCodec(() => c.encReq({ method: 'ping', args: [nested(5, 'x')], options: {}, id: null }, limits), 'too-deep');
      const tooDeep = c.encReq({ method: 'ping', args: [nested(5, 'x')], options: {}, id: null });
      throwsCodec(() => c.decReq(tooDeep, limits), 'too-deep');
      const tooDeepOption = c.encReq({ method: 'ping', args: [], options: { o: nestedStruct(5) }, id: null });
      throwsCodec(() => c.decReq(tooDeepOption, limits), 'too-deep');
    });

    it('maxStringLength and binary length', () => {
      const limits = { maxStringLength: 10 };
      assert.equal(c.decReq(c.encReq({ method: 'ping', args: ['x'.repeat(10)], options: {}, id: null }), limits).args[0], 'x'.repeat(10));
      throwsCodec(() => c.decReq(c.encReq({ method: 'ping', args: ['x'.repeat(11)], options: {}, id: null }), limits), 'too-large', /longer than 10/);
      throwsCodec(() => c.decReq(c.encReq({ method: 'ping', args: [Buffer.alloc(64)], options: {}, id: null }), limits), 'too-large');
    });

    it('maxItems counts every value', () => {
      const body = c.encReq({ method: 'ping', args: Array.from({ length: 100 }, (_, i) => i), options: {}, id: null });
      assert.equal(c.decReq(body, { maxItems: 200 }).args.length, 100);
      throwsCodec(() => c.decReq(body, { maxItems: 50 }), 'too-large', /more than 50/);
    });

    it('maxBytes is checked before parsing (a 2 MiB body is refused whatever it holds)', () => {
      const big = c.encReq({ method: 'ping', args: ['x'.repeat(2 * 1024 * 1024)], options: {}, id: null });
      throwsCodec(() => c.decReq(big), 'too-large', /larger than 1048576 bytes/);
      throwsCodec(() => c.decReq(Buffer.from(big)), 'too-large');
      throwsCodec(() => c.decReq('\u0000'.repeat(2 * 1024 * 1024)), 'too-large');
      // multi-byte characters count as bytes, not characters
      throwsCodec(() => c.decReq('é'.repeat(600 * 1024)), 'too-large');
      // the client accepts a bigger answer by default
      const answer = c.encRes({ result: 'y'.repeat(2 * 1024 * 1024), error: null, id: null, principal: null, version: '1' });
      assert.equal((c.decRes(answer).result as string).length, 2 * 1024 * 1024);
    });

    it('a body of 10,000 nested containers is refused quickly, without recursion', () => {
      const deep = name === 'json' ? `{"method":"ping","params":[${'['.repeat(10_000)}${']'.repeat(10_000)},{}]}` : `<methodCall><methodName>ping</methodName><params><param>${'<value><array><data>'.repeat(10_000)}${'</data></array></value>'.repeat(10_000)}</param></params></methodCall>`;
      const started = performance.now();
      throwsCodec(() => c.decReq(deep), 'too-deep');
      throwsCodec(() => c.decRes(deep));
      assert.ok(performance.now() - started < 1000);
    });
  });

  describe(`${name} codec: bounded fuzz`, () => {
    it('2,000 mutations of valid requests and responses give success or CodecError, nothing else', () => {
      let seed = name === 'json' ? 0x5eed : 0xbeef;
      const rnd = (n: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return Math.floor((seed / 2 ** 32) * n);
      };
      const request = Buffer.from(c.encReq({ method: 'idp_find', args: ['crit', [1, 2.5, 2 ** 40], Buffer.from('bin'), new Date(0)], options: { all: true, name: 'x ✓', n: 3, s: { a: null } }, id: name === 'json' ? 1 : null }));
      const response = Buffer.from(c.encRes({ result: { result: [{ cn: ['x'] }], count: 1, truncated: false }, error: null, id: 1, principal: 'a@B', version: '0.1.0' }));
      const fault = Buffer.from(c.encRes({ result: null, error: { code: 4001, name: 'NotFound', message: 'm', data: { k: 'v' } }, id: 1, principal: null, version: '0.1.0' }));
      const alphabet = Buffer.from(name === 'json' ? '{}[]",:\\0123456789-.eEtruefalsn _' : '<>/&;#x!?[]="\' valuestringintstructmemberdataarraynil0123456789');
      let accepted = 0;
      for (let i = 0; i < 2000; i++) {
        const base = [request, response, fault][i % 3]!;
        let b = Buffer.from(base);
        const edits = 1 + rnd(4);
        for (let e = 0; e < edits; e++) {
          const at = rnd(b.length + 1);
          switch (rnd(5)) {
            case 0: // overwrite with a random byte
              if (at < b.length) b[at] = rnd(256);
              break;
            case 1: // overwrite with a syntax character
              if (at < b.length) b[at] = alphabet[rnd(alphabet.length)]!;
              break;
            case 2: // delete a run
              b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + rnd(8))]);
              break;
            case 3: // duplicate a run
              b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + rnd(40)), b.subarray(at)]);
              break;
            default: // truncate
              b = b.subarray(0, at);
          }
        }
        {
          try {
            // whatever one wire accepts, both wires can send on
            if (i % 3 === 0) {
              const r = c.decReq(b);
              encodeJsonRequest(r);
              encodeXmlRequest(r);
            } else {
              const r = c.decRes(b);
              encodeJsonResponse(r);
              encodeXmlResponse(r);
            }
            accepted++;
          } catch (err) {
            assert.ok(err instanceof CodecError, `iteration ${i}: ${err instanceof Error ? err.stack : String(err)}`);
            assert.ok(err.message.length > 0 && err.message.length < 300);
          }
        }
      }
      // some mutations (e.g. inside a string) leave a valid body: the fuzz exercised both paths
      assert.ok(accepted > 0 && accepted < 2000, `accepted ${accepted}`);
    });
  });
}

describe('the two encodings carry the same values', () => {
  it('a request decoded from JSON re-encodes as XML-RPC to the same values, and back', () => {
    const json = encodeJsonRequest({ method: 'user_mod', args: sample, options: { setattr: ['x=y'] }, id: 1 });
    const fromJson = decodeJsonRequest(json);
    const fromXml = decodeXmlRequest(encodeXmlRequest(fromJson));
    assert.deepEqual(toPlain(fromXml.args), toPlain(fromJson.args));
    const again = decodeJsonRequest(encodeJsonRequest({ ...fromXml, id: 1 }));
    assert.deepEqual(toPlain(again.args), sample);
  });
});
