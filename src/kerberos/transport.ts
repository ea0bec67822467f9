/**
 * Sending Kerberos messages to a KDC (RFC 4120 §7.2): UDP with MIT's
 * retransmission schedule for small requests, TCP (4-byte length prefix)
 * for large ones or when the reply says RESPONSE_TOO_BIG.
 */
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';

export interface KdcAddress {
  host: string;
  port: number;
}

export class KdcUnreachableError extends Error {
  constructor(readonly realm: string) {
    super(`Cannot contact any KDC for realm '${realm}'`);
    this.name = 'KdcUnreachableError';
  }
}

const UDP_LIMIT = 1465;

/**
 * How long a request over UDP waits before each resend and, last, before
 * giving up: MIT's schedule with one KDC (1 s, 2 s, then passes of 1 + 4 s
 * and 1 + 8 s; 17 s in all, docs/kerberos.md). A KDC may hold a device-flow
 * answer for up to idp_hold_seconds (10 s by default) while the IdP says
 * "pending", so a client that gave up sooner took a slow user for an
 * unreachable KDC. Resends of a held request join it (the KDC's in-flight
 * map) and cost it nothing.
 */
export const UDP_WAITS: readonly number[] = [1000, 2000, 5000, 9000];

export function sendUdp(addr: KdcAddress, msg: Buffer, waits: readonly number[] = UDP_WAITS): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = createSocket(addr.host.includes(':') ? 'udp6' : 'udp4');
    let attempt = 0;
    let timer: NodeJS.Timeout | undefined;
    const done = (err: Error | null, data?: Buffer) => {
      if (timer) clearTimeout(timer);
      s.close();
      if (err) reject(err);
      else resolve(data!);
    };
    const send = () => {
      if (attempt >= waits.length) return done(new Error('no reply'));
      s.send(msg, addr.port, addr.host, (e) => e && done(e));
      timer = setTimeout(send, waits[attempt++]);
    };
    s.on('message', (m) => done(null, m));
    s.on('error', (e) => done(e));
    send();
  });
}

export function sendTcp(addr: KdcAddress, msg: Buffer, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect(addr.port, addr.host);
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error('timeout'));
    }, timeoutMs);
    let buf = Buffer.alloc(0);
    s.on('connect', () => {
      const len = Buffer.alloc(4);
      len.writeUInt32BE(msg.length);
      s.write(Buffer.concat([len, msg]));
    });
    s.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) {
        clearTimeout(t);
        s.end();
        resolve(buf.subarray(4, 4 + buf.readUInt32BE(0)));
      }
    });
    s.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}

/** Sends to each KDC in turn; UDP first for small messages, TCP on RESPONSE_TOO_BIG. */
export async function sendToKdc(realm: string, kdcs: readonly KdcAddress[], msg: Buffer): Promise<Buffer> {
  for (const addr of kdcs) {
    try {
      if (msg.length < UDP_LIMIT) {
        const reply = await sendUdp(addr, msg);
        if (!isTooBig(reply)) return reply;
      }
      return await sendTcp(addr, msg);
    } catch {
      // next KDC
    }
  }
  throw new KdcUnreachableError(realm);
}

/** KRB-ERROR with error-code 52, detected without a full decode. */
function isTooBig(reply: Buffer): boolean {
  return reply[0] === 0x7e && reply.includes(Buffer.from([0xa6, 0x03, 0x02, 0x01, 52]));
}
