/**
 * The socket load (docs/load.md), shared by the long run
 * (scripts/socket-load.ts) and the short one in the suite
 * (test/server/socket-load.test.ts): a real dirid server in a child process
 * (socket-load-server.ts) gets, through its sockets, random and mutated
 * KDC and kpasswd messages (UDP datagrams and TCP frames), malformed HTTP
 * requests (pipelined on keep-alive TLS connections: bad request lines,
 * headers and bodies, mutated JSON-RPC and XML-RPC bodies, cookies and
 * Negotiate tokens) and malformed LDAP messages (mutated BER), the mutated
 * ones from the fuzz seeds and mutators of test/fuzz; then slow clients (a
 * byte at a time) on every TCP listener, connections opened and left
 * silent past each limit, clients that never read their answers, and
 * lengths announcing gigabytes. Before and after, it measures the rate of
 * correct requests (AS-REQs with a password, API user-show, LDAP searches)
 * and the server's resident memory after a GC; at the end the seeded
 * entries, the entry count and SQLite's integrity check. Every figure is
 * reported; a failure is a sentence in the report's list.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync, rmSync } from 'node:fs';
import { connect as tcpConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { asPasswordMaker, udpLoad } from './kdc-load.js';
import { LdapClient } from './ldap-load-client.js';
import { DEFAULT_TCP_LIMITS } from '../../src/kdc/listener.js';
import { ResultCode } from '../../src/ldap/codes.js';
import { encodeMessage } from '../../src/ldap/protocol.js';
import { DEFAULT_API_MAX_CONNECTIONS, DEFAULT_LDAP_LIMITS } from '../../src/server/config.js';
import { DEFAULT_HTTPS_TIMEOUTS, type ListenerBounds } from '../../src/server/start.js';
import { parseDer } from '../../src/kerberos/asn1/der.js';
import { inputs } from '../fuzz/harness.js';
import { corpus, targetNamed } from '../fuzz/targets.js';
import { prng } from './prng.js';
import { RpcSession } from './rpc-client.js';
import { residentBytes, type LoadServerJob, type LoadServerPorts, type LoadServerReport } from './socket-load-server.js';
import { addActiveUser } from './realm.js';

const MiB = 1024 * 1024;
const ADMIN_PASSWORD = 'Load-admin-123';
const PROBE_PASSWORD = 'Probe-pass-123';
const FUZZER_PASSWORD = 'Fuzzer-pass-123';
const SEEDED = 20;

export interface SocketLoadOptions {
  /** messages of each kind: KDC (UDP and TCP, with kpasswd), HTTP requests, LDAP messages */
  count: number;
  /** seconds of each rate measurement */
  measureSeconds: number;
  seed: number;
  /** the server's bounds (its defaults where not given) */
  bounds: ListenerBounds;
  /** the rate after must be at least this share of the rate before (or the server's CPU per request at most its inverse) */
  minRateRatio: number;
  /** whether that comparison is a failure, or only reported (the short run's windows are too short to judge by) */
  judgeRates: boolean;
  /** resident memory after may exceed idle by at most the larger of these */
  rssSlackBytes: number;
  rssSlackRatio: number;
  /** connections opened past each listener's limit and left silent */
  halfOpenExtra: number;
  out(line: string): void;
}

export const DEFAULT_OPTIONS: Omit<SocketLoadOptions, 'out'> = {
  count: 1_000_000,
  measureSeconds: 10,
  seed: 1,
  bounds: {},
  minRateRatio: 0.9,
  judgeRates: true,
  rssSlackBytes: 30 * MiB,
  rssSlackRatio: 0.2,
  halfOpenExtra: 64,
};

/** Time-outs of a few seconds, for the suite's short run (and the script's --short-timeouts). */
export const SHORT_BOUNDS: ListenerBounds = {
  kdcTcp: { messageMs: 2000, idleMs: 5000 },
  ldap: { pduTimeout: 2, idleTimeout: 5 },
  https: { handshakeMs: 2000, headersMs: 2000, requestMs: 4000, bodyMs: 3000 },
  httpMs: 2000,
};

export interface SocketLoadReport {
  failures: string[];
  figures: Record<string, number | string>;
}

// ---------------------------------------------------------------- the server

class ServerChild {
  private readonly waiters: Array<(r: LoadServerReport) => void> = [];
  exited: string | undefined;
  private constructor(readonly child: ChildProcess) {
    child.on('message', (r: LoadServerReport) => this.waiters.shift()?.(r));
    child.on('exit', (code, signal) => {
      this.exited = `the server exited (code ${code}, signal ${signal})`;
      for (const w of this.waiters.splice(0)) w({ type: 'error', message: this.exited });
    });
  }

