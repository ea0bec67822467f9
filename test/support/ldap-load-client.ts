/**
 * A small asynchronous LDAP client for load generation, on the wire layer
 * of src/ldap: one TLS connection (ldaps://, or ldap:// upgraded with
 * StartTLS before anything else is sent), requests written as they come
 * with their own messageIDs, any number outstanding, each answered through
 * a callback with its result code and the number of entries it returned.
 * Entries are counted from their envelope alone (messageID and operation
 * tag), not decoded, so the generator spends little per entry; results and
 * bind responses are decoded in full. The server's certificate is not
 * verified: the bench makes or is given the servers it talks to, and
 * verification would only add the client's cost to each handshake.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { BerReader, Tag } from '../../src/ldap/ber.js';
import { ExtendedOid, MAX_INT, ResultCode } from '../../src/ldap/codes.js';
import { LdapFramer } from '../../src/ldap/framing.js';
import { decodeResponse, encodeMessage } from '../../src/ldap/protocol.js';
import { simpleBind, type SearchRequest } from '../../src/ldap/protocol-requests.js';
import { RESPONSE_ID } from '../../src/ldap/protocol-responses.js';
import type { Control } from '../../src/ldap/controls.js';

/** How one request ended: the result code (-1: the connection failed first), entries received, the server's message (and a SASL bind's credentials). */
export interface Outcome {
  resultCode: number;
  entries: number;
  diagnosticMessage: string;
  serverSaslCreds?: Buffer;
}

export type Done = (o: Outcome) => void;

/** What a search asks; the rest of the SearchRequest is fixed (no deref, no time limit, values wanted). */
export interface SearchSpec {
  base: string;
  scope?: SearchRequest['scope'];
  filter: SearchRequest['filter'];
  attributes: string[];
  sizeLimit?: number;
  /** request controls (SSSD's sudo refresh sends the paged results control) */
  controls?: Control[];
}

interface Pending {
  entries: number;
  done: Done;
}

const ENTRY = RESPONSE_ID.searchResEntry;
const REFERENCE = RESPONSE_ID.searchResRef;

/** Where an ldap:// or ldaps:// URL points. */
export function parseLdapUrl(url: string): { tls: 'ldaps' | 'starttls'; host: string; port: number } {
  const m = /^(ldaps?):\/\/(\[[^\]]+\]|[^:/]+)(?::(\d+))?\/?$/.exec(url);
  if (!m) throw new Error(`not an ldap:// or ldaps:// URL: ${url}`);
  const ldaps = m[1] === 'ldaps';
  return { tls: ldaps ? 'ldaps' : 'starttls', host: m[2]!.replace(/^\[|\]$/g, ''), port: m[3] ? Number(m[3]) : ldaps ? 636 : 389 };
}

