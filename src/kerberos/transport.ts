/**
 * Sending Kerberos messages to a realm's KDCs (RFC 4120 §7.2): UDP carries
 * bare DER, TCP a 4-byte length first. sendToKdc follows MIT's client
 * (docs/kerberos.md, "Reaching the KDCs"): one connected UDP socket and one
 * TCP connection per KDC address, contacted in turns of a second across all
 * the KDCs before anything is resent, so a KDC that does not answer costs
 * about a second and one that refuses (ICMP port unreachable, a refused TCP
 * connection) costs nothing; TCP first for large requests and, for all the
 * KDCs, after RESPONSE_TOO_BIG. sendUdp and sendTcp talk to one KDC.
 */
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { connect, isIP, type Socket as TcpSocket } from 'node:net';
import { lookup } from 'node:dns/promises';

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
 * How long sendUdp waits before each resend to its one KDC and, last, before
 * giving up: what MIT's schedule (KDC_SCHEDULE) comes to for one KDC over
 * UDP alone (1 s, 2 s, then passes of 1 + 4 s and 1 + 8 s; 17 s in all).
 * A KDC may hold a device-flow answer for up to idp_hold_seconds (10 s by
 * default) while the IdP says "pending", so a client that gave up sooner
 * took a slow user for an unreachable KDC. Resends of a held request join it
 * (the KDC's in-flight map) and cost it nothing.
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

/** `msg` as Kerberos over TCP sends it: its length in 4 octets, big-endian, first (RFC 4120 §7.2.2). */
function tcpFrame(msg: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(msg.length);
  return Buffer.concat([len, msg]);
}

/** A 'data' listener that gathers one length-prefixed reply and hands it to `done` once it is whole. */
function tcpMessage(done: (reply: Buffer) => void): (d: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (d) => {
    buf = Buffer.concat([buf, d]);
    if (buf.length >= 4 && buf.length >= 4 + buf.readUInt32BE(0)) done(buf.subarray(4, 4 + buf.readUInt32BE(0)));
  };
}

export function sendTcp(addr: KdcAddress, msg: Buffer, timeoutMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect(addr.port, addr.host);
    const t = setTimeout(() => {
      s.destroy();
      reject(new Error('timeout'));
    }, timeoutMs);
    s.on('connect', () => s.write(tcpFrame(msg)));
    s.on(
      'data',
      tcpMessage((reply) => {
        clearTimeout(t);
        s.end();
        resolve(reply);
      }),
    );
    s.on('error', (e) => {
      clearTimeout(t);
      reject(e);
    });
  });
}

/**
 * When sendToKdc contacts what, as MIT's client does (docs/kerberos.md,
 * "Reaching the KDCs"). The first pass gives each connection a turn of
 * `turnMs` (the preferred transport of every KDC in krb5.conf order, then
 * the other transport of each), then waits `passWaitsMs[0]`; each later pass
 * resends over UDP to every KDC still open, a turn each, and waits the next
 * of `passWaitsMs`. A turn ends early when its connection fails (refused);
 * a reply from any open connection is taken whenever it comes, and an
 * established TCP connection is waited for up to `tcpMs` whatever the
 * schedule says. With one KDC over UDP that is 1 + 2 + (1 + 4) + (1 + 8) =
 * 17 s, longer than any device-flow hold (idp_hold_seconds).
 */
export interface KdcSchedule {
  turnMs: number;
  passWaitsMs: readonly number[];
  tcpMs: number;
}

export const KDC_SCHEDULE: KdcSchedule = { turnMs: 1000, passWaitsMs: [2000, 4000, 8000], tcpMs: 10_000 };

type Proto = 'udp' | 'tcp';
type Reply = { data: Buffer; proto: Proto };

/** One transport to one address of a KDC: not contacted yet, waited on, or given up. */
class Conn {
  state: 'new' | 'open' | 'failed' = 'new';
  /** until when an established TCP connection is waited for (0: not established) */
  tcpUntil = 0;
  private udp?: UdpSocket;
  private tcp?: TcpSocket;

  constructor(
    readonly ip: string,
    readonly family: number,
    readonly port: number,
    readonly proto: Proto,
    /** contacted after the preferred transport of every KDC (the first pass's second half) */
    readonly deferred: boolean,
    private readonly run: Exchange,
  ) {}

  /** Contacts the KDC, or resends over UDP; false when this connection has nothing to wait for. */
  send(msg: Buffer): boolean {
    if (this.state === 'failed') return false;
    if (this.state === 'open') {
      if (this.proto === 'tcp') return false; // sent once; the reply, if any, is still coming
      // a refusal is heard on the socket (its 'error' event), not here
      try {
        this.udp!.send(msg, () => {});
      } catch {
        return false; // not connected yet: nothing new to wait for
      }
      return true;
    }
    this.state = 'open';
    if (this.proto === 'udp') this.openUdp(msg);
    else this.openTcp(msg);
    return true;
  }

  /**
   * Connected, so the kernel passes on the ICMP port-unreachable of a KDC
   * that is not listening (an unconnected socket never hears it), and only
   * datagrams from that KDC arrive.
   */
  private openUdp(msg: Buffer): void {
    const s = createSocket(this.family === 6 ? 'udp6' : 'udp4');
    this.udp = s;
    s.on('message', (m) => this.run.won({ data: m, proto: 'udp' }));
    s.on('error', () => this.fail());
    s.connect(this.port, this.ip, (e?: Error) => {
      if (e) this.fail();
      else if (this.state === 'open') s.send(msg, (err) => err && this.fail());
    });
  }

