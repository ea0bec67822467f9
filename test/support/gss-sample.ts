/**
 * The server end of MIT's GSS-API sample protocol (krb5 src/appl/gss-sample,
 * Debian krb5-gss-samples), so MIT's `gss-client` can be run against our
 * acceptor. Each token on the wire is one flags octet, a 4-octet big-endian
 * length and the token. The client sends an empty NOOP|CONTEXT_NEXT token,
 * its context tokens (CONTEXT), which the server answers while it has output;
 * then DATA tokens (WRAPPED and ENCRYPTED when it used gss_wrap, SEND_MIC
 * when it wants a MIC of the message back, else the server answers an empty
 * NOOP), and a NOOP at the end.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export const SampleFlag = { NOOP: 1, CONTEXT: 2, DATA: 4, MIC: 8, CONTEXT_NEXT: 16, WRAPPED: 32, ENCRYPTED: 64, SEND_MIC: 128 } as const;

export interface SampleToken {
  flags: number;
  body: Buffer;
}

/** Reads sample-protocol tokens from a socket, one at a time. */
export class SampleReader {
  private buf = Buffer.alloc(0);
  private waiting: (() => void) | undefined;
  private ended = false;

  constructor(socket: Socket) {
    socket.on('data', (d: Buffer) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiting?.();
    });
    const end = () => {
      this.ended = true;
      this.waiting?.();
    };
    socket.on('end', end);
    socket.on('close', end);
    socket.on('error', end);
  }

  async next(): Promise<SampleToken> {
    for (;;) {
      if (this.buf.length >= 5) {
        const len = this.buf.readUInt32BE(1);
        if (this.buf.length >= 5 + len) {
          const t = { flags: this.buf[0]!, body: Buffer.from(this.buf.subarray(5, 5 + len)) };
          this.buf = this.buf.subarray(5 + len);
          return t;
        }
      }
      if (this.ended) throw new Error('connection closed before a whole token');
      await new Promise<void>((r) => (this.waiting = r));
      this.waiting = undefined;
    }
  }
}

export function sendSample(socket: Socket, flags: number, body: Buffer): void {
  const h = Buffer.alloc(5);
  h[0] = flags;
  h.writeUInt32BE(body.length, 1);
  socket.write(Buffer.concat([h, body]));
}

/** A listener on 127.0.0.1 that hands each connection to `serve`. */
export async function listenSample(serve: (socket: Socket, reader: SampleReader) => Promise<void>): Promise<{ port: number; server: Server; close(): Promise<void> }> {
  const server = createServer((socket) => {
    const reader = new SampleReader(socket);
    serve(socket, reader)
      .catch(() => {})
      .finally(() => socket.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    server,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
