/**
 * The `idp` pre-authentication (PA type 152, SSSD's client plugin; only
 * inside FAST). First request: where the armor and the limits of starts
 * allow it (idp-starts.ts: anonymous armor only where the realm says so, a
 * few pending flows per user, armor ticket and address; a refusal of a
 * moment ago answered again to MIT's immediate repeat), the KDC starts an
 * OAuth 2.0 device authorization at the user's IdP reference and answers
 * with the challenge
 * `oauth2 {"verification_uri","user_code",...}\0` and a sealed PA-FX-COOKIE
 * holding the flow. Each answer (PA 152 empty + cookie) polls the token
 * endpoint at most once per interval, never before the device code is
 * due; while the user has not finished (or a poll did not reach the IdP)
 * the KDC answers with the same challenge again, until the device code
 * expires, which ends the login (also when it expires while an answer is
 * held).
 * On success the ID token's user identifier must equal the user's dirIdpSub
 * at this very IdP reference (another account is a failed
 * pre-authentication saying so); the reply key is the FAST armor key,
 * strengthened. The flow travels in the cookie; the IdP client remembers
 * only, per pending device code, when it polled it last (so that no answer
 * polls faster than the interval) and a digest of the codes it exchanged;
 * the KDC keeps each IdP reference as it read it (secret included) while the
 * directory is unchanged, so an answer reads none unless something was
 * written since (idpConfigOf).
 * A reference using private_key_jwt signs its requests with its client
 * keys; once the IdP accepts the newest of several (a rollover,
 * docs/client-auth.md) the older ones are dropped from the reference.
 * docs/device-flow.md.
 */
import { serialized } from '../directory/serialized.js';
import type { Directory } from '../directory/types.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import type { PaData } from '../kerberos/asn1/primitives.js';
import { hash } from 'node:crypto';
import { ErrorCode, PaType } from '../kerberos/iana.js';
import { principalToString } from '../kerberos/asn1/primitives.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { authorizationServer, devicePolling, pollToken, startDeviceAuthorization, type DeviceAuthorization, type PollResult } from '../oauth/device-flow.js';
import { resolveUserIdentifier } from '../oauth/identity.js';
import { serializeClientKeys } from '../oauth/client-auth.js';
import { clientCredentialAttribute, idpConfigOf as referenceConfig, OAuthError, parseClientKeys, type IdpConfig } from '../oauth/types.js';
import { KdcError } from './errors.js';
import type { KdcPrincipal } from './principals.js';
import type { ExchangeContext } from './exchange-context.js';
import { addressKey, type Over, type Requester } from './idp-starts.js';
import { isAnonymousTicket } from './pkinit.js';

/** The flow as the sealed PA-FX-COOKIE carries it: the device authorization, whose it is, and when it was last polled. */
export interface IdpFlowState extends DeviceAuthorization {
  kind: 'idp';
  user: string;
  link: string;
  lastPoll: number;
  /** token requests made for this flow so far */
  polls?: number;
}

/** An answer past the limit of held answers, for a device code not yet due: answered "pending" without a token request. */
export const NOT_DUE = 'not-due';
/** A held answer whose device code did not come due before the hold ended: answered "pending" without a token request. */
export const HELD_NOT_DUE = 'held-not-due';
/**
 * A token request that did not reach the IdP (connection refused or reset,
 * no answer in time): the device code may still be valid, so the flow stays
 * pending and the code is polled again at its next interval.
 */
export interface Unreachable {
  status: 'unreachable';
  message: string;
}
/** What an answer's hold ends with. */
export type HoldResult = PollResult | Unreachable | typeof NOT_DUE | typeof HELD_NOT_DUE;

