/**
 * The AS exchange (RFC 4120 §3.1) as a sequence of steps: unwrap the FAST
 * armor (fast.ts); look up the client and the server, whose account state
 * (account/state.ts) is judged before any pre-authentication
 * (principal-checks.ts); pre-authenticate the client — PA-ENC-TIMESTAMP
 * (§5.2.7.2) unarmored, the encrypted challenge (RFC 6113 §5.4.6) or the
 * idp mechanism (idp-preauth.ts) armored; required for every client,
 * answered with PREAUTH_REQUIRED and ETYPE-INFO2 otherwise — where a wrong
 * password counts towards the account's lockout and a right one with an
 * expired password is refused, except for a ticket to the password-change
 * service (kadmin/changepw, kdc/kpasswd.ts), which is how the password gets
 * changed; decide the ticket (lifetime and renewal from
 * realm policy, flags, session enctype) and the authentication indicators
 * the method earns (auth-indicators.ts, which also refuses a server that
 * requires others); issue the AS-REP sealed with the client's long-term
 * key, or armored with a strengthened reply key, naming when the password
 * expires (key-expiration), which is what MIT kinit and SSSD warn by. A request for
 * WELLKNOWN/ANONYMOUS takes its own short path: anonymous PKINIT
 * (pkinit.ts) and a TGT good only as FAST armor.
 */
import { der, parseDer } from '../kerberos/asn1/der.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { decodePaEncTsEnc, encodeEtypeInfo2, encodePaEncTsEnc, type EtypeInfo2Entry } from '../kerberos/asn1/padata.js';
import { decodeEncryptedData, encodeChecksum, encodeEncryptedData, type PaData } from '../kerberos/asn1/primitives.js';
import type { Ticket } from '../kerberos/asn1/ticket.js';
import { cf2, profile, supportedEtypes, type EncryptionKey } from '../kerberos/crypto/index.js';
import { flagBit, hasFlag, KdcOption, KeyUsage, MsgType, PaType, TicketFlag } from '../kerberos/iana.js';
import { microseconds, wholeSeconds } from '../kerberos/time.js';
import { SKEW_MS } from '../kerberos/ap-exchange.js';
import { changepwPrincipal } from '../kerberos/principal.js';
import type { Proof } from '../account/state.js';
import { armoredReply, isArmored, unwrapAsFast, type FastState } from './fast.js';
import type { ExchangeContext } from './exchange-context.js';
import { anonymousArmorRefusal, idpArmorAccepted, idpStep, offersIdp } from './idp-preauth.js';
import { KdcError, lazyHints, type Hints } from './errors.js';
import { checkAccount, lookupClient, lookupServer } from './principal-checks.js';
import { keyFor, mapMaybe, type KdcPrincipal, type Maybe } from './principals.js';
import { effectiveTill, makeReply, makeTicket, sessionEtype, type TicketSpec } from './tickets.js';
import { indicatorsOf, withIndicators, type PreauthMethod } from './auth-indicators.js';
import { anonymousPkinit, anonymousTicket, isAnonymousRequest, refuseCertificatePkinit } from './pkinit.js';

/**
 * The AS exchange: unwrap the armor, look up the client and the server,
 * pre-authenticate the client, decide the ticket, issue the reply. A step
 * whose principals are cached answers at once; only a step that must wait
 * is awaited.
 */
export async function asExchange(ctx: ExchangeContext, outer: KdcReq): Promise<Buffer> {
  const req = isArmored(outer) ? await unwrapArmor(ctx, outer) : outer;
  if (isAnonymousRequest(req)) return anonymousExchange(ctx, outer, req);
  refuseCertificatePkinit(req);
  let client = lookupClient(ctx, req);
  if (client instanceof Promise) client = await client;
  let server = lookupServer(ctx, req);
  if (server instanceof Promise) server = await server;
  let proven = preauthenticate(ctx, req, client, server);
  if (proven instanceof Promise) proven = await proven;
  const encPa = wantsEncPaRep(outer, req);
  let spec = withIndicators(ctx, initialTicketSpec(ctx, req, client, server, flagBit(TicketFlag.PRE_AUTHENT) | (encPa ? flagBit(TicketFlag.ENC_PA_REP) : 0)), indicatorsOf(proven.method));
  if (spec instanceof Promise) spec = await spec;
  return issueInitial(ctx, req, spec, proven, encPa, passwordExpiry(proven, client));
}

