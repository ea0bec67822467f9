/**
 * Our DER reader and writer (src/kerberos/asn1/der.ts) checked against an
 * independent implementation, asn1js. The KDC does not use asn1js on its hot
 * path (its object-heavy parse took about 40% of an AS exchange), so here it
 * is the oracle: for every real MIT message, every nested DER value carried
 * in an OCTET STRING, messages our encoders write, and thousands of mutated
 * messages, the two must see the same tree (class, tag, form, exact bytes
 * of every element). Whatever our strict DER reader accepts, asn1js reads
 * identically, or (when asn1js refuses the content of an element) our
 * message decoder refuses it too.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as asn1js from 'asn1js';
import { Asn1Error, parseDer, type DerNode } from '../../src/kerberos/asn1/der.js';
import { decodeKrbError, encodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeKdcReq, encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKdcRep } from '../../src/kerberos/asn1/kdc-rep.js';

const dataDir = new URL('../data/kerberos/mit/', import.meta.url);
const captures = readdirSync(dataDir)
  .filter((f) => f.endsWith('.der'))
  .map((f) => ({ name: f, bytes: readFileSync(new URL(f, dataDir)) }));

const CLASS: Record<number, DerNode['cls']> = { 1: 'universal', 2: 'application', 3: 'context', 4: 'private' };

/**
 * asn1js's view of one BER element: null when it does not parse or leaves
 * bytes over, 'content' when it throws on a primitive's content (asn1js
 * converts times and strings while parsing; our reader leaves that to the
 * message decoders).
 */
function theirs(bytes: Buffer): asn1js.AsnType | null | 'content' {
  const ab = new Uint8Array(bytes).buffer;
  let r;
  try {
    r = asn1js.fromBER(ab);
  } catch {
    return 'content';
  }
  if (r.offset === -1 || r.offset !== bytes.length || r.result.error) return null;
  return r.result;
}

/** Our typed decoder for a whole message, by its APPLICATION tag. */
function decodeMessage(bytes: Buffer): unknown {
  const tag = parseDer(bytes).tag;
  if (tag === 10 || tag === 12) return decodeKdcReq(bytes);
  if (tag === 11 || tag === 13) return decodeKdcRep(bytes);
  if (tag === 30) return decodeKrbError(bytes);
  throw new Error(`no decoder for APPLICATION ${tag}`);
}

const kids = (t: asn1js.AsnType): asn1js.AsnType[] => (t.valueBlock as unknown as { value: asn1js.AsnType[] }).value;

/** Compares the trees node by node; returns the path of the first difference. */
function sameTree(ours: DerNode, t: asn1js.AsnType, path = '$'): string | null {
  const id = t.idBlock;
  if (CLASS[id.tagClass] !== ours.cls || id.tagNumber !== ours.tag || id.isConstructed !== ours.constructed) {
    return `${path}: ours [${ours.cls} ${ours.tag}${ours.constructed ? ' c' : ''}] theirs [${CLASS[id.tagClass]} ${id.tagNumber}${id.isConstructed ? ' c' : ''}]`;
  }
  const raw = Buffer.from(t.valueBeforeDecodeView);
  if (!raw.equals(ours.raw)) return `${path}: element bytes differ`;
  if (ours.constructed) {
    const theirKids = kids(t);
    if (theirKids.length !== ours.children.length) return `${path}: ${ours.children.length} children against ${theirKids.length}`;
    for (let i = 0; i < theirKids.length; i++) {
      const d = sameTree(ours.children[i]!, theirKids[i]!, `${path}/${i}`);
      if (d) return d;
    }
  }
  return null;
}

function crossCheck(bytes: Buffer, what: string): DerNode {
  const ours = parseDer(bytes);
  const t = theirs(bytes);
  assert.ok(t && t !== 'content', `${what}: asn1js does not parse what our reader accepted`);
  const diff = sameTree(ours, t);
  assert.equal(diff, null, `${what}: ${diff}`);
  return ours;
}

