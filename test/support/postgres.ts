/**
 * A throw-away PostgreSQL cluster for one test file: initdb into a temporary
 * directory owned by the unprivileged `postgres` user (tests run as root;
 * as any other user the cluster is simply theirs), started with pg_ctl on
 * a free loopback port with its socket in that directory, trust
 * authentication (loopback only) and no fsync (unless asked to be durable,
 * as a bench comparing commits is). It never touches the
 * machine's own clusters or /etc/postgresql. Each test takes a database of
 * its own from {@link createDatabase}; {@link stopPostgres} (registered with
 * `after` by whoever starts it, and on process exit as a last resort)
 * stops the cluster and removes the directory.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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

let running: { dir: string; dataDir: string; run: (cmd: string, args: string[]) => void; bin: string } | undefined;

/** Runs a server program as the cluster's owner. */
function runner(owner: { uid: number; gid: number } | undefined): (cmd: string, args: string[]) => void {
  return (cmd, args) => {
    const [file, argv] = owner ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
    const r = spawnSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  };
}

export interface PgOptions {
  /** keep fsync, synchronous commit and full-page writes on (benches comparing durable commits); tests leave them off */
  durable?: boolean;
}

/** Starts the cluster (one per process). */
export async function startPostgres(o: PgOptions = {}): Promise<PgCluster> {
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
  const dataDir = join(dir, 'data');
  const run = runner(owner);
  running = { dir, dataDir, run, bin };
  try {
    run(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions']);
    // a port another process takes between our check and the start is tried again
    for (let attempt = 0; ; attempt++) {
      const port = await freePort();
      const durability = o.durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off'];
      const opts = [`-p ${port}`, `-k ${dir}`, '-c listen_addresses=127.0.0.1', ...durability, '-c shared_buffers=32MB', '-c max_connections=40'].join(' ');
      try {
        run(join(bin, 'pg_ctl'), ['-D', dataDir, '-l', join(dir, 'log'), '-w', '-t', '60', '-o', opts, 'start']);
      } catch (e) {
        if (attempt < 3) continue;
        throw new Error(`${(e as Error).message}\n${existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : ''}`);
      }
      return { dataDir, port, url: (database) => `postgresql://postgres@127.0.0.1:${port}/${encodeURIComponent(database)}` };
    }
  } catch (e) {
    stopPostgres();
    throw e;
  }
}

/** Stops the cluster at once and removes its directory (nothing to keep: the tests are done with it). */
export function stopPostgres(): void {
  if (!running) return;
  const { dir, dataDir, run, bin } = running;
  running = undefined;
  if (existsSync(join(dataDir, 'postmaster.pid'))) {
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
