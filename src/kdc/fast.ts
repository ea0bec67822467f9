/**
 * FAST armor on the KDC side (RFC 6113), and nothing else: unwrapping
 * armored AS requests (explicit armor: an AP-REQ with a krbtgt ticket) and
 * TGS requests (implicit armor from the TGS authenticator's subkey), the
 * armor key KRB-FX-CF2(subkey, "subkeyarmor", ticket session key,
 * "ticketarmor"), the request checksum (usage 50), the encrypted inner
 * request (usage 51) and the armored reply (usage 52), which carries the
 * AS-REP's finished checksum (usage 53, as-exchange.ts) or a KRB-ERROR
 * (kdc-error.ts). Cookies are in cookie-jar.ts, opened TGTs in state.ts.
 *
 * The armor is an AP-REQ and is verified as one (kerberos/ap-exchange.ts:
 * clock skew, ticket times, replay cache), with one difference: MIT clients
 * send the same armor AP-REQ with every request of one AS conversation (the
 * answer to PREAUTH_REQUIRED, each step of the idp mechanism). Every cookie
 * the KDC seals for an armored request names a digest of its armor
 * authenticator; a request that echoes such a cookie continues that
 * conversation and may repeat that armor. Any other repeat is a replay.
 */
import { hash } from 'node:crypto';
import { decodeApReq } from '../kerberos/asn1/ap-req.js';
import { decodeFastArmoredReq, decodeFastReq, encodeFastArmoredRep, encodeFastResponse, ArmorType, type KrbFastArmoredReq, type KrbFastResponse } from '../kerberos/asn1/fast.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import type { EncTicketPart } from '../kerberos/asn1/ticket.js';
import { principalToString, type PaData } from '../kerberos/asn1/primitives.js';
import { cf2WithSecond, checksumProfile, prfPlus, profile, type EncryptionKey } from '../kerberos/crypto/index.js';
import { KeyUsage, PaType } from '../kerberos/iana.js';
import { verifyApReq } from '../kerberos/ap-exchange.js';
import { KdcError } from './errors.js';
import type { CookieJar } from './cookie-jar.js';
import type { KdcCaches } from './state.js';
import type { PrincipalDb } from './principals.js';
import { tgsPrincipal } from '../kerberos/principal.js';

export interface FastState {
  armorKey: EncryptionKey;
  nonce: number;
  /** digest of the armor authenticator (explicit armor only), named by the cookies of this conversation */
  armor?: string;
  /** the armor ticket (explicit armor only): its ciphertext, which tells one ticket from another, and what it holds */
  armorTicket?: { cipher: Buffer; etp: EncTicketPart };
}

/** How long a conversation may continue with its first armor: as long as the idp mechanism's device flow may last. */
const CONVERSATION_MS = 3600_000;

const SUBKEY_ARMOR = Buffer.from('subkeyarmor');
const TICKET_ARMOR = Buffer.from('ticketarmor');

/**
 * PRF+(ticket session key, "ticketarmor") by the session key's Buffer, for
 * the session keys of kept TGTs (state.ts hands out the same Buffer on
 * every hit): the half of the armor key that depends on the ticket alone,
 * the same for every request armored with that ticket (the host TGT of a
 * machine whose users log in through the idp mechanism). A transient session
 * key (a TGT met once) is not kept; its entry would never be read.
 */
const ticketArmorPrf = new WeakMap<Buffer, { etype: number; prf: Buffer }>();

function ticketArmor(session: EncryptionKey, length: number): Buffer {
  if (session.transient) return prfPlus(session, TICKET_ARMOR, length);
  const kept = ticketArmorPrf.get(session.value);
  if (kept !== undefined && kept.etype === session.etype && kept.prf.length === length) return kept.prf;
  // memory of its own: a view into Node's shared pool would keep the whole pool alive
  const prf = Buffer.allocUnsafeSlow(length);
  prfPlus(session, TICKET_ARMOR, length).copy(prf);
  ticketArmorPrf.set(session.value, { etype: session.etype, prf });
  return prf;
}

/**
 * KRB-FX-CF2(subkey, "subkeyarmor", ticket session key, "ticketarmor")
 * (RFC 6113 §5.4.1.1), of the subkey's enctype: random-to-key of the two
 * PRF+ outputs xored, the ticket's half kept with a kept ticket.
 */
export function armorKeyOf(subkey: EncryptionKey, ticketSessionKey: EncryptionKey): EncryptionKey {
  return cf2WithSecond(subkey, SUBKEY_ARMOR, ticketArmor(ticketSessionKey, profile(subkey.etype).keyBytes), ticketSessionKey.transient === true);
}