  static async start(job: LoadServerJob): Promise<{ server: ServerChild; ready: Extract<LoadServerReport, { type: 'ready' }> }> {
    const file = join(fileURLToPath(new URL('.', import.meta.url)), 'socket-load-server.ts');
    const child = fork(file, [JSON.stringify(job)], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const server = new ServerChild(child);
    const ready = await server.next();
    if (ready.type !== 'ready') throw new Error(`the server did not start: ${'message' in ready ? ready.message : ready.type}`);
    return { server, ready };
  }

  private next(): Promise<LoadServerReport> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  async ask<T extends LoadServerReport['type']>(type: T): Promise<Extract<LoadServerReport, { type: T }>> {
    if (this.exited) throw new Error(this.exited);
    const answer = this.next();
    this.child.send({ type });
    const r = await answer;
    if (r.type !== type) throw new Error(`the server answered ${r.type}: ${'message' in r ? r.message : ''}`);
    return r as Extract<LoadServerReport, { type: T }>;
  }

  /** log lines the server has written so far: one per message it processed, and a few more */
  async lines(): Promise<number> {
    const c = (await this.ask('counts')).counts;
    return Object.values(c).reduce((a, b) => a + b, 0);
  }

  /** Waits until the server has written no log line for a second (at most `maxMs`); returns how long that took. */
  async quiet(maxMs = 60_000): Promise<number> {
    const t0 = performance.now();
    let last = await this.lines();
    let still = 0;
    while (still < 2 && performance.now() - t0 < maxMs) {
      await sleep(500);
      const now = await this.lines();
      still = now === last ? still + 1 : 0;
      last = now;
    }
    return performance.now() - t0;
  }

  /** resident bytes now, without a GC */
  rss(): number {
    return residentBytes(this.child.pid!);
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = ev(this.child, 'exit');
    this.child.send({ type: 'stop' });
    await Promise.race([gone, sleep(10_000)]);
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/** Resolves on the event (never rejects: an 'error' is the close that follows). */
const ev = (e: { once(name: string, f: () => void): unknown }, name: string) => new Promise<void>((resolve) => e.once(name, () => resolve()));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const mib = (b: number) => (b / MiB).toFixed(1);

/**
 * Keeps the senders of a flood at most `window` messages ahead of the
 * server, counted by its log lines (one per message it processes): what a
 * full socket buffer drops tests nothing. When the count stops moving the
 * server is idle: what is missing was dropped all the same, or answered
 * without a line, and the senders go on.
 */
export class Pacer {
  private base = 0;
  private first = 0;
  private seen = 0;
  private asking: Promise<number> | undefined;
  sent = 0;
  constructor(
    private readonly server: ServerChild,
    private readonly window: number,
  ) {}

  async start(): Promise<void> {
    this.base = this.first = await this.server.lines();
  }

  /** Log lines the server wrote since start, once it is quiet: about the messages it processed. */
  async lines(): Promise<number> {
    await this.server.quiet(30_000);
    return (await this.server.lines()) - this.first;
  }

  private processed(): Promise<number> {
    this.asking ??= this.server.lines().then((n) => {
      this.asking = undefined;
      return (this.seen = n - this.base);
    });
    return this.asking;
  }

  /** After a connection closed: what was sent on it and not processed never will be. */
  async settle(): Promise<void> {
    await sleep(5);
    const seen = await this.processed();
    if (this.sent > seen) this.base -= this.sent - seen;
    this.seen = this.sent;
  }

  /** Counts `n` messages sent and waits while the server is too far behind. */
  async sent_(n: number): Promise<void> {
    this.sent += n;
    if (this.sent - this.seen <= this.window) return;
    let last = -1;
    let since = performance.now();
    while (this.sent - (await this.processed()) > this.window) {
      if (this.seen !== last) {
        last = this.seen;
        since = performance.now();
      } else if (performance.now() - since > 30) {
        // no line for a while: the server is idle, so what is missing was dropped (or answered without a line)
        this.base -= this.sent - this.seen - this.window;
        return;
      }
      await sleep(2);
    }
  }
}

// ---------------------------------------------------------------- inputs

/** Mutated inputs of fuzz targets: a pool made with the fuzz harness, each taken with a fresh byte flip or two, and random bytes. */
export class Mutants {
  private readonly pools = new Map<string, Buffer[]>();
  constructor(
    private readonly rnd: (n: number) => number,
    private readonly poolSize: number,
    private readonly seed: number,
  ) {}

  pool(name: string): Buffer[] {
    let p = this.pools.get(name);
    if (!p) {
      const target = targetNamed(name)!;
      p = fc.sample(inputs(target, corpus(target)), { numRuns: this.poolSize, seed: this.seed });
      this.pools.set(name, p);
    }
    return p;
  }

  seeds(name: string): Buffer[] {
    return corpus(targetNamed(name)!);
  }

  /** One input: mostly a mutant of `name` flipped anew, sometimes random bytes of up to `maxRandom`. */
  next(name: string, maxRandom = 300): Buffer {
    const r = this.rnd;
    if (r(10) === 0) return this.random(r(maxRandom + 1));
    const p = this.pool(name);
    // never the pool's input as it is: a message seen before may be answered from a cache, not decoded again
    return this.flip(p[r(p.length)]!, 1);
  }

  /** A copy with up to two bits flipped (at least `least`). */
  flip(b: Buffer, least = 0): Buffer {
    const r = this.rnd;
    const out = Buffer.from(b);
    for (let i = Math.max(least, r(3)); i > 0 && out.length; i--) out[r(out.length)] ^= 1 << r(8);
    return out;
  }

  random(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.rnd(256);
    return b;
  }
}

function frame4(msg: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(msg.length);
  return Buffer.concat([len, msg]);
}

function berLength(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const octets: number[] = [];
  for (let l = n; l > 0; l = Math.floor(l / 256)) octets.unshift(l & 0xff);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

const tlv = (tag: number, content: Buffer) => Buffer.concat([Buffer.from([tag]), berLength(content.length), content]);

// ---------------------------------------------------------------- correct requests

/** Correct requests per second (the best window), the server's CPU microseconds per request, and the failures. */
interface Rates {
  kdc: number;
  kdcCpu: number;
  kdcErrors: number;
  api: number;
  apiCpu: number;
  apiErrors: number;
  ldap: number;
  ldapCpu: number;
  ldapErrors: number;
}

export interface Realm {
  ports: LoadServerPorts;
  realm: string;
  baseDn: string;
  probe: RpcSession;
  fuzzerCookie: string;
}

const probeDn = (r: Realm) => `uid=probe,cn=users,cn=accounts,${r.baseDn}`;

/** CPU seconds (user and system) a process has used, from /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the line, in clock ticks of 1/100 s
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/**
 * Each kind of correct request for `seconds`, in three windows: the rate is
 * the best window's (the machine's other work lowers a window, never raises
 * it), the server's CPU per request the total's.
 */
async function measureRates(r: Realm, seconds: number, pid: number): Promise<Rates> {
  const out = { kdc: 0, kdcCpu: 0, kdcErrors: 0, api: 0, apiCpu: 0, apiErrors: 0, ldap: 0, ldapCpu: 0, ldapErrors: 0 };
  const kinds: Array<['kdc' | 'api' | 'ldap', (s: number) => Promise<{ ok: number; errors: number }>]> = [
    ['kdc', (s) => kdcRate(r, s)],
    ['api', (s) => apiRate(r, s)],
    ['ldap', (s) => ldapRate(r, s)],
  ];
  for (const [k, run] of kinds) {
    let ok = 0;
    let cpu = 0;
    for (let i = 0; i < 3; i++) {
      const c0 = cpuSeconds(pid);
      const w = await run(seconds / 3);
      cpu += cpuSeconds(pid) - c0;
      ok += w.ok;
      out[`${k}Errors`] += w.errors;
      out[k] = Math.max(out[k], w.ok / (seconds / 3));
    }
    out[`${k}Cpu`] = ok ? (cpu / ok) * 1e6 : Infinity;
  }
  return out;
}

/** The share of one core the server uses over 2 s while nobody talks to it: work it does on its own. */
async function idleCpuShare(pid: number): Promise<number> {
  const c0 = cpuSeconds(pid);
  await sleep(2000);
  return (cpuSeconds(pid) - c0) / 2;
}

async function kdcRate(r: Realm, seconds: number): Promise<{ ok: number; errors: number }> {
  const k = await udpLoad({ seconds, concurrency: 4, prepared: 2000 })([r.ports.kdc], asPasswordMaker('probe', r.realm, PROBE_PASSWORD, 18));
  return { ok: k.count, errors: k.errors };
}

async function apiRate(r: Realm, seconds: number): Promise<{ ok: number; errors: number }> {
  let ok = 0;
  let errors = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 4 }, async (_, i) => {
      while (performance.now() < until) {
        try {
          const { response } = await r.probe.raw('user_show', [`seed-${i % SEEDED}`]);
          if (response.error) errors++;
          else ok++;
        } catch {
          errors++;
        }
      }
    }),
  );
  return { ok, errors };
}

async function ldapRate(r: Realm, seconds: number): Promise<{ ok: number; errors: number }> {
  const c = await LdapClient.connect(`ldap://127.0.0.1:${r.ports.ldap}`);
  await c.bindOrThrow(probeDn(r), PROBE_PASSWORD);
  let ok = 0;
  let errors = 0;
  let running = true;
  let i = 0;
  const spin = () => {
    if (!running || c.broken) return;
    c.search({ base: `cn=users,cn=accounts,${r.baseDn}`, filter: { kind: 'eq', attr: 'uid', value: `seed-${i++ % SEEDED}` }, attributes: ['uid', 'cn'] }, (o) => {
      if (o.resultCode === ResultCode.success && o.entries === 1) ok++;
      else errors++;
      spin();
    });
  };
  for (let k = 0; k < 8; k++) spin();
  await sleep(seconds * 1000);
  running = false;
  c.close();
  return { ok, errors };
}

// ---------------------------------------------------------------- the floods

/** Random and mutated datagrams and TCP frames to the KDC and the password service. */
export async function floodKdc(r: Realm, m: Mutants, count: number, rnd: (n: number) => number, fig: Record<string, number | string>, pacer: Pacer): Promise<void> {
  await pacer.start();
  const kdcTargets = ['krb-kdc-req', 'krb-kdc-req', 'krb-kdc-req', 'krb-fast', 'krb-pkinit', 'krb-padata', 'krb-ap-req'];
  const body = (port: 'kdc' | 'kpasswd') => (port === 'kpasswd' ? m.next('kpasswd') : m.next(kdcTargets[rnd(kdcTargets.length)]!));
  let udpSent = 0;
  let udpAnswers = 0;
  let tcpSent = 0;
  let tcpAnswerBytes = 0;
  let tcpConnections = 0;
  const udpShare = Math.floor(count / 2);
  // UDP: two sockets, each sending to its port in bursts, answers only counted
  const udp = async (port: 'kdc' | 'kpasswd', n: number) => {
    const s: UdpSocket = createSocket('udp4');
    s.on('message', () => udpAnswers++);
    s.on('error', () => {});
    await new Promise<void>((res) => s.bind(0, '127.0.0.1', () => res()));
    s.connect(r.ports[port], '127.0.0.1');
    await ev(s, 'connect');
    for (let sent = 0; sent < n; ) {
      const burst = Math.min(32, n - sent);
      let pending = burst;
      await new Promise<void>((res) => {
        for (let i = 0; i < burst; i++)
          s.send(body(port), () => {
            if (--pending === 0) res();
          });
      });
      sent += burst;
      udpSent += burst;
      await pacer.sent_(burst);
    }
    s.close();
  };
  // TCP: a few connections per port, frames written in batches; a refused length ends a connection and a new one follows
  const tcp = async (port: 'kdc' | 'kpasswd', n: number) => {
    let sent = 0;
    while (sent < n) {
      const s = tcpConnect(r.ports[port], '127.0.0.1');
      tcpConnections++;
      s.on('error', () => {});
      s.on('data', (d: Buffer) => (tcpAnswerBytes += d.length));
      const closed = ev(s, 'close');
      await Promise.race([ev(s, 'connect'), closed]);
      while (sent < n && !s.destroyed && s.writable) {
        const frames: Buffer[] = [];
        for (let i = 0; i < 64 && sent + frames.length < n; i++) {
          const f = frame4(body(port));
          // now and then a length prefix mutated too (a refusal ends the connection)
          if (rnd(200) === 0) f[rnd(4)] ^= 1 << rnd(8);
          frames.push(f);
        }
        sent += frames.length;
        tcpSent += frames.length;
        if (!s.write(Buffer.concat(frames))) await Promise.race([ev(s, 'drain'), closed]);
        await pacer.sent_(frames.length);
      }
      s.destroy();
    }
  };
  const t0 = performance.now();
  const tcpShare = count - udpShare;
  await Promise.all([
    udp('kdc', Math.ceil(udpShare * 0.8)),
    udp('kpasswd', udpShare - Math.ceil(udpShare * 0.8)),
    tcp('kdc', Math.ceil(tcpShare * 0.4)),
    tcp('kdc', Math.ceil(tcpShare * 0.4)),
    tcp('kpasswd', tcpShare - 2 * Math.ceil(tcpShare * 0.4)),
  ]);
  const s = (performance.now() - t0) / 1000;
  Object.assign(fig, {
    'kdc.server_log_lines': await pacer.lines(),
    'kdc.udp_sent': udpSent,
    'kdc.udp_answers': udpAnswers,
    'kdc.tcp_frames_sent': tcpSent,
    'kdc.tcp_answer_bytes': tcpAnswerBytes,
    'kdc.tcp_connections': tcpConnections,
    'kdc.seconds': s.toFixed(1),
    'kdc.messages_per_s': Math.round((udpSent + tcpSent) / s),
  });
}

/** Malformed HTTP requests, pipelined on keep-alive connections (TLS to the API, a few in clear to the redirect). */
export async function floodHttp(r: Realm, m: Mutants, count: number, rnd: (n: number) => number, fig: Record<string, number | string>): Promise<void> {
  const host = `localhost:${r.ports.https}`;
  const referer = `https://${host}/dirid/`;
  const req = (method: string, path: string, headers: string[], body: Buffer = Buffer.alloc(0), length = true) =>
    Buffer.concat([Buffer.from(`${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n${headers.map((h) => `${h}\r\n`).join('')}${length ? `Content-Length: ${body.length}\r\n` : ''}\r\n`, 'latin1'), body]);
  const cookieSeeds = m.seeds('session-cookie');
  /** a request the server reads whole and answers, keeping the connection */
  const soft = (): Buffer => {
    switch (rnd(9)) {
      case 0:
      case 1:
        return req('POST', '/dirid/session/json', ['Content-Type: application/json', `Referer: ${referer}`, `Cookie: ${r.fuzzerCookie}`], m.next('json-rpc'));
      case 2:
      case 3:
        return req('POST', '/dirid/session/xml', ['Content-Type: text/xml', `Referer: ${referer}`, `Cookie: ${r.fuzzerCookie}`], m.next('xml-rpc'));
      case 4:
        return req('POST', '/dirid/json', ['Content-Type: application/json', `Referer: ${referer}`, `Authorization: Negotiate ${m.next('http-negotiate').toString('base64')}`], Buffer.from('{"method":"ping","params":[[],{}],"id":1}'));
      case 5: {
        // what a header may carry (anything else is the parser's, tried by the hard requests)
        const c = (rnd(2) ? m.flip(cookieSeeds[rnd(cookieSeeds.length)]!) : m.next('http-cookie')).toString('latin1').replace(/[^\x20-\x7e]/g, '');
        return req('POST', '/dirid/session/json', ['Content-Type: application/json', `Referer: ${referer}`, `Cookie: dirid_session=${c}`], Buffer.from('{"method":"ping","params":[[],{}],"id":1}'));
      }
      case 6:
        return req('POST', '/dirid/session/json', ['Content-Type: application/json', `Referer: https://evil.example/${rnd(1000)}`, `Cookie: ${r.fuzzerCookie}`], m.next('json-rpc'));
      case 7:
        return req(['GET', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'HEAD', 'TRACE'][rnd(7)]!, ['/', '/dirid', '/dirid/x/../json', '/%00%ff', `/dirid/session/json?${'a'.repeat(rnd(2000))}`, '//', '/dirid/session/login_kerberos'][rnd(7)]!, [`Referer: ${referer}`]);
      default:
        return req('POST', ['/dirid/session/xml', '/dirid/xml', '/nope', '/dirid/session/login_kerberos'][rnd(4)]!, ['Content-Type: text/xml', `X-Junk: ${m.random(rnd(40)).toString('base64')}`], m.next('xml-rpc'));
    }
  };
  /** a request the parser refuses (or one that ends the connection): the last of a batch */
  const hard = (): Buffer => {
    switch (rnd(10)) {
      case 0:
        return Buffer.concat([m.random(rnd(200)), Buffer.from('\r\n\r\n')]);
      case 1:
        return Buffer.from(`GET / HTTP/9.9\r\nHost: ${host}\r\n\r\n`);
      case 2:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nNo colon here\r\n\r\n`);
      case 3:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'x'.repeat(40 * 1024)}\r\n\r\n`);
      case 4:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello`);
      case 5:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n`);
      case 6:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 4294967296\r\nReferer: ${referer}\r\n\r\n`);
      case 7:
        return Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: ${host}\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n`);
      case 8:
        return Buffer.from(`GET /\0 HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      default:
        return Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
    }
  };
  let sent = 0;
  let answers = 0;
  let connections = 0;
  const BATCH = 100;
  const loop = async (clear: boolean, n: () => boolean) => {
    while (n()) {
      const s: Socket = clear ? tcpConnect(r.ports.http, '127.0.0.1') : tlsConnect({ host: '127.0.0.1', port: r.ports.https, rejectUnauthorized: false });
      connections++;
      s.on('error', () => {});
      let text = '';
      let mine = 0;
      let wake = () => {};
      s.on('data', (d: Buffer) => {
        // status lines counted across chunk boundaries: what follows the last one found is kept for the next chunk
        text += d.toString('latin1');
        const status = /HTTP\/1\.1 \d{3} /g;
        let end = 0;
        for (let hit = status.exec(text); hit; hit = status.exec(text)) {
          mine++;
          answers++;
          end = status.lastIndex;
        }
        text = text.slice(Math.max(end, text.length - 16));
        wake();
      });
      const closed = ev(s, 'close');
      await Promise.race([ev(s, clear ? 'connect' : 'secureConnect'), closed]);
      const batch: Buffer[] = [];
      for (let i = 0; i < (clear ? 0 : BATCH - 1); i++) batch.push(soft());
      // the parser reads ahead: a request it refuses ends the connection before the answers to those queued before
      // it, so the one that ends it goes alone once the others are answered
      const last = hard();
      sent += batch.length + 1;
      const answered = (n: number) => new Promise<void>((resolve) => (wake = () => mine >= n && resolve()));
      if (batch.length && !s.destroyed) {
        const all = answered(batch.length);
        s.write(Buffer.concat(batch));
        await Promise.race([closed, all, sleep(30_000)]);
      }
      if (!s.destroyed) {
        const one = answered(batch.length + 1);
        s.write(last);
        await Promise.race([closed, one, sleep(30_000)]);
      }
      s.destroy();
    }
  };
  const t0 = performance.now();
  const tls = Math.floor(count * 0.99);
  await Promise.all([...Array.from({ length: 4 }, () => loop(false, () => sent < tls)), loop(true, () => sent < count)]);
  const s = (performance.now() - t0) / 1000;
  Object.assign(fig, { 'http.sent': sent, 'http.answers': answers, 'http.connections': connections, 'http.seconds': s.toFixed(1), 'http.requests_per_s': Math.round(sent / s) });
}

/** Malformed LDAP messages: mostly PDUs framed right around a mutated operation (answered, the connection kept), some wholly mutated or random (which end it). */
export async function floodLdap(r: Realm, m: Mutants, count: number, rnd: (n: number) => number, fig: Record<string, number | string>, pacer: Pacer): Promise<void> {
  await pacer.start();
  // the requests among the seeds, cut into messageID, operation and controls
  const parts = m
    .seeds('ldap-message')
    .map((b) => {
      try {
        const n = parseDer(b);
        return n.children.length >= 2 ? { op: n.children[1]!.raw, controls: n.children[2]?.raw } : undefined;
      } catch {
        return undefined;
      }
    })
    .filter((p): p is NonNullable<typeof p> => p !== undefined && [0x60, 0x63, 0x66, 0x68, 0x4a, 0x6c, 0x6e, 0x77, 0x50].includes(p.op[0]!));
  let id = 1;
  const framed = (): Buffer => {
    const p = parts[rnd(parts.length)]!;
    const mid = tlv(0x02, Buffer.from([0x00, (id = (id % 0x7fff) + 1) >> 8, id & 0xff]));
    // the operation's tag kept, its content mutated, every length recomputed
    const n = (() => {
      try {
        return parseDer(p.op);
      } catch {
        return undefined;
      }
    })();
    const content = m.flip(n ? n.content : p.op.subarray(2), 1);
    const mutated = rnd(3) === 0 ? Buffer.concat([content, m.random(rnd(16))]) : content;
    const op = tlv(p.op[0]!, mutated);
    const controls = p.controls && rnd(4) === 0 ? m.flip(p.controls) : Buffer.alloc(0);
    return tlv(0x30, Buffer.concat([mid, op, controls]));
  };
  const message = (): Buffer => {
    const k = rnd(1000);
    if (k < 985) return framed();
    if (k < 995) return m.next('ldap-message');
    return m.random(rnd(64));
  };
  let sent = 0;
  let answerBytes = 0;
  let connections = 0;
  const loop = async (tls: boolean, quota: number) => {
    let mine = 0;
    while (mine < quota) {
      const s: Socket = tls ? tlsConnect({ host: '127.0.0.1', port: r.ports.ldaps, rejectUnauthorized: false }) : tcpConnect(r.ports.ldap, '127.0.0.1');
      connections++;
      s.on('error', () => {});
      s.on('data', (d: Buffer) => (answerBytes += d.length));
      const closed = ev(s, 'close');
      await Promise.race([ev(s, tls ? 'secureConnect' : 'connect'), closed]);
      while (mine < quota && !s.destroyed && s.writable) {
        const batch: Buffer[] = [];
        for (let i = 0; i < 16 && mine + batch.length < quota; i++) batch.push(message());
        mine += batch.length;
        sent += batch.length;
        if (!s.write(Buffer.concat(batch))) await Promise.race([ev(s, 'drain'), closed]);
        await pacer.sent_(batch.length);
      }
      s.destroy();
      await pacer.settle();
    }
  };
  const t0 = performance.now();
  const per = Math.ceil(count / 4);
  await Promise.all([loop(false, per), loop(false, per), loop(false, per), loop(true, count - 3 * per)]);
  const s = (performance.now() - t0) / 1000;
  Object.assign(fig, { 'ldap.server_log_lines': await pacer.lines(), 'ldap.sent': sent, 'ldap.answer_bytes': answerBytes, 'ldap.connections': connections, 'ldap.seconds': s.toFixed(1), 'ldap.messages_per_s': Math.round(sent / s) });
}

// ---------------------------------------------------------------- slow, silent and greedy clients

interface SlowCase {
  name: string;
  port: number;
  /** TLS first (the slow part comes after the handshake) */
  tls?: boolean;
  /** the bytes it trickles */
  bytes: Buffer;
  /** the bound it must be dropped within, ms */
  limitMs: number;
}

/** Sends a byte every `everyMs` until the server closes; resolves with how long that took (Infinity past `giveUpMs`). */
async function slowClient(c: SlowCase, everyMs: number, giveUpMs: number): Promise<number> {
  const s: Socket = c.tls ? tlsConnect({ host: '127.0.0.1', port: c.port, rejectUnauthorized: false }) : tcpConnect(c.port, '127.0.0.1');
  s.on('error', () => {});
  s.on('data', () => {});
  const closed = ev(s, 'close');
  await Promise.race([ev(s, c.tls ? 'secureConnect' : 'connect'), closed]);
  const t0 = performance.now();
  let i = 0;
  const timer = setInterval(() => {
    if (!s.destroyed && s.writable) s.write(c.bytes.subarray(i % c.bytes.length, (i % c.bytes.length) + 1));
    i++;
  }, everyMs);
  const r = await Promise.race([closed.then(() => performance.now() - t0), sleep(giveUpMs).then(() => Infinity)]);
  clearInterval(timer);
  s.destroy();
  return r;
}

function slowCases(r: Realm, b: Required<Pick<ListenerBounds, 'httpMs'>> & { kdcMessageMs: number; ldapPduMs: number; handshakeMs: number; headersMs: number }): SlowCase[] {
  const kdcFrame = Buffer.concat([Buffer.from([0, 0, 1, 0]), Buffer.alloc(256, 0x30)]);
  return [
    { name: 'kdc tcp', port: r.ports.kdc, bytes: kdcFrame, limitMs: b.kdcMessageMs },
    { name: 'kpasswd tcp', port: r.ports.kpasswd, bytes: kdcFrame, limitMs: b.kdcMessageMs },
    { name: 'ldap', port: r.ports.ldap, bytes: Buffer.concat([Buffer.from([0x30, 0x82, 0x01, 0x00]), Buffer.alloc(256, 0x04)]), limitMs: b.ldapPduMs },
    { name: 'ldaps (handshake)', port: r.ports.ldaps, bytes: Buffer.from('16030102000100', 'hex'), limitMs: b.ldapPduMs },
    { name: 'https (handshake)', port: r.ports.https, bytes: Buffer.from('16030102000100', 'hex'), limitMs: b.handshakeMs },
    { name: 'https (headers)', port: r.ports.https, tls: true, bytes: Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(4000)}`), limitMs: b.headersMs },
    { name: 'http (headers)', port: r.ports.http, bytes: Buffer.from(`GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(4000)}`), limitMs: b.httpMs },
  ];
}