export class LdapClient {
  private readonly framer = new LdapFramer({ maxMessageSize: 16 << 20 });
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: string | undefined;
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.socket.uncork();
  };

  private constructor(readonly socket: TLSSocket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('error', (e) => this.fail(e.message));
    socket.on('close', () => this.fail('connection closed'));
  }

  /** A TLS connection to `url` (ldaps:// directly, ldap:// through StartTLS). */
  static async connect(url: string): Promise<LdapClient> {
    const u = parseLdapUrl(url);
    const servername = /^[\d.:]+$/.test(u.host) ? undefined : u.host;
    let plain: Socket | undefined;
    if (u.tls === 'starttls') plain = await startTls(u.host, u.port);
    const socket = await new Promise<TLSSocket>((resolve, reject) => {
      const opts = { rejectUnauthorized: false, ...(servername ? { servername } : {}) };
      const s = plain ? tlsConnect({ ...opts, socket: plain }) : tlsConnect({ ...opts, host: u.host, port: u.port });
      s.once('secureConnect', () => {
        s.off('error', reject);
        resolve(s);
      });
      s.once('error', reject);
    });
    return new LdapClient(socket);
  }

  /** Requests sent and not yet answered. */
  get outstanding(): number {
    return this.pending.size;
  }

  get broken(): string | undefined {
    return this.failure;
  }

  bind(dn: string, password: string, done: Done): void {
    this.send(simpleBind(dn, password), done);
  }

  /** One step of a SASL bind (test/support/sasl-gssapi-client.ts drives GSSAPI's). */
  saslBind(mechanism: string, credentials: Buffer): Promise<Outcome> {
    return new Promise((resolve) => this.send({ op: 'bindRequest', version: 3, name: '', authentication: { method: 'sasl', mechanism, credentials } }, resolve));
  }

  search(s: SearchSpec, done: Done): void {
    this.send(
      {
        op: 'searchRequest',
        baseObject: s.base,
        scope: s.scope ?? 'wholeSubtree',
        derefAliases: 'neverDerefAliases',
        sizeLimit: s.sizeLimit ?? 0,
        timeLimit: 0,
        typesOnly: false,
        filter: s.filter,
        attributes: s.attributes,
      },
      done,
      s.controls,
    );
  }

  /** A bind that must succeed (connection set-up). */
  bindOrThrow(dn: string, password: string): Promise<void> {
    return new Promise((resolve, reject) =>
      this.bind(dn, password, (o) => (o.resultCode === ResultCode.success ? resolve() : reject(new Error(`bind as ${dn}: result ${o.resultCode} ${o.diagnosticMessage}`)))),
    );
  }

  /** Unbind and close. */
  close(): void {
    if (!this.failure) this.socket.end(encodeMessage({ messageId: this.takeId(), protocolOp: { op: 'unbindRequest' } }));
    this.failure ??= 'closed by us';
  }

  private takeId(): number {
    const id = this.nextId;
    this.nextId = id === MAX_INT ? 1 : id + 1;
    return id;
  }

  private send(op: Parameters<typeof encodeMessage>[0]['protocolOp'], done: Done, controls?: Control[]): void {
    if (this.failure) {
      done({ resultCode: -1, entries: 0, diagnosticMessage: this.failure });
      return;
    }
    const id = this.takeId();
    this.pending.set(id, { entries: 0, done });
    // requests made in one turn of the event loop (several chains answered by one read) leave in one TLS write
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(this.uncork);
    }
    this.socket.write(encodeMessage({ messageId: id, protocolOp: op, ...(controls ? { controls } : {}) }));
  }

  private receive(chunk: Buffer): void {
    this.framer.push(chunk);
    try {
      for (let pdu = this.framer.next(); pdu; pdu = this.framer.next()) {
        // the envelope first: an entry needs no more than its messageID
        const m = BerReader.of(pdu).sequence(Tag.sequence, 'LDAPMessage');
        const id = m.integer(Tag.integer, 'messageID', 0, MAX_INT);
        const tag = m.peek();
        if (id === 0) {
          const notice = decodeResponse(pdu).protocolOp;
          this.fail(`notice of disconnection: ${'diagnosticMessage' in notice ? notice.diagnosticMessage : ''}`);
          this.socket.destroy();
          return;
        }
        const p = this.pending.get(id);
        if (!p) throw new Error(`a reply to messageID ${id}, which is not outstanding`);
        if (tag === ENTRY) p.entries++;
        else if (tag !== REFERENCE) {
          const op = decodeResponse(pdu).protocolOp;
          this.pending.delete(id);
          if (op.op === 'bindResponse' && op.serverSaslCreds) p.done({ resultCode: op.resultCode, entries: p.entries, diagnosticMessage: op.diagnosticMessage, serverSaslCreds: op.serverSaslCreds });
          else if ('resultCode' in op) p.done({ resultCode: op.resultCode, entries: p.entries, diagnosticMessage: op.diagnosticMessage });
          else p.done({ resultCode: -1, entries: p.entries, diagnosticMessage: `unexpected ${op.op}` });
        }
      }
    } catch (e) {
      this.fail(e instanceof Error ? e.message : String(e));
      this.socket.destroy();
    }
  }

  private fail(why: string): void {
    if (this.failure === undefined) this.failure = why;
    const waiting = [...this.pending.values()];
    this.pending.clear();
    for (const p of waiting) p.done({ resultCode: -1, entries: p.entries, diagnosticMessage: this.failure });
  }
}

/** A plain connection on which the StartTLS extended operation succeeded (nothing else sent). */
async function startTls(host: string, port: number): Promise<Socket> {
  const s = netConnect({ host, port });
  await new Promise<void>((resolve, reject) => {
    s.once('connect', resolve);
    s.once('error', reject);
  });
  const framer = new LdapFramer();
  return new Promise<Socket>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      framer.push(chunk);
      const pdu = framer.next();
      if (!pdu) return;
      s.off('data', onData);
      s.off('error', reject);
      const op = decodeResponse(pdu).protocolOp;
      if (op.op === 'extendedResp' && op.resultCode === ResultCode.success) resolve(s);
      else {
        s.destroy();
        reject(new Error(`StartTLS refused: ${'resultCode' in op ? `${op.resultCode} ${op.diagnosticMessage}` : op.op}`));
      }
    };
    s.on('data', onData);
    s.once('error', reject);
    s.write(encodeMessage({ messageId: 1, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.startTls } }));
  });
}
