/**
 * The TGS exchange (RFC 4120 §3.3) as a sequence of steps: verify the
 * request (the AP-REQ in PA-TGS-REQ: the TGT decrypted with the krbtgt key,
 * then kerberos/ap-exchange.ts checks the authenticator, client names,
 * clock skew, ticket times and replay, with a keyed checksum over the exact
 * KDC-REQ-BODY bytes; then the FAST armor, implicit in the authenticator's
 * subkey); check that the ticket's client is still an account that may
 * authenticate (account/state.ts: not disabled, locked or expired; an
 * anonymous TGT, pkinit.ts, gets nothing: it serves only as FAST armor) and look
 * up the server, which may not be the password-change service (its tickets
 * come from an AS exchange with the password, as MIT's KDC has it); decide the ticket (a service ticket or a renewed TGT:
 * flags, times, session enctype) with the TGT's authentication indicators,
 * refused when the server requires others (auth-indicators.ts); issue the
 * reply, sealed with the authenticator's subkey when there is one.
 */
import { decodeApReq, type ApReq } from '../kerberos/asn1/ap-req.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { principalToString } from '../kerberos/asn1/primitives.js';
import type { EncTicketPart } from '../kerberos/asn1/ticket.js';
import { checksumProfile, profile, type EncryptionKey } from '../kerberos/crypto/index.js';
import { flagBit, hasFlag, KdcOption, KeyUsage, MsgType, PaType, TicketFlag } from '../kerberos/iana.js';
import { verifyApReq } from '../kerberos/ap-exchange.js';
import { wholeSeconds } from '../kerberos/time.js';
import { changepwPrincipal } from '../kerberos/principal.js';
import type { ExchangeContext } from './exchange-context.js';
import { KdcError } from './errors.js';
import { unwrapTgsFast } from './fast.js';
import { isAnonymousTicket } from './pkinit.js';
import { lookupServer, usableClient } from './principal-checks.js';
import { mapMaybe, type KdcPrincipal, type Maybe } from './principals.js';
import { effectiveTill, makeReply, makeTicket, sessionEtype, type TicketSpec } from './tickets.js';
import { tgtIndicators, withIndicators } from './auth-indicators.js';

/** A TGS request whose TGT and authenticator check out: the request (unwrapped when armored), the TGT's contents and keys. */
interface VerifiedTgsReq {
  req: KdcReq;
  tgt: EncTicketPart;
  /** the TGT's session key */
  session: EncryptionKey;
  /** the authenticator's subkey, when it has one */
  subkey?: EncryptionKey;
  /** the TGT's client, as a principal name */
  clientName: string;
  /** the time the request was verified at (epoch ms); the ticket's times count from it */
  now: number;
}

/**
 * The TGS exchange: verify the request, check the client and look up the
 * server, refuse what we do not do, decide the ticket, issue the reply. A
 * step whose TGT and principals are cached answers at once; only a step
 * that must wait is awaited.
 */
export async function tgsExchange(ctx: ExchangeContext, outer: KdcReq): Promise<Buffer> {
  let verified = verifyTgsRequest(ctx, outer);
  if (verified instanceof Promise) verified = await verified;
  if (isAnonymousTicket(verified.tgt)) throw new KdcError('KDC_ERR_POLICY', 'an anonymous ticket serves only as FAST armor: no tickets are issued for it');
  // a ticket outlives nothing: its client must still be an account that may authenticate
  const client = usableClient(ctx, verified.clientName);
  if (client instanceof Promise) await client;
  refuseUnsupportedOptions(verified.req);
  let server = lookupServer(ctx, verified.req);
  if (server instanceof Promise) server = await server;
  if (server.name === changepwPrincipal(ctx.realm)) throw new KdcError('KDC_ERR_POLICY', 'tickets for the password-change service come from an AS exchange with the password');
  // the TGT's indicators, believed under the KDC verifier, go into the ticket (and a renewed TGT) as they came
  let indicators = tgtIndicators(ctx, verified.tgt);
  if (indicators instanceof Promise) indicators = await indicators;
  let spec = withIndicators(ctx, decideTicket(ctx, verified, server), indicators);
  if (spec instanceof Promise) spec = await spec;
  return issueTgsReply(ctx, verified, spec);
}

/**
 * Verifies the AP-REQ of PA-TGS-REQ: a TGT of this realm's krbtgt, which
 * decrypts and is current, and its authenticator with the body checksum;
 * then unwraps the FAST request inside, if any.
 */
