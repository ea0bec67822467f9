/**
 * FAST on the KDC side (RFC 6113): unwrapping armored AS requests (explicit
 * armor: an AP-REQ with a krbtgt ticket) and TGS requests (implicit armor
 * from the TGS authenticator's subkey), the armor key
 * KRB-FX-CF2(subkey, "subkeyarmor", ticket session key, "ticketarmor"), the
 * request checksum (usage 50), the encrypted inner request (usage 51), armored
 * replies and errors (usage 52), the finished checksum over the ticket
 * (usage 53), and PA-FX-COOKIE sealed with a KDC key.
 *
 * The armor is an AP-REQ and is verified as one (kerberos/ap-exchange.ts:
 * clock skew, ticket times, replay cache), with one difference: MIT clients
 * send the same armor AP-REQ with every request of one AS conversation (the
 * answer to PREAUTH_REQUIRED, each step of the idp mechanism). Every cookie
 * the KDC seals for an armored request names a digest of its armor
 * authenticator; a request that echoes such a cookie continues that
 * conversation and may repeat that armor. Any other repeat is a replay.
 */
import { createHash } from 'node:crypto';
import { BOX_OVERHEAD, open, seal } from '../crypto/sealed-box.js';
import { der } from '../kerberos/asn1/der.js';
import { decodeApReq } from '../kerberos/asn1/ap-req.js';
import { decodeFastArmoredReq, decodeFastReq, encodeFastArmoredRep, encodeFastResponse, ArmorType, type KrbFastResponse } from '../kerberos/asn1/fast.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { encodeKrbError, type KrbError } from '../kerberos/asn1/krb-error.js';
import { encodePaDataList, principalToString, type PaData } from '../kerberos/asn1/primitives.js';
import type { Ticket } from '../kerberos/asn1/ticket.js';
import { decodeEncTicketPart, type EncTicketPart } from '../kerberos/asn1/ticket.js';
import { DigestIndex } from '../kerberos/digest-index.js';
import { ExpiringCache } from '../kerberos/expiring-cache.js';
import { cf2, checksumProfile, profile, type EncryptionKey } from '../kerberos/crypto/index.js';
import { KeyUsage, PaType } from '../kerberos/iana.js';
import { SKEW_MS, verifyApReq } from '../kerberos/ap-exchange.js';
import { ReplayCache } from '../kerberos/replay-cache.js';
import { KdcError } from './kdc-error.js';
import { keyFor, mapMaybe, type KdcPrincipal, type Maybe, type PrincipalDb } from './principals.js';
import { tgsPrincipal } from '../kerberos/principal.js';

export interface FastState {
  armorKey: EncryptionKey;
  nonce: number;
  /** digest of the armor authenticator (explicit armor only), named by the cookies of this conversation */
  armor?: string;
}

/** authenticators seen recently, TGS requests' and FAST armors' (MIT's KDC keeps none for either; we refuse a replay) */
export const kdcReplays = new ReplayCache(2 * SKEW_MS);

/** How long a conversation may continue with its first armor: as long as the idp mechanism's device flow may last. */
const CONVERSATION_MS = 3600_000;

export function armorKeyOf(subkey: EncryptionKey, ticketSessionKey: EncryptionKey): EncryptionKey {
  return cf2(subkey, 'subkeyarmor', ticketSessionKey, 'ticketarmor');
}

function verifyAndDecrypt(fastPa: PaData, checksummed: Buffer, armorKey: EncryptionKey) {
  const armored = decodeFastArmoredReq(fastPa.value);
  let cp;
  try {
    cp = checksumProfile(armored.reqChecksum.type);
  } catch {
    throw new KdcError('KDC_ERR_SUMTYPE_NOSUPP', 'unsupported FAST request checksum');
  }
  if (cp.keyBytes !== armorKey.value.length || !cp.verifyChecksum({ etype: cp.etype, value: armorKey.value }, KeyUsage.FAST_REQ_CHKSUM, checksummed, armored.reqChecksum.value)) {
    throw new KdcError('KRB_AP_ERR_MODIFIED', 'FAST request checksum mismatch');
  }
  let inner;
  try {
    inner = decodeFastReq(profile(armorKey.etype).decrypt(armorKey, KeyUsage.FAST_ENC, armored.encFastReq.cipher));
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'FAST request does not decrypt');
  }
  return { armored, inner };
}