/**
 * When the password a client proved expires, for the reply's key-expiration
 * (RFC 4120 §5.4.2): MIT kinit warns when it is within a week, SSSD's
 * krb5_child passes it to pam_sss, which warns within the domain's
 * pwd_expiration_warning. Only for a login by the password itself.
 */
function passwordExpiry(proven: Proven, client: KdcPrincipal): Date | undefined {
  if (proven.method !== 'encrypted-timestamp' && proven.method !== 'encrypted-challenge') return undefined;
  return client.account.passwordExpiration;
}

/**
 * The request inside an armored AS-REQ. From here on the exchange is
 * armored (its replies and errors too), and every cookie it seals names the
 * armor, which may then come again in this conversation.
 */
async function unwrapArmor(ctx: ExchangeContext, outer: KdcReq): Promise<KdcReq> {
  const unwrapped = await unwrapAsFast(ctx.caches, ctx.db, ctx.realm, ctx.cookies, outer, ctx.now());
  if (!unwrapped) return outer;
  ctx.fast = unwrapped.fast;
  ctx.cookies = unwrapped.cookies;
  return unwrapped.req;
}

/**
 * What pre-authentication proved: the method (which earns the ticket's
 * authentication indicators), the key the reply is sealed with (its kvno
 * for a long-term key), and what the FAST response and the reply add for it.
 */
interface Proven {
  method: PreauthMethod;
  key: EncryptionKey;
  kvno?: number;
  fastPadata?: PaData[];
  padata?: PaData[];
}

/**
 * An anonymous TGT (kdc/pkinit.ts): no client to look up, anonymous PKINIT
 * for the reply key, the ticket renamed, flagged and keyed as RFC 8062 has it.
 */
async function anonymousExchange(ctx: ExchangeContext, outer: KdcReq, req: KdcReq): Promise<Buffer> {
  let server = lookupServer(ctx, req);
  if (server instanceof Promise) server = await server;
  const proven: Proven = anonymousPkinit(ctx, req, server);
  const encPa = wantsEncPaRep(outer, req);
  const spec = initialTicketSpec(ctx, req, {}, server, flagBit(TicketFlag.PRE_AUTHENT) | (encPa ? flagBit(TicketFlag.ENC_PA_REP) : 0));
  proven.padata!.push(anonymousTicket(spec, proven.key));
  return issueInitial(ctx, req, spec, proven, encPa);
}

/** A pre-authentication with a key the client does not hold: a wrong password, which the lockout counts. */
class WrongKey extends KdcError {
  constructor(hints: Hints) {
    super('KDC_ERR_PREAUTH_FAILED', 'pre-authentication failed', hints);
  }
}

/**
 * Pre-authentication, by the mechanisms the request can use: armored, the
 * idp mechanism or the encrypted challenge; unarmored, the encrypted
 * timestamp. A client without a key of a requested enctype has only the idp
 * mechanism, which needs FAST. Hints for PREAUTH_REQUIRED are made only
 * when an error carries them.
 */