  private openTcp(msg: Buffer): void {
    const s = connect({ port: this.port, host: this.ip, family: this.family });
    this.tcp = s;
    s.on('connect', () => {
      this.tcpUntil = Date.now() + this.run.schedule.tcpMs;
      s.write(tcpFrame(msg));
      this.run.wake();
    });
    s.on(
      'data',
      tcpMessage((data) => {
        this.close();
        this.run.won({ data, proto: 'tcp' });
      }),
    );
    s.on('error', () => this.fail());
    s.on('close', () => this.fail());
  }

  fail(): void {
    if (this.state === 'failed') return;
    this.close();
    this.run.wake();
  }

  close(): void {
    this.state = 'failed';
    if (this.udp) {
      const s = this.udp;
      this.udp = undefined;
      try {
        s.close();
      } catch {
        // already closed
      }
    }
    if (this.tcp) {
      const s = this.tcp;
      this.tcp = undefined;
      s.destroy();
    }
  }
}

/** One request to one realm's KDCs: the connections made so far and the first reply. */
class Exchange {
  readonly conns: Conn[] = [];
  reply?: Reply;
  private wakeUp?: () => void;

  constructor(
    readonly schedule: KdcSchedule,
    /** the transport tried first; the other is deferred, or not used at all when 'tcp-only' */
    private readonly order: 'udp' | 'tcp' | 'tcp-only',
  ) {}

  won(reply: Reply): void {
    this.reply ??= reply;
    this.wake();
  }

  wake(): void {
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
  }

  get open(): number {
    let n = 0;
    for (const c of this.conns) if (c.state === 'open') n++;
    return n;
  }

  /**
   * Waits up to `ms` (longer while an established TCP connection is within
   * its time) for a reply from any connection; stops early when nothing is
   * open or when `turn`, the connection whose turn this is, has failed.
   * True when a reply came.
   */
  async wait(ms: number, turn?: Conn): Promise<boolean> {
    const end = Date.now() + ms;
    for (;;) {
      if (this.reply) return true;
      if (turn?.state === 'failed' || this.open === 0) return false;
      let until = end;
      for (const c of this.conns) if (c.state === 'open' && c.tcpUntil > until) until = c.tcpUntil;
      const left = until - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  /** The connections for one KDC: each of its addresses over the preferred transport, then over the other. */
  async add(kdc: KdcAddress): Promise<Conn[]> {
    let addrs: { address: string; family: number }[];
    const literal = isIP(kdc.host);
    if (literal) addrs = [{ address: kdc.host, family: literal }];
    else {
      try {
        addrs = await lookup(kdc.host, { all: true });
      } catch {
        return []; // a name that does not resolve is a KDC not reached
      }
    }
    const first: Proto = this.order === 'udp' ? 'udp' : 'tcp';
    const added = addrs.map((a) => new Conn(a.address, a.family, kdc.port, first, false, this));
    if (this.order !== 'tcp-only') added.push(...addrs.map((a) => new Conn(a.address, a.family, kdc.port, first === 'udp' ? 'tcp' : 'udp', true, this)));
    this.conns.push(...added);
    return added;
  }

  close(): void {
    for (const c of this.conns) c.close();
  }
}

/** The schedule of KDC_SCHEDULE over `kdcs`; the first reply, or undefined when none came. */
async function exchange(kdcs: readonly KdcAddress[], msg: Buffer, order: 'udp' | 'tcp' | 'tcp-only', schedule: KdcSchedule): Promise<Reply | undefined> {
  const run = new Exchange(schedule, order);
  try {
    // first pass: each KDC's preferred transport in turn, then the other
    for (const kdc of kdcs) {
      for (const c of await run.add(kdc)) {
        if (c.deferred || !c.send(msg)) continue;
        if (await run.wait(schedule.turnMs, c)) return run.reply;
      }
    }
    for (const c of run.conns) {
      if (!c.deferred || !c.send(msg)) continue;
      if (await run.wait(schedule.turnMs, c)) return run.reply;
    }
    const [firstWait = 0, ...laterWaits] = schedule.passWaitsMs;
    if (await run.wait(firstWait)) return run.reply;
    // later passes: resend over UDP to every KDC still open
    for (const passWait of laterWaits) {
      if (run.open === 0) break;
      for (const c of run.conns) {
        if (!c.send(msg)) continue;
        if (await run.wait(schedule.turnMs, c)) return run.reply;
        if (run.open === 0) break;
      }
      if (await run.wait(passWait)) return run.reply;
    }
    return run.reply;
  } finally {
    run.close();
  }
}

/**
 * The reply of the realm's KDCs to `msg`: UDP first for small requests, TCP
 * first for large ones; a UDP reply of RESPONSE_TOO_BIG sends the request
 * again over TCP alone, to every KDC from the first (as MIT does).
 */
export async function sendToKdc(realm: string, kdcs: readonly KdcAddress[], msg: Buffer, schedule: KdcSchedule = KDC_SCHEDULE): Promise<Buffer> {
  let reply = await exchange(kdcs, msg, msg.length < UDP_LIMIT ? 'udp' : 'tcp', schedule);
  if (reply?.proto === 'udp' && isTooBig(reply.data)) reply = await exchange(kdcs, msg, 'tcp-only', schedule);
  if (!reply) throw new KdcUnreachableError(realm);
  return reply.data;
}

/** KRB-ERROR with error-code 52, detected without a full decode. */
function isTooBig(reply: Buffer): boolean {
  return reply[0] === 0x7e && reply.includes(Buffer.from([0xa6, 0x03, 0x02, 0x01, 52]));
}
