/**
 * What an init step is: a named part of `dirid-server init` that creates
 * its own files and entries, given the options and the new store. init.ts
 * runs the list; kerberos-init.ts and krb5-conf.ts contribute a step each.
 */
import type { Directory } from '../directory/types.js';
import type { DataPaths, ServerConfig } from './config.js';

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

export interface InitStep {
  name: string;
  run(ctx: InitContext): Promise<void>;
}

export interface InitContext {
  paths: DataPaths;
  config: ServerConfig;
  options: InitOptions;
  dir: Directory;
  /** init's progress lines, and its warnings */
  log?: (line: string) => void;
}