function preauthenticate(ctx: ExchangeContext, req: KdcReq, client: KdcPrincipal, server: KdcPrincipal): Maybe<Proven> {
  const hasKeys = req.body.etypes.some((e) => keyFor(client, e) !== undefined);
  const idp = offersIdp(client);
  if (!hasKeys && !idp) {
    if (client.keys.length === 0 && client.isUser) {
      // a failed login to the user (SSSD: "Authentication failure", where ETYPE_NOSUPP was a "System error"); the log says why
      throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'the user has no password and no IdP login (set a password, or link the user to an IdP reference)');
    }
    throw new KdcError('KDC_ERR_ETYPE_NOSUPP', client.keys.length > 0 ? 'the client has no key of a requested enctype' : 'the principal has no keys');
  }
  const hints = lazyHints(() => preauthHints(ctx, client, req.body.etypes));
  // an expired password may still get the ticket that changes it
  const proof: Proof = server.name === changepwPrincipal(ctx.realm) ? 'password-to-change' : 'password';
  if (ctx.fast) return armoredPreauth(ctx, ctx.fast, req, client, { hasKeys, idp, proof }, hints);
  if (!hasKeys) {
    // an IdP-only user: the idp mechanism needs FAST (kinit -T ARMOR_CCACHE)
    throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'pre-authentication required (use FAST armor for IdP login)', [{ type: PaType.FX_FAST, value: Buffer.alloc(0) }, ctx.cookies.seal({ kind: 'preauth' })]);
  }
  return passwordPreauth(ctx, client, proof, () => verifyEncTimestamp(ctx, client, req, hints));
}

/**
 * Armored pre-authentication: the idp mechanism, offered first, unless the
 * request tries a password (a local password keeps working beside it, spec
 * §1.5) or its armor is anonymous where the realm does not allow that for
 * the idp mechanism; else the encrypted challenge, answered with the KDC's
 * half of it.
 */
function armoredPreauth(ctx: ExchangeContext, fast: FastState, req: KdcReq, client: KdcPrincipal, can: { hasKeys: boolean; idp: boolean; proof: Proof }, hints: () => PaData[]): Maybe<Proven> {
  const triesPassword = can.hasKeys && req.padata.some((p) => p.type === PaType.ENCRYPTED_CHALLENGE && p.value.length > 0);
  // anonymous armor carries the idp mechanism only where the realm allows it; a password still works under it
  const idp = can.idp && idpArmorAccepted(ctx);
  if (can.idp && !idp && !can.hasKeys) throw anonymousArmorRefusal(ctx);
  if (idp && !triesPassword) return idpStep(ctx, req, client, can.hasKeys ? hints() : []).then((): Proven => ({ method: 'idp', key: fast.armorKey }));
  return mapMaybe(passwordPreauth(ctx, client, can.proof, () => verifyEncryptedChallenge(ctx, client, req, hints)), (longTerm) => ({ ...longTerm, fastPadata: [kdcChallenge(ctx, longTerm.key)] }));
}

// Pre-authentication: the mechanisms, their hints and the lockout count.

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

/**
 * METHOD-DATA for PREAUTH_REQUIRED. Unarmored: encrypted timestamp, plus an
 * empty PA-FX-FAST (FAST is available: `kinit -T` restarts armored) and a
 * cookie. Armored: encrypted challenge (RFC 6113 §5.4.6) instead.
 */
function preauthHints(ctx: ExchangeContext, client: KdcPrincipal, requested: readonly number[]): PaData[] {
  const hints: PaData[] = [];
  const info = etypeInfo(client, requested);
  if (info.length === 0) return hints;
  hints.push({ type: PaType.ETYPE_INFO2, value: encodeEtypeInfo2(info) });
  if (ctx.fast) hints.push({ type: PaType.ENCRYPTED_CHALLENGE, value: Buffer.alloc(0) });
  else hints.push({ type: PaType.ENC_TIMESTAMP, value: Buffer.alloc(0) }, { type: PaType.FX_FAST, value: Buffer.alloc(0) }, ctx.cookies.seal({ kind: 'preauth' }));
  return hints;
}

/**
 * Password pre-authentication (`verify` throws WrongKey for a key the client
 * does not hold) with the account's lockout counter and, unless the ticket
 * is to change the password, its expiry; at once when there is nothing to
 * write.
 */
