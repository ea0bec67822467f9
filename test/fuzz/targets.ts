/**
 * The table of fuzz targets: every decoder that reads bytes from the
 * network, each with the errors it may throw on bad input (anything else is
 * a crash), its seeds (captures from MIT krb5, curl and ldapsearch under
 * test/data, and messages made by our own encoders) and, for text formats,
 * a dictionary of tokens the mutator inserts. The seed corpus committed
 * under test/data/fuzz/<target>/seeds.json is what `seeds()` built once
 * (`node --import tsx scripts/fuzz.ts --write-corpus`); docs/fuzzing.md.
 */
import fc from 'fast-check';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Asn1Error } from '../../src/kerberos/asn1/der.js';
import { decodeKdcReq, encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { decodeKdcRep } from '../../src/kerberos/asn1/kdc-rep.js';
import { decodeApReq, decodeApRep, decodeAuthenticator } from '../../src/kerberos/asn1/ap-req.js';
import { decodeKrbError, encodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeTicket } from '../../src/kerberos/asn1/ticket.js';
import { decodeEtypeInfo, decodeEtypeInfo2, decodeMethodData, decodePaEncTsEnc, decodePaPacRequest, encodeEtypeInfo2, encodePaEncTsEnc, encodePaPacRequest } from '../../src/kerberos/asn1/padata.js';
import { decodeEncryptedData } from '../../src/kerberos/asn1/primitives.js';
import { decodeFastArmoredRep, decodeFastArmoredReq, decodeFastReq, decodeFastResponse } from '../../src/kerberos/asn1/fast.js';
import {
  decodeAuthPack,
  decodeDhDomainParameters,
  decodeDhPublicValue,
  decodeKdcDhKeyInfo,
  decodePaPkAsRep,
  decodePaPkAsReq,
  decodeTdDhParameters,
  decodeTypedData,
} from '../../src/kerberos/asn1/pkinit.js';
import { decodeChangePasswdData, encodeChangePasswdData } from '../../src/kerberos/asn1/change-passwd.js';
import { decodeKrbPriv } from '../../src/kerberos/asn1/krb-priv.js';
import { decodeKpasswdReply, decodeKpasswdRequest, decodeKpasswdResult, encodeKpasswdRequest, KpasswdFormatError } from '../../src/kerberos/kpasswd.js';
import { decodeGssChecksum, decodeInitialContextToken, decodeKrb5Token, encodeKrb5Token, Oid, TokId } from '../../src/kerberos/asn1/gss.js';
import { decodeNegotiationToken, decodeNegTokenInit, decodeNegTokenResp, encodeNegTokenInit, encodeNegTokenResp, NegState } from '../../src/kerberos/asn1/spnego.js';
import { getMic, GssError, unwrap, verifyMic, wrap, type TokenKeys } from '../../src/kerberos/gss-tokens.js';
import { SaslGssapiError, SaslGssapiServer, SaslLayer } from '../../src/kerberos/sasl-gssapi.js';
import { ReplayCache } from '../../src/kerberos/replay-cache.js';
import { PaType } from '../../src/kerberos/iana.js';
import { splitTcpMessages } from '../../src/kdc/listener.js';
import { CodecError, type RpcRequest, type RpcResponse } from '../../src/rpc/codec/types.js';
import { decodeJsonRequest, decodeJsonResponse, encodeJsonRequest, encodeJsonResponse } from '../../src/rpc/codec/json.js';
import { decodeXmlRequest, decodeXmlResponse, encodeXmlRequest, encodeXmlResponse } from '../../src/rpc/codec/xml.js';
import { parseCookies } from '../../src/rpc/session.js';
import { createNegotiator, NegotiateError } from '../../src/rpc/negotiate.js';
import { AuthRefusal } from '../../src/objects/login.js';
import type { Accounts } from '../../src/account/state.js';
import { BerReader, encodeBer, LdapDecodeError } from '../../src/ldap/ber.js';
import { LdapFramer } from '../../src/ldap/framing.js';
import { decodeRequest, decodeResponse, encodeMessage } from '../../src/ldap/protocol.js';
import { decodeFilter, encodeFilter, formatFilter } from '../../src/ldap/filter.js';
import { decodePagedResultsValue, encodePagedResultsValue } from '../../src/ldap/controls.js';
import { decodePasswordModifyRequest, encodePasswordModifyRequest } from '../../src/ldap/extended.js';
import { parseFilter, type Filter } from '../../src/directory/filter.js';
import { normalizeDn, parseDn } from '../../src/directory/dn.js';
import { CookieJar } from '../../src/kdc/cookie-jar.js';
import { SessionCodec } from '../../src/rpc/session.js';
import { SaslFrameError, SaslFrameReader } from '../../src/ldap-server/sasl-frames.js';
import { DirectoryError } from '../../src/directory/types.js';
import { CAPTURED_BIND, CAPTURED_SEARCH, REQUESTS, RESPONSES } from '../ldap/vectors.js';

type ErrorClass = abstract new (...args: never[]) => Error;

export interface FuzzTarget {
  name: string;
  /** what is decoded, for reports and docs */
  what: string;
  /** the errors a refusal may be; anything else thrown is a crash */
  expected: readonly ErrorClass[];
  /** decodes one input; returns a promise when `async` */
  decode(input: Buffer): unknown;
  async?: boolean;
  /** the seeds, built from captures and our encoders (the committed corpus is a frozen copy) */
  seeds(): Buffer[];
  /** DER or BER: also mutate whole elements (swap, drop, repeat) */
  tree?: boolean;
  /** tokens the mutator inserts (text formats) */
  dictionary?: Buffer[];
  /** well-formed-ish inputs from a grammar, mixed in with the mutated seeds */
  generated?: fc.Arbitrary<Buffer>;
  maxRandomLength?: number;
}

const here = dirname(fileURLToPath(import.meta.url));
export const DATA = join(here, '..', 'data');
export const CORPUS = join(DATA, 'fuzz');
export const CRASHES = join(CORPUS, 'crashes');

const mit = (f: string): Buffer => readFileSync(join(DATA, 'kerberos', 'mit', f));
const mitReqs = (): Buffer[] =>
  readdirSync(join(DATA, 'kerberos', 'mit'))
    .filter((f) => /-req\.der$/.test(f))
    .sort()
    .map(mit);
const mitReps = (): Buffer[] =>
  readdirSync(join(DATA, 'kerberos', 'mit'))
    .filter((f) => /-rep\.der$/.test(f))
    .sort()
    .map(mit);
/** curl --negotiate's Authorization token: SPNEGO around the Kerberos AP-REQ token */
const curlToken = (): Buffer => Buffer.from(mit('curl-negotiate.b64').toString('ascii').trim(), 'base64');
/** the Kerberos mechanism token inside it */
const curlKrbToken = (): Buffer => decodeNegTokenInit(decodeInitialContextToken(curlToken()).inner).mechToken!;
const pkinitCapture = (f: string): Buffer => readFileSync(join(DATA, 'kerberos', 'pkinit', f));

/** The padata of the captured requests and KRB-ERRORs' METHOD-DATA, by type. */
function capturedPadata(type: number): Buffer[] {
  const out: Buffer[] = [];
  for (const b of mitReqs()) for (const p of decodeKdcReq(b).padata) if (p.type === type) out.push(p.value);
  for (const b of mitReps()) {
    try {
      for (const p of decodeKdcRep(b).padata ?? []) if (p.type === type) out.push(p.value);
    } catch {
      try {
        const e = decodeKrbError(b);
        if (e.eData) for (const p of decodeMethodData(e.eData)) if (p.type === type) out.push(p.value);
      } catch {
        /* neither: not a seed */
      }
    }
  }
  return out;
}

/** Runs every decoder on the input: each may refuse it only with one of `expected`. */
function each(expected: readonly ErrorClass[], ...decoders: Array<(b: Buffer) => unknown>): (b: Buffer) => void {
  return (b) => {
    for (const d of decoders) {
      try {
        d(b);
      } catch (e) {
        if (!expected.some((c) => e instanceof c)) throw e;
      }
    }
  };
}

const ascii = (...tokens: string[]): Buffer[] => tokens.map((t) => Buffer.from(t, 'utf8'));

// ---- GSS per-message tokens: fixed keys, so the corpus is reproducible ----
const KEY18 = { etype: 18, value: Buffer.alloc(32, 0x5a) };
const SUB17 = { etype: 17, value: Buffer.alloc(16, 0xa5) };
const initiator: TokenKeys = { role: 'initiator', initiatorKey: KEY18 };
const acceptor: TokenKeys = { role: 'acceptor', initiatorKey: KEY18 };
const acceptorSub: TokenKeys = { role: 'acceptor', initiatorKey: KEY18, acceptorSubkey: SUB17 };
const initiatorSub: TokenKeys = { role: 'initiator', initiatorKey: KEY18, acceptorSubkey: SUB17 };

// ---- a stand-in for the directory behind the Negotiate acceptor: it knows no principal ----
const noAccounts = {
  find: async () => null,
  dir: { readSecret: async () => [] },
  policy: async () => ({}),
} as unknown as Accounts;
const negotiate = createNegotiator(noAccounts, async (name) => name === 'HTTP/localhost@EXAMPLE.TEST');
const noKeys = async () => null;

// ---- sealed state that comes back from clients: fixed keys, so the corpus is reproducible ----
const MASTER = Buffer.alloc(32, 0x33);
const fxJar = new CookieJar(Buffer.alloc(32, 0x44));
const sessions = new SessionCodec(MASTER, 1200, () => Date.UTC(2030, 0, 1));

/** plain objects, as our decoders make them */
const NOPROTO = { noNullPrototype: true } as const;

// ---- LDAP filters: a generator of valid filters (also used by the round-trip properties) ----
const attrArb = fc.oneof(
  fc.constantFrom('cn', 'uid', 'objectClass', 'mail', 'sn', 'memberOf', '2.5.4.3', 'cn;lang-en'),
  fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,12}$/),
);
const valueArb = fc.string({ maxLength: 12, unit: fc.oneof(fc.constantFrom('a', 'Z', ' ', '*', '(', ')', '\\', '\u0001', 'é', '😀'), fc.string({ minLength: 1, maxLength: 1, unit: 'grapheme' })) }).filter((s) => !s.includes('\u0000'));
const nonEmptyValue = valueArb.filter((s) => s.length > 0);
export const filterArb: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('eq' as const), attr: attrArb, value: valueArb }, NOPROTO),
    fc.record({ kind: fc.constantFrom('ge' as const, 'le' as const), attr: attrArb, value: valueArb }, NOPROTO),
    fc.record({ kind: fc.constant('present' as const), attr: attrArb }, NOPROTO),
    fc.record(
      { kind: fc.constant('sub' as const), attr: attrArb, initial: nonEmptyValue, any: fc.array(nonEmptyValue, { maxLength: 3 }), final: nonEmptyValue },
      { requiredKeys: ['kind', 'attr', 'any'], noNullPrototype: true },
    ).filter((f) => f.initial !== undefined || f.any.length > 0 || f.final !== undefined),
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('f'), { maxLength: 4 }) }, NOPROTO),
    fc.record({ kind: fc.constant('not' as const), item: tie('f') }, NOPROTO),
  ),
})).f;

