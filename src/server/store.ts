/** Opens the realm's directory with dirid's schema and the master key. */
import { readFileSync } from 'node:fs';
import { coreSchema, mergeSchemas } from '../directory/schema.js';
import { openSqliteDirectory } from '../directory/sqlite.js';
import type { Directory } from '../directory/types.js';
import { diridSchema } from '../objects/ldap-schema.js';
import type { DataPaths } from './config.js';

export const realmSchema = mergeSchemas(coreSchema, diridSchema);

export function readMasterKey(paths: DataPaths): Buffer {
  const key = readFileSync(paths.masterKey);
  if (key.length !== 32) throw new Error(`${paths.masterKey}: expected a 32-byte key`);
  return key;
}

export function openRealmStore(paths: DataPaths, baseDn: string, create = false): Promise<Directory> {
  return openSqliteDirectory({ path: paths.store, baseDn, schema: realmSchema, masterKey: readMasterKey(paths), create });
}
