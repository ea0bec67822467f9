/**
 * The AS exchange (RFC 4120 §3.1): client and server look-up, enctype
 * choice, pre-authentication with PA-ENC-TIMESTAMP (§5.2.7.2; required for
 * every client, answered with PREAUTH_REQUIRED and ETYPE-INFO2 otherwise),
 * ticket lifetime and renewal from realm policy, and the AS-REP sealed with
 * the client's long-term key.
 */
import { parseDer } from '../kerberos/asn1/der.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { decodePaEncTsEnc, encodeEtypeInfo2, type EtypeInfo2Entry } from '../kerberos/asn1/padata.js';
import { decodeEncryptedData, encodePaDataList, principalToString, type PaData } from '../kerberos/asn1/primitives.js';
import { profile, supportedEtypes } from '../kerberos/crypto/index.js';
import { flagBit, hasFlag, KdcOption, KeyUsage, PaType, TicketFlag } from '../kerberos/iana.js';
import { KdcError } from './kdc-error.js';
import { keyFor, type KdcPrincipal, type PrincipalDb, type RealmPolicy } from './principals.js';
import { effectiveTill, makeReply, makeTicket, sessionEtype, wholeSeconds, type TicketSpec } from './tickets.js';

export const CLOCK_SKEW_SECONDS = 300;

export interface ExchangeContext {
  db: PrincipalDb;
  realm: string;
  policy: () => Promise<RealmPolicy>;
  now: () => number;
  /** what the log line should say about the request */
  note: { client?: string; server?: string; etype?: number; preauth?: string };
}

/** ETYPE-INFO2 for the client's keys, in the order the client asked. */
function etypeInfo(client: KdcPrincipal, requested: readonly number[]): EtypeInfo2Entry[] {
  const out: EtypeInfo2Entry[] = [];
  for (const e of requested) {
    const k = keyFor(client, e);
    if (!k || out.some((x) => x.etype === e)) continue;
    const entry: EtypeInfo2Entry = { etype: e };
    if (k.salt !== undefined) entry.salt = k.salt;
    out.push(entry);
  }
  return out;
}

export function preauthHints(client: KdcPrincipal, requested: readonly number[]): PaData[] {
  const hints: PaData[] = [];
  const info = etypeInfo(client, requested);
  if (info.length) {
    hints.push({ type: PaType.ETYPE_INFO2, value: encodeEtypeInfo2(info) });
    hints.push({ type: PaType.ENC_TIMESTAMP, value: Buffer.alloc(0) });
  }
  return hints;
}

export async function lookupClient(ctx: ExchangeContext, req: KdcReq): Promise<KdcPrincipal> {
  const body = req.body;
  if (!body.cname) throw new KdcError('KDC_ERR_C_PRINCIPAL_UNKNOWN', 'no client name');
  if (body.realm !== ctx.realm) throw new KdcError('KDC_ERR_WRONG_REALM', `realm ${body.realm} is not served here`);
  const name = principalToString(body.cname, ctx.realm);
  ctx.note.client = name;
  const client = await ctx.db.lookup(name);
  if (!client) throw new KdcError('KDC_ERR_C_PRINCIPAL_UNKNOWN', `client ${name} not found`);
  if (client.disabled) throw new KdcError('KDC_ERR_CLIENT_REVOKED', `client ${name} is disabled`);
  if (client.expiration && client.expiration.getTime() < ctx.now()) throw new KdcError('KDC_ERR_NAME_EXP', `client ${name} has expired`);
  return client;
}

export async function lookupServer(ctx: ExchangeContext, req: KdcReq): Promise<KdcPrincipal> {
  if (!req.body.sname) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', 'no server name');
  const name = principalToString(req.body.sname, ctx.realm);
  ctx.note.server = name;
  const server = await ctx.db.lookup(name);
  if (!server) throw new KdcError('KDC_ERR_S_PRINCIPAL_UNKNOWN', `server ${name} not found`);
  if (server.disabled) throw new KdcError('KDC_ERR_SERVICE_REVOKED', `server ${name} is disabled`);
  return server;
}