/** Opens `n` connections to a port and leaves them silent; returns them (to close later). */
async function silent(port: number, n: number): Promise<Socket[]> {
  const out: Socket[] = [];
  for (let i = 0; i < n; i += 32) {
    const group = Array.from({ length: Math.min(32, n - i) }, () => {
      const s = tcpConnect(port, '127.0.0.1');
      s.on('error', () => {});
      s.on('data', () => {});
      out.push(s);
      return Promise.race([ev(s, 'connect'), ev(s, 'close'), sleep(5000)]);
    });
    await Promise.all(group);
  }
  return out;
}

/** A connection that writes requests and never reads an answer. */
function greedy(port: number, tls: boolean, payload: Buffer, times: number): Socket {
  const s: Socket = tls ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : tcpConnect(port, '127.0.0.1');
  s.on('error', () => {});
  s.once(tls ? 'secureConnect' : 'connect', () => {
    s.pause();
    for (let i = 0; i < times && !s.destroyed; i++) s.write(payload);
  });
  return s;
}

/** A correct AS exchange over TCP to `port` (password pre-authentication as `user`): an AS-REP (application tag 11) comes back within 5 s. */
export async function asOverTcp(port: number, realm: string, user: string, password: string): Promise<boolean> {
  const s = tcpConnect(port, '127.0.0.1');
  s.on('error', () => {});
  let got = Buffer.alloc(0);
  const answered = new Promise<boolean>((resolve) => {
    s.on('data', (d: Buffer) => {
      got = Buffer.concat([got, d]);
      if (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) resolve(got[4] === 0x6b);
    });
    s.on('close', () => resolve(false));
    setTimeout(() => resolve(false), 5000);
  });
  s.write(frame4(asPasswordMaker(user, realm, password, 18)()));
  const ok = await answered;
  s.destroy();
  return ok;
}

