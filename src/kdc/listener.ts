/**
 * UDP and TCP on one port for a Kerberos service: the KDC's (88) and the
 * password service's (464). UDP carries bare messages (RFC 4120 §7.2.1);
 * TCP carries each message after a 4-byte big-endian length whose high bit
 * is reserved (§7.2.2), several per connection, answered in order of
 * completion. Port 0 picks a port free for both. The service answers each
 * message (null: nothing to send); a TCP length it will not read (over its
 * limit, or the reserved bit set) gets the service's refusal, if it has
 * one, and the connection is closed. An idle connection closes after 30 s.
 * The TCP stream is cut into messages by `splitTcpMessages`, a pure function.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { createServer, type Server as TcpServer, type Socket } from 'node:net';

export type Transport = 'udp' | 'tcp';

export interface DatagramService {
  /** what the log lines name the listener */
  name: string;
  /** the largest TCP message read */
  maxTcpMessage: number;
  handle(raw: Buffer, transport: Transport): Promise<Buffer | null>;
  /** the answer to a TCP message too long to read, sent before the connection closes; null: close without one */
  oversize(): Buffer | null;
  log(line: string): void;
}

const TCP_IDLE_MS = 30_000;

export class UdpTcpListener {
  private udp: UdpSocket | undefined;
  private tcp: TcpServer | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(private readonly service: DatagramService) {}

  /** Listens on `port` (0: one free for UDP and TCP together) and returns the port. */
  async listen(port: number, host: string): Promise<number> {
    const name = this.service.name;
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
        if (port !== 0) throw new Error(`${name}: TCP port ${chosen} is in use`);
        continue;
      }
      udp.on('message', (msg, rinfo) => {
        this.service.handle(msg, 'udp').then(
          (r) => {
            if (r) udp.send(r, rinfo.port, rinfo.address);
          },
          () => {},
        );
      });
      udp.on('error', (e) => this.service.log(`${new Date().toISOString()} ${name} udp error ${e.message}`));
      this.udp = udp;
      this.tcp = tcp;
      return chosen;
    }
    throw new Error(`${name}: no free port for UDP and TCP together`);
  }

  private serveTcp(s: Socket): void {
    this.sockets.add(s);
    s.setTimeout(TCP_IDLE_MS, () => s.destroy());
    let buf: Buffer = Buffer.alloc(0);
    s.on('data', (d: Buffer) => {
      const { messages, rest, refused } = splitTcpMessages(Buffer.concat([buf, d]), this.service.maxTcpMessage);
      buf = rest;
      for (const msg of messages) {
        this.service.handle(msg, 'tcp').then(
          (r) => {
            if (r && !s.destroyed) s.write(frame(r));
          },
          () => s.destroy(),
        );
      }
      if (refused) {
        const refusal = this.service.oversize();
        if (refusal) s.end(frame(refusal));
        else s.destroy();
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
