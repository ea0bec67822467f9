/**
 * The KDC load generator of the benches (bench/kdc.ts, bench/servers.ts):
 * UDP sockets that each keep exactly one request outstanding against one or
 * more KDC ports (socket i talks to ports[i % ports.length]), requests made
 * ahead of the measured run so the generator only sends and receives while
 * measuring, a plain exchange of many requests for their replies (to fetch
 * TGTs in bulk), and the AS-REQ with encrypted-timestamp pre-authentication
 * that a password login sends (fresh nonce and timestamp each, so no
 * lookaside cache can answer it); and the CPU time a server process has
 * used (/proc), for CPU time per request.
 */
import { spawnSync } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { encodeKdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { asReqBody, encTimestamp, randomNonce } from '../../src/kerberos/client.js';
import { profile } from '../../src/kerberos/crypto/index.js';

/** Makes the next request's bytes. */
export type Maker = () => Buffer;

export interface UdpResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** answered requests (not errors) */
  count: number;
}

export interface UdpLoadOptions {
  seconds: number;
  /** outstanding requests (one per socket) */
  concurrency: number;
  /** requests made ahead of the first run; later runs make 1.5 times what the best run so far used */
  prepared: number;
}

/**
 * A driver keeping its pool size between runs: each call runs `seconds`
 * against `ports`; `pool` overrides how many requests are made ahead (for a
 * maker with a limited stock, such as one TGT per request).
 */
export function udpLoad(o: UdpLoadOptions): (ports: number[], make: Maker, pool?: number) => Promise<UdpResult> {
  let poolSize = o.prepared;
  return async (ports, make, pool) => {
    const reqs = Array.from({ length: pool ?? poolSize }, make);
    let next = 0;
    const lat: number[] = [];
    let errors = 0;
    let running = true;
    const sockets: Array<{ s: Socket; sent: number }> = [];
    const fire = (w: { s: Socket; sent: number }) => {
      if (!running) return;
      const msg = next < reqs.length ? reqs[next++]! : make();
      w.sent = performance.now();
      w.s.send(msg);
    };
    for (let i = 0; i < o.concurrency; i++) {
      const s = createSocket('udp4');
      await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
      s.connect(ports[i % ports.length]!, '127.0.0.1');
      await new Promise<void>((r) => s.once('connect', () => r()));
      const w = { s, sent: 0 };
      s.on('message', (m) => {
        // a KRB-ERROR (application tag 30) counts as an error, not as an answer
        if (m[0] === 0x7e) errors++;
        else lat.push(performance.now() - w.sent);
        fire(w);
      });
      sockets.push(w);
    }
    for (const w of sockets) fire(w);
    // one interval timer handles lost replies (2 s), so the generator does little per request
    const watchdog = setInterval(() => {
      const t = performance.now();
      for (const w of sockets)
        if (t - w.sent > 2000) {
          errors++;
          fire(w);
        }
    }, 100);
    await new Promise((r) => setTimeout(r, o.seconds * 1000));
    running = false;
    clearInterval(watchdog);
    for (const w of sockets) w.s.close();
    lat.sort((a, b) => a - b);
    const rps = lat.length / o.seconds;
    if (pool === undefined) poolSize = Math.max(poolSize, Math.ceil(rps * o.seconds * 1.5));
    return { rps, p50: lat[Math.floor(lat.length * 0.5)] ?? NaN, p99: lat[Math.floor(lat.length * 0.99)] ?? NaN, errors, count: lat.length };
  };
}

/** AS-REQs of `user` with PA-ENC-TIMESTAMP under the key of `password` (salt: realm + user), asking for `etype` only. */
export function asPasswordMaker(user: string, realm: string, password: string, etype: number): Maker {
  const cname = { nameType: 1, nameString: [user] };
  const key = profile(etype).stringToKey(password, `${realm}${user}`);
  return () => encodeKdcReq({ msgType: 10, padata: [encTimestamp(key)], body: asReqBody(cname, realm, { etypes: [etype], nonce: randomNonce() }) });
}

/** Sends every request of `reqs` to `port` with `concurrency` outstanding (resent after 2 s unanswered) and returns the replies in order. */
export async function udpExchangeAll(port: number, reqs: Buffer[], concurrency: number): Promise<Buffer[]> {
  const replies: Buffer[] = new Array(reqs.length);
  let next = 0;
  const worker = async () => {
    const s = createSocket('udp4');
    await new Promise<void>((r) => s.bind(0, '127.0.0.1', () => r()));
    s.connect(port, '127.0.0.1');
    await new Promise<void>((r) => s.once('connect', () => r()));
    while (next < reqs.length) {
      const i = next++;
      for (;;) {
        const reply = await new Promise<Buffer | null>((r) => {
          const t = setTimeout(() => r(null), 2000);
          s.once('message', (m) => (clearTimeout(t), r(m)));
          s.send(reqs[i]!);
        });
        if (reply) {
          replies[i] = reply;
          break;
        }
        s.removeAllListeners('message');
      }
    }
    s.close();
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return replies;
}

/** The CPU time (user + system, all threads) process `pid` has used so far, in microseconds (Linux). */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name (which may hold spaces), counting from 3: utime is 14, stime 15
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / CLOCK_TICKS;
}
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
