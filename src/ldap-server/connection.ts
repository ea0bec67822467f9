/**
 * One LDAP client connection (docs/ldap.md, "The service"): the byte stream
 * cut into PDUs (ldap/framing.ts, behind a SASL security layer once one is
 * negotiated), each request decoded and run as an operation, responses
 * written in the order they are ready. It owns the connection's state: TLS
 * (from the start on the LDAPS port, after StartTLS on the other), the bound
 * principal, the SASL exchange and layer, the operations under way (abandon
 * marks one, and its search stops at the next entry), the paged searches,
 * and the limits: the largest PDU, operations at once (more are answered
 * `busy`), the idle time, how long a client may leave our answers unread,
 * and how long a PDU may take to arrive whole (the first one counted from
 * the connection's start): a client sending a byte a second, or nothing at
 * all, is closed then. A connection we close is destroyed shortly after
 * when the client does not close its side.
 *
 * Binds and StartTLS run alone: reading stops until the operations before
 * them are finished and their own answer is out (the TLS handshake or the
 * SASL layer starts right after it). A malformed PDU whose messageID and
 * operation were read gets that operation's response with the decoder's
 * code; anything worse gets a Notice of Disconnection and the connection
 * closes. What an operation does is the host's (operations.ts); what is
 * thrown becomes an LDAPResult in errors.ts.
 */
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import { LdapDecodeError } from '../ldap/ber.js';
import { ControlOid, ExtendedOid, RESPONSE_TO, ResultCode, resultCodeName, type RequestOpName } from '../ldap/codes.js';
import type { Control } from '../ldap/controls.js';
import { noticeOfDisconnection } from '../ldap/extended.js';
import { LdapFramer } from '../ldap/framing.js';
import { decodeRequest, encodeMessage, type DecodeOptions, type LdapMessage, type OutgoingMessage } from '../ldap/protocol.js';
import type { LdapRequest } from '../ldap/protocol-requests.js';
import type { LdapResponse, PlainResponseOp } from '../ldap/protocol-responses.js';
import type { Principal } from '../framework/command.js';
import type { SaslGssapiServer } from '../kerberos/sasl-gssapi.js';
import { toLdapResult } from './errors.js';
import { PagedSearches } from './paged.js';
import { SaslFrameReader } from './sasl-frames.js';
import { errorFields, type Fields, type Logger } from '../log/logger.js';

/** Octets of unread answers past which we wait for the client before writing more. */
const HIGH_WATER = 256 * 1024;
/** Search entries sent between two turns of the event loop. */
const YIELD_EVERY = 32;

export interface ConnectionLimits {
  maxMessageSize: number;
  maxOperations: number;
  /** milliseconds */
  idleTimeout: number;
  /** milliseconds a PDU may take from its first octet to its last (the first PDU: from the connection's start) */
  pduTimeout: number;
}

/** Milliseconds a connection we closed waits for the client to close its side before it is destroyed. */
const LINGER_MS = 2000;

/** What a connection needs from the service that accepted it. */
export interface ConnectionHost {
  readonly limits: ConnectionLimits;
  readonly secureContext: SecureContext;
  readonly decodeOptions: DecodeOptions;
  /** the service's logger (component ldap); each connection logs through a child carrying its `conn=` */
  readonly log: Logger;
  /** told of each operation answered: its name, its result code's name (or abandoned), milliseconds (the server's metrics) */
  observe?(operation: string, outcome: string, ms: number): void;
  /** runs one request (not unbind or abandon) and returns its final response */
  handle(conn: LdapConnection, op: Operation, m: LdapMessage<LdapRequest>): Promise<OpResult>;
  closed(conn: LdapConnection): void;
}

export interface OpResult {
  response: LdapResponse;
  controls?: Control[];
  /** runs once the response is written out (StartTLS, a SASL layer) */
  after?: () => void;
  /** what the operation's log line adds (a search's base, scope and entries; a bind's method) */
  note?: Fields;
}

/** Thrown (and caught by the connection) when an operation's answer is no longer wanted. */
export class Abandoned extends Error {
  constructor() {
    super('abandoned');
    this.name = 'Abandoned';
  }
}

/** One request under way. */
export class Operation {
  abandoned = false;
  /** intermediate messages sent so far */
  sent = 0;
  done: Promise<void> = Promise.resolve();
  constructor(
    readonly messageId: number,
    readonly name: RequestOpName,
    readonly controls: readonly Control[],
  ) {}
}

let nextId = 1;

