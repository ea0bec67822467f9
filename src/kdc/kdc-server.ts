/**
 * The KDC: its listener (listener.ts: UDP, and TCP with a 4-byte length
 * prefix) and request dispatch: AS-REQ and TGS-REQ go to their exchanges,
 * and what they throw is answered through kdc-error.ts. A lookaside cache
 * answers retransmitted requests with the same reply (joining a request
 * still in progress). Garbage on UDP is dropped; on TCP it gets a
 * KRB-ERROR. Each request is logged as one line. Everything a KDC
 * remembers between requests belongs to its instance; the password service
 * (kpasswd.ts) it starts shares its principals and its replay cache.
 */
import { Asn1Error, parseDer } from '../kerberos/asn1/der.js';
import { decodeKdcReqNode, type KdcReq } from '../kerberos/asn1/kdc-req.js';
import { MsgType } from '../kerberos/iana.js';
import type { Directory } from '../directory/types.js';
import type { IdpClient } from '../oauth/client.js';
import { asExchange } from './as-exchange.js';
import type { ExchangeContext, KdcNote } from './exchange-context.js';
import { tgsExchange } from './tgs-exchange.js';
import { AnswerOnce } from './lookaside.js';
import { loadOnceAes } from '../kerberos/crypto/index.js';
import { AccountRefused, errorName, KdcError } from './errors.js';
import { krbErrorReply } from './kdc-error.js';
import { PrincipalDb, type RealmPolicy } from './principals.js';
import { CookieJar } from './cookie-jar.js';
import { kdcCaches, type KdcCaches } from './state.js';
import { UdpTcpListener, type TcpLimits, type Transport } from './listener.js';
import { KpasswdService, type PasswordChanger } from './kpasswd.js';
import type { PkinitIdentity } from './pkinit-identity.js';
import { DEFAULT_START_LIMITS, type AnonymousArmorIdp, type StartLimits } from './idp-starts.js';
import type { Logger } from '../log/logger.js';

/** MIT's default max_dgram_reply_size. */
export const MAX_UDP_REPLY = 4096;
const MAX_TCP_MESSAGE = 128 * 1024;
export interface KdcOptions {
  dir: Directory;
  realm: string;
  /** 32-byte key sealing PA-FX-COOKIE state (derive it from the master key so every server of the realm shares it) */
  cookieKey: Buffer;
  /** the server's IdP client: HTTPS to IdP endpoints, discovery documents and key sets it keeps */
  idp: IdpClient;
  /** the KDC's logger (component kdc); the password service's is its child (component kpasswd) */
  log: Logger;
  now?: () => number;
  /** how long a device-flow answer may be held while the IdP says "pending" (default 10 s) */
  idpHoldMs?: number;
  /** what anonymous armor may do for the idp mechanism (default deny; idp-starts.ts) */
  idpAnonymousArmor?: AnonymousArmorIdp;
  /** device flows pending at once per user, armor ticket and address (idp-starts.ts defaults) */
  idpPending?: Partial<Pick<StartLimits, 'perUser' | 'perTicket' | 'perAddress'>>;
  /** the KDC's certificate and key for anonymous PKINIT (kdc/pkinit.ts); without them anonymous requests are refused */
  pkinit?: PkinitIdentity;
  /** the TCP bounds of this KDC's listener and its password service's (listener.ts defaults) */
  tcp?: Partial<TcpLimits>;
  /** told of each request answered, with what its log line says (the server's metrics) */
  observe?: (exchange: string, transport: Transport, outcome: string, ms: number, note: KdcNote) => void;
}

export class Kdc {
  readonly db: PrincipalDb;
  private readonly answers = new AnswerOnce();
  private readonly caches: KdcCaches;
  private policyCache: { value: RealmPolicy; expires: number } | undefined;
  private readonly listener: UdpTcpListener;
  private readonly now: () => number;
  readonly cookies: CookieJar;

  constructor(private readonly o: KdcOptions) {
    this.db = new PrincipalDb(o.dir, o.realm, o.log.child({ component: 'account' }));
    this.now = o.now ?? Date.now;
    this.cookies = new CookieJar(o.cookieKey);
    this.caches = kdcCaches(o.idpHoldMs, { ...DEFAULT_START_LIMITS, ...o.idpPending });
    // the AES library of one-request keys (TGS subkeys, FAST keys) is loaded now, not on the first such request
    loadOnceAes();
    this.listener = new UdpTcpListener({
      name: 'KDC',
      maxTcpMessage: MAX_TCP_MESSAGE,
      handle: (raw, transport, from) => this.handle(raw, transport, from),
      oversize: () => krbErrorReply(new KdcError('KRB_ERR_FIELD_TOOLONG', 'message too long'), { realm: this.o.realm, now: this.now(), cookies: this.cookies, log: this.o.log }).reply,
      log: o.log,
    }, o.tcp);
  }