export const berFilter = (f: Filter): Buffer => encodeBer(encodeFilter(f));

/** Splits the input into chunks (sizes from a small cycle) as a socket might deliver it. */
function chunks(b: Buffer): Buffer[] {
  const sizes = [1, 3, 7, 64, 2, 1024];
  const out: Buffer[] = [];
  let i = 0;
  for (let at = 0; at < b.length; i++) {
    const n = sizes[(b[0]! + i) % sizes.length]!;
    out.push(b.subarray(at, at + n));
    at += n;
  }
  return out;
}

const KDC_TCP_MAX = 4096;

const requests = (): RpcRequest[] => [
  { method: 'ping', args: [], options: {}, id: 0 },
  { method: 'user_show', args: ['alice'], options: { all: true, rights: false }, id: 1 },
  { method: 'user_add', args: ['bob'], options: { givenname: 'Bob', sn: 'Ü', userpassword: 'x', mail: ['a@b', 'c@d'], n: 3.5, when: new Date(Date.UTC(2024, 0, 2, 3, 4, 5)), blob: Buffer.from([0, 1, 2]) }, id: 'abc' },
  { method: 'batch', args: [[{ method: 'ping', params: [[], {}] }]], options: { nested: { a: [null, true, -1] } }, id: null },
];

const responses = (): RpcResponse[] => [
  { result: { result: { uid: ['alice'] }, value: 'alice', summary: null }, error: null, id: 1, principal: 'admin@EXAMPLE.TEST', version: '1.0' },
  { result: null, error: { code: 4001, name: 'NotFound', message: 'alice: user not found', data: { key: 'alice' } }, id: 2, principal: null, version: '1.0' },
];

