/**
 * The server under test of the socket load (socket-load.ts), run as a child
 * process so its memory is its own: `dirid-server init` into a new
 * temporary directory, then `start` on free loopback ports with the
 * listener bounds it is given. Its log is kept only as the last lines (a
 * load run makes millions), shown when something fails. Run with
 * --expose-gc: on { type: 'memory' } it collects garbage twice and reports
 * its resident set (from /proc) and its heap; { type: 'stop' } stops the
 * server and exits.
 *   argv[2]: JSON {@link LoadServerJob}
 * Reports over IPC: { type: 'ready', ports, dataDir, realm, adminPassword },
 * { type: 'memory', rss, heapUsed, heapTotal }, { type: 'log', lines, counts }
 * (the last lines, and the lines per service word), { type: 'counts', counts },
 * or { type: 'error', message }.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { startServer, type ListenerBounds, type RunningServer } from '../../src/server/start.js';

export interface LoadServerJob {
  bounds: ListenerBounds;
  adminPassword: string;
}

export interface LoadServerPorts {
  https: number;
  http: number;
  kdc: number;
  kpasswd: number;
  ldap: number;
  ldaps: number;
}

export type LoadServerReport =
  | { type: 'ready'; ports: LoadServerPorts; dataDir: string; realm: string }
  | { type: 'memory'; rss: number; heapUsed: number; heapTotal: number }
  | { type: 'log'; lines: string[]; counts: Record<string, number> }
  | { type: 'counts'; counts: Record<string, number> }
  | { type: 'error'; message: string };

/** The resident set of this process, in bytes (VmRSS of /proc/self/status). */
export function residentBytes(pid: number | 'self' = 'self'): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

const KEPT = 200;

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]!) as LoadServerJob;
  const report = (r: LoadServerReport) => new Promise<void>((resolve) => process.send!(r, () => resolve()));
  const gc = (globalThis as { gc?: () => void }).gc;
  const lines: string[] = [];
  /** log lines per service word (kdc, rpc, ldap, KDC, kpasswd, login, ...): what the server saw */
  const counts: Record<string, number> = {};
  const log = (l: string) => {
    const word = / (\S+)/.exec(l)?.[1] ?? '?';
    counts[word] = (counts[word] ?? 0) + 1;
    lines.push(l);
    if (lines.length > 2 * KEPT) lines.splice(0, lines.length - KEPT);
  };
  let server: RunningServer | undefined;
  const stop = async () => {
    await server?.stop();
    process.exit(0);
  };
  process.on('message', (m: { type: string }) => {
    if (m.type === 'memory') {
      gc?.();
      gc?.();
      const h = process.memoryUsage();
      void report({ type: 'memory', rss: residentBytes(), heapUsed: h.heapUsed, heapTotal: h.heapTotal });
    } else if (m.type === 'log') void report({ type: 'log', lines: lines.slice(-KEPT), counts });
    else if (m.type === 'counts') void report({ type: 'counts', counts });
    else if (m.type === 'stop') void stop();
  });
  process.once('disconnect', () => void stop());
  try {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'dirid-load-')), 'realm');
    const realm = 'LOAD.TEST';
    await initRealm({ dataDir, realm, domain: 'load.test', hostname: 'localhost', adminPassword: job.adminPassword });
    server = await startServer({ dataDir, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, bounds: job.bounds, log });
    await report({
      type: 'ready',
      ports: { https: server.httpsPort, http: server.httpPort, kdc: server.kdcPort, kpasswd: server.kpasswdPort, ldap: server.ldapPort, ldaps: server.ldapsPort },
      dataDir,
      realm,
    });
  } catch (e) {
    await report({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
    await stop();
  }
}

// only as the forked child (it is also imported for its types and residentBytes)
if (process.send && process.argv[2]?.startsWith('{')) await main();
