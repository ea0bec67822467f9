/**
 * A scripted LDAP server for interop tests: a TCP listener on 127.0.0.1:0
 * that frames and decodes what an OpenLDAP client sends with src/ldap,
 * records every request, and answers with the test's handler through our
 * encoders. A request our decoder refuses is answered the way the server
 * will: its own response type with the error's result code when the
 * messageID and operation were read, else a Notice of Disconnection. Then
 * runs one client command against it (LDAPNOINIT=1, so no ldap.conf or
 * ~/.ldaprc of the machine is read).
 */
import { spawn } from 'node:child_process';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { LdapDecodeError } from '../../src/ldap/ber.js';
import { RESPONSE_TO, ResultCode } from '../../src/ldap/codes.js';
import type { Control } from '../../src/ldap/controls.js';
import { noticeOfDisconnection } from '../../src/ldap/extended.js';
import { LdapFramer } from '../../src/ldap/framing.js';
import { decodeRequest, encodeMessage, type LdapMessage } from '../../src/ldap/protocol.js';
import type { LdapRequest } from '../../src/ldap/protocol-requests.js';
import type { LdapResponse, PlainResponseOp } from '../../src/ldap/protocol-responses.js';

export type Reply = (op: LdapResponse, controls?: Control[]) => void;
export type Handler = (m: LdapMessage<LdapRequest>, reply: Reply, socket: Socket) => void;

export interface ClientRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** every request decoded, in order */
  requests: LdapMessage<LdapRequest>[];
  /** every request refused by the decoder */
  refused: LdapDecodeError[];
  /** every PDU received, as sent */
  pdus: Buffer[];
}

/** Runs `command args...` (PORT in an argument is replaced by the listener's port) against a server answering with `handler`. */
export async function runClient(command: string, args: string[], handler: Handler, options: { stdin?: string } = {}): Promise<ClientRun> {
  const requests: LdapMessage<LdapRequest>[] = [];
  const refused: LdapDecodeError[] = [];
  const pdus: Buffer[] = [];
  const failures: unknown[] = [];
  const server = createServer((socket) => {
    const framer = new LdapFramer();
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      framer.push(chunk);
      try {
        for (let pdu = framer.next(); pdu; pdu = framer.next()) {
          pdus.push(Buffer.from(pdu));
          let m: LdapMessage<LdapRequest>;
          try {
            m = decodeRequest(pdu);
          } catch (e) {
            if (!(e instanceof LdapDecodeError)) throw e;
            refused.push(e);
            const responseOp = e.op && e.op in RESPONSE_TO ? RESPONSE_TO[e.op as keyof typeof RESPONSE_TO] : null;
            if (e.messageId !== undefined && responseOp) {
              socket.write(encodeMessage({ messageId: e.messageId, protocolOp: { op: responseOp as PlainResponseOp, resultCode: e.resultCode, matchedDN: '', diagnosticMessage: e.message } }));
              continue;
            }
            socket.end(noticeOfDisconnection(ResultCode.protocolError, e.message));
            return;
          }
          requests.push(m);
          if (m.protocolOp.op === 'unbindRequest') {
            socket.end();
            return;
          }
          handler(m, (op, controls) => socket.write(encodeMessage({ messageId: m.messageId, protocolOp: op, controls: controls ?? [] })), socket);
        }
      } catch (e) {
        failures.push(e);
        socket.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = String((server.address() as AddressInfo).port);
  try {
    const child = spawn(command, args.map((a) => a.replace('PORT', port)), { env: { ...process.env, LDAPNOINIT: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.end(options.stdin ?? '');
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    clearTimeout(timer);
    if (failures.length > 0) throw failures[0];
    return { code, stdout, stderr, requests, refused, pdus };
  } finally {
    server.close();
  }
}

/** An LDAPResult of `code` with empty matchedDN and the given message, as a response of type `op`. */
export function plain(op: PlainResponseOp, resultCode: (typeof ResultCode)[keyof typeof ResultCode], diagnosticMessage = ''): LdapResponse {
  return { op, resultCode, matchedDN: '', diagnosticMessage };
}