/**
 * RFC 8628 §3.5 from the KDC's side of an answer: no token request goes
 * before the device code is due, and the request is never answered without
 * an IdP answer given after it came while the code comes due within the
 * hold. When it is due within the hold, the answer waits out what remains
 * of the poll interval, polls, and while the IdP says authorization_pending
 * (or slow_down, which lengthens the interval) polls again at the interval
 * as long as the next poll fits in the hold; then the caller answers
 * "pending" with a fresh cookie. When it is not (an interval longer than
 * the hold, a slow_down), the answer is held until the hold ends and
 * answered "pending" without a token request (HELD_NOT_DUE); the client's
 * next answer polls once the code is due. A token request that does not
 * reach the IdP counts as a pending answer (Unreachable). The hold never
 * outlasts the device code: it ends at the code's expiry, and when no poll
 * is left before an expiry within the hold, the answer is held until then;
 * the caller answers an expired code as expired. MIT retransmissions of a
 * held request join it through the KDC's in-flight map.
 *
 * The interval is the device code's, not the cookie's: the IdP client
 * remembers when it last polled each code and at which interval
 * (device-flow.ts), so answers carrying an older cookie, or several
 * answers for one flow at once, poll no faster than one answer would. A
 * poll of the code in flight is waited for rather than repeated, and a poll
 * another answer made after this one came counts as this one's. Past the
 * limit of held answers nothing waits: the code is polled if it is due, and
 * otherwise the answer is "pending" without a token request (NOT_DUE).
 */
export async function pollUntilAnswered(ctx: ExchangeContext, cfg: IdpConfig, first: IdpFlowState, update: (s: IdpFlowState) => void): Promise<HoldResult> {
  const waits = ctx.caches.idpWaits;
  const start = ctx.now();
  const holdEnd = start + waits.holdMs;
  // the hold ends when the device code expires, if that comes first: the caller then answers that it expired, never "pending"
  const deadline = Math.min(holdEnd, first.expiresAt);
  const held = waits.active < waits.limit;
  if (held) waits.active++;
  try {
    let s = first;
    /** the IdP's last answer given after this request came (or the last poll that could not reach it), while the code is pending */
    let answered: PollResult | Unreachable | undefined;
    for (;;) {
      const known = await devicePolling(cfg, s.deviceCode, ctx.idp);
      if (known && (known.lastPoll > s.lastPoll || known.interval > s.interval)) {
        s = { ...s, lastPoll: Math.max(s.lastPoll, known.lastPoll), interval: Math.max(s.interval, known.interval) };
        update(s);
      }
      if (known?.lastStatus && !known.inFlight && known.lastPoll >= start) answered = known.lastStatus === 'slow_down' ? { status: 'slow_down', interval: known.interval } : { status: 'pending' };
      const due = s.lastPoll + s.interval * 1000;
      const now = ctx.now();
      if (answered && (!held || due > deadline)) {
        // no poll is left before the code expires within the hold: nothing can change until then, so held until it expires
        if (held && due > s.expiresAt && s.expiresAt <= holdEnd && now < deadline) {
          await sleep(deadline - now);
          continue;
        }
        return answered;
      }
      if (!known?.inFlight && due > now) {
        // not due: wait for it within the hold, and past the hold never poll early
        if (held && now < deadline) {
          await sleep(Math.min(due, deadline) - now);
          continue; // another answer may have polled the code meanwhile
        }
        return held ? HELD_NOT_DUE : NOT_DUE;
      }
      let r: PollResult | Unreachable;
      try {
        r = await pollToken(cfg, s.deviceCode, ctx.idp, { interval: s.interval, expiresAt: s.expiresAt, ...(cfg.clientAuth === 'private_key_jwt' ? { accepted: keyAccepted(ctx.db.dir, first.link, cfg) } : {}) });
      } catch (e) {
        // the IdP not reached is no answer from it: the flow is still valid, and the code is polled again when due
        if (!(e instanceof OAuthError && e.code === 'idp_unreachable')) throw e;
        r = { status: 'unreachable', message: e.message };
      }
      s = { ...s, lastPoll: Math.max(s.lastPoll, known?.inFlight ? known.lastPoll : ctx.now()), polls: (s.polls ?? 0) + 1, interval: r.status === 'slow_down' ? Math.max(s.interval, r.interval) : s.interval };
      update(s);
      if (r.status === 'done' || !held) return r;
      answered = r;
    }
  } finally {
    if (held) waits.active--;
  }
}

/** Whether the user is offered the idp mechanism (only linked users of auth type idp; docs/device-flow.md). */
export function offersIdp(client: KdcPrincipal): boolean {
  return client.isUser && client.authTypes.includes('idp') && !!client.idpLink && !!client.idpSub;
}

