/**
 * A throw-away PostgreSQL cluster for one test file: initdb into a temporary
 * directory owned by the unprivileged `postgres` user (tests run as root;
 * as any other user the cluster is simply theirs), started with pg_ctl on
 * a free loopback port with its socket in that directory, trust
 * authentication (loopback only) and no fsync. It never touches the
 * machine's own clusters or /etc/postgresql. Each test takes a database of
 * its own from {@link createDatabase}; {@link stopPostgres} (registered with
 * `after` by whoever starts it, and on process exit as a last resort)
 * stops the cluster and removes the directory. {@link startReplicatedPostgres}
 * starts instead a primary and a hot standby streaming from it
 * (synchronously when asked), for failover tests: the primary can be
 * stopped at once and the standby promoted.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PgCluster {
  /** the cluster's data directory (what is at rest) */
  readonly dataDir: string;
  readonly port: number;
  /** a connection string for `database` as the superuser */
  url(database: string): string;
}

const ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin directory; undefined without one. */
export function postgresBin(): string | undefined {
  if (!existsSync(ROOT)) return undefined;
  const versions = readdirSync(ROOT)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? join(ROOT, versions[0]!, 'bin') : undefined;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** The clusters this process started (one, or a primary and its standby), all in one temporary directory. */
let running: { dir: string; run: (cmd: string, args: string[]) => void; bin: string; dataDirs: string[] } | undefined;

/** Runs a server program as the cluster's owner. */
function runner(owner: { uid: number; gid: number } | undefined): (cmd: string, args: string[]) => void {
  return (cmd, args) => {
    const [file, argv] = owner ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    const r = spawnSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
}

/** The temporary directory, owned by the cluster's user, and the runner (one set of clusters per process). */
function prepare(): NonNullable<typeof running> {
  if (running) throw new Error('a test cluster is already running');
  const bin = postgresBin();
  if (!bin) throw new Error(`no PostgreSQL server under ${ROOT} (scripts/install-deps.sh installs it)`);
  const dir = mkdtempSync(join(tmpdir(), 'dirid-pg-'));
  let owner: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    owner = { uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })) };
    chownSync(dir, owner.uid, owner.gid);
  }
  chmodSync(dir, 0o700);
  running = { dir, run: runner(owner), bin, dataDirs: [] };
  return running;
}

const BASE_OPTIONS = ['-c listen_addresses=127.0.0.1', '-c fsync=off', '-c shared_buffers=32MB', '-c max_connections=40'];
/** the same with every commit on disk (benches comparing durable commits) */
const DURABLE_OPTIONS = BASE_OPTIONS.filter((o) => o !== '-c fsync=off');

export interface PgOptions {
  /** keep fsync, synchronous commit and full-page writes on (benches comparing durable commits); tests leave them off */
  durable?: boolean;
}

/** pg_ctl start of an initialised data directory on a free loopback port (a port taken meanwhile is tried again). */
async function startCluster(r: NonNullable<typeof running>, name: string, options: string[]): Promise<PgCluster> {
  const dataDir = join(r.dir, name);
  const log = join(r.dir, `${name}.log`);
  if (!r.dataDirs.includes(dataDir)) r.dataDirs.push(dataDir);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    try {
      r.run(join(r.bin, 'pg_ctl'), ['-D', dataDir, '-l', log, '-w', '-t', '60', '-o', [`-p ${port}`, `-k ${r.dir}`, ...options].join(' '), 'start']);
    } catch (e) {
      if (attempt < 3) continue;
      throw new Error(`${(e as Error).message}\n${existsSync(log) ? readFileSync(log, 'utf8') : ''}`);
    }
    return { dataDir, port, url: (database) => `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}` };
  }
}

