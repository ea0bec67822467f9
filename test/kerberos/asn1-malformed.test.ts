/**
 * Malformed input never crashes a decoder: every truncation, trailing
 * garbage, seeded random corruption, wrong tags and absurd lengths of the
 * captured MIT messages raise Asn1Error and nothing else.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Asn1Error, parseDer } from '../../src/kerberos/asn1/der.js';
import { decodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeEncKdcRepPart, decodeKdcRep } from '../../src/kerberos/asn1/kdc-rep.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeApReq, decodeApRep, decodeAuthenticator, decodeEncApRepPart } from '../../src/kerberos/asn1/ap-req.js';
import { decodeEncTicketPart, decodeTicket } from '../../src/kerberos/asn1/ticket.js';
import { decodeFastArmoredRep, decodeFastArmoredReq, decodeFastReq, decodeFastResponse } from '../../src/kerberos/asn1/fast.js';
import { decodeEtypeInfo, decodeEtypeInfo2, decodeMethodData, decodePaEncTsEnc, decodePaPacRequest } from '../../src/kerberos/asn1/padata.js';
import { decodeEncKrbCredPart, decodeKrbCred } from '../../src/kerberos/asn1/krb-cred.js';
import { decodeAdKdcIssued } from '../../src/kerberos/asn1/ad.js';
import { decodeAdCammac, decodeAuthIndicators } from '../../src/kerberos/asn1/cammac.js';
import { decodeGssChecksum, decodeInitialContextToken, decodeKrb5Token } from '../../src/kerberos/asn1/gss.js';
import { decodeNegotiationToken } from '../../src/kerberos/asn1/spnego.js';

const dataDir = new URL('../data/kerberos/mit/', import.meta.url);
const data = (name: string) => readFileSync(new URL(name, dataDir));
const index = JSON.parse(data('index.json').toString()) as Array<{ file: string; dir: 'req' | 'rep' }>;

/** Runs `fn`; any exception other than Asn1Error fails the test. */
function onlyAsn1Error(fn: () => unknown, what: string): boolean {
  try {
    fn();
    return true;
  } catch (e) {
    assert.ok(e instanceof Asn1Error, `${what}: ${e instanceof Error ? e.stack : String(e)}`);
    return false;
  }
}

function decoderFor(raw: Buffer): (b: Buffer) => unknown {
  const tag = raw[0]! & 0x1f;
  return tag === 10 || tag === 12 ? decodeKdcReq : tag === 30 ? decodeKrbError : decodeKdcRep;
}

let seed = 20261122;
const rnd = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};

describe('captured messages, damaged', () => {
  for (const { file } of index) {
    it(file, () => {
      const raw = data(file);
      const decode = decoderFor(raw);
      for (let len = 0; len < raw.length; len++) assert.throws(() => decode(raw.subarray(0, len)), Asn1Error, `cut at ${len}`);
      assert.throws(() => decode(Buffer.concat([raw, Buffer.from([0])])), Asn1Error, 'trailing byte');
      for (let i = 0; i < 150; i++) {
        const b = Buffer.from(raw);
        for (let k = 1 + rnd(3); k > 0; k--) b[rnd(b.length)] = rnd(256);
        onlyAsn1Error(() => decode(b), `mutation ${i}`);
      }
      // another message type's decoder on this message: wrong tag
      for (const other of [decodeKdcReq, decodeKdcRep, decodeKrbError, decodeApReq, decodeTicket, decodeAuthenticator]) {
        if (other !== decode) assert.throws(() => other(raw), Asn1Error);
      }
    });
  }
});

describe('hostile encodings', () => {
  it('absurd, indefinite and non-minimal lengths, deep nesting and empty input', () => {
    for (const hex of ['6a84ffffffff', '6a8500000001', '6a803080', '6a8100', '6a820005', '', '1f', '6a', '7f8080808001']) {
      assert.throws(() => decodeKdcReq(Buffer.from(hex, 'hex')), Asn1Error, hex);
    }
    let deep = Buffer.from([0x05, 0x00]);
    for (let i = 0; i < 40; i++) deep = Buffer.concat([Buffer.from([0x30, deep.length]), deep]);
    assert.throws(() => parseDer(deep), /nested too deeply/);
  });

  it('KerberosTime: fractions, offsets and impossible dates are refused', () => {
    const cut = data('kinit-01-req.der');
    const body = cut.toString('latin1');
    const till = /\d{14}Z/.exec(body)!;
    for (const bad of ['20261301000000Z', '20260230000000Z', '20261122250000Z']) {
      const b = Buffer.from(cut);
      b.write(bad, till.index, 'latin1');
      assert.throws(() => decodeKdcReq(b), /KerberosTime/);
    }
  });

  it('every decoder refuses random bytes with Asn1Error only', () => {
    const decoders: Array<(b: Buffer) => unknown> = [
      decodeKdcReq, decodeKdcRep, decodeKrbError, decodeApReq, decodeApRep, decodeAuthenticator, decodeEncApRepPart, decodeTicket, decodeEncTicketPart,
      decodeEncKdcRepPart, decodeFastArmoredReq, decodeFastArmoredRep, decodeFastReq, decodeFastResponse, decodeEtypeInfo, decodeEtypeInfo2, decodeMethodData,
      decodePaEncTsEnc, decodePaPacRequest, decodeKrbCred, decodeEncKrbCredPart, decodeAdKdcIssued, decodeGssChecksum, decodeInitialContextToken, decodeKrb5Token,
      decodeNegotiationToken, decodeAdCammac, decodeAuthIndicators,
    ];
    for (let i = 0; i < 300; i++) {
      const b = Buffer.alloc(rnd(40));
      for (let k = 0; k < b.length; k++) b[k] = rnd(256);
      if (i % 3 === 0 && b.length > 2) b[0] = [0x30, 0x60, 0x6a, 0xa0, 0xa1][rnd(5)]!;
      for (const d of decoders) onlyAsn1Error(() => d(b), `${d.name} on ${b.toString('hex')}`);
    }
  });

  it('the SPNEGO token from curl, damaged', () => {
    const token = Buffer.from(data('curl-negotiate.b64').toString().trim(), 'base64');
    for (let len = 0; len < token.length; len += 7) assert.throws(() => decodeNegotiationToken(token.subarray(0, len)), Asn1Error, `cut at ${len}`);
    for (let i = 0; i < 150; i++) {
      const b = Buffer.from(token);
      b[rnd(b.length)] = rnd(256);
      onlyAsn1Error(() => decodeNegotiationToken(b), `mutation ${i}`);
    }
  });
});