function verifyAndDecrypt(armored: KrbFastArmoredReq, checksummed: Buffer, armorKey: EncryptionKey) {
  let cp;
  try {
    cp = checksumProfile(armored.reqChecksum.type);
  } catch {
    throw new KdcError('KDC_ERR_SUMTYPE_NOSUPP', 'unsupported FAST request checksum');
  }
  if (cp.keyBytes !== armorKey.value.length || !cp.verifyChecksum({ etype: cp.etype, value: armorKey.value, ...(armorKey.transient ? { transient: true } : {}) }, KeyUsage.FAST_REQ_CHKSUM, checksummed, armored.reqChecksum.value)) {
    throw new KdcError('KRB_AP_ERR_MODIFIED', 'FAST request checksum mismatch');
  }
  let inner;
  try {
    inner = decodeFastReq(profile(armorKey.etype).decrypt(armorKey, KeyUsage.FAST_ENC, armored.encFastReq.cipher));
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'FAST request does not decrypt');
  }
  return inner;
}

/** Whether a request carries a FAST armored request (an empty PA-FX-FAST only says the client knows FAST). */
export function isArmored(req: KdcReq): boolean {
  return req.padata.some((p) => p.type === PaType.FX_FAST && p.value.length > 0);
}

/** The digest of an armor authenticator that cookies carry (they are sealed: it is never seen outside the KDC). */
function armorDigest(authenticatorCipher: Buffer): string {
  return hash('sha256', authenticatorCipher, 'base64url').slice(0, 22);
}

/**
 * Unwraps an armored AS-REQ; null when the request is not armored. The
 * armor is verified as an AP-REQ; a repeated one is accepted only with a
 * cookie of ours naming it. With the request comes its cookie jar, bound
 * to the armor (every cookie it seals names it).
 */
export async function unwrapAsFast(caches: KdcCaches, db: PrincipalDb, realm: string, cookies: CookieJar, req: KdcReq, now: number): Promise<{ req: KdcReq; fast: FastState; cookies: CookieJar } | null> {
  const pa = req.padata.find((p) => p.type === PaType.FX_FAST);
  if (!pa || pa.value.length === 0) return null;
  const armored = decodeFastArmoredReq(pa.value);
  if (!armored.armor || armored.armor.type !== ArmorType.AP_REQUEST) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'AS requests need AP-REQ armor');
  const ap = decodeApReq(armored.armor.value);
  const tgtName = tgsPrincipal(realm);
  if (principalToString(ap.ticket.sname, ap.ticket.realm) !== tgtName) throw new KdcError('KDC_ERR_POLICY', 'armor ticket must be for the krbtgt');
  let opened = caches.tgts.open(db, realm, ap.ticket, now);
  if (opened instanceof Promise) opened = await opened;
  const { etp, session } = opened;
  const armor = armorDigest(ap.authenticator.cipher);
  let unwrapped: { req: KdcReq; fast: FastState; cookies: CookieJar } | undefined;
  verifyApReq(ap, etp, session, {
    usage: KeyUsage.AP_REQ_AUTH,
    now,
    replay: caches.replays,
    check(auth) {
      if (!auth.subkey) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'armor authenticator has no subkey');
      // the subkey, and so the armor key, serve this request only: keys derived from them are kept in no cache
      const armorKey = armorKeyOf({ etype: auth.subkey.etype, value: auth.subkey.value, transient: true }, session);
      const inner = verifyAndDecrypt(armored, req.bodyRaw, armorKey);
      const continued = cookies.open<{ armor?: string }>(inner.padata, CONVERSATION_MS)?.armor === armor;
      // bound right after the open: the request's jar starts with its cookie opened
      unwrapped = { req: { msgType: req.msgType, padata: inner.padata, body: inner.body, bodyRaw: inner.bodyRaw }, fast: { armorKey, nonce: inner.body.nonce, armor, armorTicket: { cipher: ap.ticket.encPart.cipher, etp } }, cookies: cookies.binding({ armor }) };
      return continued ? 'continued' : undefined;
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
  const inner = verifyAndDecrypt(decodeFastArmoredReq(pa.value), apReq, armorKey);
  return { req: { msgType: req.msgType, padata: req.padata, body: inner.body, bodyRaw: req.bodyRaw }, fast: { armorKey, nonce: inner.body.nonce } };
}

/** PA-FX-FAST for a reply: the KrbFastResponse sealed with the armor key. */
export function armoredReply(fast: FastState, response: KrbFastResponse): PaData {
  const cipher = profile(fast.armorKey.etype).encrypt(fast.armorKey, KeyUsage.FAST_REP, encodeFastResponse(response));
  return { type: PaType.FX_FAST, value: encodeFastArmoredRep({ etype: fast.armorKey.etype, cipher }) };
}