async function ldapWorks(r: Realm): Promise<boolean> {
  try {
    const c = await LdapClient.connect(`ldap://127.0.0.1:${r.ports.ldap}`);
    await c.bindOrThrow(probeDn(r), PROBE_PASSWORD);
    const ok = await new Promise<boolean>((resolve) => c.search({ base: '', scope: 'baseObject', filter: { kind: 'present', attr: 'objectClass' }, attributes: ['namingContexts'] }, (o) => resolve(o.resultCode === ResultCode.success && o.entries === 1)));
    c.close();
    return ok;
  } catch {
    return false;
  }
}

async function apiWorks(r: Realm): Promise<boolean> {
  try {
    const { response } = await r.probe.raw('ping');
    return !response.error;
  } catch {
    return false;
  }
}

/** A message announcing gigabytes: answered or closed quickly, and nothing like its size kept. */
async function giant(port: number, tls: boolean, bytes: Buffer): Promise<{ ms: number; answered: boolean; closed: boolean }> {
  const s: Socket = tls ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }) : tcpConnect(port, '127.0.0.1');
  s.on('error', () => {});
  let answered = false;
  const answer = new Promise<void>((resolve) =>
    s.on('data', () => {
      answered = true;
      resolve();
    }),
  );
  const closed = ev(s, 'close');
  await Promise.race([ev(s, tls ? 'secureConnect' : 'connect'), closed]);
  const t0 = performance.now();
  s.write(bytes);
  const done = await Promise.race([closed.then(() => true), answer.then(() => false), sleep(5000).then(() => false)]);
  const ms = performance.now() - t0;
  s.destroy();
  return { ms, answered, closed: done };
}