function verifyTgsRequest(ctx: ExchangeContext, outer: KdcReq): Maybe<VerifiedTgsReq> {
  const ap = tgsApReq(ctx, outer);
  const now = ctx.now();
  return mapMaybe(ctx.caches.tgts.open(ctx.db, ctx.realm, ap.ticket, now), ({ etp, session }) => {
    const clientName = principalToString(etp.cname, etp.crealm);
    ctx.note.client = clientName;
    const auth = verifyAuthenticator(ctx, outer, ap, session, etp, now);
    // the subkey seals one reply (and is the armor of this request only): keys derived from it are kept in no cache
    const subkey = auth.subkey ? { etype: auth.subkey.etype, value: auth.subkey.value, transient: true } : undefined;
    // MIT clients that know the KDC does FAST wrap the real request (implicit armor, RFC 6113 §5.4.1.1)
    const unwrapped = unwrapTgsFast(outer, subkey, session);
    if (unwrapped) ctx.fast = unwrapped.fast;
    const v: VerifiedTgsReq = { req: unwrapped?.req ?? outer, tgt: etp, session, clientName, now };
    if (subkey) v.subkey = subkey;
    return v;
  });
}

/** The AP-REQ of PA-TGS-REQ, whose ticket must be for this realm's krbtgt. */
function tgsApReq(ctx: ExchangeContext, req: KdcReq): ApReq {
  const pa = req.padata.find((p) => p.type === PaType.TGS_REQ);
  if (!pa) throw new KdcError('KDC_ERR_PADATA_TYPE_NOSUPP', 'TGS-REQ without PA-TGS-REQ');
  const ap = decodeApReq(pa.value);
  const sname = ap.ticket.sname.nameString;
  // krbtgt/REALM by its components (the same test as comparing it written out, without writing it)
  if (ap.ticket.realm !== ctx.realm || sname.length !== 2 || sname[0] !== 'krbtgt' || sname[1] !== ctx.realm) {
    throw new KdcError('KDC_ERR_POLICY', "only tickets for this realm's krbtgt are accepted");
  }
  return ap;
}

/** The authenticator, checked as any AP-REQ's (kerberos/ap-exchange.ts), whose checksum must cover the request body under the session key. */
function verifyAuthenticator(ctx: ExchangeContext, req: KdcReq, ap: ApReq, session: EncryptionKey, etp: EncTicketPart, now: number) {
  return verifyApReq(ap, etp, session, {
    usage: KeyUsage.TGS_REQ_AUTH,
    now,
    replay: ctx.caches.replays,
    check(auth) {
      if (!auth.cksum) throw new KdcError('KRB_AP_ERR_INAPP_CKSUM', 'the authenticator has no checksum');
      let cp;
      try {
        cp = checksumProfile(auth.cksum.type);
      } catch {
        throw new KdcError('KDC_ERR_SUMTYPE_NOSUPP', `checksum type ${auth.cksum.type} not supported`);
      }
      if (cp.etype !== session.etype && cp.keyBytes !== session.value.length) throw new KdcError('KRB_AP_ERR_INAPP_CKSUM', 'checksum type does not fit the session key');
      // the session key of a TGT seen once stays transient here too: its Kc would only fill the derived-key cache
      const ckey: EncryptionKey = { etype: cp.etype, value: session.value };
      if (session.transient) ckey.transient = true;
      if (!cp.verifyChecksum(ckey, KeyUsage.TGS_REQ_AUTH_CKSUM, req.bodyRaw, auth.cksum.value)) {
        throw new KdcError('KRB_AP_ERR_MODIFIED', 'request body checksum mismatch');
      }
    },
  });
}

/** Validation, user-to-user and postdating are not offered. */
function refuseUnsupportedOptions(req: KdcReq): void {
  const opts = req.body.kdcOptions;
  if (hasFlag(opts, KdcOption.VALIDATE) || hasFlag(opts, KdcOption.ENC_TKT_IN_SKEY) || hasFlag(opts, KdcOption.POSTDATED)) {
    throw new KdcError('KDC_ERR_BADOPTION', 'option not supported');
  }
}

