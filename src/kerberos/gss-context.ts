/**
 * A Kerberos GSS-API security context (RFC 4121): the acceptor's side of its
 * establishment from an InitialContextToken carrying an AP-REQ (verified by
 * ap-exchange.ts, the project's one AP-REQ check) with the GSS checksum of
 * §4.1.1, answered by an AP-REP token with our initial sequence number and
 * an acceptor subkey when the initiator asks for mutual authentication; and
 * the established context's per-message operations (gss-tokens.ts) with the
 * sequence numbers kept here: each side counts up from its own initial
 * number, and a received token must carry exactly the next number expected.
 * A context takes no tokens once its ticket has ended (plus the clock skew).
 */
import { randomInt } from 'node:crypto';
import { acceptApReq, ApError, makeApRep, SKEW_MS, type AcceptedAp } from './ap-exchange.js';
import type { EncApRepPart } from './asn1/ap-req.js';
import { Asn1Error } from './asn1/der.js';
import { decodeGssChecksum, decodeInitialContextToken, encodeKrb5Token, GssFlag, Oid, TokId } from './asn1/gss.js';
import { isSupportedEtype, KrbCryptoError, profile, type EncryptionKey } from './crypto/index.js';
import { getMic, GssError, unwrap, verifyMic, wrap, wrapOverhead, type TokenKeys, type WrapOptions } from './gss-tokens.js';
import { ChecksumType } from './iana.js';
import type { ReplayCache } from './replay-cache.js';

/** The flag of DCE-style contexts (a third leg and another RRC rule), which we do not do. */
const DCE_STYLE = 0x1000;

export interface GssContextInit {
  keys: TokenKeys;
  /** the sequence number of the first token we send */
  sendSeq: number;
  /** the sequence number the peer's first token must carry */
  recvSeq: number;
  /** when the context ends (ms since the epoch); tokens are refused after it */
  expires?: number;
  now?: () => number;
}

/** An established context: wrap, unwrap, MICs, with sequence numbers counted for the caller. */
export class GssContext {
  readonly keys: TokenKeys;
  private sendSeq: number;
  private recvSeq: number;
  private readonly expires: number | undefined;
  private readonly now: () => number;

  constructor(init: GssContextInit) {
    this.keys = init.keys;
    this.sendSeq = init.sendSeq;
    this.recvSeq = init.recvSeq;
    this.expires = init.expires;
    this.now = init.now ?? Date.now;
  }

  /** the sequence number of the next token we send and of the next one we expect */
  get sequence(): { send: number; receive: number } {
    return { send: this.sendSeq, receive: this.recvSeq };
  }

  wrap(message: Uint8Array, o: WrapOptions): Buffer {
    this.live();
    const t = wrap(this.keys, this.sendSeq, message, o);
    this.sendSeq++;
    return t;
  }

  unwrap(token: Uint8Array): { message: Buffer; conf: boolean } {
    this.live();
    const u = unwrap(this.keys, token);
    this.next(u.seq);
    return { message: u.message, conf: u.conf };
  }

  getMic(message: Uint8Array): Buffer {
    this.live();
    const t = getMic(this.keys, this.sendSeq, message);
    this.sendSeq++;
    return t;
  }

  verifyMic(message: Uint8Array, token: Uint8Array): void {
    this.live();
    this.next(verifyMic(this.keys, message, token).seq);
  }

  /** the bytes a Wrap token we send adds to its message */
  wrapOverhead(conf: boolean): number {
    return wrapOverhead(this.keys, conf);
  }

  private live(): void {
    if (this.expires !== undefined && this.now() > this.expires) throw new GssError('the context has expired', 'CONTEXT_EXPIRED');
  }

  private next(seq: number): void {
    if (seq !== this.recvSeq) {
      throw new GssError(seq < this.recvSeq ? `token ${seq} is old or replayed (expected ${this.recvSeq})` : `token ${seq} came before ${this.recvSeq}`, 'SEQUENCE');
    }
    this.recvSeq++;
  }
}

export interface AcceptSecContextOptions {
  /** the key of one of our services for a ticket's server name, enctype and kvno, or null */
  keyFor: (server: string, etype: number, kvno: number | undefined) => Promise<EncryptionKey | null>;
  replay: ReplayCache;
  now?: () => number;
  /** send an acceptor subkey in the AP-REP, as MIT and Windows acceptors do (default true) */
  acceptorSubkey?: boolean;
}

export interface AcceptedContext {
  context: GssContext;
  /** the client principal, name@REALM */
  client: string;
  /** the service principal the ticket was for */
  server: string;
  /** the ticket's authentication indicators, believed under the service's key (how the client authenticated) */
  authIndicators: string[];
  /** the mechanism OID the initiator used (Kerberos, or the one old Windows sends) */
  mech: string;
  /** the GSS flags the initiator asked for (RFC 4121 §4.1.1.1) */
  flags: number;
  /** whether we answered with an AP-REP */
  mutual: boolean;
  /** the token to send back: the AP-REP, when mutual */
  outputToken?: Buffer;
  /** the end of the ticket (the context takes tokens until the clock skew after it) */
  expires: Date;
  /** channel-binding hash the initiator sent (zeros when none); not checked */
  bindings: Buffer;
  /** KRB-CRED the initiator delegated, undecoded; not used */
  delegation?: Buffer;
}

