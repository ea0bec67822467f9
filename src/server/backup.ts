/**
 * `dirid-server backup` (docs/backup.md): one file with everything a
 * restore needs, taken while the server serves. The SQLite store is copied
 * by SQLite's online backup (directory/sqlite-backup.ts: one consistent
 * snapshot, every write acknowledged before it began included) and the copy
 * checked (integrity, every sealed secret opens with the master key) before
 * it is archived; the data directory's files go with it: server.conf, the
 * master key, the CA, the server's and the KDC's certificates and keys,
 * host.keytab and the client files. A realm on PostgreSQL gets everything
 * but the database, and a word on how to dump that; `--pg-dump` runs
 * pg_dump into the file as well. The file is written with mode 0600, as it
 * holds the realm's keys, and with `--passphrase-file` it is encrypted
 * (backup-archive.ts). Nothing is left behind when it fails.
 */
import { spawn } from 'node:child_process';
import { closeSync, copyFileSync, createWriteStream, existsSync, fsyncSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { backupSqliteStore, checkSqliteStore } from '../directory/sqlite-backup.js';
import { ConfigError } from '../cli/ini.js';
import { backupStream, fileSha256, FORMAT, FORMAT_VERSION, type Manifest, type MemberSource } from './backup-archive.js';
import { dataPaths, readProblem, readServerConfig, shownDatabase, type DataPaths } from './config.js';
import { readMasterKey } from './store.js';
import { SERVER_VERSION } from './version.js';

export class BackupError extends Error {}

/** The store's copy in a backup: SQLite's file, or PostgreSQL's dump (pg_dump --format=custom). */
export const STORE_MEMBER = 'dirid.db';
export const PG_DUMP_MEMBER = 'database.pgdump';

/** The data directory's files a backup holds: [file, needed]. The lock, the store's WAL and anything else stay out. */
export function backupFiles(paths: DataPaths): Array<[string, boolean]> {
  return [
    [paths.serverConf, true],
    [paths.masterKey, true],
    [paths.caCert, true],
    [paths.caKey, true],
    [paths.serverCert, true],
    [paths.serverKey, true],
    [paths.kdcCert, false],
    [paths.kdcKey, false],
    [paths.hostKeytab, false],
    [paths.defaultConf, false],
    [paths.krb5Conf, false],
    [paths.sssdConf, false],
    [paths.dnsZone, false],
  ];
}

export interface BackupOptions {
  dataDir: string;
  out: string;
  /** encrypts the file (age, scrypt) */
  passphrase?: string;
  /** a realm on PostgreSQL: run pg_dump into the file */
  pgDump?: boolean;
}

/** A PostgreSQL URL split for pg_dump: the URL without its password, and the password (given to pg_dump in PGPASSWORD, never on its command line). */
export function pgConnection(url: string): { dbname: string; password: string | undefined } {
  let password: string | undefined;
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (!m) return { dbname: url, password };
  let [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const user = authority.slice(0, at);
    const colon = user.indexOf(':');
    if (colon >= 0) {
      password = decodeURIComponent(user.slice(colon + 1));
      authority = user.slice(0, colon) + authority.slice(at);
    }
  }
  rest = rest.replace(/([?&])password=([^&#]*)&?/i, (_all, sep: string, v: string) => {
    password ??= decodeURIComponent(v);
    return sep;
  }).replace(/[?&]$/, '');
  return { dbname: `${scheme}${authority}${rest}`, password };
}

function runPgDump(url: string, file: string): Promise<void> {
  const { dbname, password } = pgConnection(url);
  return new Promise((resolvePromise, reject) => {
    const child = spawn('pg_dump', ['--format=custom', '--no-owner', `--file=${file}`, `--dbname=${dbname}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: { ...process.env, ...(password !== undefined ? { PGPASSWORD: password } : {}) },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()).length > 4000 && (err = err.slice(-4000)));
    child.on('error', (e) => reject(new BackupError(`cannot run pg_dump (${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'not installed: apt install postgresql-client' : e.message})`)));
    child.on('exit', (code) => (code === 0 ? resolvePromise() : reject(new BackupError(`pg_dump failed (exit ${code}): ${err.trim().split('\n').slice(-3).join(' ')}`))));
  });
}

/** Takes the backup; `say` gets what the command prints. */
export async function backupRealm(o: BackupOptions, say: (line: string) => void): Promise<{ file: string; manifest: Manifest }> {
  const paths = dataPaths(o.dataDir);
  const config = readServerConfig(paths);
  const out = resolve(o.out);
  if (existsSync(out)) throw new BackupError(`${out} exists; a backup does not overwrite a file: give another name`);
  if (!existsSync(dirname(out))) throw new BackupError(`the directory of ${out} does not exist`);
  if (o.pgDump && !config.database) throw new BackupError('--pg-dump is for a realm on PostgreSQL; this one is in SQLite, which the backup copies itself');
  // a directory of our own beside the file (mode 0700): the store's copy and the small files, fixed before they are archived
  const staging = mkdtempSync(join(dirname(out), '.dirid-backup-'));
  const tmp = join(dirname(out), `.${basename(out)}.tmp-${process.pid}`);
  try {
    const members: MemberSource[] = [];
    const add = (name: string, path: string, mode: number) => members.push({ name, path, mode, size: statSync(path).size });
    for (const [file, needed] of backupFiles(paths)) {
      let st;
      try {
        st = statSync(file);
      } catch (e) {
        if (!needed && (e as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw new BackupError(`${file}: ${readProblem(e)}`);
      }
      const copy = join(staging, basename(file));
      try {
        copyFileSync(file, copy);
      } catch (e) {
        throw new BackupError(`${file}: ${readProblem(e)}`);
      }
      add(basename(file), copy, st.mode & 0o777);
    }
    const masterKey = readMasterKey(paths);
    const created = new Date().toISOString();
    let storeLine: string;
    if (!config.database) {
      const copy = join(staging, STORE_MEMBER);
      let pages;
      try {
        ({ pages } = await backupSqliteStore(paths.store, copy));
      } catch (e) {
        throw new BackupError(`${paths.store}: cannot back up the store (${e instanceof Error ? e.message : String(e)})`);
      }
      const check = checkSqliteStore(copy, masterKey);
      if (check.problems.length > 0) throw new BackupError(`the store's copy fails its check: ${check.problems.slice(0, 5).join('; ')}`);
      add(STORE_MEMBER, copy, 0o600);
      storeLine = `the SQLite store, copied online (${pages} pages, ${check.entries} entries, ${check.secrets} sealed secrets that open with the master key; integrity check: ok)`;
    } else if (o.pgDump) {
      const dump = join(staging, PG_DUMP_MEMBER);
      await runPgDump(config.database, dump);
      add(PG_DUMP_MEMBER, dump, 0o600);
      storeLine = `the PostgreSQL database ${shownDatabase(config.database)}, dumped by pg_dump --format=custom`;
    } else storeLine = '';
    const manifest: Manifest = {
      format: FORMAT,
      version: FORMAT_VERSION,
      created,
      realm: config.realm,
      hostname: config.hostname,
      serverVersion: SERVER_VERSION,
      store: config.database ? 'postgresql' : 'sqlite',
      files: [],
    };
    for (const m of members) manifest.files.push({ name: m.name, mode: m.mode, size: m.size, sha256: await fileSha256(m.path) });
    const stream = await backupStream(manifest, members, o.passphrase);
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      await pipeline(stream, createWriteStream('', { fd, autoClose: false }));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, out);
    say(`dirid-server: backup of realm ${config.realm} (${config.hostname}) written to ${out} (${statSync(out).size} bytes, mode 0600)`);
    say(`dirid-server: it holds ${members.map((m) => m.name).join(', ')}`);
    if (storeLine) say(`dirid-server: store: ${storeLine}`);
    else {
      const { dbname } = pgConnection(config.database!);
      say(`dirid-server: store: the realm's entries are in PostgreSQL (${shownDatabase(config.database!)}), which this file does not hold.`);
      say(`dirid-server: dump it beside this file with: pg_dump --format=custom --file=dirid.pgdump '${dbname}' (the password in PGPASSWORD or ~/.pgpass), or run backup again with --pg-dump`);
    }
    say(
      o.passphrase !== undefined
        ? 'dirid-server: the file holds the realm\'s keys (master key, CA key, server and KDC keys), encrypted with the passphrase (age, scrypt): keep the passphrase apart from it'
        : "dirid-server: the file holds the realm's keys (master key, CA key, server and KDC keys) unencrypted: whoever reads it can forge any ticket and read every secret; keep it as safe as the server, or use --passphrase-file",
    );
    return { file: out, manifest };
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      /* not written */
    }
    if (e instanceof ConfigError) throw e;
    throw e instanceof BackupError ? e : new BackupError(e instanceof Error ? e.message : String(e));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Reads a passphrase file: its first line, which must not be empty. */
export function readPassphraseFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new BackupError(`cannot read the passphrase file ${path} (${readProblem(e)})`);
  }
  const line = text.split(/\r?\n/)[0] ?? '';
  if (!line) throw new BackupError(`${path}: empty passphrase file`);
  return line;
}
