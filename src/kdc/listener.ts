/**
 * UDP and TCP on one port for a Kerberos service: the KDC's (88) and the
 * password service's (464). UDP carries bare messages (RFC 4120 §7.2.1);
 * TCP carries each message after a 4-byte big-endian length whose high bit
 * is reserved (§7.2.2), several per connection, answered in order of
 * completion. Port 0 picks a port free for both. The service answers each
 * message, told the address it came from (null: nothing to send); a TCP
 * length it will not read (over its limit, or the reserved bit set) gets
 * the service's refusal, if it has one, and the connection is closed,
 * before any of the message is kept.
 * TCP connections are bounded in time and number (TcpLimits, docs/load.md):
 * one closes when idle, when a message it began does not arrive whole in
 * time (a client sending a byte a second), and the oldest closes when a new
 * one would pass the limit, so connections opened and left silent cannot
 * lock correct clients out. A client that does not read its answers is not
 * read either until it does (or its idle time runs out). The TCP stream is
 * cut into messages by `splitTcpMessages`, a pure function.
 */
import { createSocket, type Socket as UdpSocket, type SocketOptions } from 'node:dgram';
import { lookup as dnsLookup } from 'node:dns';
import { createServer, isIP, type Server as TcpServer, type Socket } from 'node:net';
import type { Logger } from '../log/logger.js';

export type Transport = 'udp' | 'tcp';

/**
 * The UDP socket's name look-up: a reply goes to the address its request
 * came from, always an IP literal, which needs no resolver (Node's
 * dns.lookup answers one a tick later, a cost on every reply).
 */
const literalLookup: NonNullable<SocketOptions['lookup']> = (hostname, options, callback) => {
  const family = isIP(hostname);
  if (family !== 0) callback(null, hostname, family);
  else dnsLookup(hostname, options, callback);
};

export interface DatagramService {
  /** what errors name the listener */
  name: string;
  /** the largest TCP message read */
  maxTcpMessage: number;
  /** answers one message; `from` is the address it came from (an IP literal) */
  handle(raw: Buffer, transport: Transport, from?: string): Promise<Buffer | null>;
  /** the answer to a TCP message too long to read, sent before the connection closes; null: close without one */
  oversize(): Buffer | null;
  /** the service's logger: its lines say `udp_error`, `tcp_closed_oldest`, `tcp_too_slow` */
  log: Logger;
}

/** The bounds of the TCP side of a listener. */
export interface TcpLimits {
  /** milliseconds a connection may stay with nothing read or written */
  idleMs: number;
  /** milliseconds from the first octet of a message (its length included) to its last */
  messageMs: number;
  /** connections open at once; a new one over it closes the oldest */
  maxConnections: number;
}

export const DEFAULT_TCP_LIMITS: Readonly<TcpLimits> = { idleMs: 30_000, messageMs: 10_000, maxConnections: 256 };

/** Octets of answers a client leaves unread past which its connection is not read. */
const HIGH_WATER = 64 * 1024;

export class UdpTcpListener {
  private udp: UdpSocket | undefined;
  private tcp: TcpServer | undefined;
  /** open TCP connections, oldest first */
  private readonly sockets = new Set<Socket>();
  readonly limits: TcpLimits;

  constructor(
    private readonly service: DatagramService,
    limits: Partial<TcpLimits> = {},
  ) {
    this.limits = { ...DEFAULT_TCP_LIMITS, ...limits };
  }

