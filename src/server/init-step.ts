/**
 * What an init step is: a named part of `dirid-server init` that creates
 * its own files and entries, given the options and the new store. init.ts
 * runs the list; init-directory.ts, kerberos-init.ts and krb5-conf.ts contribute steps.
 */
import type { Directory } from '../directory/types.js';
import type { ServerConfig } from './config.js';
import type { DataPaths } from './data-paths.js';

export interface InitOptions {
  dataDir: string;
  realm: string;
  domain: string;
  hostname: string;
  adminPassword: string;
  /** the address server.conf has the server listen on (default 0.0.0.0, every interface) */
  listen?: string;
  httpsPort?: number;
  httpPort?: number;
  kdcPort?: number;
  kpasswdPort?: number;
  ldapPort?: number;
  ldapsPort?: number;
  /** a PostgreSQL connection URL: the store goes there (docs/servers.md) instead of SQLite in the data directory */
  database?: string;
  /** the POSIX ID range (default: a random one, objects/posix.ts) */
  idStart?: number;
  idMax?: number;
  /** more names (DNS names or IP addresses) the server's certificate carries: every name hosts reach it by (`init --san`) */
  sans?: string[];
}

/** A step; `C`, what it reads of the configuration (the steps that write only the directory read its names alone). */
export interface InitStep<C = ServerConfig> {
  name: string;
  run(ctx: InitContext<C>): Promise<void>;
}

/** What the steps that write only the realm's directory read of the configuration (init-directory.ts). */
export type RealmNames = Pick<ServerConfig, 'realm' | 'hostname'>;

export interface InitContext<C = ServerConfig> {
  paths: DataPaths;
  config: C;
  options: InitOptions;
  dir: Directory;
  /** init's progress lines, and its warnings */
  log?: (line: string) => void;
}