// ---------------------------------------------------------------- the run

interface Bounds {
  kdcMessageMs: number;
  kdcMax: number;
  ldapPduMs: number;
  ldapMax: number;
  httpsMax: number;
  handshakeMs: number;
  headersMs: number;
  httpMs: number;
}

/** The three floods of `count` messages each, then connections held past each limit while correct clients are tried. */
async function attack(server: ServerChild, r: Realm, m: Mutants, count: number, rnd: (n: number) => number, bounds: Bounds, halfOpenExtra: number, fig: Record<string, number | string>, show: (k: string, v: number | string) => void, failures: string[]): Promise<void> {
  await floodKdc(r, m, count, rnd, fig, new Pacer(server, 128));
  await floodHttp(r, m, count, rnd, fig);
  await floodLdap(r, m, count, rnd, fig, new Pacer(server, 64));
  if (server.exited) throw new Error(server.exited);
  // silent connections past each limit, and clients that never read
  const held: Socket[] = [];
  held.push(...(await silent(r.ports.kdc, bounds.kdcMax + halfOpenExtra)));
  held.push(...(await silent(r.ports.kpasswd, bounds.kdcMax + halfOpenExtra)));
  held.push(...(await silent(r.ports.ldap, bounds.ldapMax + halfOpenExtra)));
  held.push(...(await silent(r.ports.ldaps, halfOpenExtra)));
  held.push(...(await silent(r.ports.https, bounds.httpsMax + 4 * halfOpenExtra)));
  held.push(...(await silent(r.ports.http, halfOpenExtra)));
  const kdcGarbage = frame4(Buffer.from('6a0330010a', 'hex'));
  const rootDse = encodeMessage({ messageId: 7, protocolOp: { op: 'searchRequest', baseObject: '', scope: 'baseObject', derefAliases: 'neverDerefAliases', sizeLimit: 0, timeLimit: 0, typesOnly: false, filter: { kind: 'present', attr: 'objectClass' }, attributes: ['*', '+'] } });
  const getRoot = Buffer.from(`GET / HTTP/1.1\r\nHost: localhost\r\n\r\n`);
  for (let i = 0; i < 8; i++) {
    held.push(greedy(r.ports.kdc, false, kdcGarbage, 20_000));
    held.push(greedy(r.ports.ldap, false, rootDse, 20_000));
    held.push(greedy(r.ports.https, true, getRoot, 20_000));
  }
  await sleep(1000);
  const works = { kdcTcp: await asOverTcp(r.ports.kdc, r.realm, 'probe', PROBE_PASSWORD), ldap: await ldapWorks(r), api: await apiWorks(r) };
  show('held.connections', held.length);
  show('held.rss_mib', mib(server.rss()));
  show('held.kdc_tcp_correct_client', works.kdcTcp ? 'served' : 'NOT served');
  show('held.ldap_correct_client', works.ldap ? 'served' : 'NOT served');
  show('held.api_correct_client', works.api ? 'served' : 'NOT served');
  for (const [k, v] of Object.entries(works)) if (!v) failures.push(`a correct ${k} client was not served while connections were held open`);
  for (const s of held) s.destroy();
  await server.quiet();
}