/** Whether a request carries a FAST armored request (an empty PA-FX-FAST only says the client knows FAST). */
export function isArmored(req: KdcReq): boolean {
  return req.padata.some((p) => p.type === PaType.FX_FAST && p.value.length > 0);
}

/** The digest of an armor authenticator that cookies carry (they are sealed: it is never seen outside the KDC). */
function armorDigest(authenticatorCipher: Buffer): string {
  return createHash('sha256').update(authenticatorCipher).digest('base64url').slice(0, 22);
}

/**
 * Unwraps an armored AS-REQ; null when the request is not armored. The
 * armor is verified as an AP-REQ; a repeated one is accepted only with a
 * cookie of ours naming it.
 */
export async function unwrapAsFast(db: PrincipalDb, realm: string, cookies: CookieJar, req: KdcReq, now: number): Promise<{ req: KdcReq; fast: FastState } | null> {
  const pa = req.padata.find((p) => p.type === PaType.FX_FAST);
  if (!pa || pa.value.length === 0) return null;
  const armored = decodeFastArmoredReq(pa.value);
  if (!armored.armor || armored.armor.type !== ArmorType.AP_REQUEST) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'AS requests need AP-REQ armor');
  const ap = decodeApReq(armored.armor.value);
  const tgtName = tgsPrincipal(realm);
  if (principalToString(ap.ticket.sname, ap.ticket.realm) !== tgtName) throw new KdcError('KDC_ERR_POLICY', 'armor ticket must be for the krbtgt');
  let opened = openTgt(db, realm, ap.ticket, now);
  if (opened instanceof Promise) opened = await opened;
  const { etp, session } = opened;
  const armor = armorDigest(ap.authenticator.cipher);
  let unwrapped: { req: KdcReq; fast: FastState } | undefined;
  verifyApReq(ap, etp, session, {
    usage: KeyUsage.AP_REQ_AUTH,
    now,
    replay: kdcReplays,
    check(auth) {
      if (!auth.subkey) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'armor authenticator has no subkey');
      const armorKey = armorKeyOf({ etype: auth.subkey.etype, value: auth.subkey.value }, session);
      const { inner } = verifyAndDecrypt(pa, req.bodyRaw, armorKey);
      unwrapped = { req: { msgType: req.msgType, padata: inner.padata, body: inner.body, bodyRaw: inner.bodyRaw }, fast: { armorKey, nonce: inner.body.nonce, armor } };
      return cookies.open<{ armor?: string }>(inner.padata, CONVERSATION_MS)?.armor === armor ? 'continued' : undefined;
    },
  });
  return unwrapped!;
}

/**
 * Unwraps the FAST part of a TGS-REQ (implicit armor). Its request checksum
 * covers the AP-REQ in PA-TGS-REQ, not the body (RFC 6113 §5.4.2).
 */
export function unwrapTgsFast(req: KdcReq, subkey: EncryptionKey | undefined, session: EncryptionKey): { req: KdcReq; fast: FastState } | null {
  const pa = req.padata.find((p) => p.type === PaType.FX_FAST);
  if (!pa || pa.value.length === 0) return null;
  if (!subkey) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'FAST TGS request without an authenticator subkey');
  const armorKey = armorKeyOf(subkey, session);
  const apReq = req.padata.find((p) => p.type === PaType.TGS_REQ)!.value;
  const { inner } = verifyAndDecrypt(pa, apReq, armorKey);
  return { req: { msgType: req.msgType, padata: req.padata, body: inner.body, bodyRaw: req.bodyRaw }, fast: { armorKey, nonce: inner.body.nonce } };
}

