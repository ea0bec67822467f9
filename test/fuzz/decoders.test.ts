/**
 * The short fuzz run (docs/fuzzing.md): every decoder that reads network
 * input (test/fuzz/targets.ts) gets a fixed number of random and mutated
 * inputs from a fixed seed, and must return or refuse each with one of its
 * own errors within 1 s; the committed seeds and the inputs at the limits
 * (extremes.ts) decode without a crash; every input that once crashed a
 * decoder (test/data/fuzz/crashes/) is replayed; round trips through our
 * encoders give back what went in (LDAP filters in BER and as text, KDC-REQ,
 * KRB-ERROR, JSON-RPC and XML-RPC requests); and the harness itself tells a
 * crash from a refusal. FUZZ_RUNS and FUZZ_SEED override the count and the
 * seed; scripts/fuzz.ts is the long run.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { check, FuzzFailure, HANG_MS, run } from './harness.js';
import { berFilter, corpus, crashes, filterArb, targets, type FuzzTarget } from './targets.js';
import { extremes } from './extremes.js';
import { BerReader } from '../../src/ldap/ber.js';
import { decodeFilter, formatFilter } from '../../src/ldap/filter.js';
import { parseFilter } from '../../src/directory/filter.js';
import { decodeKdcReq, encodeKdcReq, type KdcReqBody } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKrbError, encodeKrbError, type KrbError } from '../../src/kerberos/asn1/krb-error.js';
import type { PrincipalName } from '../../src/kerberos/asn1/primitives.js';
import { decodeJsonRequest, encodeJsonRequest } from '../../src/rpc/codec/json.js';
import { decodeXmlRequest, encodeXmlRequest } from '../../src/rpc/codec/xml.js';
import { badCharIndex, FORBIDDEN_KEYS, RESERVED_KEYS, type RpcRequest, type WireValue } from '../../src/rpc/codec/types.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 5000);
const SEED = Number(process.env.FUZZ_SEED ?? 0x16);

describe('the harness', () => {
  const fake = (decode: (b: Buffer) => unknown): FuzzTarget => ({ name: 'fake', what: 'a decoder of the harness test', expected: [RangeError], decode, seeds: () => [Buffer.from('3000', 'hex')] });

  it('tells a refusal (an expected error) from a crash (any other) and reports the input', async () => {
    await check(fake(() => { throw new RangeError('refused'); }), Buffer.from('00', 'hex'));
    await assert.rejects(check(fake(() => { throw new TypeError('boom'); }), Buffer.from('0102', 'hex')), (e) => e instanceof FuzzFailure && e.kind === 'crash' && e.input.equals(Buffer.from('0102', 'hex')));
  });

  it('an input taking over 1 s is a failure', async () => {
    const slow = fake(() => { const t0 = Date.now(); while (Date.now() - t0 <= HANG_MS); });
    await assert.rejects(check(slow, Buffer.alloc(1)), (e) => e instanceof FuzzFailure && e.kind === 'hang');
  });

  it('a run stops at a crash, with a small input that shows it', async () => {
    const r = await run(fake((b) => { if (b.includes(0x99)) throw new TypeError('boom'); }), [Buffer.from('3000', 'hex')], 100_000, SEED);
    assert.equal(r.failure?.kind, 'crash');
    assert.ok(r.failure.input.includes(0x99) && r.failure.input.length <= 2, r.failure.input.toString('hex'));
  });
});

describe('every network decoder, fuzzed briefly', () => {
  for (const t of targets) {
    it(`${t.name}: ${t.what}`, async () => {
      const seeds = corpus(t);
      assert.ok(seeds.length > 0 || t.generated, 'the target has seeds');
      for (const s of seeds) await check(t, s);
      const r = await run(t, [...seeds, ...crashes(t).map((c) => c.input)], RUNS, SEED);
      if (r.failure) {
        assert.fail(`${r.failure.message}\n  input (hex): ${r.failure.input.toString('hex')}\n  reproduce: FUZZ_SEED=${SEED} FUZZ_RUNS=${RUNS} node --import tsx --test test/fuzz/decoders.test.ts`);
      }
      assert.equal(r.inputs, RUNS);
    });
  }
});

describe('inputs at and past the limits (extremes.ts)', () => {
  for (const t of targets) {
    const inputs = extremes(t.name);
    if (inputs.length === 0) continue;
    it(`${t.name}: ${inputs.length} inputs`, async () => {
      for (const input of inputs) await check(t, input);
    });
  }
});

describe('inputs that once crashed a decoder', () => {
  for (const t of targets) {
    for (const c of crashes(t)) {
      it(`${t.name}: ${c.file}`, async () => {
        await check(t, c.input);
      });
    }
  }
});

/** plain objects, as our decoders make them (deepEqual compares prototypes) */
const NOPROTO = { noNullPrototype: true } as const;
const PROPS = { numRuns: 500, seed: SEED };
const seconds = fc.integer({ min: 0, max: 4_102_444_800 }).map((s) => new Date(s * 1000));
const kstring = fc.stringMatching(/^[A-Za-z0-9._-]{1,16}$/);
const principalName: fc.Arbitrary<PrincipalName> = fc.record({ nameType: fc.integer({ min: -10, max: 10 }), nameString: fc.array(kstring, { minLength: 1, maxLength: 3 }) }, NOPROTO);
const int32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const bytes = fc.uint8Array({ maxLength: 40 }).map((u) => Buffer.from(u));