  /** The realm policy, read again every 10 s; at once while it is fresh. */
  private policy(): RealmPolicy | Promise<RealmPolicy> {
    const t = this.now();
    if (this.policyCache && this.policyCache.expires >= t) return this.policyCache.value;
    return this.db.policy().then((value) => {
      this.policyCache = { value, expires: t + 10_000 };
      return value;
    });
  }

  /** Answers one request from `from` (an IP literal, when known); null means "send nothing". */
  handle(raw: Buffer, transport: Transport, from?: string): Promise<Buffer | null> {
    return this.answers.answer(raw, this.now, () => this.process(raw, transport, from));
  }

  /** what the lookaside cache holds now (for tests and monitoring) */
  lookasideStats(): { entries: number; bytes: number } {
    return this.answers.stats();
  }

  private async process(raw: Buffer, transport: Transport, from: string | undefined): Promise<Buffer | null> {
    const started = performance.now();
    let req: KdcReq | undefined;
    const note: ExchangeContext['note'] = {};
    let ctx: ExchangeContext | undefined;
    let outcome = 'ISSUE';
    let reason: string | undefined;
    let reply: Buffer | null;
    try {
      try {
        req = decodeKdcReqNode(parseDer(raw));
      } catch (e) {
        if (e instanceof Asn1Error) throw new KdcError('KRB_AP_ERR_MSG_TYPE', `malformed request: ${e.message}`);
        throw e;
      }
      let policy = this.policy();
      if (policy instanceof Promise) policy = await policy;
      ctx = { db: this.db, realm: this.o.realm, policy, now: this.now, note, raw, from, idpAnonymousArmor: this.o.idpAnonymousArmor ?? 'deny', cookies: this.cookies, caches: this.caches, idp: this.o.idp, pkinit: this.o.pkinit };
      reply = req.msgType === MsgType.AS_REQ ? await asExchange(ctx, req) : await tgsExchange(ctx, req);
      if (transport === 'udp' && reply.length > MAX_UDP_REPLY) {
        throw new KdcError('KRB_ERR_RESPONSE_TOO_BIG', 'reply too big for UDP');
      }
    } catch (e) {
      const answer = krbErrorReply(e, { realm: this.o.realm, now: this.now(), req, fast: ctx?.fast, cookies: ctx?.cookies ?? this.cookies, log: this.o.log });
      outcome = errorName(answer.code);
      // our own words for the refusal (never a secret), unless the pre-authentication note already says it
      if (!note.preauth && (e instanceof KdcError || e instanceof AccountRefused)) reason = e.message;
      reply = !req && transport === 'udp' ? null : answer.reply;
    }
    const ms = performance.now() - started;
    const kind = req ? (req.msgType === MsgType.AS_REQ ? 'AS_REQ' : 'TGS_REQ') : 'UNKNOWN';
    this.o.observe?.(kind, transport, outcome, ms, note);
    this.o.log.info(req ? (req.msgType === MsgType.AS_REQ ? 'as_req' : 'tgs_req') : 'malformed', {
      transport,
      client: note.client ?? null,
      server: note.server ?? null,
      outcome,
      etype: note.etype || undefined,
      preauth: note.preauth,
      authind: note.authind,
      reason: reason?.slice(0, 200),
      duration_ms: Math.round(ms * 100) / 100,
    });
    return reply;
  }

  /** How long a device-flow answer may now be held while the IdP says "pending" (server.conf idp_hold_seconds, read again at a reload). */
  setIdpHold(ms: number): void {
    this.caches.idpWaits.holdMs = ms;
  }

  /** Listens on UDP and TCP `port` (0: a free one) and returns the port. */
  listen(port: number, host: string): Promise<number> {
    return this.listener.listen(port, host);
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  /** The password service of this KDC's realm, changing passwords by `change`; the caller makes it listen. */
  passwordService(change: PasswordChanger): KpasswdService {
    return new KpasswdService({ db: this.db, realm: this.o.realm, replays: this.caches.replays, change, now: this.now, log: this.o.log.child({ component: 'kpasswd' }), ...(this.o.tcp ? { tcp: this.o.tcp } : {}) });
  }
}
