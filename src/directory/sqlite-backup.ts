/**
 * The SQLite store as a whole file: its online backup and its integrity
 * check (docs/backup.md). The backup is SQLite's online backup API
 * (better-sqlite3's db.backup) from a connection of its own, read-only:
 * with the store in WAL mode it reads one snapshot while the running server
 * goes on writing, so the copy holds every transaction committed before it
 * began and none half done. The first step only starts the backup; the
 * next copies every page at once, inside one read transaction (a backup
 * copied a few pages a step would start again each time the server
 * writes). The check is SQLite's own (integrity_check, foreign_key_check)
 * and, with the master key, that every sealed secret opens
 * (directory/secrets.ts): a store restored beside the wrong master.key is
 * caught before a server starts on it.
 */
import Database from 'better-sqlite3';
import { parseSealed } from './plan.js';
import { openSecret } from './secrets.js';

/** Copies the store at `source` to `dest` (a file that does not exist yet), consistent as of the moment the copy began. */
export async function backupSqliteStore(source: string, dest: string): Promise<{ pages: number }> {
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    // after the first step (which only starts), every remaining page in one step: one read transaction, one snapshot
    const r = await db.backup(dest, { progress: () => 0x7fffffff });
    return { pages: r.totalPages };
  } finally {
    db.close();
  }
}

export interface StoreCheck {
  /** entries in the store */
  entries: number;
  /** sealed secret values, each opened with the master key */
  secrets: number;
  /** what is wrong; empty for a sound store */
  problems: string[];
}

/**
 * Checks the store at `path`: SQLite's integrity_check and
 * foreign_key_check, then every sealed secret against `masterKey`. Reads
 * only; safe beside a running server (one read transaction).
 */
export function checkSqliteStore(path: string, masterKey: Buffer): StoreCheck {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    const problems: string[] = [];
    const integrity = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    if (integrity.length !== 1 || integrity[0]!.integrity_check !== 'ok') problems.push(...integrity.slice(0, 20).map((r) => `SQLite integrity_check: ${r.integrity_check}`));
    const fk = db.pragma('foreign_key_check') as Array<{ table: string; rowid: number; parent: string }>;
    for (const r of fk.slice(0, 20)) problems.push(`SQLite foreign_key_check: ${r.table} row ${r.rowid} names a missing ${r.parent} row`);
    let entries = 0;
    let secrets = 0;
    db.transaction(() => {
      entries = db.prepare('SELECT count(*) FROM entries').pluck().get() as number;
      const rows = db.prepare('SELECT uuid, dn, secrets FROM entries WHERE secrets IS NOT NULL').iterate() as IterableIterator<{ uuid: string; dn: string; secrets: string }>;
      for (const row of rows) {
        let sealed;
        try {
          sealed = parseSealed(row.secrets, row.dn);
        } catch (e) {
          problems.push((e as Error).message);
          continue;
        }
        for (const [attr, values] of Object.entries(sealed)) {
          for (const v of values) {
            secrets++;
            try {
              openSecret(masterKey, row.uuid, attr, v);
            } catch {
              if (problems.length < 100) problems.push(`${row.dn}: the sealed ${attr} does not open with this master key`);
            }
          }
        }
      }
    })();
    return { entries, secrets, problems };
  } finally {
    db.close();
  }
}