export async function socketLoad(o: SocketLoadOptions): Promise<SocketLoadReport> {
  const failures: string[] = [];
  const fig: Record<string, number | string> = {};
  const show = (k: string, v: number | string) => {
    fig[k] = v;
    o.out(`${k.padEnd(36)} ${v}`);
  };
  const rnd = prng(o.seed);
  const bounds: Bounds = {
    kdcMessageMs: o.bounds.kdcTcp?.messageMs ?? DEFAULT_TCP_LIMITS.messageMs,
    kdcMax: o.bounds.kdcTcp?.maxConnections ?? DEFAULT_TCP_LIMITS.maxConnections,
    ldapPduMs: (o.bounds.ldap?.pduTimeout ?? DEFAULT_LDAP_LIMITS.pduTimeout) * 1000,
    ldapMax: o.bounds.ldap?.maxConnections ?? DEFAULT_LDAP_LIMITS.maxConnections,
    httpsMax: o.bounds.httpsMaxConnections ?? DEFAULT_API_MAX_CONNECTIONS,
    handshakeMs: o.bounds.https?.handshakeMs ?? DEFAULT_HTTPS_TIMEOUTS.handshakeMs,
    headersMs: o.bounds.https?.headersMs ?? DEFAULT_HTTPS_TIMEOUTS.headersMs,
    httpMs: o.bounds.httpMs ?? 10_000,
  };
  const { server, ready } = await ServerChild.start({ bounds: o.bounds, adminPassword: ADMIN_PASSWORD });
  const pid = server.child.pid!;
  const integrityDb = join(ready.dataDir, 'dirid.db');
  try {
    const base = `https://localhost:${ready.ports.https}`;
    const caPem = readFileSync(join(ready.dataDir, 'ca.crt'), 'utf8');
    const admin = new RpcSession(base, caPem);
    if ((await admin.login('admin', ADMIN_PASSWORD)).status !== 200) throw new Error('admin login failed');
    for (const [u, pw] of [
      ['probe', PROBE_PASSWORD],
      ['fuzzer', FUZZER_PASSWORD],
    ] as const)
      await addActiveUser(admin, u, pw, { first: u, last: 'Load' });
    for (let i = 0; i < SEEDED; i++) await admin.call('user_add', [`seed-${i}`], { first: `Seed${i}`, last: 'Load', email: [`seed-${i}@load.test`] });
    const probe = new RpcSession(base, caPem);
    if ((await probe.login('probe', PROBE_PASSWORD)).status !== 200) throw new Error('probe login failed');
    const fuzzer = new RpcSession(base, caPem);
    if ((await fuzzer.login('fuzzer', FUZZER_PASSWORD)).status !== 200) throw new Error('fuzzer login failed');
    const r: Realm = { ports: ready.ports, realm: ready.realm, baseDn: 'dc=load,dc=test', probe, fuzzerCookie: fuzzer.cookie! };
    const seededBefore = await Promise.all(Array.from({ length: SEEDED }, (_, i) => admin.call('user_show', [`seed-${i}`], { all: true })));
    const countBefore = (await admin.call('user_find', [], { sizelimit: 0 })).count as number;

    const m = new Mutants(rnd, Math.min(5000, Math.max(500, Math.floor(o.count / 50))), o.seed);
    for (const t of ['krb-kdc-req', 'krb-fast', 'krb-pkinit', 'krb-padata', 'krb-ap-req', 'kpasswd', 'json-rpc', 'xml-rpc', 'http-negotiate', 'http-cookie', 'ldap-message']) m.pool(t);

    // ---- warm-up: a tenth of the load once, so that what the allocator keeps after any load is in the idle figure
    const scratch: Record<string, number | string> = {};
    await attack(server, r, m, Math.max(2000, Math.floor(o.count / 10)), rnd, bounds, o.halfOpenExtra, scratch, () => {}, failures);
    const before = await measureRates(r, o.measureSeconds, pid);
    await server.quiet();
    const idleCpu = await idleCpuShare(pid);
    const idle = await server.ask('memory');
    show('before.kdc_as_req_per_s', Math.round(before.kdc));
    show('before.api_user_show_per_s', Math.round(before.api));
    show('before.ldap_search_per_s', Math.round(before.ldap));
    show('before.cpu_us_per_request', `kdc ${before.kdcCpu.toFixed(0)} api ${before.apiCpu.toFixed(0)} ldap ${before.ldapCpu.toFixed(0)}`);
    show('idle.rss_mib', mib(idle.rss));
    show('idle.server_cpu_percent', (idleCpu * 100).toFixed(1));
    show('idle.heap_used_mib', mib(idle.heapUsed));
    if (before.kdcErrors || before.apiErrors || before.ldapErrors) failures.push(`correct requests failed before the load: kdc ${before.kdcErrors}, api ${before.apiErrors}, ldap ${before.ldapErrors}`);

    // ---- slow clients, alongside the floods
    const every = (limit: number) => Math.max(50, Math.min(1000, Math.floor(limit / 4)));
    const slackMs = 3000;
    const slow = slowCases(r, bounds).map(async (c) => ({ c, ms: await slowClient(c, every(c.limitMs), c.limitMs + slackMs + 5000) }));

    // ---- the load
    let peak = 0;
    const watch = setInterval(() => {
      if (!server.exited) peak = Math.max(peak, server.rss());
    }, 200);
    const t0 = performance.now();
    await attack(server, r, m, o.count, rnd, bounds, o.halfOpenExtra, fig, show, failures);
    for (const k of Object.keys(fig).filter((k) => /^(kdc|http|ldap)\./.test(k))) o.out(`${k.padEnd(36)} ${fig[k]}`);
    show('load.seconds', ((performance.now() - t0) / 1000).toFixed(0));
    const kdcMessages = (fig['kdc.udp_sent'] as number) + (fig['kdc.tcp_frames_sent'] as number);
    if (kdcMessages < o.count) failures.push(`only ${kdcMessages} KDC messages sent`);
    if ((fig['http.sent'] as number) < o.count) failures.push(`only ${fig['http.sent']} HTTP requests sent`);
    if ((fig['ldap.sent'] as number) < o.count) failures.push(`only ${fig['ldap.sent']} LDAP messages sent`);
    for (const { c, ms } of await Promise.all(slow)) {
      show(`slow.${c.name.replace(/\W+/g, '_').replace(/_$/, '')}_closed_after_ms`, Number.isFinite(ms) ? Math.round(ms) : 'never');
      if (!(ms <= c.limitMs + slackMs)) failures.push(`slow client on ${c.name} not dropped within ${c.limitMs} ms (+${slackMs} ms): ${Number.isFinite(ms) ? Math.round(ms) : 'never'}`);
    }

    // ---- lengths announcing gigabytes
    const rssBeforeGiants = server.rss();
    const giants: Array<[string, number, boolean, Buffer]> = [
      ['kdc tcp 2 GiB', r.ports.kdc, false, Buffer.from('7fffffff30', 'hex')],
      ['kdc tcp 4 GiB', r.ports.kdc, false, Buffer.from('ffffffff30', 'hex')],
      ['kpasswd tcp 2 GiB', r.ports.kpasswd, false, Buffer.from('7fffffff0001', 'hex')],
      ['ldap 4 GiB', r.ports.ldap, false, Buffer.from('3084ffffffff020101', 'hex')],
      ['ldap 8-octet length', r.ports.ldap, false, Buffer.from('3088ffffffffffffffff', 'hex')],
      ['ldaps 4 GiB', r.ports.ldaps, true, Buffer.from('3084ffffffff020101', 'hex')],
      ['https content-length 4 GiB', r.ports.https, true, Buffer.from(`POST /dirid/session/json HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4294967296\r\n\r\n{`)],
    ];
    for (const [name, port, tls, bytes] of giants) {
      let worst = 0;
      let unanswered = 0;
      for (let i = 0; i < 20; i++) {
        const g = await giant(port, tls, bytes);
        worst = Math.max(worst, g.ms);
        if (!g.answered && !g.closed) unanswered++;
      }
      show(`giant.${name.replace(/\W+/g, '_')}_worst_ms`, Math.round(worst));
      if (unanswered) failures.push(`${name}: ${unanswered} of 20 neither answered nor closed within 5 s`);
    }
    const rssAfterGiants = server.rss();
    show('giant.rss_growth_mib', mib(rssAfterGiants - rssBeforeGiants));
    if (rssAfterGiants - rssBeforeGiants > 16 * MiB) failures.push(`lengths announcing gigabytes grew the server by ${mib(rssAfterGiants - rssBeforeGiants)} MiB`);

    // ---- after
    clearInterval(watch);
    show('load.peak_rss_mib', mib(peak));
    show('after.settle_ms', Math.round(await server.quiet()));
    show('after.idle_server_cpu_percent', ((await idleCpuShare(pid)) * 100).toFixed(1));
    const after = await server.ask('memory');
    show('after.rss_mib', mib(after.rss));
    show('after.heap_used_mib', mib(after.heapUsed));
    const rssBound = idle.rss + Math.max(o.rssSlackBytes, o.rssSlackRatio * idle.rss);
    show('after.rss_bound_mib', `${mib(rssBound)} (idle + max(${mib(o.rssSlackBytes)} MiB, ${Math.round(o.rssSlackRatio * 100)}%))`);
    if (after.rss > rssBound) failures.push(`resident memory did not return near idle: ${mib(after.rss)} MiB after, idle ${mib(idle.rss)} MiB, bound ${mib(rssBound)} MiB`);
    if (after.heapUsed > idle.heapUsed + 16 * MiB) failures.push(`the heap after a GC grew from ${mib(idle.heapUsed)} to ${mib(after.heapUsed)} MiB`);
    const later = await measureRates(r, o.measureSeconds, pid);
    show('after.kdc_as_req_per_s', Math.round(later.kdc));
    show('after.api_user_show_per_s', Math.round(later.api));
    show('after.ldap_search_per_s', Math.round(later.ldap));
    show('after.cpu_us_per_request', `kdc ${later.kdcCpu.toFixed(0)} api ${later.apiCpu.toFixed(0)} ldap ${later.ldapCpu.toFixed(0)}`);
    for (const k of ['kdc', 'api', 'ldap'] as const) {
      const ratio = later[k] / before[k];
      // the server's CPU per request, before over after: what the load could have worsened, whatever else the machine runs
      const cpuRatio = before[`${k}Cpu`] / later[`${k}Cpu`];
      show(`ratio.${k}`, `rate ${ratio.toFixed(2)}, cpu per request ${cpuRatio.toFixed(2)}`);
      if (!(later[k] > 0)) failures.push(`no correct ${k} request was answered after the load`);
      if (o.judgeRates && !(ratio >= o.minRateRatio) && !(cpuRatio >= o.minRateRatio))
        failures.push(`${k}: after the load, ${Math.round(later[k])}/s against ${Math.round(before[k])}/s (${ratio.toFixed(2)}) and ${later[`${k}Cpu`].toFixed(0)} µs of server CPU per request against ${before[`${k}Cpu`].toFixed(0)} (${cpuRatio.toFixed(2)}), both under ${o.minRateRatio}`);
    }
    if (later.kdcErrors || later.apiErrors || later.ldapErrors) failures.push(`correct requests failed after the load: kdc ${later.kdcErrors}, api ${later.apiErrors}, ldap ${later.ldapErrors}`);

    // ---- the store
    const seededAfter = await Promise.all(Array.from({ length: SEEDED }, (_, i) => admin.call('user_show', [`seed-${i}`], { all: true })));
    const changed = seededAfter.filter((e, i) => JSON.stringify(e) !== JSON.stringify(seededBefore[i])).length;
    const countAfter = (await admin.call('user_find', [], { sizelimit: 0 })).count as number;
    show('store.seeded_entries_changed', changed);
    show('store.users_before_after', `${countBefore} ${countAfter}`);
    if (changed) failures.push(`${changed} seeded entries changed`);
    if (countAfter !== countBefore) failures.push(`the number of users went from ${countBefore} to ${countAfter}`);
    const counts = (await server.ask('log')).counts;
    show('server.log_lines', Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 8).map(([k, v]) => `${k}=${v}`).join(' '));
  } catch (e) {
    failures.push(`the run stopped: ${e instanceof Error ? e.message : String(e)}`);
    try {
      if (!server.exited) o.out((await server.ask('log')).lines.slice(-20).join('\n'));
    } catch {
      /* the server is gone */
    }
  } finally {
    await server.stop();
  }
  try {
    const db = new Database(integrityDb, { readonly: true, fileMustExist: true });
    const verdict = db.pragma('integrity_check', { simple: true });
    db.close();
    show('store.integrity_check', String(verdict));
    if (verdict !== 'ok') failures.push(`SQLite integrity_check: ${String(verdict)}`);
  } catch (e) {
    failures.push(`the store could not be checked: ${e instanceof Error ? e.message : String(e)}`);
  }
  rmSync(join(ready.dataDir, '..'), { recursive: true, force: true });
  return { failures, figures: fig };
}