  /** Listens on `port` (0: one free for UDP and TCP together) and returns the port. */
  async listen(port: number, host: string): Promise<number> {
    const name = this.service.name;
    for (let attempt = 0; attempt < 20; attempt++) {
      const udp = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', lookup: literalLookup });
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
        if (port !== 0) throw new Error(`${name}: TCP port ${chosen} is in use`);
        continue;
      }
      udp.on('message', (msg, rinfo) => {
        this.service.handle(msg, 'udp', rinfo.address).then(
          (r) => {
            if (r) udp.send(r, rinfo.port, rinfo.address);
          },
          () => {},
        );
      });
      udp.on('error', (e) => this.service.log.error('udp_error', { error: e.message }));
      this.udp = udp;
      this.tcp = tcp;
      return chosen;
    }
    throw new Error(`${name}: no free port for UDP and TCP together`);
  }

  private serveTcp(s: Socket): void {
    const name = this.service.name;
    if (this.sockets.size >= this.limits.maxConnections) {
      const oldest = this.sockets.values().next().value!;
      this.service.log.warn('tcp_closed_oldest', { from: `${oldest.remoteAddress ?? '?'}:${oldest.remotePort ?? '?'}`, reason: `more than ${this.limits.maxConnections} connections` });
      oldest.destroy();
      this.sockets.delete(oldest);
    }
    this.sockets.add(s);
    s.setTimeout(this.limits.idleMs, () => s.destroy());
    let buf: Buffer = Buffer.alloc(0);
    let done = false;
    /** runs while a message is incomplete: from its first octet, or from the end of the message before it in the same read */
    let deadline: NodeJS.Timeout | undefined;
    const unhurried = () => {
      clearTimeout(deadline);
      deadline = undefined;
    };
    const hurry = () => {
      deadline ??= setTimeout(() => {
        this.service.log.warn('tcp_too_slow', { from: `${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'}`, reason: `a message did not arrive whole within ${this.limits.messageMs} ms; closing` });
        s.destroy();
      }, this.limits.messageMs);
    };
    const write = (r: Buffer) => {
      if (s.destroyed || done) return;
      // a client behind on reading is not read until it catches up
      if (!s.write(frame(r)) && s.writableLength > HIGH_WATER && !s.isPaused()) {
        s.pause();
        s.once('drain', () => s.resume());
      }
    };
    s.on('data', (d: Buffer) => {
      if (done) return;
      const { messages, rest, refused } = splitTcpMessages(buf.length ? Buffer.concat([buf, d]) : d, this.service.maxTcpMessage);
      // the rest is copied: a view would keep the whole chunk it came in
      buf = rest.length ? Buffer.from(rest) : rest;
      if (messages.length) unhurried();
      if (buf.length) hurry();
      for (const msg of messages) {
        this.service.handle(msg, 'tcp', s.remoteAddress).then(
          (r) => {
            if (r) write(r);
          },
          () => s.destroy(),
        );
      }
      if (refused) {
        done = true;
        unhurried();
        const refusal = this.service.oversize();
        if (refusal) s.end(frame(refusal));
        else s.destroy();
      }
    });
    s.on('error', () => s.destroy());
    s.on('close', () => {
      unhurried();
      this.sockets.delete(s);
    });
  }

  async close(): Promise<void> {
    this.udp?.close();
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => (this.tcp ? this.tcp.close(() => r()) : r()));
  }
}

/**
 * The whole messages at the head of a TCP stream's buffered bytes, each
 * copied out of it, and what is left after them (an incomplete message). A
 * length with the reserved bit set or over `max` ends the stream: `refused`,
 * nothing left, and the messages before it still returned. Pure, so the
 * fuzz tests (docs/fuzzing.md) drive it without a socket.
 */
export function splitTcpMessages(buffered: Buffer, max: number): { messages: Buffer[]; rest: Buffer; refused: boolean } {
  const messages: Buffer[] = [];
  let buf: Buffer = buffered;
  while (buf.length >= 4) {
    const len = buf.readUInt32BE(0);
    if (len & 0x80000000 || len > max) return { messages, rest: Buffer.alloc(0), refused: true };
    if (buf.length < 4 + len) break;
    messages.push(Buffer.from(buf.subarray(4, 4 + len)));
    buf = buf.subarray(4 + len);
  }
  return { messages, rest: buf, refused: false };
}

/** A TCP message: the 4-byte length, then the message. */
function frame(msg: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(msg.length);
  return Buffer.concat([len, msg]);
}