function passwordPreauth<T extends object>(ctx: ExchangeContext, client: KdcPrincipal, proof: Proof, verify: () => T): Maybe<T> {
  let result: T;
  try {
    result = verify();
  } catch (e) {
    if (e instanceof WrongKey) return ctx.db.accounts.failedPassword(client.account, client.lockout, ctx.now()).then(() => Promise.reject(e));
    throw e;
  }
  const accepted = (): T => {
    checkAccount(ctx, client, 'client', proof);
    return result;
  };
  const reset = ctx.db.accounts.passwordAccepted(client.account, ctx.now());
  return reset ? reset.then(accepted) : accepted();
}

/** Checks PA-ENC-TIMESTAMP and returns the reply key, or throws PREAUTH_REQUIRED/FAILED. */
function verifyEncTimestamp(ctx: ExchangeContext, client: KdcPrincipal, req: KdcReq, hints: Hints): Proven {
  const pa = req.padata.find((p) => p.type === PaType.ENC_TIMESTAMP);
  if (!pa || pa.value.length === 0) throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'pre-authentication required', hints);
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
    throw new WrongKey(hints);
  }
  if (Math.abs(ts.patimestamp.getTime() - ctx.now()) > SKEW_MS) throw new KdcError('KRB_AP_ERR_SKEW', 'clock skew too great');
  ctx.note.preauth = 'encrypted-timestamp';
  return { method: 'encrypted-timestamp', key, kvno: stored.kvno };
}

const challengeKey = (armor: EncryptionKey, longTerm: EncryptionKey, pepper: string) => cf2(armor, pepper, longTerm, 'challengelongterm');

/** RFC 6113 §5.4.6: the client's encrypted challenge, tried with each of the client's keys. */
function verifyEncryptedChallenge(ctx: ExchangeContext, client: KdcPrincipal, req: KdcReq, hints: Hints): Proven & { kvno: number } {
  const fast = ctx.fast!;
  const pa = req.padata.find((p) => p.type === PaType.ENCRYPTED_CHALLENGE);
  if (!pa || pa.value.length === 0) throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'pre-authentication required', hints);
  let enc;
  try {
    enc = decodeEncryptedData(parseDer(pa.value));
  } catch {
    throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'malformed encrypted challenge', hints);
  }
  for (const e of req.body.etypes) {
    const k = keyFor(client, e);
    if (!k) continue;
    const longTerm = { etype: k.etype, value: k.key };
    const ck = challengeKey(fast.armorKey, longTerm, 'clientchallengearmor');
    let ts;
    try {
      ts = decodePaEncTsEnc(profile(ck.etype).decrypt(ck, KeyUsage.ENC_CHALLENGE_CLIENT, enc.cipher));
    } catch {
      continue;
    }
    if (Math.abs(ts.patimestamp.getTime() - ctx.now()) > SKEW_MS) throw new KdcError('KRB_AP_ERR_SKEW', 'clock skew too great');
    ctx.note.preauth = 'encrypted-challenge';
    return { method: 'encrypted-challenge', key: longTerm, kvno: k.kvno };
  }
  ctx.note.preauth = 'encrypted-challenge failed';
  throw new WrongKey(hints);
}

/** The KDC's half of the encrypted challenge, proving it knows the client key. */
function kdcChallenge(ctx: ExchangeContext, longTerm: EncryptionKey): PaData {
  const ck = challengeKey(ctx.fast!.armorKey, longTerm, 'kdcchallengearmor');
  const now = ctx.now();
  const ts = encodePaEncTsEnc({ patimestamp: wholeSeconds(now), pausec: microseconds(now) });
  return { type: PaType.ENCRYPTED_CHALLENGE, value: der(encodeEncryptedData({ etype: ck.etype, cipher: profile(ck.etype).encrypt(ck, KeyUsage.ENC_CHALLENGE_KDC, ts) })) };
}

