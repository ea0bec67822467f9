/**
 * The HTTPS API's connection bounds (docs/load.md), which Node's server
 * does not keep by itself:
 *
 * - the TLS handshake finishes within `handshakeMs` of the TCP connection
 *   (Node's own handshake time-out restarts with every octet, so a client
 *   sending a byte a second, or nothing once its handshake failed, would
 *   hold the connection for good);
 * - at most `maxConnections` connections are open at once. At the limit a
 *   new connection takes the place of the oldest one that is not serving a
 *   request (a handshake not finished yet, a connection that has not sent a
 *   request, or a kept-alive one between requests: a client loses nothing it
 *   asked for); when every one is serving a request, the new one is closed.
 *   Each is logged.
 */
import type { Socket } from 'node:net';
import type { Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import type { Logger } from '../log/logger.js';

export interface HttpsConnectionBounds {
  handshakeMs: number;
  maxConnections: number;
}

interface Connection {
  readonly raw: Socket;
  /** requests being served on it */
  busy: number;
  /** closes it when the handshake has not finished in time; cleared at the handshake's end */
  handshake: NodeJS.Timeout | undefined;
}

export function boundHttpsConnections(server: Server, bounds: HttpsConnectionBounds, log: Logger): void {
  // oldest first (a Map keeps insertion order); the TLS socket finds its connection by the peer's address and port
  const open = new Map<string, Connection>();
  const key = (s: Socket) => `${s.remoteAddress}|${s.remotePort}`;
  const from = (s: Socket) => `${s.remoteAddress ?? '?'}:${s.remotePort ?? '?'}`;
  server.on('connection', (raw: Socket) => {
    if (open.size >= bounds.maxConnections) {
      let idle: Connection | undefined;
      for (const c of open.values()) {
        if (c.busy === 0) {
          idle = c;
          break;
        }
      }
      const reason = `more than ${bounds.maxConnections} connections`;
      if (!idle) {
        log.warn('refused', { from: from(raw), reason: `${reason}, every one serving a request` });
        raw.destroy();
        return;
      }
      log.warn('closed_idle', { from: from(idle.raw), reason: `${reason}: a connection serving no request closed for a new one` });
      open.delete(key(idle.raw));
      idle.raw.destroy();
    }
    const k = key(raw);
    const c: Connection = { raw, busy: 0, handshake: setTimeout(() => raw.destroy(), bounds.handshakeMs) };
    open.set(k, c);
    raw.once('close', () => {
      clearTimeout(c.handshake);
      if (open.get(k) === c) open.delete(k);
    });
  });
  server.on('secureConnection', (s: TLSSocket) => {
    const c = open.get(key(s));
    if (c) {
      clearTimeout(c.handshake);
      c.handshake = undefined;
    }
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const c = open.get(key(req.socket));
    if (!c) return;
    c.busy++;
    res.once('close', () => c.busy--);
  });
}