/** An operation's event in the log: its protocol name without `Request` (bindRequest: bind, extendedReq: extended), made once per name. */
const events = new Map<string, string>();
function eventOf(name: RequestOpName | 'undecodable'): string {
  let e = events.get(name);
  if (e === undefined) events.set(name, (e = name.replace(/Req(?:uest)?$/, '')));
  return e;
}

/** How a bind authenticates, for its log line. */
function bindMethod(req: LdapRequest): string | undefined {
  if (req.op !== 'bindRequest') return undefined;
  const a = req.authentication;
  if (a.method === 'simple') return req.name === '' && a.password.length === 0 ? 'anonymous' : 'simple';
  return a.method === 'sasl' ? `sasl/${a.mechanism}` : 'other';
}

export class LdapConnection {
  readonly id = nextId++;
  readonly peer: string;
  /** this connection's logger: the service's, with `conn=` */
  readonly log: Logger;
  private socket: Socket;
  /** TLS is in force (LDAPS, or after StartTLS) */
  tls: boolean;
  /** the bound principal; null while anonymous */
  principal: Principal | null = null;
  /** a SASL exchange between two bind steps */
  saslExchange: SaslGssapiServer | null = null;
  /** the SASL security layer in force (integrity or confidentiality), once negotiated */
  private layer: SaslGssapiServer | null = null;
  private layerIn: SaslFrameReader | null = null;
  readonly paged = new PagedSearches();
  private readonly framer: LdapFramer;
  private readonly ops = new Map<number, Operation>();
  private exclusive: Promise<void> | null = null;
  /** a request read while the client was behind on reading, run once it catches up */
  private held: LdapMessage<LdapRequest> | null = null;
  private waiting = false;
  private closing = false;
  private gone = false;
  /** messages are being held for one write (see gather) */
  private gathering = false;
  /** PDUs taken from the stream so far */
  private pdus = 0;
  /** runs while a PDU is incomplete (or none has come yet) */
  private pduTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly host: ConnectionHost,
    socket: Socket,
    tls: boolean,
  ) {
    this.socket = socket;
    this.tls = tls;
    this.peer = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.log = host.log.child({ conn: this.id });
    this.framer = new LdapFramer({ maxMessageSize: host.limits.maxMessageSize });
    this.attach(socket);
    this.awaitPdu();
    this.log.info('open', { from: this.peer, tls });
  }

  /** Whether the client has not yet sent one whole PDU (such connections go first when the service is full). */
  get silent(): boolean {
    return this.pdus === 0;
  }

  /** Starts the PDU clock unless it runs; when it runs out while reading is not held up by us, the connection closes. */
  private awaitPdu(): void {
    if (this.pduTimer || this.closed) return;
    const taken = this.pdus;
    this.pduTimer = setTimeout(() => {
      this.pduTimer = undefined;
      if (this.closed) return;
      // a PDU came meanwhile, or we are the ones not reading (a bind running alone, a client behind on reading)
      if (this.pdus !== taken || this.exclusive || this.waiting) {
        if (this.framer.buffered > 0 || this.pdus === 0) this.awaitPdu();
        return;
      }
      this.log.warn('pdu_timeout', { reason: `no whole PDU within ${this.host.limits.pduTimeout / 1000} s; closing` });
      this.destroy();
    }, this.host.limits.pduTimeout);
  }

  private stopPduClock(): void {
    clearTimeout(this.pduTimer);
    this.pduTimer = undefined;
  }

  /** Whether a security layer other than none is in force (SASL integrity or confidentiality). */
  get saslLayer(): number {
    return this.layer?.layer ?? 0;
  }

  /** Whether what the client sends is protected from eavesdroppers: TLS, or a SASL confidentiality layer. */
  get confidential(): boolean {
    return this.tls || this.saslLayer >= 4;
  }

  get closed(): boolean {
    return this.closing || this.gone;
  }

  private attach(socket: Socket): void {
    socket.on('data', this.onData);
    socket.on('error', this.onError);
    socket.on('close', this.onClose);
    socket.on('timeout', this.onTimeout);
    socket.setTimeout(this.host.limits.idleTimeout);
  }

  private detach(socket: Socket): void {
    socket.off('data', this.onData);
    socket.off('close', this.onClose);
    socket.off('timeout', this.onTimeout);
    socket.setTimeout(0);
  }

  private readonly onError = (e: Error) => {
    if (!this.gone) this.log.info('socket_error', { error: e.message });
  };

  private readonly onClose = () => {
    if (this.gone) return;
    this.gone = true;
    this.stopPduClock();
    for (const op of this.ops.values()) op.abandoned = true;
    this.paged.clear();
    this.log.info('closed');
    this.host.closed(this);
  };

  private readonly onTimeout = () => {
    if (this.ops.size > 0 || this.exclusive) return;
    this.log.info('idle_timeout');
    this.end();
  };

  private readonly onData = (chunk: Buffer) => {
    if (this.closed) return;
    if (this.layerIn) {
      try {
        this.layerIn.push(chunk);
        for (let t = this.layerIn.next(); t; t = this.layerIn.next()) this.framer.push(this.layer!.decode(t));
      } catch (e) {
        // a layer that no longer verifies cannot carry even a notice
        this.log.warn('security_layer_error', { error: e instanceof Error ? e.message : String(e) });
        this.destroy();
        return;
      }
    } else this.framer.push(chunk);
    const before = this.pdus;
    this.safely(() => this.pump());
    if (this.pdus !== before) this.stopPduClock();
    if (this.framer.buffered > 0) this.awaitPdu();
  };

  /** Runs `f`; a fault of ours ends this connection only, never the server. */
  private safely(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.fault(e);
    }
  }

  private fault(e: unknown): void {
    this.log.error('internal_error', errorFields(e));
    this.destroy();
  }

  /**
   * Takes whole PDUs from the framer and starts their operations, unless a
   * bind or StartTLS runs alone. While the client leaves our answers unread,
   * only abandon and unbind are acted on: the next other request is held
   * and reading stops until the client catches up.
   */
  private pump(): void {
    while (!this.exclusive && !this.closed) {
      const behind = this.socket.writableLength > HIGH_WATER;
      let m = this.held;
      this.held = null;
      if (!m) {
        const next = this.nextMessage();
        if (next === undefined) return;
        if (next === null) continue;
        m = next;
      }
      const op = m.protocolOp.op;
      if (behind && op !== 'abandonRequest' && op !== 'unbindRequest') {
        this.held = m;
        this.socket.pause();
        if (!this.waiting) {
          this.waiting = true;
          void this.waitWritable().then(() => {
            this.waiting = false;
            if (this.closed || this.exclusive) return;
            this.socket.resume();
            this.safely(() => this.pump());
          });
        }
        return;
      }
      this.accept(m);
    }
  }

  /** The next decoded request; undefined when no whole PDU is buffered; null when one was refused (answered, or the connection closed). */
  private nextMessage(): LdapMessage<LdapRequest> | null | undefined {
    let pdu: Buffer | undefined;
    try {
      pdu = this.framer.next();
    } catch (e) {
      if (!(e instanceof LdapDecodeError)) throw e;
      this.disconnect(ResultCode.protocolError, e.message);
      return null;
    }
    if (!pdu) return undefined;
    this.pdus++;
    try {
      return decodeRequest(pdu, this.host.decodeOptions);
    } catch (e) {
      if (!(e instanceof LdapDecodeError)) throw e;
      this.refuseUndecodable(e);
      return null;
    }
  }

  /** A PDU the decoder refused: its own response when we know what it was, else the end of the connection. */
  private refuseUndecodable(e: LdapDecodeError): void {
    const op = e.op && Object.hasOwn(RESPONSE_TO, e.op) ? (e.op as RequestOpName) : undefined;
    const responseOp = op ? RESPONSE_TO[op] : null;
    this.log.info(eventOf(op ?? 'undecodable'), { op: e.messageId ?? null, outcome: `${resultCodeName(e.resultCode)}(${e.resultCode})`, reason: e.message });
    if (e.messageId !== undefined && op && responseOp) {
      this.writeResult(e.messageId, op, e.resultCode, e.message);
      return;
    }
    // an abandon that cannot be read abandons nothing, and has no answer
    if (e.messageId !== undefined && op === 'abandonRequest') return;
    this.disconnect(ResultCode.protocolError, e.message);
  }

  private accept(m: LdapMessage<LdapRequest>): void {
    const req = m.protocolOp;
    if (req.op === 'unbindRequest') {
      this.log.info('unbind', { op: m.messageId });
      this.end();
      return;
    }
    if (req.op === 'abandonRequest') {
      const target = this.ops.get(req.idToAbandon);
      if (target) target.abandoned = true;
      this.log.info('abandon', { op: m.messageId, id: req.idToAbandon, found: target !== undefined });
      return;
    }
    // another request between the steps of a SASL bind ends that bind (RFC 4513 §5.2.1.2)
    if (req.op !== 'bindRequest') this.saslExchange = null;
    const op = new Operation(m.messageId, req.op, m.controls);
    const refusal = this.precheck(op, req);
    if (refusal) {
      this.answer(op, refusal[0], refusal[1]);
      return;
    }
    this.ops.set(op.messageId, op);
    const alone = req.op === 'bindRequest' || (req.op === 'extendedReq' && req.requestName === ExtendedOid.startTls);
    if (!alone) {
      op.done = this.runAlongside(op, m);
      return;
    }
    this.socket.pause();
    const before = [...this.ops.values()].filter((o) => o !== op).map((o) => o.done);
    const socketBefore = this.socket;
    this.exclusive = op.done = (async () => {
      await Promise.allSettled(before);
      await this.run(op, m);
    })()
      .catch((e: unknown) => this.fault(e))
      .finally(() => {
        this.ops.delete(op.messageId);
        this.exclusive = null;
        if (this.closed) return;
        if (this.socket === socketBefore) this.socket.resume();
        this.safely(() => this.pump());
      });
  }

  /** A request refused before it runs: the code and message, or null. */
  private precheck(op: Operation, req: LdapRequest): [ResultCode, string] | null {
    if (this.ops.has(op.messageId)) return [ResultCode.protocolError, `message ${op.messageId} is already under way`];
    if (this.ops.size >= this.host.limits.maxOperations) return [ResultCode.busy, `more than ${this.host.limits.maxOperations} operations at once on one connection`];
    for (const c of op.controls) {
      const known = (c.type === ControlOid.pagedResults && req.op === 'searchRequest') || (c.type === ControlOid.passwordPolicy && req.op === 'bindRequest');
      if (c.criticality && !known) return [ResultCode.unavailableCriticalExtension, `control ${c.type} is not supported here`];
    }
    return null;
  }

  /** Answers a request with a bare result of its response type. */
  private answer(op: Operation, resultCode: ResultCode, diagnosticMessage: string): void {
    this.host.observe?.(op.name, resultCodeName(resultCode), 0);
    this.log.info(eventOf(op.name), { op: op.messageId, outcome: `${resultCodeName(resultCode)}(${resultCode})`, reason: diagnosticMessage });
    this.writeResult(op.messageId, op.name, resultCode, diagnosticMessage);
  }

  /** A bare LDAPResult of the response type that answers `name` (none for abandon and unbind). */
  private writeResult(messageId: number, name: RequestOpName, resultCode: ResultCode, diagnosticMessage: string, matchedDN = ''): void {
    const responseOp = RESPONSE_TO[name];
    if (responseOp) void this.writeMessage({ messageId, protocolOp: { op: responseOp as PlainResponseOp, resultCode, matchedDN, diagnosticMessage } });
  }

  /** Runs an operation that does not run alone; it leaves the operations under way when done. */
  private async runAlongside(op: Operation, m: LdapMessage<LdapRequest>): Promise<void> {
    try {
      await this.run(op, m);
    } catch (e) {
      this.fault(e);
    } finally {
      this.ops.delete(op.messageId);
    }
  }

  private async run(op: Operation, m: LdapMessage<LdapRequest>): Promise<void> {
    const started = performance.now();
    let outcome: string;
    let counted: string;
    let error: string | undefined;
    let note: Fields | undefined;
    try {
      const r = await this.host.handle(this, op, m);
      if (op.abandoned || this.closed) throw new Abandoned();
      note = r.note;
      const code = 'resultCode' in r.response ? r.response.resultCode : ResultCode.success;
      counted = resultCodeName(code);
      outcome = `${counted}(${code})`;
      const final: OutgoingMessage = { messageId: op.messageId, protocolOp: r.response, ...(r.controls ? { controls: r.controls } : {}) };
      if (r.after) await this.writeMessage(final, r.after);
      else void this.writeMessage(final);
    } catch (e) {
      if (e instanceof Abandoned) outcome = counted = 'abandoned';
      else {
        const r = toLdapResult(e, this.log);
        counted = resultCodeName(r.resultCode);
        outcome = `${counted}(${r.resultCode})`;
        error = r.name;
        note = { reason: e instanceof Error ? e.message : String(e) };
        if (!op.abandoned && !this.closed) this.writeResult(op.messageId, op.name, r.resultCode, r.diagnosticMessage, r.matchedDN);
      }
    }
    const elapsed = performance.now() - started;
    this.host.observe?.(op.name, counted, elapsed);
    this.log.info(eventOf(op.name), { op: op.messageId, method: bindMethod(m.protocolOp), principal: this.principal?.name ?? null, outcome, error, ...note, duration_ms: Math.round(elapsed * 10) / 10 });
  }

  /**
   * Writes one message (through the security layer, when one is in force).
   * With `after`, resolves once the bytes are handed to the operating system
   * and `after` has run.
   */
  private writeMessage(m: OutgoingMessage, after?: () => void): Promise<void> {
    if (this.gone) return Promise.resolve();
    const bytes = encodeMessage(m);
    const out = this.layer ? this.layer.encode(bytes) : bytes;
    this.gather();
    if (!after) {
      this.socket.write(out);
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.socket.write(out, (err) => {
        if (!err && !this.closed) after();
        resolve();
      });
    });
  }

  /**
   * Holds the messages written until the work under way (the promise
   * continuations of this turn) is done, then hands them to the socket at
   * once: a search's entries and its result leave in one TLS record and one
   * system call instead of one each.
   */
  private gather(): void {
    if (this.gathering) return;
    this.gathering = true;
    // this socket: StartTLS replaces it once its answer has been written
    const socket = this.socket;
    socket.cork();
    process.nextTick(() => {
      this.gathering = false;
      socket.uncork();
    });
  }

  /**
   * Sends one intermediate message of an operation (a search entry); waits
   * while the client is behind on reading, and every few messages lets the
   * event loop serve other clients and read an abandon.
   */
  async send(op: Operation, response: LdapResponse, controls: readonly Control[] = []): Promise<void> {
    if (op.abandoned || this.closed) throw new Abandoned();
    // written at once (no `after`): nothing to wait for
    void this.writeMessage({ messageId: op.messageId, protocolOp: response, controls });
    if (this.socket.writableLength > HIGH_WATER) await this.waitWritable();
    else if (++op.sent % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
    if (op.abandoned || this.closed) throw new Abandoned();
  }

  /** Resolves when the unread answers are below the high-water mark; a client that stays behind for the idle time is dropped. */
  private async waitWritable(): Promise<void> {
    const socket = this.socket;
    while (socket.writableLength > HIGH_WATER && !this.gone) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          socket.off('drain', done);
          socket.off('close', done);
          resolve();
        };
        const timer = setTimeout(() => {
          this.log.warn('client_not_reading', { reason: `the client has not read its answers for ${this.host.limits.idleTimeout / 1000} s; closing` });
          this.destroy();
          done();
        }, this.host.limits.idleTimeout);
        socket.once('drain', done);
        socket.once('close', done);
      });
    }
  }

  /** StartTLS: the TLS handshake starts on the current socket (called once the success response is out). */
  upgradeToTls(): void {
    if (this.framer.buffered > 0) {
      // RFC 4511 §4.14.1: nothing may follow the request before the handshake
      this.log.warn('protocol_violation', { reason: 'data after StartTLS before the handshake; closing' });
      this.destroy();
      return;
    }
    const raw = this.socket;
    this.detach(raw);
    const secure = new TLSSocket(raw, { isServer: true, secureContext: this.host.secureContext });
    this.socket = secure;
    this.tls = true;
    this.attach(secure);
    raw.on('close', this.onClose);
    // the handshake and the next PDU are on the PDU clock too
    this.awaitPdu();
  }

  /** Puts a negotiated SASL layer in force (called once the final bind response is out). */
  installLayer(exchange: SaslGssapiServer): void {
    if (exchange.layer <= 1) return;
    if (this.framer.buffered > 0) {
      this.log.warn('protocol_violation', { reason: 'data after the SASL bind before its layer; closing' });
      this.destroy();
      return;
    }
    this.layer = exchange;
    this.layerIn = new SaslFrameReader(exchange.receiveLimit);
  }

  /** Sends a Notice of Disconnection (RFC 4511 §4.4.1) and closes. */
  disconnect(code: ResultCode, message: string): void {
    if (this.closed) return;
    this.log.info('disconnect', { outcome: `${resultCodeName(code)}(${code})`, reason: message });
    const notice = noticeOfDisconnection(code, message);
    this.closing = true;
    for (const op of this.ops.values()) op.abandoned = true;
    try {
      this.socket.end(this.layer ? this.layer.encode(notice) : notice);
    } catch {
      this.socket.destroy();
    }
    this.linger();
  }

  /** Closes after what is already written (unbind, idle). */
  end(): void {
    if (this.closed) return;
    this.closing = true;
    for (const op of this.ops.values()) op.abandoned = true;
    this.socket.end();
    this.linger();
  }

  /** A client that does not close its side after ours is not waited for long. */
  private linger(): void {
    this.stopPduClock();
    const socket = this.socket;
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  }

  destroy(): void {
    this.closing = true;
    this.stopPduClock();
    for (const op of this.ops.values()) op.abandoned = true;
    this.socket.destroy();
  }
}