// Deciding the ticket and issuing the reply.

/** Lifetime, renewal and flags of an initial ticket (RFC 4120 §3.1.3). */
function initialTicketSpec(ctx: ExchangeContext, req: KdcReq, client: Pick<KdcPrincipal, 'maxLife' | 'maxRenew'>, server: KdcPrincipal, extraFlags = 0): TicketSpec {
  const body = req.body;
  const policy = ctx.policy;
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

/**
 * Issues the AS-REP: the ticket, and the reply part sealed with the reply
 * key, which for an armored request is strengthened (RFC 6113 §5.4.3).
 */
function issueInitial(ctx: ExchangeContext, req: KdcReq, spec: TicketSpec, proven: Proven, encPa: boolean, keyExpiration?: Date): Buffer {
  const ticket = makeTicket(spec);
  const { replyKey, padata } = ctx.fast ? armoredFinish(ctx, ctx.fast, req, spec, ticket, proven) : { replyKey: proven.key, padata: [] };
  ctx.note.etype = replyKey.etype;
  return makeReply({
    msgType: MsgType.AS_REP,
    spec,
    ticket,
    nonce: req.body.nonce,
    replyKey,
    ...(ctx.fast || proven.kvno === undefined ? {} : { replyKvno: proven.kvno }),
    usage: KeyUsage.AS_REP_ENC_PART,
    padata: proven.padata ? [...proven.padata, ...padata] : padata,
    ...(encPa ? { encryptedPaData: encPaRep(ctx, replyKey) } : {}),
    ...(keyExpiration ? { keyExpiration } : {}),
  });
}

/**
 * The armored half of an AS-REP: the reply key strengthened by a random key
 * (KRB-FX-CF2 with "strengthenkey" and "replykey"), and the FAST response
 * carrying that key and KrbFastFinished, whose checksum binds the ticket to
 * the armor.
 */
function armoredFinish(ctx: ExchangeContext, fast: FastState, req: KdcReq, spec: TicketSpec, ticket: Ticket, proven: Proven): { replyKey: EncryptionKey; padata: PaData[] } {
  // used for this reply only, and so is the reply key made with it: keys derived from them are kept in no cache
  const strengthen = { ...profile(proven.key.etype).randomKey(), transient: true };
  const replyKey = cf2(strengthen, 'strengthenkey', proven.key, 'replykey');
  const a = fast.armorKey;
  const now = ctx.now();
  const response = armoredReply(fast, {
    padata: proven.fastPadata ?? [],
    strengthenKey: { etype: strengthen.etype, value: strengthen.value },
    finished: {
      timestamp: wholeSeconds(now),
      usec: microseconds(now),
      crealm: spec.crealm,
      cname: spec.cname,
      ticketChecksum: { type: profile(a.etype).checksumType, value: profile(a.etype).checksum(a, KeyUsage.FAST_FINISHED, ticket.raw) },
    },
    nonce: req.body.nonce,
  });
  return { replyKey, padata: [response] };
}

/** RFC 6806 §11: the checksum of the request under the reply key, and "FAST is available". */
function encPaRep(ctx: ExchangeContext, replyKey: EncryptionKey): PaData[] {
  const p = profile(replyKey.etype);
  const sum = der(encodeChecksum({ type: p.checksumType, value: p.checksum(replyKey, KeyUsage.AS_REQ, ctx.raw) }));
  return [
    { type: PaType.REQ_ENC_PA_REP, value: sum },
    { type: PaType.FX_FAST, value: Buffer.alloc(0) },
  ];
}

/** Whether the client asked for the request checksum in the reply (RFC 6806 §11), outside FAST or inside. */
function wantsEncPaRep(outer: KdcReq, inner: KdcReq): boolean {
  return [...outer.padata, ...inner.padata].some((p) => p.type === PaType.REQ_ENC_PA_REP);
}
