/**
 * dirid's side of bench/ldap.ts, run as a child process of the bench (so
 * that it can be pinned to a core of its own): creates a realm in the data
 * directory it is given (as test/support/realm.ts does), starts the server
 * on free loopback ports with the LDAP service asked for on ports 0, and
 * loads the bench's users and groups (test/support/ldap-data.ts), and
 * with `hbac` the host-based access rules (test/support/hbac-data.ts), through
 * the directory's batch API, every user with the same stored scrypt hash
 * (hashing 100,000 passwords would take minutes), then the hosts, sudo
 * commands, command groups and sudo rules; it checks that the sudoRole
 * entries dirid's view makes of them are those slapd is given
 * (ldap-data.ts sudoRoleAttrs) and times the view's build (what the first
 * read after a write pays). The server's log goes to
 * standard output (the bench sends it to a file).
 *   argv[2]: JSON { dataDir, users, groups, members, hosts, rules, serve }
 * Reports to the parent over IPC: { type: 'ready', ldapsPort, ldapPort,
 * loadSeconds } and keeps serving until SIGTERM or the parent goes away;
 * { type: 'no-ldap' } when this server has no LDAP service (a RunningServer
 * without ldapsPort); with serve false, { type: 'prepared' } once loaded,
 * then it stops. { type: 'error', message } on any failure.
 */
import { randomBytes } from 'node:crypto';
import { initRealm } from '../../src/server/init.js';
import { childServer } from './child-server.js';
import { startServer, type RunningServer, type StartOptions } from '../../src/server/start.js';
import { dataPaths, readServerConfig, writeServerConfig } from '../../src/server/config.js';
import { hashPassword } from '../../src/account/password-hash.js';
import { BASE_DN, BENCH_DOMAIN, BENCH_PASSWORD, BENCH_REALM, diridGroupBatches, diridSudoBatches, diridUserBatches, memberships, sudoRoleAttrs, sudoRules, type DataSize } from './ldap-data.js';
import { buildRegistry } from '../../src/objects/index.js';
import { sudoersView } from '../../src/objects/sudo-roles.js';
import { viewSnapshot } from '../../src/framework/view.js';
import type { Directory } from '../../src/directory/types.js';
import { hbacBatches, type HbacSize } from './hbac-data.js';

/**
 * Builds the sudoRole view (timed: the median of three builds, each after a
 * write, as the first read after a write builds it) and checks it holds
 * exactly the entries the bench gives slapd.
 */
async function checkSudoView(dir: Directory, size: DataSize): Promise<number> {
  const registry = buildRegistry();
  const times: number[] = [];
  let built;
  for (let i = 0; i < 3; i++) {
    await dir.modify(dir.baseDn, [{ op: 'replace', attr: 'description', values: [`view build ${i}`] }]);
    const t0 = performance.now();
    built = await viewSnapshot(sudoersView, { dir, registry });
    times.push(performance.now() - t0);
  }
  const want = new Map(sudoRules(size).filter((r) => r.enabled).map((r) => [r.name, sudoRoleAttrs(r)]));
  const got = built!.entries.slice(1);
  if (got.length !== want.size) throw new Error(`the sudoRole view holds ${got.length} entries, slapd is given ${want.size}`);
  for (const e of got) {
    const { createTimestamp: _c, modifyTimestamp: _m, entryUSN: _u, ...attrs } = e.attrs;
    const w = want.get(attrs.cn?.[0] ?? '');
    if (JSON.stringify(attrs) !== JSON.stringify(w)) throw new Error(`sudoRole ${e.dn} differs: dirid ${JSON.stringify(attrs)}, slapd ${JSON.stringify(w)}`);
  }
  return times.sort((a, b) => a - b)[1]!;
}

export type DiridReport =
  | { type: 'ready'; ldapsPort: number; ldapPort: number; loadSeconds: number; viewBuildMs: number }
  | { type: 'prepared'; loadSeconds: number; viewBuildMs: number }
  | { type: 'no-ldap' }
  | { type: 'error'; message: string };

export interface DiridJob extends DataSize {
  dataDir: string;
  serve: boolean;
  /** store_cache_mb for the realm's server.conf (default: the server's own) */
  cacheMb?: number;
  /** host-based access data (hbac-data.ts), the server's own host (host/localhost, the bench's asking host) in a host group */
  hbac?: HbacSize;
}

const report = (r: DiridReport) => new Promise<void>((resolve) => process.send!(r, () => resolve()));

const job = JSON.parse(process.argv[2]!) as DiridJob;
const child = childServer();
const stop = () => child.stop();

try {
  // an ID range of its own below the bench's numbers, so no ID is taken twice
  await initRealm({ dataDir: job.dataDir, realm: BENCH_REALM, domain: BENCH_DOMAIN, hostname: 'localhost', adminPassword: randomBytes(16).toString('base64url'), idStart: 10_000 });
  if (job.cacheMb !== undefined) {
    const paths = dataPaths(job.dataDir);
    writeServerConfig(paths, { ...readServerConfig(paths), storeCacheMb: job.cacheMb });
  }
  // the LDAP ports are options of the server that has the LDAP service; this one may not know them yet
  const options: StartOptions & { ldapPort?: number; ldapsPort?: number } = { dataDir: job.dataDir, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0 };
  const server = (child.server = await startServer(options));
  const ports = server as RunningServer & { ldapsPort?: number; ldapPort?: number };
  if (job.serve && !('ldapsPort' in server)) {
    await report({ type: 'no-ldap' });
    await stop();
  }
  const t0 = performance.now();
  const hash = await hashPassword(BENCH_PASSWORD);
  for (const ops of diridUserBatches(job, hash)) await server.dir.batch(ops);
  for (const ops of diridGroupBatches(memberships(job))) await server.dir.batch(ops);
  for (const ops of diridSudoBatches(job, sudoRules(job))) await server.dir.batch(ops);
  // the sudo rules' data above added the hosts (host0…): the access rules' data names the same ones
  if (job.hbac) for (const ops of hbacBatches({ ...job, ...job.hbac }, [`fqdn=localhost,cn=computers,cn=accounts,${BASE_DN}`], job.hosts >= job.hbac.hosts)) await server.dir.batch(ops);
  const loadSeconds = (performance.now() - t0) / 1000;
  const viewBuildMs = await checkSudoView(server.dir, job);
  if (!job.serve) {
    await report({ type: 'prepared', loadSeconds, viewBuildMs });
    await stop();
  }
  await report({ type: 'ready', ldapsPort: ports.ldapsPort!, ldapPort: ports.ldapPort!, loadSeconds, viewBuildMs });
} catch (e) {
  await report({ type: 'error', message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  await stop();
}