/** How long a reference read for an answer is used at most, however quiet the directory (as the KDC's principals). */
const CONFIG_TTL_MS = 30_000;
/** References kept per directory at most; past it the cache starts again empty. */
const CONFIG_CACHE_MAX = 1_000;
/**
 * IdP references as read, per directory handle and DN, each with the
 * directory's generation it was read at: every write through the handle
 * (idp-mod, idp-del, a new secret or client key, a key rollover's end), and
 * on a shared backend every other server's commit, moves the generation, so
 * a reference is never used past a change to it. Reading one cost an entry
 * read and a secret opened at every answer of every pending flow.
 */
const configCache = new WeakMap<Directory, Map<string, { cfg: IdpConfig; generation: number; expires: number }>>();

/**
 * The IdP reference as the OAuth client needs it, secret and client keys
 * included (never logged): read from the directory, or as last read while
 * nothing in the directory has changed since (and for CONFIG_TTL_MS at
 * most). The object is shared by the answers that use it, hence frozen.
 */
export async function idpConfigOf(dir: Directory, dn: string): Promise<IdpConfig> {
  const now = Date.now();
  let cached = configCache.get(dir);
  if (!cached) configCache.set(dir, (cached = new Map()));
  const hit = cached.get(dn);
  if (hit && hit.generation === dir.generation && hit.expires > now) return hit.cfg;
  // taken before the reads: a write that ends while they run makes what they read stale at once
  const generation = dir.generation;
  const e = await dir.get(dn);
  if (!e) throw new KdcError('KDC_ERR_PREAUTH_FAILED', 'the linked IdP reference does not exist');
  // one secret read per reading of the reference: the credential it sends
  const attr = clientCredentialAttribute(e.attrs);
  const [credential] = await dir.readSecret(dn, attr);
  const cfg = attr === 'dirIdpClientKey' ? referenceConfig(dn, e.attrs, undefined, credential) : referenceConfig(dn, e.attrs, credential);
  if (cfg.clientKeys) Object.freeze(cfg.clientKeys);
  Object.freeze(cfg);
  if (cached.size >= CONFIG_CACHE_MAX) cached.clear();
  cached.set(dn, { cfg, generation, expires: now + CONFIG_TTL_MS });
  return cfg;
}

/**
 * The end of a client-key rollover (docs/client-auth.md): told which key the
 * IdP accepted, and when that is the newest of several, the reference keeps
 * only it, so the older ones leave its published key set. A failed write
 * changes nothing for this login; the next one tries again.
 */
export function keyAccepted(dir: Directory, dn: string, cfg: IdpConfig): (kid: string) => void {
  return (kid) => {
    const keys = cfg.clientKeys ?? [];
    if (keys.length < 2 || keys[0]!.kid !== kid) return;
    void retireOlderKeys(dir, dn, kid).catch(() => {});
  };
}

function retireOlderKeys(dir: Directory, dn: string, kid: string): Promise<void> {
  // logins finishing side by side retire once
  return serialized(dir, dn, async () => {
    const [stored] = await dir.readSecret(dn, 'dirIdpClientKey');
    const keys = parseClientKeys(stored);
    // a rotation since this login read the reference leaves its keys alone
    if (keys.length < 2 || keys[0]!.kid !== kid) return;
    await dir.modify(dn, [{ op: 'replace', attr: 'dirIdpClientKey', values: [serializeClientKeys([keys[0]!])] }]);
  });
}

export function challengePa(s: Pick<IdpFlowState, 'verificationUri' | 'userCode' | 'verificationUriComplete'>): PaData {
  const json = JSON.stringify({
    verification_uri: s.verificationUri,
    user_code: s.userCode,
    ...(s.verificationUriComplete ? { verification_uri_complete: s.verificationUriComplete } : {}),
  });
  return { type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.concat([Buffer.from(`oauth2 ${json}`, 'utf8'), Buffer.from([0])]) };
}

/**
 * IdP failures reach kinit as "Preauthentication failed" (MIT shows no
 * e-text for generic errors); the e-text and the server log say which.
 */