interface OpenedTicket {
  /** the ciphertext, in memory of its own */
  cipher: Buffer;
  /** the krbtgt key Buffer it was decrypted with */
  key: Buffer;
  etp: EncTicketPart;
  session: EncryptionKey;
}

/** How long an opened TGT is remembered: a client's TGS requests come in bursts (one per service it reaches). */
const OPENED_TTL_MS = 5 * 60_000;
const OPENED_MAX = 10_000;
/** bytes at the end of a ticket's ciphertext used as its cache key: MAC bytes for every AES enctype */
const MAC_TAIL = 12;

/**
 * TGTs opened recently, by the MAC that ends their ciphertext. A client
 * presents its TGT with every TGS request (and as FAST armor), and
 * decrypting and decoding it is a good part of the exchange. A hit needs the
 * very same ciphertext under the very same key Buffer: the principal cache
 * hands out new Buffers whenever it reloads the krbtgt, so a changed key
 * misses. A hit thus yields exactly what decrypting again would; the
 * ticket's times are checked on every use. What it returns is shared
 * between requests and must not be modified.
 *
 * A TGT is kept from its second use on: the first use is only noted, in
 * typed arrays, so that a KDC seeing each TGT once (or a flood of them)
 * makes no objects to keep.
 */
const opened = new ExpiringCache<OpenedTicket>(OPENED_MAX);
const seenOnce = new DigestIndex(4 * OPENED_MAX, 2);
/** the ciphertext's last 8 bytes (inside its MAC) mark a first use */
const SEEN_TAIL = 8;

/** Decrypts a TGT with the current krbtgt key and checks its times (at once when the krbtgt is cached). */
export function openTgt(db: PrincipalDb, realm: string, ticket: Ticket, now: number): Maybe<{ etp: EncTicketPart; session: EncryptionKey }> {
  return mapMaybe(db.find(tgsPrincipal(realm)), (krbtgt) => openTgtWith(krbtgt, ticket, now));
}

function openTgtWith(krbtgt: KdcPrincipal | null, ticket: Ticket, now: number): { etp: EncTicketPart; session: EncryptionKey } {
  if (!krbtgt) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', 'no krbtgt');
  const stored = keyFor(krbtgt, ticket.encPart.etype);
  if (!stored) throw new KdcError('KRB_AP_ERR_NOKEY', "no krbtgt key of the ticket's enctype");
  if (ticket.encPart.kvno !== undefined && ticket.encPart.kvno !== stored.kvno) throw new KdcError('KRB_AP_ERR_BADKEYVER', 'ticket key version is not current');
  const cipher = ticket.encPart.cipher;
  const id = cipher.length > MAC_TAIL ? cipher.toString('latin1', cipher.length - MAC_TAIL) : undefined;
  const hit = id === undefined ? undefined : opened.get(id, now);
  let result: { etp: EncTicketPart; session: EncryptionKey };
  if (hit && hit.key === stored.key && hit.cipher.equals(cipher)) result = hit;
  else {
    let keep = false;
    if (id !== undefined) {
      seenOnce.expire(now);
      keep = seenOnce.find(cipher, cipher.length - SEEN_TAIL, now) >= 0;
      if (!keep) seenOnce.push(cipher, cipher.length - SEEN_TAIL, now + OPENED_TTL_MS);
    }
    let etp: EncTicketPart;
    let own: Buffer | undefined;
    try {
      const plain = profile(stored.etype).decrypt({ etype: stored.etype, value: stored.key }, KeyUsage.TICKET, cipher);
      if (keep) {
        // ciphertext and plaintext in memory of their own (the decoded ticket's Buffers are views into it): a view
        // into Node's shared pool would keep the whole pool alive as long as the entry
        own = Buffer.allocUnsafeSlow(cipher.length + plain.length);
        cipher.copy(own);
        plain.copy(own, cipher.length);
      }
      etp = decodeEncTicketPart(own ? own.subarray(cipher.length) : plain);
    } catch {
      throw new KdcError('KRB_AP_ERR_BAD_INTEGRITY', 'the ticket does not decrypt');
    }
    // the session key of a TGT not kept is met afresh on its next use: keys derived from it would only fill the cache
    result = { etp, session: { etype: etp.key.etype, value: etp.key.value, ...(own ? {} : { transient: true }) } };
    if (own && id !== undefined) opened.set(id, { ...result, cipher: own.subarray(0, cipher.length), key: stored.key }, now + OPENED_TTL_MS, now);
  }
  if (result.etp.endtime.getTime() < now) throw new KdcError('KRB_AP_ERR_TKT_EXPIRED', 'ticket expired');
  return result;
}

