/**
 * Plain HTTP (port 80 by default), which serves nothing in clear: every
 * request is answered with a redirect to the same path and query on the
 * API's HTTPS address (the server's host name and HTTPS port, never the
 * request's Host header). GET and HEAD get 301; any other method 308, which
 * tells the client to repeat the method over HTTPS. A request body is never
 * read: the answer goes at once and the connection is closed shortly after.
 * A request whose target is not a path (absolute form, `*`, CONNECT's
 * authority form) or that the HTTP parser refuses gets 400. Headers are
 * limited to 8 KiB and must arrive within 10 s (`timeoutMs`), checked
 * every second, so a client sending a byte a second, or nothing, is closed
 * then (docs/load.md).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** How long a connection may stay once its answer is written: time for the client to read it, none to send more. */
const LINGER_MS = 1000;

const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/** A server redirecting every request to `origin` (`https://host[:port]`, no path); a request's headers must arrive within `timeoutMs`. */
export function createHttpRedirect(origin: string, timeoutMs = 10_000): Server {
  const server = createServer({ requestTimeout: timeoutMs, headersTimeout: timeoutMs, connectionsCheckingInterval: Math.min(1000, timeoutMs), maxHeaderSize: 8 * 1024, keepAlive: false }, (req: IncomingMessage, res: ServerResponse) => {
    const target = req.url ?? '';
    res.on('finish', () => closeSoon(req.socket));
    if (!target.startsWith('/')) {
      res.writeHead(400, { Connection: 'close', 'Content-Length': '0' });
      res.end();
      return;
    }
    res.writeHead(req.method === 'GET' || req.method === 'HEAD' ? 301 : 308, { Location: origin + target, Connection: 'close', 'Content-Length': '0' });
    res.end();
  });
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
    socket.end(BAD_REQUEST);
    closeSoon(socket);
  });
  server.on('clientError', (_err, socket: Duplex) => {
    if (socket.writable) {
      socket.end(BAD_REQUEST);
      closeSoon(socket);
    } else socket.destroy();
  });
  return server;
}

function closeSoon(socket: Duplex): void {
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}