function kdcErrorOf(e: unknown): KdcError {
  if (e instanceof KdcError) return e;
  if (e instanceof OAuthError) return new KdcError('KDC_ERR_PREAUTH_FAILED', e.message);
  return new KdcError('KDC_ERR_PREAUTH_FAILED', 'identity provider error');
}

/** What a flow is known by in the KDC's count of pending flows (idp-starts.ts): a digest of its device code. */
export function flowIdOf(deviceCode: string): string {
  return hash('sha256', deviceCode, 'base64url').slice(0, 22);
}

/** Whether the request's armor may carry the idp mechanism: any armor of a principal of the realm, anonymous armor only where the realm allows it. */
export function idpArmorAccepted(ctx: ExchangeContext): boolean {
  const t = ctx.fast?.armorTicket;
  return t === undefined || !isAnonymousTicket(t.etp) || ctx.idpAnonymousArmor === 'allow';
}

/** The refusal of an IdP login under anonymous armor where the realm does not allow it (idp_anonymous_armor = deny). */
export function anonymousArmorRefusal(ctx: ExchangeContext): KdcError {
  ctx.note.preauth = 'idp: not started: anonymous armor (kinit -n) may not start IdP logins in this realm (server.conf idp_anonymous_armor = deny)';
  return new KdcError('KDC_ERR_POLICY', 'this realm does not start IdP logins under anonymous armor (kinit -n): armor the request with a host keytab, or a ticket of the realm');
}

/** Who asks for a new flow: the user, the armor ticket (a digest of it) and whether it is anonymous, the address. */
function requesterOf(ctx: ExchangeContext, client: KdcPrincipal): Requester {
  const t = ctx.fast?.armorTicket;
  return { user: client.name, ticket: t ? hash('sha256', t.cipher, 'base64url').slice(0, 22) : undefined, anonymous: t ? isAnonymousTicket(t.etp) : false, address: ctx.from };
}

/** The e-text of a start past a limit (MIT's kinit shows "KDC policy rejects request"; dirid kinit and the log show this). */
function overLimitText(over: Over, who: Requester): string {
  const wait = `try again in ${Math.max(1, Math.ceil(over.freeInMs / 60_000))} min`;
  switch (over.limit) {
    case 'user':
      return `too many IdP logins pending for ${who.user}${who.anonymous ? ' under anonymous armor' : ''} (at most ${over.max}): finish one, or ${wait}`;
    case 'ticket':
      return `too many IdP logins pending under this armor ticket (at most ${over.max}): ${wait}`;
    case 'address':
      return `too many IdP logins pending from ${addressKey(who.address ?? '')} (at most ${over.max}): ${wait}`;
    case 'kdc':
      return `too many IdP logins pending at this KDC (at most ${over.max}): ${wait}`;
  }
}

/** Where a start came from, for the log: the armor's client and the address. */
function startedBy(ctx: ExchangeContext): string {
  const t = ctx.fast?.armorTicket;
  const armor = t ? `armor ${isAnonymousTicket(t.etp) ? 'anonymous' : principalToString(t.etp.cname, t.etp.crealm)}` : 'no armor';
  return ctx.from ? `${armor}, from ${ctx.from}` : armor;
}

/**
 * A new flow for `client`: a refusal of a moment ago answered again (MIT's
 * immediate repeat), a start past a limit refused (KDC_ERR_POLICY), or a
 * device authorization at the IdP, answered PREAUTH_REQUIRED with the
 * challenge and the flow's cookie. Always throws.
 */
