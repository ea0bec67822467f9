/**
 * State a KDC keeps between requests, one set per KDC instance (two KDCs in
 * one process share nothing): the TGTs it opened recently, the replay
 * cache of authenticators (TGS requests' and FAST armors'; MIT's KDC keeps
 * none for either, we refuse a replay at little cost), the count of
 * device-flow answers held while the IdP says "pending", and the device
 * flows started and pending (idp-starts.ts).
 */
import type { Ticket } from '../kerberos/asn1/ticket.js';
import { decodeEncTicketPart, type EncTicketPart } from '../kerberos/asn1/ticket.js';
import { SKEW_MS } from '../kerberos/ap-exchange.js';
import type { EncryptionKey } from '../kerberos/crypto/index.js';
import { profile } from '../kerberos/crypto/index.js';
import { DigestIndex } from '../kerberos/digest-index.js';
import { ExpiringCache } from '../kerberos/expiring-cache.js';
import { KeyUsage } from '../kerberos/iana.js';
import { tgsPrincipal } from '../kerberos/principal.js';
import { ReplayCache } from '../kerberos/replay-cache.js';
import { KdcError } from './errors.js';
import { IdpStarts, type StartLimits } from './idp-starts.js';
import { keyFor, mapMaybe, type KdcPrincipal, type Maybe, type PrincipalDb } from './principals.js';

export interface KdcCaches {
  tgts: TgtCache;
  replays: ReplayCache;
  idpWaits: IdpWaits;
  /** the device flows started and pending, counted per user, armor ticket and address, and the starts just refused */
  idpStarts: IdpStarts;
}

export function kdcCaches(idpHoldMs = DEFAULT_IDP_HOLD_MS, startLimits?: Readonly<StartLimits>): KdcCaches {
  return { tgts: new TgtCache(), replays: new ReplayCache(2 * SKEW_MS), idpWaits: { holdMs: idpHoldMs, limit: IDP_HOLD_LIMIT, active: 0 }, idpStarts: new IdpStarts(startLimits) };
}

/**
 * How long an answer may be held while the IdP says "pending", and how many
 * answers may be held at once. MIT's client waits about 17 s for a reply
 * from one KDC before it gives up (1 s, 2 s, then passes of 1+4 s and 1+8 s);
 * SSSD's krb5_child is stopped after krb5_auth_timeout (6 s by default,
 * raised in the sssd.conf docs/sssd-host.md recommends). docs/device-flow.md.
 */
export interface IdpWaits {
  /** the longest an answer is held, in ms */
  holdMs: number;
  /** answers held at most at once; beyond it the KDC polls without waiting */
  limit: number;
  /** answers held now */
  active: number;
}

const DEFAULT_IDP_HOLD_MS = 10_000;
const IDP_HOLD_LIMIT = 1_000;


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
/** the ciphertext's last 8 bytes (inside its MAC) mark a first use */
const SEEN_TAIL = 8;

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
export class TgtCache {
  private readonly opened = new ExpiringCache<OpenedTicket>(OPENED_MAX);
  private readonly seenOnce = new DigestIndex(4 * OPENED_MAX, 2);

  /** Decrypts a TGT with the current krbtgt key and checks its times (at once when the krbtgt is cached). */
  open(db: PrincipalDb, realm: string, ticket: Ticket, now: number): Maybe<{ etp: EncTicketPart; session: EncryptionKey }> {
    return mapMaybe(db.find(tgsPrincipal(realm)), (krbtgt) => this.openWith(krbtgt, ticket, now));
  }

  private openWith(krbtgt: KdcPrincipal | null, ticket: Ticket, now: number): { etp: EncTicketPart; session: EncryptionKey } {
    if (!krbtgt) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', 'no krbtgt');
    const stored = keyFor(krbtgt, ticket.encPart.etype);
    if (!stored) throw new KdcError('KRB_AP_ERR_NOKEY', "no krbtgt key of the ticket's enctype");
    if (ticket.encPart.kvno !== undefined && ticket.encPart.kvno !== stored.kvno) throw new KdcError('KRB_AP_ERR_BADKEYVER', 'ticket key version is not current');
    const cipher = ticket.encPart.cipher;
    const id = cipher.length > MAC_TAIL ? cipher.toString('latin1', cipher.length - MAC_TAIL) : undefined;
    const hit = id === undefined ? undefined : this.opened.get(id, now);
    let result: { etp: EncTicketPart; session: EncryptionKey };
    if (hit && hit.key === stored.key && hit.cipher.equals(cipher)) result = hit;
    else {
      let keep = false;
      if (id !== undefined) {
        this.seenOnce.expire(now);
        keep = this.seenOnce.find(cipher, cipher.length - SEEN_TAIL, now) >= 0;
        if (!keep) this.seenOnce.push(cipher, cipher.length - SEEN_TAIL, now + OPENED_TTL_MS);
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
      const session: EncryptionKey = { etype: etp.key.etype, value: etp.key.value };
      if (!own) session.transient = true;
      result = { etp, session };
      if (own && id !== undefined) this.opened.set(id, { ...result, cipher: own.subarray(0, cipher.length), key: stored.key }, now + OPENED_TTL_MS, now);
    }
    if (result.etp.endtime.getTime() < now) throw new KdcError('KRB_AP_ERR_TKT_EXPIRED', 'ticket expired');
    return result;
  }
}