/** OCTET STRING contents that are themselves one DER element (padata values, tickets in AP-REQs, tokens). */
function nestedDer(n: DerNode, out: Buffer[] = []): Buffer[] {
  if (n.cls === 'universal' && n.tag === 4 && !n.constructed && n.content.length > 1) {
    try {
      parseDer(n.content);
      out.push(n.content);
    } catch (e) {
      if (!(e instanceof Asn1Error)) throw e;
    }
  }
  for (const c of n.children) nestedDer(c, out);
  return out;
}

/** A small deterministic generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('DER reader against asn1js', () => {
  it('has MIT captures to check', () => {
    assert.ok(captures.length >= 20, `only ${captures.length} captures`);
  });

  it('every MIT message and every DER value nested in it parse to the same tree', () => {
    let nested = 0;
    for (const c of captures) {
      const root = crossCheck(c.bytes, c.name);
      for (const inner of nestedDer(root)) {
        crossCheck(inner, `${c.name} (nested)`);
        nested++;
      }
    }
    assert.ok(nested >= 20, `only ${nested} nested values`);
  });

  it('what our strict reader accepts from mutated messages, asn1js reads identically', () => {
    const next = rng(4120);
    let accepted = 0;
    let rejected = 0;
    let theyRefused = 0;
    for (let i = 0; i < 6000; i++) {
      const base = captures[Math.floor(next() * captures.length)]!.bytes;
      const m = Buffer.from(base);
      const kind = Math.floor(next() * 3);
      let bytes: Buffer = m;
      if (kind === 0) m[Math.floor(next() * m.length)] = Math.floor(next() * 256);
      else if (kind === 1) m[Math.floor(next() * m.length)]! ^= 1 << Math.floor(next() * 8);
      else bytes = m.subarray(0, Math.floor(next() * m.length));
      let ours: DerNode;
      try {
        ours = parseDer(bytes);
      } catch (e) {
        assert.ok(e instanceof Asn1Error, `mutation ${i}: ${String(e)}`);
        rejected++;
        continue;
      }
      accepted++;
      const t = theirs(bytes);
      if (t === null || t === 'content') {
        // asn1js refuses it (a BIT STRING's unused-bits count, a time, a string): our message decoder must refuse it too
        assert.throws(() => decodeMessage(bytes), Asn1Error, `mutation ${i}: asn1js refuses it, our decoder took it`);
        theyRefused++;
        continue;
      }
      assert.equal(sameTree(ours, t), null, `mutation ${i}`);
    }
    assert.ok(accepted > 100 && rejected > 100, `accepted ${accepted}, rejected ${rejected}, refused by asn1js only ${theyRefused}`);
  });
});

describe('DER writer against asn1js', () => {
  it('integers at every length boundary, long lengths and strings read back the same in asn1js', () => {
    const ints = [0, 1, 127, 128, 255, 256, 32767, 32768, -1, -128, -129, -32768, -32769, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, -(2 ** 31)];
    for (const v of ints) {
      const msg = encodeKrbError({ stime: new Date(Date.UTC(2026, 10, 22, 1, 2, 3)), susec: 999999, errorCode: 25, realm: 'EXAMPLE.TEST', sname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] }, cusec: v >= 0 ? v : 0, eText: 'x'.repeat(300), eData: Buffer.alloc(70_000, 7) });
      const root = crossCheck(msg, `KRB-ERROR with ${v}`);
      assert.ok(root.raw.length > 70_000);
      // the integer as asn1js decodes it
      const probe = encodeKdcReq({ msgType: 10, padata: [], body: { kdcOptions: 0, realm: 'R', till: new Date(Date.UTC(2037, 0, 1)), nonce: v >>> 0, etypes: [v | 0] } });
      const t = theirs(probe);
      assert.ok(t && t !== 'content', `KDC-REQ with ${v} does not parse in asn1js`);
      assert.equal(sameTree(parseDer(probe), t), null);
      // [APPLICATION 10] SEQUENCE { ..., [4] KDC-REQ-BODY { ..., [8] SEQUENCE OF Int32 } }
      const body = kids(kids(kids(t)[0]!).at(-1)!)[0]!;
      const etypeField = kids(body).find((f) => f.idBlock.tagNumber === 8)!;
      const etype = kids(kids(etypeField)[0]!)[0] as asn1js.Integer;
      assert.equal(Number(etype.toBigInt()), v | 0, `etype ${v | 0} as asn1js reads it`);
    }
  });
});