describe('round trips through our encoders', () => {
  it('LDAP filters: decodeFilter(encodeFilter(f)) is f', () => {
    fc.assert(
      fc.property(filterArb, (f) => {
        assert.deepEqual(decodeFilter(BerReader.of(berFilter(f))), f);
      }),
      PROPS,
    );
  });

  it('LDAP filters as text: parseFilter(formatFilter(f)) is f', () => {
    fc.assert(
      fc.property(filterArb, (f) => {
        assert.deepEqual(parseFilter(formatFilter(f)), f);
      }),
      PROPS,
    );
  });

  it('KDC-REQ: decodeKdcReq(encodeKdcReq(r)) gives back the request', () => {
    const body: fc.Arbitrary<KdcReqBody> = fc.record(
      {
        kdcOptions: fc.integer({ min: 0, max: 0xffffffff }),
        cname: principalName,
        realm: kstring,
        sname: principalName,
        from: seconds,
        till: seconds,
        rtime: seconds,
        nonce: fc.integer({ min: 0, max: 0xffffffff }),
        etypes: fc.array(int32, { maxLength: 6 }),
        addresses: fc.array(fc.record({ type: int32, address: bytes }, NOPROTO), { maxLength: 2 }),
        encAuthorizationData: fc.record({ etype: int32, kvno: fc.integer({ min: 0, max: 0x7fffffff }), cipher: bytes }, { requiredKeys: ['etype', 'cipher'], noNullPrototype: true }),
      },
      { requiredKeys: ['kdcOptions', 'realm', 'till', 'nonce', 'etypes'], noNullPrototype: true },
    );
    const req = fc.record({ msgType: fc.constantFrom(10 as const, 12 as const), padata: fc.array(fc.record({ type: int32, value: bytes }, NOPROTO), { maxLength: 3 }), body }, NOPROTO);
    fc.assert(
      fc.property(req, (r) => {
        const back = decodeKdcReq(encodeKdcReq(r));
        assert.equal(back.msgType, r.msgType);
        assert.deepEqual(back.padata, r.padata);
        assert.deepEqual(back.body, r.body);
      }),
      PROPS,
    );
  });

  it('KRB-ERROR: decodeKrbError(encodeKrbError(e)) is e', () => {
    const err: fc.Arbitrary<KrbError> = fc.record(
      {
        ctime: seconds,
        cusec: fc.integer({ min: 0, max: 999999 }),
        stime: seconds,
        susec: fc.integer({ min: 0, max: 999999 }),
        errorCode: int32,
        crealm: kstring,
        cname: principalName,
        realm: kstring,
        sname: principalName,
        eText: fc.string({ maxLength: 30, unit: 'grapheme-ascii' }),
        eData: bytes,
      },
      { requiredKeys: ['stime', 'susec', 'errorCode', 'realm', 'sname'], noNullPrototype: true },
    );
    fc.assert(
      fc.property(err, (e) => {
        assert.deepEqual(decodeKrbError(encodeKrbError(e)), e);
      }),
      PROPS,
    );
  });

  // every value type both codecs carry; -0 is sent as 0, dates to the second, integers only up to 2^53
  const rpcString = fc.string({ maxLength: 20, unit: 'binary' }).filter((x) => badCharIndex(x) < 0);
  const rpcKey = fc.string({ minLength: 1, maxLength: 12, unit: 'binary' }).filter((k) => badCharIndex(k) < 0 && !FORBIDDEN_KEYS.has(k) && !RESERVED_KEYS.has(k));
  const wire: fc.Arbitrary<WireValue> = fc.letrec<{ v: WireValue }>((tie) => ({
    v: fc.oneof(
      { depthSize: 'small' },
      fc.constant(null),
      fc.boolean(),
      fc.maxSafeInteger().map((n) => (n === 0 ? 0 : n)),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n) || Number.isSafeInteger(n)).map((n) => (n === 0 ? 0 : n)),
      rpcString,
      fc.uint8Array({ maxLength: 20 }).map((u) => Buffer.from(u)),
      fc.integer({ min: -62_167_219_200, max: 253_402_300_799 }).map((sec) => new Date(sec * 1000)),
      fc.array(tie('v'), { maxLength: 4 }),
      fc.dictionary(rpcKey, tie('v'), { maxKeys: 4 }),
    ),
  })).v;
  /** The value with every object made plain (the decoders give objects no prototype; only the content is compared). */
  const plain = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(plain) : v && typeof v === 'object' && !Buffer.isBuffer(v) && !(v instanceof Date) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)])) : v;
  const rpcRequest = (id: fc.Arbitrary<WireValue>): fc.Arbitrary<RpcRequest> =>
    fc.record({ method: fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/), args: fc.array(wire, { maxLength: 4 }), options: fc.dictionary(rpcKey, wire, { maxKeys: 4 }), id });

  it('JSON-RPC requests: decodeJsonRequest(encodeJsonRequest(r)) is r', () => {
    fc.assert(
      fc.property(rpcRequest(fc.oneof(fc.constant(null), fc.maxSafeInteger().map((n) => (n === 0 ? 0 : n)), rpcString)), (r) => {
        assert.deepEqual(plain(decodeJsonRequest(encodeJsonRequest(r))), plain(r));
      }),
      PROPS,
    );
  });

  it('XML-RPC requests: decodeXmlRequest(encodeXmlRequest(r)) is r', () => {
    fc.assert(
      fc.property(rpcRequest(fc.constant(null)), (r) => {
        assert.deepEqual(plain(decodeXmlRequest(encodeXmlRequest(r))), plain(r));
      }),
      PROPS,
    );
  });
});
