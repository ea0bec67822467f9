/**
 * `dirid-server restore` (docs/backup.md): a data directory made from a
 * backup file (backup.ts), on this machine or another. Every member is
 * checked against the manifest (name, size, SHA-256) as it is unpacked into
 * a staging directory inside the target, then the whole: server.conf reads,
 * the master key is one, and the SQLite store passes its integrity check
 * with every sealed secret opening under that master key
 * (directory/sqlite-backup.ts). Only then do the files take their places.
 * A target that holds a realm is refused unless `--force`, and a target a
 * running server holds (server.lock) is refused always. On failure nothing
 * is left: the staging directory goes, and so does a target made for it.
 */
import { chmodSync, closeSync, createReadStream, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, readSync, renameSync, rmSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { hostname as machineName } from 'node:os';
import { join, resolve, basename } from 'node:path';
import type { Readable } from 'node:stream';
import { checkSqliteStore } from '../directory/sqlite-backup.js';
import { backupKind, BackupFormatError, FORMAT, FORMAT_VERSION, MANIFEST, openBackupStream, readUstar, type Manifest, type ManifestFile } from './backup-archive.js';
import { backupFiles, BackupError, PG_DUMP_MEMBER, STORE_MEMBER } from './backup.js';
import { dataPaths, readProblem, readServerConfig, shownDatabase } from './config.js';
import { lockDataDir } from './data-lock.js';
import { SERVER_VERSION } from './version.js';

export interface RestoreOptions {
  in: string;
  dataDir: string;
  passphrase?: string;
  /** replace the realm the target holds */
  force?: boolean;
}

/** The longest manifest read. */
const MAX_MANIFEST = 1024 * 1024;

/** The names a backup's members may have: the files backup.ts archives. */
function memberNames(): Set<string> {
  const names = new Set(backupFiles(dataPaths('/')).map(([f]) => basename(f)));
  names.add(STORE_MEMBER);
  names.add(PG_DUMP_MEMBER);
  return names;
}

/** The manifest, checked: our format, a version we read, each member once with a name we write. */
function parseManifest(text: string): Manifest {
  let m: Manifest;
  try {
    m = JSON.parse(text) as Manifest;
  } catch {
    throw new BackupFormatError('not a dirid backup (its manifest is not JSON)');
  }
  if (!m || m.format !== FORMAT || typeof m.version !== 'number') throw new BackupFormatError('not a dirid backup (no dirid-backup manifest)');
  if (m.version > FORMAT_VERSION) throw new BackupFormatError(`the backup is of format ${m.version}, newer than this dirid-server reads (${FORMAT_VERSION}): restore it with dirid-server ${m.serverVersion ?? 'of its version'}`);
  const allowed = memberNames();
  const seen = new Set<string>();
  if (!Array.isArray(m.files)) throw new BackupFormatError('not a dirid backup (its manifest lists no files)');
  for (const f of m.files) {
    if (!f || typeof f.name !== 'string' || !allowed.has(f.name) || seen.has(f.name) || !Number.isSafeInteger(f.size) || f.size < 0 || !/^[0-9a-f]{64}$/.test(String(f.sha256)) || !Number.isInteger(f.mode)) {
      throw new BackupFormatError(`not a dirid backup (its manifest lists ${JSON.stringify(String(f?.name).slice(0, 100))} wrongly)`);
    }
    seen.add(f.name);
  }
  for (const needed of ['server.conf', 'master.key', 'ca.crt', 'ca.key', 'server.crt', 'server.key']) {
    if (!seen.has(needed)) throw new BackupFormatError(`the backup lacks ${needed}`);
  }
  if (m.store === 'sqlite' && !seen.has(STORE_MEMBER)) throw new BackupFormatError(`the backup lacks the store (${STORE_MEMBER})`);
  if (typeof m.realm !== 'string' || typeof m.created !== 'string') throw new BackupFormatError('not a dirid backup (its manifest names no realm)');
  return m;
}

/** Which of a realm's files `dir` holds (empty: no realm there). */
function realmFilesIn(dir: string): string[] {
  return ['server.conf', 'master.key', STORE_MEMBER].filter((f) => existsSync(join(dir, f)));
}

/** Unpacks and checks the backup into `staging`; returns its manifest. */
async function unpack(file: string, passphrase: string | undefined, staging: string): Promise<Manifest> {
  let head = Buffer.alloc(32);
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (e) {
    throw new BackupError(`cannot read ${file} (${readProblem(e)})`);
  }
  try {
    head = head.subarray(0, readSync(fd, head, 0, head.length, 0));
  } finally {
    closeSync(fd);
  }
  const stream = await openBackupStream(createReadStream(file), backupKind(head), passphrase);
  try {
    return await unpackStream(stream, staging);
  } catch (e) {
    if (e instanceof BackupFormatError || e instanceof BackupError) throw e;
    // what the decryption (a chunk that does not authenticate) or gunzip (a changed or missing byte) found
    throw new BackupFormatError(`the backup is damaged (${e instanceof Error ? e.message : String(e)})`);
  }
}

async function unpackStream(stream: Readable, staging: string): Promise<Manifest> {
  let manifest: Manifest | undefined;
  let next = 0;
  await readUstar(stream, async (h, body) => {
    if (!manifest) {
      if (h.name !== MANIFEST || h.size > MAX_MANIFEST) throw new BackupFormatError('not a dirid backup (it does not begin with its manifest)');
      const parts: Buffer[] = [];
      for await (const c of body) parts.push(c);
      manifest = parseManifest(Buffer.concat(parts).toString('utf8'));
      return;
    }
    const want: ManifestFile | undefined = manifest.files[next++];
    if (!want || want.name !== h.name || want.size !== h.size) throw new BackupFormatError(`the backup holds ${h.name}, which its manifest does not list there`);
    const path = join(staging, h.name);
    const hash = createHash('sha256');
    const out = openSync(path, 'wx', 0o600);
    try {
      // written as each piece comes, synchronously: a damaged stream that ends a member half way leaves no write
      // queued behind it on a descriptor the finally has closed (a stream writer's would fail later, uncaught)
      for await (const c of body) {
        hash.update(c);
        for (let at = 0; at < c.length; ) at += writeSync(out, c, at, c.length - at);
      }
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    if (hash.digest('hex') !== want.sha256) throw new BackupFormatError(`${h.name} in the backup does not match its manifest (damaged)`);
  });
  if (!manifest) throw new BackupFormatError('not a dirid backup (empty)');
  if (next !== manifest.files.length) throw new BackupFormatError(`the backup lacks ${manifest.files[next]!.name}, which its manifest lists`);
  return manifest;
}

/** Restores; `say` gets what the command prints. */
export async function restoreRealm(o: RestoreOptions, say: (line: string) => void): Promise<void> {
  const file = resolve(o.in);
  const target = resolve(o.dataDir);
  if (existsSync(target) && !statSync(target).isDirectory()) throw new BackupError(`${target} is not a directory`);
  const existing = existsSync(target) ? realmFilesIn(target) : [];
  if (existing.length > 0 && !o.force) {
    throw new BackupError(`${target} holds a realm (${existing.join(', ')}): restore does not replace it; give --force to replace it with the backup's`);
  }
  const made = !existsSync(target);
  if (made) mkdirSync(target, { recursive: true, mode: 0o700 });
  let lock;
  try {
    // a server running on the target is refused (its lock), --force or not
    lock = lockDataDir(target);
  } catch (e) {
    if (made) rmSync(target, { recursive: true, force: true });
    throw e;
  }
  const staging = join(target, `.restore-${process.pid}`);
  try {
    mkdirSync(staging, { mode: 0o700 });
    const manifest = await unpack(file, o.passphrase, staging);
    const stagedPaths = dataPaths(staging);
    const masterKey = readFileSync(stagedPaths.masterKey);
    if (masterKey.length !== 32) throw new BackupError('the backup\'s master.key is not a 32-byte key');
    const config = readServerConfig(stagedPaths);
    let storeLine: string;
    if (manifest.store === 'sqlite') {
      const check = checkSqliteStore(join(staging, STORE_MEMBER), masterKey);
      if (check.problems.length > 0) throw new BackupError(`the backup's store fails its check: ${check.problems.slice(0, 5).join('; ')}`);
      storeLine = `${check.entries} entries, ${check.secrets} sealed secrets that open with its master key; integrity check: ok`;
    } else storeLine = '';
    for (const f of manifest.files) chmodSync(join(staging, f.name), f.mode & 0o755);
    if (existing.length > 0) {
      // --force: the old realm's files go, the backup's take their places
      for (const name of [...memberNames(), `${STORE_MEMBER}-wal`, `${STORE_MEMBER}-shm`]) {
        try {
          unlinkSync(join(target, name));
        } catch {
          /* not there */
        }
      }
    }
    for (const f of manifest.files) renameSync(join(staging, f.name), join(target, f.name));
    rmSync(staging, { recursive: true, force: true });
    say(`dirid-server: restored realm ${manifest.realm} into ${target} from the backup of ${manifest.hostname} taken at ${manifest.created} (dirid ${manifest.serverVersion})`);
    if (storeLine) say(`dirid-server: store: ${storeLine}`);
    else if (manifest.files.some((f) => f.name === PG_DUMP_MEMBER)) {
      say(`dirid-server: store: the realm's entries are in PostgreSQL (${shownDatabase(config.database ?? '')}); the backup's dump is ${join(target, PG_DUMP_MEMBER)}.`);
      say(`dirid-server: load it into an empty database before start: pg_restore --no-owner --dbname=URL ${join(target, PG_DUMP_MEMBER)}, and name that database in server.conf's database`);
    } else {
      say(`dirid-server: store: the realm's entries are in PostgreSQL (${shownDatabase(config.database ?? '')}), which the backup does not hold: restore that database from its own dump (pg_restore) before start`);
    }
    if (manifest.serverVersion !== SERVER_VERSION) say(`dirid-server: the backup was taken by dirid ${manifest.serverVersion}; this is ${SERVER_VERSION}`);
    if (config.hostname !== machineName().toLowerCase()) {
      say(`dirid-server: the realm's server is named ${config.hostname} (its principals and certificate carry that name): this machine must answer to it`);
    }
    say(`dirid-server: start it with: dirid-server start --data-dir ${target}`);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    lock.release();
    lock = undefined;
    if (made) rmSync(target, { recursive: true, force: true });
    throw e instanceof BackupFormatError ? new BackupError(e.message) : e;
  } finally {
    lock?.release();
  }
}
