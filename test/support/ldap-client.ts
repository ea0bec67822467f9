/**
 * A raw LDAP client for tests that need what the OpenLDAP tools cannot
 * send: malformed PDUs, pipelined requests, an abandon while the server
 * waits for us to read. It writes bytes or our encoded messages and reads
 * the server's PDUs through src/ldap's framer and response decoder.
 */
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { LdapFramer } from '../../src/ldap/framing.js';
import { decodeResponse, encodeMessage, type LdapMessage, type OutgoingMessage } from '../../src/ldap/protocol.js';
import type { LdapResponse } from '../../src/ldap/protocol-responses.js';

export type Received = LdapMessage<LdapResponse<number>>;

export class RawLdap {
  private readonly framer = new LdapFramer({ maxMessageSize: 16 * 1024 * 1024 });
  private readonly queue: Received[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.framer.push(chunk);
      for (let pdu = this.framer.next(); pdu; pdu = this.framer.next()) this.queue.push(decodeResponse(pdu));
      this.wake();
    });
    socket.on('error', () => {});
    this.closed = new Promise<void>((resolve) =>
      socket.on('close', () => {
        this.ended = true;
        this.wake();
        resolve();
      }),
    );
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = null;
    w?.();
  }

  /** Connects to 127.0.0.1:port, over TLS (checked against `ca`, name localhost) when `ca` is given. */
  static async connect(port: number, ca?: string): Promise<RawLdap> {
    const socket = ca ? tlsConnect({ host: '127.0.0.1', port, ca, servername: 'localhost' }) : tcpConnect({ host: '127.0.0.1', port });
    await new Promise<void>((resolve, reject) => {
      socket.once(ca ? 'secureConnect' : 'connect', () => resolve());
      socket.once('error', reject);
    });
    return new RawLdap(socket);
  }

  send(m: OutgoingMessage | Buffer): void {
    this.socket.write(Buffer.isBuffer(m) ? m : encodeMessage(m));
  }

  /** The next message from the server; null when the connection closed first or nothing came within `ms`. */
  async next(ms = 5000): Promise<Received | null> {
    const deadline = Date.now() + ms;
    while (this.queue.length === 0) {
      if (this.ended) return null;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
    return this.queue.shift()!;
  }

  /** Messages until one with messageID `id` that ends an operation (not an entry), inclusive. */
  async until(id: number, ms = 5000): Promise<Received[]> {
    const out: Received[] = [];
    for (;;) {
      const m = await this.next(ms);
      if (!m) throw new Error(`no answer to message ${id}; got ${out.length} messages`);
      out.push(m);
      if (m.messageId === id && m.protocolOp.op !== 'searchResEntry' && m.protocolOp.op !== 'searchResRef') return out;
    }
  }

  get isClosed(): boolean {
    return this.ended;
  }

  close(): void {
    this.socket.destroy();
  }
}
