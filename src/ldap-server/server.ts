/**
 * The LDAP service (docs/ldap.md, "The service"): two TCP listeners, plain
 * LDAP (StartTLS available) and LDAPS (TLS from the first octet, with the
 * server's certificate), sharing one limit on open connections (a new
 * connection over it first closes the oldest one that has not sent a whole
 * PDU yet, so connections opened and left silent cannot lock clients out;
 * when there is none, the new client gets a Notice of Disconnection `busy`
 * and is closed), and the
 * context every operation runs with. Each accepted socket becomes an
 * LdapConnection; operations.ts runs its requests. Stopping sends every
 * client a Notice of Disconnection `unavailable`.
 */
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { Accounts } from '../account/state.js';
import { serviceKeyFinder } from '../account/keys.js';
import type { Directory } from '../directory/types.js';
import type { CommandRegistry, ServerInfo } from '../framework/command.js';
import { SKEW_MS } from '../kerberos/ap-exchange.js';
import { ReplayCache } from '../kerberos/replay-cache.js';
import { ResultCode } from '../ldap/codes.js';
import { assertionValue } from './attributes.js';
import { noticeOfDisconnection } from '../ldap/extended.js';
import type { DecodeOptions, LdapMessage } from '../ldap/protocol.js';
import type { LdapRequest } from '../ldap/protocol-requests.js';
import { LdapConnection, type ConnectionHost, type ConnectionLimits, type Operation, type OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { handle } from './operations.js';
import type { Logger } from '../log/logger.js';

/** The service's limits, as server.conf sets them (seconds for times). */
export interface LdapLimits {
  /** largest PDU accepted, in octets */
  maxMessageSize: number;
  /** open connections at once, both ports together */
  maxConnections: number;
  /** operations under way at once on one connection */
  maxOperations: number;
  /** seconds a connection may stay idle, or a client leave our answers unread */
  idleTimeout: number;
  /** seconds a PDU may take to arrive whole; the first one (and the TLS handshake) counted from the connection's start */
  pduTimeout: number;
  /** most entries a search returns (the client may ask for fewer); 0: no limit */
  sizeLimit: number;
  /** most seconds a search runs (the client may ask for less); 0: no limit */
  timeLimit: number;
}

export interface LdapServiceOptions {
  dir: Directory;
  accounts: Accounts;
  realm: string;
  registry: CommandRegistry;
  server: ServerInfo;
  /** the server's key and certificate chain, PEM (the HTTPS API's) */
  tls: { key: Buffer; cert: Buffer };
  limits: LdapLimits;
  /** whether a SASL GSSAPI ticket's server (name@REALM) is one of the LDAP service's own names (server/acceptor-names.ts) */
  acceptsTicketFor(server: string): Promise<boolean>;
  /** the service's logger (component ldap) */
  log: Logger;
  /** told of each operation answered (the server's metrics) */
  observe?(operation: string, outcome: string, ms: number): void;
}

export class LdapService implements ConnectionHost {
  readonly limits: ConnectionLimits;
  readonly secureContext: SecureContext;
  readonly decodeOptions: DecodeOptions;
  private readonly ctx: ServiceContext;
  private readonly connections = new Set<LdapConnection>();
  private readonly sockets = new Set<Socket>();
  private readonly servers: Server[] = [];
  private readonly maxConnections: number;
  private stopping: Promise<void> | undefined;

  constructor(private readonly o: LdapServiceOptions) {
    this.limits = { maxMessageSize: o.limits.maxMessageSize, maxOperations: o.limits.maxOperations, idleTimeout: o.limits.idleTimeout * 1000, pduTimeout: o.limits.pduTimeout * 1000 };
    this.maxConnections = o.limits.maxConnections;
    this.secureContext = createSecureContext({ key: o.tls.key, cert: o.tls.cert, minVersion: 'TLSv1.2' });
    const schema = o.dir.schema;
    this.decodeOptions = {
      filter: {
        // values of the binary syntax are kept as base64 text
        assertionValue: (attr, value) => assertionValue(schema, attr, value),
      },
    };
    const realm = o.realm;
    const accounts = o.accounts;
    this.ctx = {
      dir: o.dir,
      accounts,
      realm,
      registry: o.registry,
      server: o.server,
      sizeLimit: o.limits.sizeLimit,
      timeLimit: o.limits.timeLimit,
      gssapi: {
        replay: new ReplayCache(2 * SKEW_MS, 100_000),
        // a ticket for one of the service's own names only, with its keys from the directory
        keyFor: serviceKeyFinder(accounts, o.acceptsTicketFor),
      },
    };
  }

  get log(): Logger {
    return this.o.log;
  }

  observe(operation: string, outcome: string, ms: number): void {
    this.o.observe?.(operation, outcome, ms);
  }

  handle(conn: LdapConnection, op: Operation, m: LdapMessage<LdapRequest>): Promise<OpResult> {
    return handle(this.ctx, conn, op, m);
  }

  closed(conn: LdapConnection): void {
    this.connections.delete(conn);
  }

  /** Starts both listeners (port 0 picks a free one) and returns the ports they listen on. */
  async listen(ldapPort: number, ldapsPort: number, host: string): Promise<{ ldapPort: number; ldapsPort: number }> {
    const plain = await this.listenOne(ldapPort, host, false);
    const secure = await this.listenOne(ldapsPort, host, true);
    return { ldapPort: plain, ldapsPort: secure };
  }

  private async listenOne(port: number, host: string, tls: boolean): Promise<number> {
    const server = createServer({ noDelay: true }, (socket) => this.accept(socket, tls));
    server.on('error', (e) => this.o.log.error('listener_error', { error: e.message }));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.servers.push(server);
    return (server.address() as AddressInfo).port;
  }

  private accept(raw: Socket, tls: boolean): void {
    raw.on('error', () => {});
    this.sockets.add(raw);
    raw.once('close', () => this.sockets.delete(raw));
    const socket: Socket = tls ? new TLSSocket(raw, { isServer: true, secureContext: this.secureContext }) : raw;
    if (tls) socket.on('error', () => {});
    if (this.connections.size >= this.maxConnections) {
      let silent: LdapConnection | undefined; // the first silent one, without copying the set
      for (const c of this.connections) {
        if (c.silent && !c.closed) {
          silent = c;
          break;
        }
      }
      if (silent) {
        silent.log.warn('closed_silent', { reason: `more than ${this.maxConnections} connections, and this one has sent no whole PDU` });
        silent.destroy();
        this.connections.delete(silent);
      }
    }
    if (this.connections.size >= this.maxConnections) {
      this.o.log.warn('refused', { from: `${raw.remoteAddress ?? '?'}:${raw.remotePort ?? '?'}`, reason: `more than ${this.maxConnections} connections` });
      socket.end(noticeOfDisconnection(ResultCode.busy, `the server has ${this.maxConnections} connections open; try again later`));
      setTimeout(() => socket.destroy(), 5000).unref();
      return;
    }
    this.connections.add(new LdapConnection(this, socket, tls));
  }

  /** Stops listening, tells every client the server is going away, and closes their connections. */
  async close(): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = this.stop();
    return this.stopping;
  }

  private async stop(): Promise<void> {
    const closing = this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const c of this.connections) c.disconnect(ResultCode.unavailable, 'the server is stopping');
    // a client that does not take the notice is not waited for long
    const timer = setTimeout(() => {
      for (const s of this.sockets) s.destroy();
    }, 1000);
    await Promise.all(closing);
    clearTimeout(timer);
  }
}
