/**
 * The TGS exchange (RFC 4120 §3.3): the AP-REQ in PA-TGS-REQ is checked
 * (TGT decrypted with the krbtgt key, then kerberos/ap-exchange.ts: the
 * authenticator, client names, clock skew, ticket times, replay, with a
 * keyed checksum over the exact KDC-REQ-BODY bytes), the ticket's client
 * must still be an account that may authenticate (account/state.ts: not
 * disabled, locked or expired), then a service ticket or a renewed TGT is
 * issued. The reply is sealed with the authenticator's subkey when there
 * is one.
 */
import { decodeApReq } from '../kerberos/asn1/ap-req.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { principalToString } from '../kerberos/asn1/primitives.js';
import { checksumProfile, profile } from '../kerberos/crypto/index.js';
import { flagBit, hasFlag, KdcOption, KeyUsage, MsgType, PaType, TicketFlag } from '../kerberos/iana.js';
import { verifyApReq } from '../kerberos/ap-exchange.js';
import { checkAccount, lookupServer } from './principal-checks.js';
import type { ExchangeContext } from './exchange-context.js';
import { KdcError } from './errors.js';
import { unwrapTgsFast } from './fast.js';
import { effectiveTill, makeReply, makeTicket, sessionEtype, type TicketSpec } from './tickets.js';
import { wholeSeconds } from '../kerberos/time.js';
import { tgsPrincipal } from '../kerberos/principal.js';

export async function tgsExchange(ctx: ExchangeContext, outer: KdcReq): Promise<Buffer> {
  let req = outer;
  const pa = req.padata.find((p) => p.type === PaType.TGS_REQ);
  if (!pa) throw new KdcError('KDC_ERR_PADATA_TYPE_NOSUPP', 'TGS-REQ without PA-TGS-REQ');
  const ap = decodeApReq(pa.value);
  const tgtName = tgsPrincipal(ctx.realm);
  if (ap.ticket.realm !== ctx.realm || principalToString(ap.ticket.sname, ctx.realm) !== tgtName) {
    throw new KdcError('KDC_ERR_POLICY', 'only tickets for this realm\'s krbtgt are accepted');
  }
  const now = ctx.now();
  let opened = ctx.caches.tgts.open(ctx.db, ctx.realm, ap.ticket, now);
  if (opened instanceof Promise) opened = await opened;
  const { etp, session: sessKey } = opened;
  const clientName = principalToString(etp.cname, etp.crealm);
  ctx.note.client = clientName;
  const auth = verifyApReq(ap, etp, sessKey, {
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
      if (cp.etype !== sessKey.etype && cp.keyBytes !== sessKey.value.length) throw new KdcError('KRB_AP_ERR_INAPP_CKSUM', 'checksum type does not fit the session key');
      if (!cp.verifyChecksum({ etype: cp.etype, value: sessKey.value }, KeyUsage.TGS_REQ_AUTH_CKSUM, req.bodyRaw, auth.cksum.value)) {
        throw new KdcError('KRB_AP_ERR_MODIFIED', 'request body checksum mismatch');
      }
    },
  });
  // MIT clients that know the KDC does FAST wrap the real request (implicit armor, RFC 6113 §5.4.1.1)
  const unwrapped = unwrapTgsFast(req, auth.subkey ? { etype: auth.subkey.etype, value: auth.subkey.value } : undefined, sessKey);
  if (unwrapped) {
    ctx.fast = unwrapped.fast;
    req = unwrapped.req;
  }
  // a ticket outlives nothing: its client must still be an account that may authenticate
  let client = ctx.db.find(clientName);
  if (client instanceof Promise) client = await client;
  if (!client) throw new KdcError('KDC_ERR_C_PRINCIPAL_UNKNOWN', `client ${clientName} not found`);
  checkAccount(ctx, client, 'client');
  const renew = hasFlag(req.body.kdcOptions, KdcOption.RENEW);
  const opts = req.body.kdcOptions;
  if (hasFlag(opts, KdcOption.VALIDATE) || hasFlag(opts, KdcOption.ENC_TKT_IN_SKEY) || hasFlag(opts, KdcOption.POSTDATED)) {
    throw new KdcError('KDC_ERR_BADOPTION', 'option not supported');
  }
  let server = lookupServer(ctx, req);
  if (server instanceof Promise) server = await server;
  const policy = ctx.policy;
  const nowS = wholeSeconds(now);
  let flags = etp.flags & (flagBit(TicketFlag.PRE_AUTHENT) | flagBit(TicketFlag.HW_AUTHENT));
  let endtime: Date;
  let renewTill: Date | undefined;
  if (renew) {
    if (!hasFlag(etp.flags, TicketFlag.RENEWABLE) || !etp.renewTill || etp.renewTill.getTime() < now) throw new KdcError('KDC_ERR_BADOPTION', 'ticket is not renewable');
    const life = etp.endtime.getTime() - (etp.starttime ?? etp.authtime).getTime();
    endtime = new Date(Math.min(etp.renewTill.getTime(), nowS.getTime() + life));
    renewTill = etp.renewTill;
    flags = etp.flags & ~flagBit(TicketFlag.INITIAL);
  } else {
    const maxLife = Math.min(policy.maxLife, server.maxLife ?? Infinity);
    endtime = effectiveTill(req.body.till, new Date(Math.min(etp.endtime.getTime(), nowS.getTime() + maxLife * 1000)));
    if (hasFlag(opts, KdcOption.FORWARDABLE) && hasFlag(etp.flags, TicketFlag.FORWARDABLE)) flags |= flagBit(TicketFlag.FORWARDABLE);
    if (hasFlag(opts, KdcOption.FORWARDED)) {
      if (!hasFlag(etp.flags, TicketFlag.FORWARDABLE)) throw new KdcError('KDC_ERR_BADOPTION', 'ticket is not forwardable');
      flags |= flagBit(TicketFlag.FORWARDED);
    }
    if (hasFlag(etp.flags, TicketFlag.FORWARDED)) flags |= flagBit(TicketFlag.FORWARDED);
    if ((hasFlag(opts, KdcOption.RENEWABLE) || hasFlag(opts, KdcOption.RENEWABLE_OK)) && hasFlag(etp.flags, TicketFlag.RENEWABLE) && etp.renewTill) {
      const asked = req.body.rtime ?? req.body.till;
      renewTill = effectiveTill(asked, etp.renewTill);
      if (renewTill.getTime() > endtime.getTime()) flags |= flagBit(TicketFlag.RENEWABLE);
      else renewTill = undefined;
    }
  }
  const etype = sessionEtype(req.body.etypes, server);
  const spec: TicketSpec = {
    crealm: etp.crealm,
    cname: etp.cname,
    server,
    srealm: ctx.realm,
    sname: req.body.sname!,
    flags: flags >>> 0,
    authtime: etp.authtime,
    starttime: nowS,
    endtime,
    sessionKey: { etype, value: profile(etype).randomKey().value },
  };
  if (renewTill) spec.renewTill = renewTill;
  if (etp.caddr) spec.caddr = etp.caddr;
  ctx.note.etype = etype;
  const replyKey = auth.subkey ? { etype: auth.subkey.etype, value: auth.subkey.value, transient: true } : sessKey;
  return makeReply({
    msgType: MsgType.TGS_REP,
    spec,
    ticket: makeTicket(spec),
    nonce: req.body.nonce,
    replyKey,
    usage: auth.subkey ? KeyUsage.TGS_REP_ENC_PART_SUBKEY : KeyUsage.TGS_REP_ENC_PART_SESSKEY,
  });
}
