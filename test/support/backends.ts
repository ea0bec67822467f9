/**
 * The directory's storage backends as test parameters: a suite runs once
 * per backend with `for (const backend of backends) describe(backend.name,
 * …)`. Each {@link Store} is a fresh, empty place for one directory (a file
 * in a temporary directory, or a database of its own in the test file's
 * PostgreSQL cluster, started on first use and stopped after the file's
 * tests), opened as often as a test likes, with plain SQL on the stored
 * tables for tests that look beneath the directory. DIRID_TEST_BACKENDS
 * (e.g. `sqlite`) narrows the list.
 */
import { after } from 'node:test';
import { readdirSync, readFileSync, mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openPostgresDirectory } from '../../src/directory/postgres.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory, SchemaDefinition } from '../../src/directory/types.js';
import { createDatabase, startPostgres, stopPostgres, type PgCluster } from './postgres.js';

export interface OpenOptions {
  baseDn: string;
  schema: SchemaDefinition;
  masterKey: Buffer;
  create?: boolean;
}

export interface Store {
  /** SQLite: the database file */
  readonly path?: string;
  /** PostgreSQL: the database's connection string */
  readonly connectionString?: string;
  open(o: OpenOptions): Promise<Directory>;
  /**
   * Runs one statement on the stored tables (`?` placeholders) with no
   * directory open on top, and returns its rows.
   */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** files holding one of `needles` at rest, as "needle in file" (after a checkpoint) */
  atRest(needles: readonly string[]): Promise<string[]>;
  /** removes what it can (a database stays until its cluster goes) */
  remove(): Promise<void>;
}

export interface Backend {
  readonly name: 'sqlite' | 'postgresql';
  /** a fresh, empty store */
  store(): Promise<Store>;
}

function filesHolding(paths: readonly string[], needles: readonly string[]): string[] {
  const hits: string[] = [];
  for (const p of paths) {
    const bytes = readFileSync(p);
    for (const n of needles) if (bytes.indexOf(n) >= 0) hits.push(`${n} in ${p}`);
  }
  return hits;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    return d.isDirectory() ? filesUnder(p) : d.isFile() ? [p] : [];
  });
}

const sqlite: Backend = {
  name: 'sqlite',
  async store() {
    const tmp = mkdtempSync(join(tmpdir(), 'dirid-store-'));
    const path = join(tmp, 'db');
    return {
      path,
      open: (o) => openSqliteDirectory({ ...o, path }),
      async sql(text, params = []) {
        const db = new Database(path);
        try {
          const st = db.prepare(text);
          return st.reader ? (st.all(...params) as Record<string, unknown>[]) : (st.run(...params), []);
        } finally {
          db.close();
        }
      },
      async atRest(needles) {
        return filesHolding(['db', 'db-wal'].map((f) => join(tmp, f)).filter((f) => existsSync(f)), needles);
      },
      async remove() {
        rmSync(tmp, { recursive: true, force: true });
      },
    };
  },
};

let cluster: Promise<PgCluster> | undefined;
after(() => {
  if (cluster) stopPostgres();
});

const postgresql: Backend = {
  name: 'postgresql',
  async store() {
    cluster ??= startPostgres();
    const c = await cluster;
    const connectionString = await createDatabase(c, 'dirid');
    const sql = async (text: string, params: unknown[] = []) => {
      const client = new pg.Client({ connectionString });
      await client.connect();
      try {
        let n = 0;
        return (await client.query(text.replace(/\?/g, () => `$${++n}`), params)).rows as Record<string, unknown>[];
      } finally {
        await client.end();
      }
    };
    return {
      connectionString,
      open: (o) => openPostgresDirectory({ ...o, connectionString }),
      sql,
      async atRest(needles) {
        await sql('CHECKPOINT');
        return filesHolding(filesUnder(c.dataDir).filter((f) => statSync(f).size > 0), needles);
      },
      async remove() {},
    };
  },
};

const wanted = process.env.DIRID_TEST_BACKENDS?.split(',').map((s) => s.trim());
export const backends: readonly Backend[] = [sqlite, postgresql].filter((b) => !wanted || wanted.includes(b.name));