async function startFlow(ctx: ExchangeContext, client: KdcPrincipal, extraHints: PaData[]): Promise<never> {
  const starts = ctx.caches.idpStarts;
  const who = requesterOf(ctx, client);
  const now = ctx.now();
  const again = starts.recentRefusal(who, now);
  if (again) {
    ctx.note.preauth = `${again.note} (answered again without asking the IdP: a repeat of the request refused ${now - again.at} ms ago)`;
    throw again.error;
  }
  const slot = starts.reserve(who, now);
  if (!('confirm' in slot)) {
    const text = overLimitText(slot, who);
    ctx.note.preauth = `idp: not started: ${text} (${startedBy(ctx)})`;
    throw new KdcError('KDC_ERR_POLICY', text);
  }
  let cfg: IdpConfig;
  let s: IdpFlowState;
  try {
    cfg = await idpConfigOf(ctx.db.dir, client.idpLink!);
    const da = await startDeviceAuthorization(cfg, ctx.idp, { accepted: keyAccepted(ctx.db.dir, client.idpLink!, cfg) });
    s = {
      kind: 'idp',
      user: client.name,
      link: client.idpLink!,
      deviceCode: da.deviceCode,
      userCode: da.userCode,
      verificationUri: da.verificationUri,
      ...(da.verificationUriComplete ? { verificationUriComplete: da.verificationUriComplete } : {}),
      expiresAt: da.expiresAt,
      interval: da.interval,
      lastPoll: now,
    };
  } catch (e) {
    slot.cancel();
    ctx.note.preauth = `idp: ${e instanceof Error ? e.message : 'error'}`;
    ctx.note.idp = { reference: referenceName(client.idpLink!), outcome: 'failed' };
    const error = kdcErrorOf(e);
    starts.refused(who, { error, note: ctx.note.preauth, at: now }, ctx.now());
    throw error;
  }
  slot.confirm(flowIdOf(s.deviceCode), s.expiresAt);
  ctx.note.preauth = `idp: device authorization started (${cfg.name}; ${startedBy(ctx)})`;
  ctx.note.idp = { reference: cfg.name, outcome: 'started' };
  throw new KdcError('KDC_ERR_PREAUTH_REQUIRED', 'authenticate at the identity provider', [challengePa(s), ...extraHints, ctx.cookies.seal(s)]);
}

/**
 * Runs one step of the device flow. Returns when the user is authenticated
 * at the IdP with the linked identity; throws the KDC answer otherwise. A
 * flow that ends here (a TGT, a refusal, an expired code) stops counting
 * towards the limits of starts.
 */
export async function idpStep(ctx: ExchangeContext, req: KdcReq, client: KdcPrincipal, extraHints: PaData[]): Promise<void> {
  const answer = req.padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2);
  const state = answer ? ctx.cookies.open<IdpFlowState>(req.padata, 3600_000) : null;
  if (!state || state.kind !== 'idp' || state.user !== client.name || state.link !== client.idpLink) return startFlow(ctx, client, extraHints);
  const flow = flowIdOf(state.deviceCode);
  try {
    await answerFlow(ctx, state, client, extraHints);
  } catch (e) {
    // still pending: it goes on counting
    if (!(e instanceof KdcError && e.code === ErrorCode.KDC_ERR_MORE_PREAUTH_DATA_REQUIRED)) ctx.caches.idpStarts.ended(flow);
    throw e;
  }
  ctx.caches.idpStarts.ended(flow);
}