/** The ticket to issue (RFC 4120 §3.3.3): a renewal of the TGT, or a new ticket within the TGT's bounds; then its session enctype. */
function decideTicket(ctx: ExchangeContext, v: VerifiedTgsReq, server: KdcPrincipal): TicketSpec {
  const { req, tgt } = v;
  const nowS = wholeSeconds(v.now);
  const t = hasFlag(req.body.kdcOptions, KdcOption.RENEW) ? renewal(tgt, v.now, nowS) : newTicketTimes(ctx, req, tgt, server, nowS);
  const etype = sessionEtype(req.body.etypes, server);
  const spec: TicketSpec = {
    crealm: tgt.crealm,
    cname: tgt.cname,
    server,
    srealm: ctx.realm,
    sname: req.body.sname!,
    flags: t.flags >>> 0,
    authtime: tgt.authtime,
    starttime: nowS,
    endtime: t.endtime,
    sessionKey: { etype, value: profile(etype).randomKey().value },
  };
  if (t.renewTill) spec.renewTill = t.renewTill;
  if (tgt.caddr) spec.caddr = tgt.caddr;
  return spec;
}

interface TicketTimes {
  flags: number;
  endtime: Date;
  renewTill?: Date | undefined;
}

/** RENEW: the TGT again, as long as it lived, up to its renew-till; no longer INITIAL. */
function renewal(tgt: EncTicketPart, now: number, nowS: Date): TicketTimes {
  if (!hasFlag(tgt.flags, TicketFlag.RENEWABLE) || !tgt.renewTill || tgt.renewTill.getTime() < now) throw new KdcError('KDC_ERR_BADOPTION', 'ticket is not renewable');
  const life = tgt.endtime.getTime() - (tgt.starttime ?? tgt.authtime).getTime();
  return { flags: tgt.flags & ~flagBit(TicketFlag.INITIAL), endtime: new Date(Math.min(tgt.renewTill.getTime(), nowS.getTime() + life)), renewTill: tgt.renewTill };
}

/**
 * A new ticket: its end within the TGT's and the policy's, forwardable and
 * renewable only as far as the TGT is; pre-authentication flags carried over.
 */
function newTicketTimes(ctx: ExchangeContext, req: KdcReq, tgt: EncTicketPart, server: KdcPrincipal, nowS: Date): TicketTimes {
  const opts = req.body.kdcOptions;
  let flags = tgt.flags & (flagBit(TicketFlag.PRE_AUTHENT) | flagBit(TicketFlag.HW_AUTHENT));
  const maxLife = Math.min(ctx.policy.maxLife, server.maxLife ?? Infinity);
  const endtime = effectiveTill(req.body.till, new Date(Math.min(tgt.endtime.getTime(), nowS.getTime() + maxLife * 1000)));
  if (hasFlag(opts, KdcOption.FORWARDABLE) && hasFlag(tgt.flags, TicketFlag.FORWARDABLE)) flags |= flagBit(TicketFlag.FORWARDABLE);
  if (hasFlag(opts, KdcOption.FORWARDED)) {
    if (!hasFlag(tgt.flags, TicketFlag.FORWARDABLE)) throw new KdcError('KDC_ERR_BADOPTION', 'ticket is not forwardable');
    flags |= flagBit(TicketFlag.FORWARDED);
  }
  if (hasFlag(tgt.flags, TicketFlag.FORWARDED)) flags |= flagBit(TicketFlag.FORWARDED);
  let renewTill: Date | undefined;
  if ((hasFlag(opts, KdcOption.RENEWABLE) || hasFlag(opts, KdcOption.RENEWABLE_OK)) && hasFlag(tgt.flags, TicketFlag.RENEWABLE) && tgt.renewTill) {
    renewTill = effectiveTill(req.body.rtime ?? req.body.till, tgt.renewTill);
    if (renewTill.getTime() > endtime.getTime()) flags |= flagBit(TicketFlag.RENEWABLE);
    else renewTill = undefined;
  }
  return { flags, endtime, renewTill };
}

/** Issues the TGS-REP: the ticket, and the reply part sealed with the authenticator's subkey, or else the TGT's session key. */
function issueTgsReply(ctx: ExchangeContext, v: VerifiedTgsReq, spec: TicketSpec): Buffer {
  ctx.note.etype = spec.sessionKey.etype;
  return makeReply({
    msgType: MsgType.TGS_REP,
    spec,
    ticket: makeTicket(spec),
    nonce: v.req.body.nonce,
    replyKey: v.subkey ?? v.session,
    usage: v.subkey ? KeyUsage.TGS_REP_ENC_PART_SUBKEY : KeyUsage.TGS_REP_ENC_PART_SESSKEY,
  });
}
