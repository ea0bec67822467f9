/**
 * Opens the realm's directory with dirid's schema (the registry's:
 * objects/index.ts realmSchema) and the master key: on
 * PostgreSQL when server.conf names a database (shared by every server of
 * the realm), else the SQLite file in the data directory.
 */
import { readFileSync } from 'node:fs';
import { openPostgresDirectory } from '../directory/postgres.js';
import { openSqliteDirectory } from '../directory/sqlite.js';
import type { Directory } from '../directory/types.js';
import { realmSchema } from '../objects/index.js';
import { autoCacheMb, type DataPaths } from './config.js';
import { silentLogger, type Logger } from '../log/logger.js';

export { realmSchema };

export function readMasterKey(paths: DataPaths): Buffer {
  const key = readFileSync(paths.masterKey);
  if (key.length !== 32) throw new Error(`${paths.masterKey}: expected a 32-byte key`);
  return key;
}

/** Where a realm's store is: its base DN, and the PostgreSQL database when it is there. */
export interface StoreLocation {
  baseDn: string;
  database?: string;
  /** the SQLite store's bound on entries kept parsed, in MiB */
  storeCacheMb?: number;
}

export function openRealmStore(paths: DataPaths, at: StoreLocation, create = false, log: Logger = silentLogger): Promise<Directory> {
  const masterKey = readMasterKey(paths);
  if (at.database) {
    // a database connection that drops is replaced by the pool; the next statement says if it stays gone
    return openPostgresDirectory({ connectionString: at.database, baseDn: at.baseDn, schema: realmSchema, masterKey, create, onError: (e) => log.error('database_connection_lost', { error: e.message }) });
  }
  return openSqliteDirectory({ path: paths.store, baseDn: at.baseDn, schema: realmSchema, masterKey, create, cacheMegabytes: at.storeCacheMb ?? autoCacheMb() });
}