/** One answer of a pending flow: held while the IdP says "pending" (pollUntilAnswered), then the user identified, or the answer thrown. */
async function answerFlow(ctx: ExchangeContext, state: IdpFlowState, client: KdcPrincipal, extraHints: PaData[]): Promise<void> {
  const now = ctx.now();
  const again = (s: IdpFlowState, text: string): KdcError => new KdcError('KDC_ERR_MORE_PREAUTH_DATA_REQUIRED', text, [challengePa(s), ...extraHints, ctx.cookies.seal(s)]);
  // PREAUTH_FAILED ends the login; PREAUTH_EXPIRED would make MIT clients start again with a new code by
  // themselves, which krb5_child under pam_sss answers without showing it, until SSSD's timeout (a "System error")
  const expired = (why: string): KdcError => {
    ctx.note.preauth = `idp: device code expired${why}`;
    ctx.note.idp = { reference: referenceName(state.link), outcome: 'expired' };
    return new KdcError('KDC_ERR_PREAUTH_FAILED', 'the device code has expired; log in again');
  };
  if (now >= state.expiresAt) throw expired('');
  let cfg: IdpConfig;
  let s: IdpFlowState = state;
  const held = () => ` after ${s.polls ?? 0} poll(s) held ${ctx.now() - now} ms`;
  try {
    cfg = await idpConfigOf(ctx.db.dir, state.link);
    const r = await pollUntilAnswered(ctx, cfg, s, (next) => (s = next));
    // no "pending" for a code that has expired meanwhile: the client would ask for ENTER again for a code that no longer exists
    if ((typeof r === 'string' || r.status !== 'done') && ctx.now() >= s.expiresAt) throw expired(` (while held:${held()})`);
    if (r === NOT_DUE || r === HELD_NOT_DUE) {
      const why = r === NOT_DUE ? ' and no more answers may be held' : `, after the hold (held ${ctx.now() - now} ms)`;
      ctx.note.preauth = `idp: authorization pending, not polled: the next poll is due in ${s.lastPoll + s.interval * 1000 - ctx.now()} ms${why}`;
      ctx.note.idp = { reference: cfg.name, outcome: 'not_polled' };
      throw again(s, 'authorization pending');
    }
    if (r.status === 'unreachable') {
      ctx.note.preauth = `idp: ${r.message}; pending, polled again at the next interval (${s.polls} poll(s) held ${ctx.now() - now} ms)`;
      ctx.note.idp = { reference: cfg.name, outcome: 'unreachable' };
      throw again(s, 'authorization pending');
    }
    if (r.status !== 'done') {
      ctx.note.preauth = `idp: ${r.status === 'slow_down' ? 'slow down' : 'authorization pending'}${held()}`;
      ctx.note.idp = { reference: cfg.name, outcome: r.status === 'slow_down' ? 'slow_down' : 'pending' };
      throw again(s, 'authorization pending');
    }
    const as = await authorizationServer(cfg, ctx.idp);
    const who = await resolveUserIdentifier(cfg, r.tokens, ctx.idp, { endpoints: as });
    if (who !== client.idpSub) {
      // identifiers compare exactly (an IdP may tell two users apart by case); an administrator who typed the link in another case is told so
      const linked = client.idpSub;
      const hint = linked !== undefined && who.toLowerCase() === linked.toLowerCase() ? `; linked as ${JSON.stringify(linked.slice(0, 128))}, which differs only in letter case: set --idp-user-id as the IdP writes it` : '';
      ctx.note.preauth = `idp: another account (${cfg.name} identified ${JSON.stringify(who.slice(0, 128))}${hint})`;
      ctx.note.idp = { reference: cfg.name, outcome: 'another_account' };
      // the user exists, the login at the IdP did not prove it: a failed pre-authentication (MIT: "Preauthentication
      // failed", pam_sss: "Authentication failure"), not an unknown client; the e-text says which account is wanted
      throw new KdcError('KDC_ERR_PREAUTH_FAILED', `the IdP (${cfg.name}) identified another account than the one linked to ${client.name}: log in there with that account`);
    }
    ctx.note.preauth = `idp: ${cfg.name} identified ${JSON.stringify(who.slice(0, 128))}`;
    ctx.note.idp = { reference: cfg.name, outcome: 'authenticated' };
  } catch (e) {
    if (e instanceof KdcError) throw e;
    // the IdP says the code has expired (RFC 8628 §3.5), whatever our clock says (it counts from when the answer came)
    if (e instanceof OAuthError && e.code === 'expired_token') throw expired(' (the IdP answered expired_token)');
    if (e instanceof OAuthError && e.code === 'invalid_grant') {
      if (ctx.now() >= s.expiresAt) throw expired(' (the IdP answered invalid_grant)');
      // a code the IdP does not know (one it forgot, say): reported pending until our own expiry (docs/device-flow.md)
      ctx.note.preauth = 'idp: invalid_grant, pending until the device code expires';
      ctx.note.idp = { reference: referenceName(state.link), outcome: 'pending' };
      throw again(s, 'authorization pending');
    }
    ctx.note.preauth = `idp: ${e instanceof Error ? e.message : 'error'}`;
    ctx.note.idp = { reference: referenceName(state.link), outcome: 'failed' };
    throw kdcErrorOf(e);
  }
}

/** The name of the IdP reference at `dn` (its RDN's value), for the metrics. */
function referenceName(dn: string): string {
  const m = /^[^=]+=((?:[^,\\]|\\.)*)/.exec(dn);
  return m ? m[1]! : dn;
}