/** PA-FX-FAST for a reply: the KrbFastResponse sealed with the armor key. */
export function armoredReply(fast: FastState, response: KrbFastResponse): PaData {
  const cipher = profile(fast.armorKey.etype).encrypt(fast.armorKey, KeyUsage.FAST_REP, encodeFastResponse(response));
  return { type: PaType.FX_FAST, value: encodeFastArmoredRep({ etype: fast.armorKey.etype, cipher }) };
}

/** RFC 6113 §5.4.3 error: the inner KRB-ERROR and hints inside the armored reply. */
export function armoredErrorData(fast: FastState, inner: KrbError, hints: PaData[], cookie: PaData): Buffer {
  const { eData: _drop, ...plain } = inner;
  void _drop;
  // a mechanism's own cookie (the idp flow state) wins over the generic one
  const ownCookie = hints.find((h) => h.type === PaType.FX_COOKIE);
  const padata: PaData[] = [{ type: PaType.FX_FAST, value: Buffer.alloc(0) }, ...hints.filter((h) => h.type !== PaType.FX_FAST && h.type !== PaType.FX_COOKIE), ownCookie ?? cookie, { type: PaType.FX_ERROR, value: encodeKrbError(plain) }];
  return der(encodePaDataList([armoredReply(fast, { padata, nonce: fast.nonce })]));
}

const COOKIE_MAGIC = Buffer.from('DIRID1');

/** KDC-sealed cookies (sealed boxes, crypto/sealed-box.ts); the state they carry is opaque to clients. */
export class CookieJar {
  constructor(
    private readonly key: Buffer,
    private readonly bound: object = {},
  ) {}

  /** A jar whose cookies also carry `fields` (an armored conversation's armor digest). */
  binding(fields: object): CookieJar {
    return new CookieJar(this.key, { ...this.bound, ...fields });
  }

  seal(state: object): PaData {
    const box = seal(this.key, JSON.stringify({ ...state, ...this.bound, t: Date.now() }));
    return { type: PaType.FX_COOKIE, value: Buffer.concat([COOKIE_MAGIC, box]) };
  }

  open<T extends object>(padata: readonly PaData[], maxAgeMs: number): (T & { t: number }) | null {
    const pa = padata.find((p) => p.type === PaType.FX_COOKIE);
    if (!pa || pa.value.length < COOKIE_MAGIC.length + BOX_OVERHEAD || !pa.value.subarray(0, COOKIE_MAGIC.length).equals(COOKIE_MAGIC)) return null;
    const plain = open(this.key, pa.value.subarray(COOKIE_MAGIC.length));
    if (!plain) return null;
    try {
      const s = JSON.parse(plain.toString('utf8')) as T & { t: number };
      if (typeof s.t !== 'number' || Date.now() - s.t > maxAgeMs) return null;
      return s;
    } catch {
      return null;
    }
  }
}

export { encodePaDataList };