export const targets: FuzzTarget[] = [
  {
    name: 'krb-kdc-req',
    tree: true,
    what: 'AS-REQ and TGS-REQ (kerberos/asn1/kdc-req.ts decodeKdcReq)',
    expected: [Asn1Error],
    decode: (b) => decodeKdcReq(b),
    seeds: () => [
      ...mitReqs(),
      encodeKdcReq({
        msgType: 10,
        padata: [{ type: PaType.PAC_REQUEST, value: encodePaPacRequest({ includePac: true }) }],
        body: {
          kdcOptions: 0x40000010,
          cname: { nameType: 1, nameString: ['alice'] },
          realm: 'EXAMPLE.TEST',
          sname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] },
          till: new Date(Date.UTC(2037, 0, 1)),
          nonce: 12345,
          etypes: [18, 17, 20, 19],
        },
      }),
    ],
  },
  {
    name: 'krb-kdc-rep',
    tree: true,
    what: 'AS-REP and TGS-REP as the client reads them (kdc-rep.ts decodeKdcRep), and the tickets in them',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeKdcRep, decodeTicket),
    seeds: () => [...mitReps(), ...mitReps().flatMap((b) => { try { return [decodeKdcRep(b).ticket.raw]; } catch { return []; } })],
  },
  {
    name: 'krb-ap-req',
    tree: true,
    what: 'AP-REQ (PA-TGS-REQ, GSS tokens), AP-REP, Authenticator, EncryptedData (ap-req.ts, primitives.ts)',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeApReq, decodeApRep, decodeAuthenticator, decodeEncryptedData),
    seeds: () => [...capturedPadata(PaType.TGS_REQ), decodeKrb5Token(curlKrbToken()).message, ...capturedPadata(PaType.ENC_TIMESTAMP)],
  },
  {
    name: 'krb-error',
    tree: true,
    what: 'KRB-ERROR (krb-error.ts decodeKrbError) and its METHOD-DATA e-data',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeKrbError, decodeMethodData),
    seeds: () => {
      const errs = mitReps().filter((b) => b[0] === 0x7e);
      const eData = errs.flatMap((b) => { const e = decodeKrbError(b).eData; return e ? [e] : []; });
      return [
        ...errs,
        ...eData,
        encodeKrbError({ stime: new Date(Date.UTC(2024, 5, 1, 12)), susec: 5, errorCode: 25, realm: 'EXAMPLE.TEST', sname: { nameType: 2, nameString: ['krbtgt', 'EXAMPLE.TEST'] }, eText: 'NEEDED_PREAUTH', eData: Buffer.from('3000', 'hex') }),
      ];
    },
  },
  {
    name: 'krb-padata',
    tree: true,
    what: 'PA-DATA payloads: PA-ENC-TIMESTAMP, ETYPE-INFO, ETYPE-INFO2, PA-PAC-REQUEST, METHOD-DATA (padata.ts)',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodePaEncTsEnc, decodeEtypeInfo2, decodeEtypeInfo, decodePaPacRequest, decodeMethodData),
    seeds: () => [
      ...capturedPadata(PaType.ETYPE_INFO2),
      ...capturedPadata(PaType.PAC_REQUEST),
      encodePaEncTsEnc({ patimestamp: new Date(Date.UTC(2024, 1, 29, 23, 59, 59)), pausec: 999999 }),
      encodeEtypeInfo2([{ etype: 18, salt: 'EXAMPLE.TESTalice', s2kparams: Buffer.from('00008000', 'hex') }, { etype: 17 }]),
    ],
  },
  {
    name: 'krb-fast',
    tree: true,
    what: 'FAST: PA-FX-FAST armored request and reply, KrbFastReq, KrbFastResponse (fast.ts)',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeFastArmoredReq, decodeFastArmoredRep, decodeFastReq, decodeFastResponse),
    seeds: () => capturedPadata(PaType.FX_FAST),
  },
  {
    name: 'krb-pkinit',
    tree: true,
    what: "PKINIT's Kerberos-side messages: PA-PK-AS-REQ, AuthPack, DH values and parameters, TYPED-DATA, PA-PK-AS-REP, KDCDHKeyInfo (asn1/pkinit.ts)",
    expected: [Asn1Error],
    decode: each([Asn1Error], decodePaPkAsReq, decodeAuthPack, decodeDhPublicValue, decodeDhDomainParameters, decodeTdDhParameters, decodeTypedData, decodePaPkAsRep, decodeKdcDhKeyInfo),
    seeds: () => [pkinitCapture('kinit-n-pa-pk-as-req.der'), pkinitCapture('mit-kdc-pa-pk-as-rep.der'), ...capturedPadata(PaType.PK_AS_REQ)],
  },
  {
    name: 'kpasswd',
    what: 'password-change framing (kerberos/kpasswd.ts), KRB-PRIV and ChangePasswdData',
    expected: [KpasswdFormatError, Asn1Error],
    decode: each([KpasswdFormatError, Asn1Error], decodeKpasswdRequest, decodeKpasswdReply, decodeKpasswdResult, decodeKrbPriv, decodeChangePasswdData),
    seeds: () => {
      const apReq = capturedPadata(PaType.TGS_REQ)[0]!;
      const priv = Buffer.from('75173015a003020105a103020115a309300702011202021234', 'hex');
      return [
        encodeKpasswdRequest({ version: 1, apReq, krbPriv: priv }),
        encodeKpasswdRequest({ version: 0xff80, apReq, krbPriv: priv }),
        encodeChangePasswdData({ newPassword: Buffer.from('n3w passwörd'), targetName: { nameType: 1, nameString: ['bob'] }, targetRealm: 'EXAMPLE.TEST' }),
        priv,
      ];
    },
  },
  {
    name: 'kdc-tcp-framing',
    what: "the KDC's and password service's TCP length-prefix framing (kdc/listener.ts splitTcpMessages)",
    expected: [],
    decode: (b) => {
      // the input as one buffer and as socket chunks: the same messages either way, and every byte accounted for
      const whole = splitTcpMessages(b, KDC_TCP_MAX);
      let used = whole.rest.length;
      for (const m of whole.messages) used += 4 + m.length;
      if (!whole.refused && used !== b.length) throw new Error(`framing lost bytes: ${used} of ${b.length}`);
      let buf: Buffer = Buffer.alloc(0);
      let n = 0;
      for (const c of chunks(b)) {
        const r = splitTcpMessages(Buffer.concat([buf, c]), KDC_TCP_MAX);
        n += r.messages.length;
        buf = r.rest;
        if (r.refused) break;
      }
      if (n !== whole.messages.length) throw new Error('chunked framing differs');
    },
    seeds: () => {
      const frame = (m: Buffer) => Buffer.concat([Buffer.from([0, 0, m.length >> 8, m.length & 0xff]), m]);
      const reqs = mitReqs().filter((r) => r.length < KDC_TCP_MAX);
      return [frame(reqs[0]!), Buffer.concat(reqs.slice(0, 3).map(frame)), Buffer.from('8000000030', 'hex')];
    },
  },
  {
    name: 'gss-token',
    tree: true,
    what: 'GSS-API initial context tokens, Kerberos mechanism tokens, the GSS checksum (asn1/gss.ts)',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeInitialContextToken, decodeKrb5Token, decodeGssChecksum),
    seeds: () => {
      const apReq = decodeKrb5Token(curlKrbToken()).message;
      return [
        curlToken(),
        curlKrbToken(),
        encodeKrb5Token(TokId.AP_REQ, apReq),
        encodeKrb5Token(TokId.AP_REP, Buffer.from('6f0a3008a003020105a10302010f', 'hex'), Oid.MS_KRB5),
        Buffer.from('10000000' + '00'.repeat(16) + '3e000000', 'hex'),
        Buffer.from('10000000' + '00'.repeat(16) + '3f000000' + '0100' + '0400' + 'deadbeef', 'hex'),
      ];
    },
  },
  {
    name: 'spnego',
    tree: true,
    what: 'SPNEGO NegTokenInit and NegTokenResp (asn1/spnego.ts)',
    expected: [Asn1Error],
    decode: each([Asn1Error], decodeNegotiationToken, decodeNegTokenInit, decodeNegTokenResp),
    seeds: () => {
      const t = decodeInitialContextToken(curlToken());
      const krb = encodeKrb5Token(TokId.AP_REQ, Buffer.from('6e00', 'hex'));
      return [
        t.inner,
        encodeNegTokenInit({ mechTypes: [Oid.KRB5, Oid.MS_KRB5], mechToken: krb }, false),
        encodeNegTokenResp({ negState: NegState.ACCEPT_COMPLETED, supportedMech: Oid.KRB5, responseToken: Buffer.from('6f00', 'hex') }),
        encodeNegTokenResp({ negState: NegState.REJECT }),
      ];
    },
  },
  {
    name: 'gss-per-message',
    what: 'RFC 4121 MIC and Wrap tokens as an acceptor and an initiator read them (gss-tokens.ts unwrap, verifyMic)',
    expected: [GssError],
    decode: each([GssError], (b) => unwrap(acceptor, b), (b) => unwrap(initiatorSub, b), (b) => verifyMic(acceptor, Buffer.from('m'), b), (b) => verifyMic(acceptorSub, Buffer.from('m'), b)),
    seeds: () => [
      wrap(initiator, 1, Buffer.from('hello'), { conf: true }),
      wrap(initiator, 2, Buffer.from('hello'), { conf: false }),
      wrap(initiator, 3, Buffer.from('hello'), { conf: true, rrc: 28, ec: 4 }),
      wrap(acceptorSub, 4, Buffer.from('hi'), { conf: true }),
      getMic(initiator, 5, Buffer.from('m')),
      getMic(initiatorSub, 6, Buffer.from('m')),
    ],
  },
  {
    name: 'http-negotiate',
    tree: true,
    what: 'the Authorization: Negotiate token as the API accepts it: SPNEGO or a bare Kerberos token, to the GSS acceptor (rpc/negotiate.ts)',
    expected: [NegotiateError, GssError, Asn1Error, AuthRefusal],
    async: true,
    decode: (b) => negotiate(b.toString('base64')),
    seeds: () => [curlToken(), decodeInitialContextToken(curlToken()).inner, encodeKrb5Token(TokId.AP_REQ, decodeKrb5Token(curlKrbToken()).message)],
  },
  {
    name: 'sasl-gssapi',
    tree: true,
    what: "SASL GSSAPI's first client response (the GSS initial token) as the LDAP service takes it (sasl-gssapi.ts)",
    expected: [SaslGssapiError],
    async: true,
    decode: (b) => new SaslGssapiServer({ layers: SaslLayer.NONE | SaslLayer.INTEGRITY, keyFor: noKeys, replay: new ReplayCache(1000, 10) }).step(b),
    seeds: () => [curlKrbToken(), curlToken()],
  },
  {
    name: 'json-rpc',
    what: 'JSON-RPC request bodies (server) and response bodies (client) (rpc/codec/json.ts)',
    expected: [CodecError],
    decode: each([CodecError], decodeJsonRequest, decodeJsonResponse),
    seeds: () => [...requests().map((r) => Buffer.from(encodeJsonRequest(r))), ...responses().map((r) => Buffer.from(encodeJsonResponse(r)))],
    dictionary: ascii('{', '}', '[', ']', '"', ':', ',', '\\u0000', '\\ud800', '"__proto__"', '"__base64__"', '"__datetime__"', '1e999', '-0', 'null', 'true', '"method"', '"params"', '\uFEFF', '[[[[[[[['),
  },
  {
    name: 'xml-rpc',
    what: 'XML-RPC request bodies (server) and response bodies (client) (rpc/codec/xml.ts)',
    expected: [CodecError],
    decode: each([CodecError], decodeXmlRequest, decodeXmlResponse),
    seeds: () => [
      ...readdirSync(join(DATA, 'rpc-codec'))
        .filter((f) => f.endsWith('.xml'))
        .sort()
        .map((f) => readFileSync(join(DATA, 'rpc-codec', f))),
      ...requests().map((r) => Buffer.from(encodeXmlRequest(r))),
      ...responses().map((r) => Buffer.from(encodeXmlResponse(r))),
    ],
    dictionary: ascii('<value>', '</value>', '<struct>', '<member><name>a</name>', '<array><data>', '</data></array>', '<int>', '<i8>', '<double>', '<base64>', '<dateTime.iso8601>', '<nil/>', '<![CDATA[', ']]>', '<!DOCTYPE x [<!ENTITY a "aaaa">]>', '&a;', '&#0;', '&#x10FFFF;', '&lt;', '<?xml version="1.0"?>', '<!--', '-->'),
  },
  {
    name: 'http-cookie',
    what: 'the Cookie header (rpc/session.ts parseCookies)',
    expected: [],
    decode: (b) => {
      const jar = parseCookies(b.toString('latin1'));
      if (Object.getPrototypeOf(jar) !== null) throw new Error('cookie jar has a prototype');
    },
    seeds: () => ascii('dirid_session=abc.def-ghi; other=1', 'a=b;c=d; e =f ;=g; h', '__proto__=x; constructor=y'),
    dictionary: ascii(';', '=', ' ', 'dirid_session', '__proto__', '"', ','),
  },
  {
    name: 'ldap-message',
    tree: true,
    what: 'LDAP request PDUs (server) and response PDUs (ldap/protocol.ts decodeRequest, decodeResponse)',
    expected: [LdapDecodeError],
    decode: each([LdapDecodeError], decodeRequest, decodeResponse),
    seeds: () => [CAPTURED_BIND, CAPTURED_SEARCH, ...REQUESTS.map((m) => encodeMessage(m)), ...RESPONSES.map((m) => encodeMessage(m))],
  },
  {
    name: 'ldap-framing',
    tree: true,
    what: 'the LDAP stream cut into PDUs, delivered in chunks (ldap/framing.ts LdapFramer)',
    expected: [LdapDecodeError],
    decode: (b) => {
      const framer = new LdapFramer({ maxMessageSize: 4096 });
      for (const c of chunks(b)) {
        framer.push(c);
        while (framer.next() !== undefined);
      }
    },
    seeds: () => [Buffer.concat([CAPTURED_BIND, CAPTURED_SEARCH]), ...REQUESTS.slice(0, 4).map((m) => encodeMessage(m))],
  },
  {
    name: 'ldap-filter',
    tree: true,
    what: 'BER search filters (ldap/filter.ts decodeFilter)',
    expected: [LdapDecodeError],
    decode: (b) => decodeFilter(BerReader.of(b)),
    seeds: () => fc.sample(filterArb, { numRuns: 12, seed: 16 }).map(berFilter),
    generated: filterArb.map(berFilter),
  },
  {
    name: 'ldap-values',
    tree: true,
    what: 'control and extended-operation values: paged results, Password Modify (ldap/controls.ts, extended.ts)',
    expected: [LdapDecodeError],
    decode: each([LdapDecodeError], decodePagedResultsValue, decodePasswordModifyRequest),
    seeds: () => [
      encodePagedResultsValue({ size: 100, cookie: Buffer.from('c00k1e') }),
      encodePasswordModifyRequest({ userIdentity: 'uid=alice,cn=users,dc=example,dc=test', oldPasswd: Buffer.from('old'), newPasswd: Buffer.from('new') }),
    ],
  },
  {
    name: 'text-filter',
    what: 'RFC 4515 filter strings (directory/filter.ts parseFilter), as the API and LDAP clients write them',
    expected: [DirectoryError],
    decode: (b) => parseFilter(b.toString('utf8')),
    seeds: () => {
      const ex = JSON.parse(readFileSync(join(here, '..', 'directory', 'rfc4515-examples.json'), 'utf8')) as { accepted: Array<{ filter: string }> };
      return [...ex.accepted.map((e) => Buffer.from(e.filter)), ...fc.sample(filterArb, { numRuns: 8, seed: 4515 }).map((f) => Buffer.from(formatFilter(f)))];
    },
    generated: filterArb.map((f) => Buffer.from(formatFilter(f))),
    dictionary: ascii('(', ')', '&', '|', '!', '=', '>=', '<=', '~=', ':', ':dn:', '*', '\\', '\\2a', '\\00', '\\c3', '\\ff', ' ', ';lang-en', '(&', '(|(', '(!('),
  },
  {
    name: 'sasl-frames',
    what: 'the SASL security-layer stream: 4-octet length frames (ldap-server/sasl-frames.ts), each Wrap token unwrapped (gss-tokens.ts)',
    expected: [SaslFrameError, GssError],
    decode: (b) => {
      const reader = new SaslFrameReader(4096);
      for (const c of chunks(b)) {
        reader.push(c);
        for (let t = reader.next(); t !== undefined; t = reader.next()) {
          try {
            unwrap(acceptor, t);
          } catch (e) {
            if (!(e instanceof GssError)) throw e;
          }
        }
      }
    },
    seeds: () => {
      const frame = (t: Buffer) => Buffer.concat([Buffer.from([0, 0, t.length >> 8, t.length & 0xff]), t]);
      return [frame(wrap(initiator, 1, Buffer.from('0\x0c\x02\x01\x01'), { conf: false })), Buffer.concat([frame(wrap(initiator, 2, Buffer.from('abc'), { conf: true })), frame(wrap(initiator, 3, Buffer.from('d'), { conf: true }))])];
    },
  },
  {
    name: 'kdc-fx-cookie',
    what: "the PA-FX-COOKIE a client hands back to the KDC (kdc/cookie-jar.ts open)",
    expected: [],
    decode: (b) => fxJar.open([{ type: PaType.FX_COOKIE, value: b }], 60_000),
    seeds: () => [fxJar.seal({ step: 'idp', n: 1 }).value, fxJar.binding({ armor: 'ab' }).seal({}).value],
  },
  {
    name: 'session-cookie',
    what: 'the session cookie a client sends back to the API (rpc/session.ts principalFrom)',
    expected: [],
    decode: (b) => sessions.principalFrom(b.toString('latin1')),
    seeds: () => [Buffer.from(sessions.seal({ name: 'alice@EXAMPLE.TEST', dn: 'uid=alice,cn=users,dc=example,dc=test', uid: 'alice', authIndicators: ['otp'] }, { entry: '8a7f2c1e-0000-4000-8000-000000000001', stamp: 'c2Vzc2lvbi1zdGFtcA' }))],
  },
  {
    name: 'dn',
    what: 'DNs as LDAP and API clients write them: bind names, search bases, entry names (directory/dn.ts parseDn, normalizeDn)',
    expected: [DirectoryError],
    decode: each([DirectoryError], (b) => parseDn(b.toString('utf8')), (b) => normalizeDn(b.toString('utf8'))),
    seeds: () => ascii('uid=alice,cn=users,cn=accounts,dc=example,dc=test', 'cn=Babs Jensen+sn=J\\,x,dc=example', 'cn=\\23\\c3\\a9 a\\,b\\;c\\+d\\"e\\<f\\>g\\\\h,o=x', '1.2.3.4=#04024869,dc=test', 'CN = spaced , DC = x ', ''),
    dictionary: ascii(',', '+', '=', '\\', '\\2c', '\\c3', '\\zz', '#', '#0400', '"', ' ', ';', '<', '>', '1.2.3=', 'cn='),
  },
];

/** The frozen seeds of a target (test/data/fuzz/<name>/seeds.json), else the ones built now. */
export function corpus(target: FuzzTarget): Buffer[] {
  const file = join(CORPUS, target.name, 'seeds.json');
  if (!existsSync(file)) return target.seeds();
  return (JSON.parse(readFileSync(file, 'utf8')) as string[]).map((h) => Buffer.from(h, 'hex'));
}

/** The inputs that once crashed a target (test/data/fuzz/crashes/<name>-*.hex): regression cases and seeds. */
export function crashes(target: FuzzTarget): Array<{ file: string; input: Buffer }> {
  if (!existsSync(CRASHES)) return [];
  return readdirSync(CRASHES)
    .filter((f) => f.startsWith(`${target.name}-`) && f.endsWith('.hex'))
    .sort()
    .map((f) => ({ file: f, input: Buffer.from(readFileSync(join(CRASHES, f), 'ascii').trim(), 'hex') }));
}

export const targetNamed = (name: string): FuzzTarget | undefined => targets.find((t) => t.name === name);
