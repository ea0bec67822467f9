/**
 * The KDC's listeners (RFC 4120 §7.2.1 UDP, §7.2.2 TCP with a 4-byte length
 * prefix) and request dispatch: AS-REQ and TGS-REQ go to their exchanges,
 * and what they throw is answered through kdc-error.ts. A lookaside cache
 * answers retransmitted requests with the same reply (joining a request
 * still in progress). Garbage on UDP is dropped; on TCP it gets a
 * KRB-ERROR. Each request is logged as one line. Everything a KDC
 * remembers between requests belongs to its instance.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server as TcpServer, type Socket } from 'node:net';
import { Asn1Error, parseDer } from '../kerberos/asn1/der.js';
import { decodeKdcReqNode, type KdcReq } from '../kerberos/asn1/kdc-req.js';
import { MsgType } from '../kerberos/iana.js';
import type { Directory } from '../directory/types.js';
import type { IdpClient } from '../oauth/client.js';
import { asExchange } from './as-exchange.js';
import type { ExchangeContext } from './exchange-context.js';
import { tgsExchange } from './tgs-exchange.js';
import { Lookaside, requestDigest } from './lookaside.js';
import { errorName, KdcError } from './errors.js';
import { krbErrorReply } from './kdc-error.js';
import { PrincipalDb, type RealmPolicy } from './principals.js';
import { CookieJar } from './cookie-jar.js';
import { kdcCaches, type KdcCaches } from './state.js';

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
  log: (line: string) => void;
  now?: () => number;
  /** how long a device-flow answer may be held while the IdP says "pending" (default 10 s) */
  idpHoldMs?: number;
}

export class Kdc {
  readonly db: PrincipalDb;
  private readonly lookaside = new Lookaside();
  private readonly caches: KdcCaches;
  /** requests being answered, by the first 128 bits of their digest: a retransmission joins the reply in progress */
  private readonly inflight = new Map<string, Promise<Buffer | null>>();
  private policyCache: { value: RealmPolicy; expires: number } | undefined;
  private udp: UdpSocket | undefined;
  private tcp: TcpServer | undefined;
  private readonly sockets = new Set<Socket>();
  private readonly now: () => number;
  readonly cookies: CookieJar;

  constructor(private readonly o: KdcOptions) {
    this.db = new PrincipalDb(o.dir, o.realm);
    this.now = o.now ?? Date.now;
    this.cookies = new CookieJar(o.cookieKey);
    this.caches = kdcCaches(o.idpHoldMs);
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

  /** Answers one request; null means "send nothing". */
  handle(raw: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | null> {
    const digest = requestDigest(raw);
    const kept = this.lookaside.get(digest, this.now());
    if (kept) return Promise.resolve(kept);
    const id = digest.toString('latin1', 0, 16);
    const pending = this.inflight.get(id);
    if (pending) return pending;
    const reply = this.process(raw, transport);
    this.inflight.set(id, reply);
    void reply.then(
      (r) => {
        this.inflight.delete(id);
        if (r) this.lookaside.add(digest, r, this.now());
      },
      () => this.inflight.delete(id),
    );
    return reply;
  }

  /** what the lookaside cache holds now (for tests and monitoring) */
  lookasideStats(): { entries: number; bytes: number } {
    return this.lookaside.stats();
  }

  private async process(raw: Buffer, transport: 'udp' | 'tcp'): Promise<Buffer | null> {
    const started = process.hrtime.bigint();
    let req: KdcReq | undefined;
    const note: ExchangeContext['note'] = {};
    let ctx: ExchangeContext | undefined;
    let outcome = 'ISSUE';
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
      ctx = { db: this.db, realm: this.o.realm, policy, now: this.now, note, raw, cookies: this.cookies, caches: this.caches, idp: this.o.idp };
      reply = req.msgType === MsgType.AS_REQ ? await asExchange(ctx, req) : await tgsExchange(ctx, req);
      if (transport === 'udp' && reply.length > MAX_UDP_REPLY) {
        throw new KdcError('KRB_ERR_RESPONSE_TOO_BIG', 'reply too big for UDP');
      }
    } catch (e) {
      const answer = krbErrorReply(e, { realm: this.o.realm, now: this.now(), req, fast: ctx?.fast, cookies: ctx?.cookies ?? this.cookies, log: this.o.log });
      outcome = errorName(answer.code);
      reply = !req && transport === 'udp' ? null : answer.reply;
    }
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    const kind = req ? (req.msgType === MsgType.AS_REQ ? 'AS_REQ' : 'TGS_REQ') : 'UNKNOWN';
    this.o.log(
      `${new Date().toISOString()} kdc ${kind} ${transport} client=${note.client ?? '-'} server=${note.server ?? '-'} outcome=${outcome}` +
        `${note.etype ? ` etype=${note.etype}` : ''}${note.preauth ? ` preauth=${JSON.stringify(note.preauth)}` : ''} duration_ms=${ms.toFixed(2)}`,
    );
    return reply;
  }

  async listen(port: number, host: string): Promise<number> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4' });
      await new Promise<void>((resolve, reject) => {
        udp.once('error', reject);
        udp.bind(port, host, () => {
          udp.off('error', reject);
          resolve();
        });
      });
      const chosen = udp.address().port;
      const tcp = createServer((s) => this.serveTcp(s));
      const ok = await new Promise<boolean>((resolve) => {
        tcp.once('error', () => resolve(false));
        tcp.listen(chosen, host, () => resolve(true));
      });
      if (!ok) {
        udp.close();
        if (port !== 0) throw new Error(`KDC: TCP port ${chosen} is in use`);
        continue;
      }
      udp.on('message', (msg, rinfo) => {
        this.handle(msg, 'udp').then(
          (r) => {
            if (r) udp.send(r, rinfo.port, rinfo.address);
          },
          () => {},
        );
      });
      udp.on('error', (e) => this.o.log(`${new Date().toISOString()} kdc udp error ${e.message}`));
      this.udp = udp;
      this.tcp = tcp;
      return chosen;
    }
    throw new Error('KDC: no free port for UDP and TCP together');
  }

  private serveTcp(s: Socket): void {
    this.sockets.add(s);
    s.setTimeout(30_000, () => s.destroy());
    let buf = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      while (buf.length >= 4) {
        const len = buf.readUInt32BE(0);
        if (len & 0x80000000 || len > MAX_TCP_MESSAGE) {
          s.end(frame(krbErrorReply(new KdcError('KRB_ERR_FIELD_TOOLONG', 'message too long'), { realm: this.o.realm, now: this.now(), cookies: this.cookies, log: this.o.log }).reply));
          buf = Buffer.alloc(0);
          return;
        }
        if (buf.length < 4 + len) return;
        const msg = buf.subarray(4, 4 + len);
        buf = buf.subarray(4 + len);
        this.handle(Buffer.from(msg), 'tcp').then(
          (r) => {
            if (r && !s.destroyed) s.write(frame(r));
          },
          () => s.destroy(),
        );
      }
    });
    s.on('error', () => s.destroy());
    s.on('close', () => this.sockets.delete(s));
  }

  async close(): Promise<void> {
    this.udp?.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r()));
  }
}

function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(msg.length);
  return Buffer.concat([len, msg]);
}

