/**
 * The client side of the AS and TGS exchanges (RFC 4120 §3.1, §3.3), used
 * by `dirid kinit`, the CLI's Negotiate support and the benchmarks. Each
 * step is a request builder and a reply processor that checks every field
 * it relies on (nonce, names, enctype, times) and throws KrbClientError.
 */
import { randomBytes } from 'node:crypto';
import { der, parseDer } from './asn1/der.js';
import { decodeEncKdcRepPart, decodeKdcRepNode, type EncKdcRepPart } from './asn1/kdc-rep.js';
import { encodeKdcReq, encodeKdcReqBody, type KdcReqBody } from './asn1/kdc-req.js';
import { decodeKrbError, type KrbError } from './asn1/krb-error.js';
import { decodeEtypeInfo2, encodePaEncTsEnc, type EtypeInfo2Entry } from './asn1/padata.js';
import { decodePaDataList, encodeEncryptedData, principalToString, type PaData, type PrincipalName } from './asn1/primitives.js';
import type { Ticket } from './asn1/ticket.js';
import { encodeApReq, encodeAuthenticator } from './asn1/ap-req.js';
import { profile, supportedEtypes, type EncryptionKey } from './crypto/index.js';
import { ErrorCode, flagBit, KdcOption, KeyUsage, MsgType, PaType } from './iana.js';
import { tgsPrincipalName } from './principal.js';
import { microseconds, wholeSeconds } from './time.js';

export class KrbClientError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly krbError?: KrbError,
  ) {
    super(message);
    this.name = 'KrbClientError';
  }
}

export interface Credentials {
  client: PrincipalName;
  crealm: string;
  server: PrincipalName;
  srealm: string;
  sessionKey: EncryptionKey;
  ticket: Ticket;
  part: EncKdcRepPart;
}

export type Send = (msg: Buffer) => Promise<Buffer>;

export function randomNonce(): number {
  return randomBytes(4).readUInt32BE(0) & 0x7fffffff;
}

export function asReqBody(cname: PrincipalName, realm: string, o: { sname?: PrincipalName; etypes?: readonly number[]; nonce?: number; lifetimeSec?: number; renewSec?: number; forwardable?: boolean } = {}): KdcReqBody {
  let opts = flagBit(KdcOption.RENEWABLE_OK);
  if (o.forwardable !== false) opts |= flagBit(KdcOption.FORWARDABLE);
  if (o.renewSec) opts |= flagBit(KdcOption.RENEWABLE);
  const now = Date.now();
  const body: KdcReqBody = {
    kdcOptions: opts >>> 0,
    cname,
    realm,
    sname: o.sname ?? tgsPrincipalName(realm),
    till: new Date(now + (o.lifetimeSec ?? 86400) * 1000),
    nonce: o.nonce ?? randomNonce(),
    etypes: [...(o.etypes ?? supportedEtypes)],
  };
  if (o.renewSec) body.rtime = new Date(now + o.renewSec * 1000);
  return body;
}

export function decodeReplyOrError(raw: Buffer): { kind: 'rep'; node: ReturnType<typeof parseDer> } | { kind: 'error'; error: KrbError } {
  const node = parseDer(raw);
  if (node.cls === 'application' && node.tag === 30) return { kind: 'error', error: decodeKrbError(raw) };
  if (node.cls === 'application' && (node.tag === 11 || node.tag === 13)) return { kind: 'rep', node };
  throw new KrbClientError('the KDC answered with an unexpected message');
}

/** PA-ENC-TIMESTAMP under a long-term key. */
export function encTimestamp(key: EncryptionKey, kvno?: number): PaData {
  const now = Date.now();
  const ts = encodePaEncTsEnc({ patimestamp: wholeSeconds(now), pausec: microseconds(now) });
  const cipher = profile(key.etype).encrypt(key, KeyUsage.PA_ENC_TIMESTAMP, ts);
  return { type: PaType.ENC_TIMESTAMP, value: der(encodeEncryptedData({ etype: key.etype, ...(kvno !== undefined ? { kvno } : {}), cipher })) };
}

/** Checks a KDC-REP against the request and decrypts its enc-part. */
export function processKdcRep(raw: Buffer, body: KdcReqBody, replyKey: EncryptionKey, usage: number): Credentials {
  const r = decodeReplyOrError(raw);
  if (r.kind === 'error') throw new KrbClientError(r.error.eText ?? `KDC error ${r.error.errorCode}`, r.error.errorCode, r.error);
  const rep = decodeKdcRepNode(r.node);
  if (rep.encPart.etype !== replyKey.etype) throw new KrbClientError('the reply is sealed with an unexpected enctype');
  let part: EncKdcRepPart;
  try {
    part = decodeEncKdcRepPart(profile(replyKey.etype).decrypt(replyKey, usage, rep.encPart.cipher));
  } catch {
    throw new KrbClientError('the reply does not decrypt with the reply key');
  }
  if (part.nonce !== body.nonce) throw new KrbClientError('the reply nonce does not match');
  if (body.sname && principalToString(part.sname) !== principalToString(body.sname) && !(body.sname.nameString[0] === 'krbtgt')) {
    throw new KrbClientError('the reply names another service');
  }
  if (part.endtime.getTime() > body.till.getTime() + 1000 && body.till.getTime() !== 0) throw new KrbClientError('the ticket lives longer than requested');
  return { client: rep.cname, crealm: rep.crealm, server: part.sname, srealm: part.srealm, sessionKey: { etype: part.key.etype, value: part.key.value }, ticket: rep.ticket, part };
}