/** Checks PA-ENC-TIMESTAMP and returns the reply key, or throws PREAUTH_REQUIRED/FAILED. */
function verifyEncTimestamp(ctx: ExchangeContext, client: KdcPrincipal, req: KdcReq, hints: PaData[]): { key: { etype: number; value: Buffer }; kvno: number } {
  const pa = req.padata.find((p) => p.type === PaType.ENC_TIMESTAMP);
  if (!pa || pa.value.length === 0) throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'pre-authentication required', encodePaDataList(hints));
  let enc;
  try {
    enc = decodeEncryptedData(parseDer(pa.value));
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'malformed PA-ENC-TIMESTAMP');
  }
  const stored = keyFor(client, enc.etype);
  if (!stored || !supportedEtypes.includes(enc.etype)) throw new KdcError('KDC_ERR_ETYPE_NOSUPP', `no key of enctype ${enc.etype}`);
  const key = { etype: enc.etype, value: stored.key };
  let ts;
  try {
    ts = decodePaEncTsEnc(profile(enc.etype).decrypt(key, KeyUsage.PA_ENC_TIMESTAMP, enc.cipher));
  } catch {
    ctx.note.preauth = 'encrypted-timestamp failed';
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'pre-authentication failed', encodePaDataList(hints));
  }
  if (Math.abs(ts.patimestamp.getTime() - ctx.now()) > CLOCK_SKEW_SECONDS * 1000) throw new KdcError('KRB_AP_ERR_SKEW', 'clock skew too great');
  ctx.note.preauth = 'encrypted-timestamp';
  return { key, kvno: stored.kvno };
}

/** Lifetime, renewal and flags of an initial ticket (RFC 4120 §3.1.3). */
export async function initialTicketSpec(ctx: ExchangeContext, req: KdcReq, client: KdcPrincipal, server: KdcPrincipal, extraFlags = 0): Promise<TicketSpec> {
  const body = req.body;
  const policy = await ctx.policy();
  const now = wholeSeconds(ctx.now());
  const maxLife = Math.min(policy.maxLife, client.maxLife ?? Infinity, server.maxLife ?? Infinity);
  const maxRenew = Math.min(policy.maxRenew, client.maxRenew ?? Infinity, server.maxRenew ?? Infinity);
  const endtime = effectiveTill(body.till, new Date(now.getTime() + maxLife * 1000));
  if (endtime.getTime() <= now.getTime()) throw new KdcError('KDC_ERR_NEVER_VALID', 'requested end time is in the past');
  let flags = flagBit(TicketFlag.INITIAL) | extraFlags;
  const opts = body.kdcOptions;
  if (hasFlag(opts, KdcOption.FORWARDABLE)) flags |= flagBit(TicketFlag.FORWARDABLE);
  if (hasFlag(opts, KdcOption.PROXIABLE)) flags |= flagBit(TicketFlag.PROXIABLE);
  let renewTill: Date | undefined;
  const wantsRenew = hasFlag(opts, KdcOption.RENEWABLE) || (hasFlag(opts, KdcOption.RENEWABLE_OK) && body.till.getTime() > endtime.getTime());
  if (wantsRenew && maxRenew > 0) {
    const asked = body.rtime ?? body.till;
    renewTill = effectiveTill(asked, new Date(now.getTime() + maxRenew * 1000));
    if (renewTill.getTime() > endtime.getTime()) flags |= flagBit(TicketFlag.RENEWABLE);
    else renewTill = undefined;
  }
  const etype = sessionEtype(body.etypes, server);
  const spec: TicketSpec = {
    crealm: ctx.realm,
    cname: body.cname!,
    server,
    srealm: ctx.realm,
    sname: body.sname!,
    flags: flags >>> 0,
    authtime: now,
    endtime,
    sessionKey: { etype, value: profile(etype).randomKey().value },
  };
  if (renewTill) spec.renewTill = renewTill;
  if (body.addresses && body.addresses.length) spec.caddr = body.addresses;
  return spec;
}

export async function asExchange(ctx: ExchangeContext, req: KdcReq): Promise<Buffer> {
  const client = await lookupClient(ctx, req);
  const server = await lookupServer(ctx, req);
  const hints = preauthHints(client, req.body.etypes);
  if (hints.length === 0) throw new KdcError('KDC_ERR_ETYPE_NOSUPP', 'the client has no key of a requested enctype');
  const reply = verifyEncTimestamp(ctx, client, req, hints);
  const spec = await initialTicketSpec(ctx, req, client, server, flagBit(TicketFlag.PRE_AUTHENT));
  ctx.note.etype = reply.key.etype;
  return makeReply({ msgType: 11, spec, ticket: makeTicket(spec), nonce: req.body.nonce, replyKey: reply.key, replyKvno: reply.kvno, usage: KeyUsage.AS_REP_ENC_PART });
}
