/**
 * LDAP request decoding, our BER reader (src/ldap/ber.ts) against asn1js:
 * the paged SearchRequest OpenLDAP's ldapsearch sends for
 * `ldapsearch -E pr=2/noprompt '(&(uid=al*)(objectClass=person)(!(cn=x)))' cn mail`,
 * decoded to the same typed object by both (asn1js parses, then the fields
 * are read from its tree, as a decoder built on it would have to). Prints
 * microseconds per message for each and the ratio asn1js / ours; the figure
 * is quoted in the header of src/ldap/ber.ts.
 *   node --import tsx bench/ldap-ber.ts [--messages N] [--rounds R]
 */
import assert from 'node:assert/strict';
import { parseArgs } from 'node:util';
import * as asn1js from 'asn1js';
import type { Filter } from '../src/directory/filter.js';
import { pagedResultsControl } from '../src/ldap/controls.js';
import { decodeRequest, encodeMessage } from '../src/ldap/protocol.js';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' } } });
const N = Number(values.messages);
const ROUNDS = Number(values.rounds);

const filter: Filter = {
  kind: 'and',
  items: [
    { kind: 'sub', attr: 'uid', initial: 'al', any: [] },
    { kind: 'eq', attr: 'objectClass', value: 'person' },
    { kind: 'not', item: { kind: 'eq', attr: 'cn', value: 'x' } },
  ],
};
const pdu = encodeMessage({
  messageId: 2,
  protocolOp: { op: 'searchRequest', baseObject: 'dc=example,dc=test', scope: 'wholeSubtree', derefAliases: 'neverDerefAliases', sizeLimit: 0, timeLimit: 0, typesOnly: false, filter, attributes: ['cn', 'mail'] },
  controls: [pagedResultsControl({ size: 2, cookie: Buffer.alloc(0) })],
});

// ---- the same decoder on asn1js ---------------------------------------------------------

type Node = asn1js.AsnType;
const kids = (n: Node): Node[] => (n.valueBlock as unknown as { value: Node[] }).value;
const hex = (n: Node): Uint8Array => (n.valueBlock as unknown as { valueHexView: Uint8Array }).valueHexView;
const text = (n: Node): string => Buffer.from(hex(n)).toString('utf8');
const dec = (n: Node): number => (n.valueBlock as unknown as { valueDec: number }).valueDec;
const tagOf = (n: Node): number => n.idBlock.tagNumber;
const SCOPES = ['baseObject', 'singleLevel', 'wholeSubtree'] as const;
const DEREFS = ['neverDerefAliases', 'derefInSearching', 'derefFindingBaseObj', 'derefAlways'] as const;

function theirFilter(n: Node): Filter {
  switch (tagOf(n)) {
    case 0:
      return { kind: 'and', items: kids(n).map(theirFilter) };
    case 1:
      return { kind: 'or', items: kids(n).map(theirFilter) };
    case 2:
      return { kind: 'not', item: theirFilter(kids(n)[0]!) };
    case 3:
    case 8:
      return { kind: 'eq', attr: text(kids(n)[0]!), value: text(kids(n)[1]!) };
    case 5:
      return { kind: 'ge', attr: text(kids(n)[0]!), value: text(kids(n)[1]!) };
    case 6:
      return { kind: 'le', attr: text(kids(n)[0]!), value: text(kids(n)[1]!) };
    case 7:
      return { kind: 'present', attr: text(n) };
    case 4: {
      const [type, subs] = kids(n);
      const f: Extract<Filter, { kind: 'sub' }> = { kind: 'sub', attr: text(type!), any: [] };
      for (const s of kids(subs!)) {
        if (tagOf(s) === 0) f.initial = text(s);
        else if (tagOf(s) === 1) f.any.push(text(s));
        else f.final = text(s);
      }
      return f;
    }
    default:
      throw new Error('unsupported filter');
  }
}

function theirDecode(bytes: Buffer) {
  const r = asn1js.fromBER(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  if (r.offset !== bytes.length || r.result.error) throw new Error('asn1js: ' + r.result.error);
  const [id, op, ctl] = kids(r.result);
  const f = kids(op!);
  const controls = ctl
    ? kids(ctl).map((c) => {
        const [type, ...rest] = kids(c);
        const crit = rest[0] instanceof asn1js.Boolean ? (rest.shift() as asn1js.Boolean).getValue() : false;
        return { type: text(type!), criticality: crit, value: rest[0] ? Buffer.from(hex(rest[0])) : undefined };
      })
    : [];
  return {
    messageId: dec(id!),
    protocolOp: {
      op: 'searchRequest',
      baseObject: text(f[0]!),
      scope: SCOPES[dec(f[1]!)],
      derefAliases: DEREFS[dec(f[2]!)],
      sizeLimit: dec(f[3]!),
      timeLimit: dec(f[4]!),
      typesOnly: (f[5] as asn1js.Boolean).getValue(),
      filter: theirFilter(f[6]!),
      attributes: kids(f[7]!).map(text),
    },
    controls,
  };
}

// both must read the same message before either is timed
assert.deepEqual(JSON.parse(JSON.stringify(theirDecode(pdu))), JSON.parse(JSON.stringify(decodeRequest(pdu))));

function time(fn: (b: Buffer) => unknown): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) fn(pdu);
    best = Math.min(best, performance.now() - t0);
  }
  return (best * 1000) / N;
}

time(decodeRequest); // warm-up
time(theirDecode);
const ours = time(decodeRequest);
const theirs = time(theirDecode);
console.log(`SearchRequest of ${pdu.length} octets, best of ${ROUNDS} rounds of ${N}`);
console.log(`ours (src/ldap):  ${ours.toFixed(3)} µs/message  (${Math.round(1e6 / ours)}/s)`);
console.log(`asn1js + fields:  ${theirs.toFixed(3)} µs/message  (${Math.round(1e6 / theirs)}/s)`);
console.log(`ratio asn1js/ours: ${(theirs / ours).toFixed(1)}x`);