/** Keytab login: PA-ENC-TIMESTAMP with the key of the enctype the KDC prefers. */
export async function asWithKeys(send: Send, cname: PrincipalName, realm: string, keys: EncryptionKey[]): Promise<Credentials> {
  let body = asReqBody(cname, realm, { etypes: keys.map((k) => k.etype) });
  const first = decodeReplyOrError(await send(encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [], body })));
  if (first.kind === 'rep') throw new KrbClientError('the KDC issued a ticket without pre-authentication');
  if (first.error.errorCode !== ErrorCode.KDC_ERR_PREAUTH_REQUIRED) throw new KrbClientError(first.error.eText ?? `KDC error ${first.error.errorCode}`, first.error.errorCode, first.error);
  const hints = first.error.eData ? decodePaDataList(parseDer(first.error.eData)) : [];
  const info = hints.find((h) => h.type === PaType.ETYPE_INFO2);
  const offered = info ? decodeEtypeInfo2(info.value).map((e) => e.etype) : keys.map((k) => k.etype);
  const key = keys.find((k) => offered.includes(k.etype));
  if (!key) throw new KrbClientError('no key of an offered enctype in the keytab');
  body = { ...body, nonce: randomNonce() };
  return processKdcRep(await send(encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [encTimestamp(key)], body })), body, key, KeyUsage.AS_REP_ENC_PART);
}

/**
 * The KDC offers the principal no pre-authentication outside FAST (no
 * password keys, only armored methods such as an IdP login): a password
 * cannot be used, armor can.
 */
export class FastRequiredError extends KrbClientError {
  constructor(error: KrbError) {
    super('the KDC offers this principal no password pre-authentication, only methods inside FAST armor', error.errorCode, error);
    this.name = 'FastRequiredError';
  }
}

/**
 * Password login: AS-REQ, PREAUTH_REQUIRED with ETYPE-INFO2, AS-REQ with
 * PA-ENC-TIMESTAMP. `password` may be a function asked only once the KDC
 * has said how the principal pre-authenticates (as MIT's kinit prompts):
 * no prompt for a principal that has no password there.
 */
export async function asWithPassword(send: Send, cname: PrincipalName, realm: string, password: string | (() => Promise<string>), o: Parameters<typeof asReqBody>[2] = {}): Promise<Credentials> {
  let body = asReqBody(cname, realm, o);
  const first = await send(encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [], body }));
  const r = decodeReplyOrError(first);
  if (r.kind === 'rep') throw new KrbClientError('the KDC issued a ticket without pre-authentication');
  if (r.error.errorCode !== ErrorCode.KDC_ERR_PREAUTH_REQUIRED) throw new KrbClientError(r.error.eText ?? `KDC error ${r.error.errorCode}`, r.error.errorCode, r.error);
  const hints = r.error.eData ? decodePaDataList(parseDer(r.error.eData)) : [];
  const info = hints.find((h) => h.type === PaType.ETYPE_INFO2);
  const entries: EtypeInfo2Entry[] = info ? decodeEtypeInfo2(info.value) : [];
  const entry = entries.find((e) => supportedEtypes.includes(e.etype));
  if (!entry) {
    if (!info && hints.some((h) => h.type === PaType.FX_FAST)) throw new FastRequiredError(r.error);
    throw new KrbClientError('no supported enctype offered');
  }
  const secret = typeof password === 'string' ? password : await password();
  const key = profile(entry.etype).stringToKey(secret, entry.salt ?? realm + cname.nameString.join(''), entry.s2kparams);
  body = { ...body, nonce: randomNonce() };
  const reply = await send(encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [encTimestamp(key)], body }));
  return processKdcRep(reply, body, key, KeyUsage.AS_REP_ENC_PART);
}

/** A TGS-REQ for `sname` with a fresh authenticator (subkey, checksum over the body). */
export function tgsRequest(tgt: Credentials, sname: PrincipalName, o: { etypes?: readonly number[]; nonce?: number; renew?: boolean } = {}): { msg: Buffer; body: KdcReqBody; subkey: EncryptionKey } {
  let opts = flagBit(KdcOption.FORWARDABLE) | flagBit(KdcOption.RENEWABLE_OK);
  if (o.renew) opts |= flagBit(KdcOption.RENEW);
  const body: KdcReqBody = {
    kdcOptions: opts >>> 0,
    realm: tgt.srealm,
    sname,
    till: new Date(Date.now() + 86400_000),
    nonce: o.nonce ?? randomNonce(),
    etypes: [...(o.etypes ?? supportedEtypes)],
  };
  const bodyRaw = encodeKdcReqBody(body);
  const sk = tgt.sessionKey;
  const subkey = profile(sk.etype).randomKey();
  const now = Date.now();
  const p = profile(sk.etype);
  const auth = encodeAuthenticator({
    crealm: tgt.crealm,
    cname: tgt.client,
    cksum: { type: p.checksumType, value: p.checksum(sk, KeyUsage.TGS_REQ_AUTH_CKSUM, bodyRaw) },
    cusec: microseconds(now),
    ctime: wholeSeconds(now),
    subkey: { etype: subkey.etype, value: subkey.value },
    seqNumber: randomNonce(),
  });
  const apReq = encodeApReq({ apOptions: 0, ticket: tgt.ticket, authenticator: { etype: sk.etype, cipher: p.encrypt(sk, KeyUsage.TGS_REQ_AUTH, auth) } });
  return { msg: encodeKdcReq({ msgType: MsgType.TGS_REQ, padata: [{ type: PaType.TGS_REQ, value: apReq }], body, bodyRaw }), body, subkey };
}

export async function tgsExchange(send: Send, tgt: Credentials, sname: PrincipalName): Promise<Credentials> {
  const { msg, body, subkey } = tgsRequest(tgt, sname);
  return processKdcRep(await send(msg), body, subkey, KeyUsage.TGS_REP_ENC_PART_SUBKEY);
}