function initdb(r: NonNullable<typeof running>, name: string): void {
  r.run(join(r.bin, 'initdb'), ['-D', join(r.dir, name), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
}

/** Starts the cluster (one per process). */
export async function startPostgres(o: PgOptions = {}): Promise<PgCluster> {
  const r = prepare();
  try {
    initdb(r, 'data');
    return await startCluster(r, 'data', o.durable ? DURABLE_OPTIONS : [...BASE_OPTIONS, '-c synchronous_commit=off', '-c full_page_writes=off']);
  } catch (e) {
    stopPostgres();
    throw e;
  }
}

export interface ReplicatedPostgres {
  primary: PgCluster;
  /** made with pg_basebackup -R from the primary; streams its WAL as a hot standby */
  standby: PgCluster;
  /** pg_ctl stop -m immediate of the primary: gone at once, as in a crash */
  stopPrimary(): void;
  /** pg_ctl promote of the standby, waiting until it takes writes */
  promoteStandby(): void;
}

/**
 * A primary configured for streaming replication (wal_level=replica, WAL
 * senders, a trust replication entry for 127.0.0.1 in pg_hba.conf) and a
 * hot standby made from it with pg_basebackup -R (one set per process,
 * stopped with {@link stopPostgres}). With `synchronous`, the primary names
 * the standby in synchronous_standby_names and commits wait until the
 * standby has the commit's WAL on disk; this returns once the standby is
 * streaming (synchronously when asked).
 */
export async function startReplicatedPostgres(o: { synchronous?: boolean } = {}): Promise<ReplicatedPostgres> {
  const r = prepare();
  try {
    initdb(r, 'primary');
    appendFileSync(join(r.dir, 'primary', 'pg_hba.conf'), 'host replication all 127.0.0.1/32 trust\n');
    const replication = ['-c wal_level=replica', '-c max_wal_senders=5', '-c hot_standby=on', '-c synchronous_commit=on', '-c full_page_writes=on'];
    const primary = await startCluster(r, 'primary', [...BASE_OPTIONS, ...replication]);
    r.run(join(r.bin, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', join(r.dir, 'standby'), '-R', '-X', 'stream', '--no-sync']);
    // the standby's WAL receiver introduces itself by its cluster name, which synchronous_standby_names names
    const standby = await startCluster(r, 'standby', [...BASE_OPTIONS, ...replication, '-c cluster_name=standby']);
    const admin = new pg.Client({ connectionString: primary.url('postgres') });
    await admin.connect();
    try {
      if (o.synchronous) {
        await admin.query("ALTER SYSTEM SET synchronous_standby_names = 'standby'");
        await admin.query('SELECT pg_reload_conf()');
      }
      const want = o.synchronous ? 'sync' : 'async';
      for (const started = Date.now(); ; ) {
        const rows = (await admin.query<{ state: string; sync_state: string }>("SELECT state, sync_state FROM pg_stat_replication WHERE application_name = 'standby'")).rows;
        if (rows.some((x) => x.state === 'streaming' && x.sync_state === want)) break;
        if (Date.now() - started > 30_000) throw new Error(`the standby is not streaming (${want}): ${JSON.stringify(rows)}`);
        await new Promise((res) => setTimeout(res, 100));
      }
    } finally {
      await admin.end();
    }
    return {
      primary,
      standby,
      stopPrimary: () => r.run(join(r.bin, 'pg_ctl'), ['-D', primary.dataDir, '-m', 'immediate', '-w', 'stop']),
      promoteStandby: () => r.run(join(r.bin, 'pg_ctl'), ['-D', standby.dataDir, '-w', '-t', '60', 'promote']),
    };
  } catch (e) {
    stopPostgres();
    throw e;
  }
}

/** Stops the clusters at once and removes their directory (nothing to keep: the tests are done with them). */
export function stopPostgres(): void {
  if (!running) return;
  const { dir, dataDirs, run, bin } = running;
  running = undefined;
  for (const dataDir of dataDirs) {
    if (!existsSync(join(dataDir, 'postmaster.pid'))) continue;
    try {
      run(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
    } catch {
      // already gone
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

process.on('exit', stopPostgres);

let databases = 0;

/** A new empty database in the cluster; its connection string. */
export async function createDatabase(cluster: PgCluster, prefix = 'test'): Promise<string> {
  const name = `${prefix}_${process.pid}_${++databases}`;
  const admin = new pg.Client({ connectionString: cluster.url('postgres') });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  return cluster.url(name);
}