function validKey(k: { etype: number; value: Buffer }): boolean {
  return isSupportedEtype(k.etype) && k.value.length === profile(k.etype).keyBytes;
}

/**
 * Accepts the initiator's first token (GSS_Accept_sec_context for the
 * Kerberos mechanism: one round). Throws GssError for any token it refuses;
 * other exceptions come only from the caller's keyFor.
 */
export async function acceptSecContext(tokenBytes: Uint8Array, o: AcceptSecContextOptions): Promise<AcceptedContext> {
  const now = o.now ?? Date.now;
  let mech: string;
  let apReq: Buffer;
  try {
    const t = decodeInitialContextToken(tokenBytes);
    mech = t.mech;
    if (mech !== Oid.KRB5 && mech !== Oid.MS_KRB5) throw new GssError(`a token of mechanism ${mech}, not Kerberos`, 'BAD_MECH');
    if (t.inner.length < 2 || t.inner.readUInt16BE(0) !== TokId.AP_REQ) throw new GssError('the Kerberos token is not an AP-REQ', 'DEFECTIVE_TOKEN');
    apReq = t.inner.subarray(2);
  } catch (e) {
    throw asGssError(e);
  }
  let accepted: AcceptedAp;
  try {
    accepted = await acceptApReq(apReq, o.keyFor, o.replay, now());
  } catch (e) {
    throw asGssError(e);
  }
  const auth = accepted.authenticator;
  if (!auth.cksum || auth.cksum.type !== ChecksumType.GSSAPI) throw new GssError('the authenticator lacks the GSS checksum', 'DEFECTIVE_TOKEN');
  let gss;
  try {
    gss = decodeGssChecksum(auth.cksum.value);
  } catch (e) {
    throw asGssError(e);
  }
  if (gss.flags & DCE_STYLE) throw new GssError('DCE-style contexts are not supported', 'UNAVAILABLE');
  if (auth.subkey && !validKey(auth.subkey)) throw new GssError(`initiator subkey of enctype ${auth.subkey.etype} not usable`, 'UNAVAILABLE');
  const initiatorKey: EncryptionKey = auth.subkey ? { etype: auth.subkey.etype, value: auth.subkey.value } : accepted.sessionKey;
  const recvSeq = auth.seqNumber ?? 0;
  const mutual = (gss.flags & GssFlag.MUTUAL) !== 0 || accepted.mutual;
  const expires = accepted.ticket.endtime;
  const common = { client: accepted.client, server: accepted.server, authIndicators: accepted.authIndicators, mech, flags: gss.flags, expires, bindings: gss.bindings, ...(gss.delegation ? { delegation: gss.delegation } : {}) };
  // the ticket was accepted up to the clock skew past its end; the context lives as long
  const end = expires.getTime() + SKEW_MS;
  if (!mutual) {
    // with no AP-REP to carry our own number, both directions start from the initiator's (as MIT does)
    const context = new GssContext({ keys: { role: 'acceptor', initiatorKey }, sendSeq: recvSeq, recvSeq, expires: end, now });
    return { ...common, context, mutual: false };
  }
  const sendSeq = randomInt(0, 0x40000000);
  const acceptorSubkey = o.acceptorSubkey === false ? undefined : profile(initiatorKey.etype).randomKey();
  const apRep = encodeKrb5Token(TokId.AP_REP, makeApRep(accepted, sendSeq, acceptorSubkey), mech);
  const keys: TokenKeys = { role: 'acceptor', initiatorKey, ...(acceptorSubkey ? { acceptorSubkey } : {}) };
  const context = new GssContext({ keys, sendSeq, recvSeq, expires: end, now });
  return { ...common, context, mutual: true, outputToken: apRep };
}

/**
 * The initiator's context once its AP-REQ went out (and, when it asked for
 * mutual authentication, the acceptor's AP-REP part came back): for clients
 * and tests.
 */
export function initiatorContext(o: { initiatorKey: EncryptionKey; authenticatorSeq: number; apRep?: EncApRepPart; expires?: number; now?: () => number }): GssContext {
  const sub = o.apRep?.subkey;
  if (sub && !validKey(sub)) throw new GssError(`acceptor subkey of enctype ${sub.etype} not usable`, 'UNAVAILABLE');
  const keys: TokenKeys = { role: 'initiator', initiatorKey: o.initiatorKey, ...(sub ? { acceptorSubkey: { etype: sub.etype, value: sub.value } } : {}) };
  return new GssContext({
    keys,
    sendSeq: o.authenticatorSeq,
    recvSeq: o.apRep ? (o.apRep.seqNumber ?? 0) : o.authenticatorSeq,
    ...(o.expires !== undefined ? { expires: o.expires } : {}),
    ...(o.now ? { now: o.now } : {}),
  });
}

/** Refusals of a token as GssError; anything else (the caller's own failures) passes through. */
function asGssError(e: unknown): unknown {
  if (e instanceof GssError) return e;
  if (e instanceof ApError) return new GssError(e.message, 'REJECTED', e.code);
  if (e instanceof Asn1Error) return new GssError(e.message, 'DEFECTIVE_TOKEN');
  if (e instanceof KrbCryptoError) return new GssError(e.message, 'DEFECTIVE_TOKEN');
  return e;
}
