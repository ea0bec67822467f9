/**
 * One dirid server of bench/servers.ts, run as a child process of the bench
 * (so it can be pinned to a core and its CPU read from /proc): makes its
 * data directory, either a new realm (`initRealm`, in SQLite or in the
 * PostgreSQL database it is given) or another server of an existing realm
 * on PostgreSQL (`prepareReplica` from that realm's first data directory),
 * then starts it on free loopback ports. Its log goes to standard output
 * (the bench sends it to a file). Every statement its PostgreSQL pool
 * sends is counted (node-postgres's Client.query, through which the pool's
 * queries go), so the bench can report round trips per request.
 *   argv[2]: JSON {@link ServerJob}
 * Reports to the parent over IPC: { type: 'ready', httpsPort, kdcPort },
 * or { type: 'error', message }; answers { type: 'count' } with
 * { type: 'count', statements }. Serves until SIGTERM or the parent goes away.
 */
import pg from 'pg';
import { initRealm } from '../../src/server/init.js';
import { prepareReplica } from '../../src/server/replica.js';
import { childServer } from './child-server.js';
import { startServer } from '../../src/server/start.js';

export interface ServerJob {
  dataDir: string;
  hostname: string;
  realm: string;
  domain: string;
  adminPassword: string;
  /** the realm's PostgreSQL database (a new realm); SQLite without it */
  database?: string;
  /** the data directory of the realm's first server: this one is another server of that realm */
  replicaOf?: string;
}

export type ServerReport = { type: 'ready'; httpsPort: number; kdcPort: number } | { type: 'count'; statements: number } | { type: 'error'; message: string };

const report = (r: ServerReport) => new Promise<void>((resolve) => process.send!(r, () => resolve()));

let statements = 0;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  statements++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const job = JSON.parse(process.argv[2]!) as ServerJob;
const child = childServer();
const stop = () => child.stop();
process.on('message', (m: { type: string }) => {
  if (m.type === 'count') void report({ type: 'count', statements });
});

try {
  if (job.replicaOf) await prepareReplica({ dataDir: job.replicaOf, hostname: job.hostname, out: job.dataDir });
  else await initRealm({ dataDir: job.dataDir, realm: job.realm, domain: job.domain, hostname: job.hostname, adminPassword: job.adminPassword, ...(job.database ? { database: job.database } : {}) });
  const server = (child.server = await startServer({ dataDir: job.dataDir, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0 }));
  await report({ type: 'ready', httpsPort: server.httpsPort, kdcPort: server.kdcPort });
} catch (e) {
  await report({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  await stop();
}
