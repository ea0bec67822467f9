/**
 * The network backend's storage: PostgreSQL through node-postgres (`pg`),
 * for several servers sharing one directory. Tables as SQLite's: entries
 * (entryUUID, DN, normalised DN, parent, public attributes as JSON text,
 * sealed secrets as JSON text), idx (index keys of indexed attributes, with
 * a pg_trgm GIN index over the user attributes' keys for substrings), refs
 * (DN-valued references) and meta (the index layout); idx and refs are
 * derived and rebuilt when the schema's indexing changes. Keys are compared
 * in the "C" collation, i.e. by code point as SQLite does.
 *
 * A write transaction runs on one pooled connection (BEGIN … COMMIT, a
 * throw or rejection rolls back) and first takes a transaction-level
 * advisory lock (`pg_advisory_xact_lock`), held until it ends: writers of
 * every process serialise on it, so each write reads what the previous one
 * committed (READ COMMITTED then gives no lost updates), and it is released
 * with the transaction even when a connection dies. Reads run outside any
 * write: get is one statement; a search runs in a READ ONLY REPEATABLE READ
 * transaction of its own, so its look-ups and row fetches see one snapshot
 * of committed data.
 *
 * Query planning and the evaluation of each candidate are plan.ts's (the
 * same as SQLite's); this file answers the index look-ups and fetches rows
 * in id order (candidates a chunk at a time, scans a page at a time, rows
 * pre-selected by the attributes the filter needs). An ordered search
 * collects every match and sorts it in memory. Every rule of a write runs
 * in write-path.ts above this storage; secrets reach it sealed.
 *
 * A connection string naming several hosts (or a target_session_attrs)
 * goes through pg-hosts.ts, whose client class sends every connection to
 * the host found fit and looks again after a failover.
 */
import pg from 'pg';
import { normalizeDn } from './dn.js';
import { connectionTargets, HostChooser, staleHostFailure } from './pg-hosts.js';
import { entryOf, idChunks, indexKeys, indexLayout, likeEscape, noSuchBase, NO_SECRETS, ParseCache, parseSealed, planSearch, scanNeedles, searchRows, trigramAttributes, type IndexLookup, type SearchRun } from './plan.js';
import { referencesOf } from './refint.js';
import type { DirectoryStorage, OutgoingReference, Reference, Sealed, StorageTx } from './storage.js';
import { DirectoryError, type Attributes, type Directory, type Entry, type Schema, type SchemaDefinition, type SearchRequest, type SearchResult } from './types.js';
import { openDirectory } from './write-path.js';

export interface PostgresOptions {
  /** handed to node-postgres as it is (user, password, hosts, target_session_attrs…) */
  connectionString: string;
  baseDn: string;
  schema: SchemaDefinition;
  masterKey: Buffer;
  /** create the tables, the pg_trgm extension and the base entry when missing */
  create?: boolean;
  /** most connections of the pool (default 10) */
  maxConnections?: number;
  /** errors of idle connections (a server going away); the pool replaces them */
  onError?: (e: Error) => void;
}

/** An entries row; `secrets` only when the query read it. */
interface Row {
  id: number;
  uuid: string;
  dn: string;
  ndn: string;
  parent: number | null;
  attrs: string;
  hasSecrets: boolean;
  secrets?: string | null;
}

const ROW_COLUMNS = 'id, uuid, dn, ndn, parent, attrs, secrets IS NOT NULL AS "hasSecrets"';
const ROW_COLUMNS_SECRETS = `${ROW_COLUMNS}, secrets`;

/** The advisory lock every write transaction (and the layout check) takes first: 'dirid' in ASCII. */
const WRITE_LOCK = 0x6469726964;
/** Every write also notifies every server of the realm when it commits (a rolled-back one does not). */
const CHANGES = 'dirid_changes';
const BEGIN_WRITE = `BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK}); NOTIFY ${CHANGES}`;
/** how long the change listener waits before it connects again (doubling up to the most) */
const LISTEN_RETRY_MS = 500;
const LISTEN_RETRY_MAX_MS = 10_000;
const BEGIN_READ = 'BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY';

const TABLES_SQL = `
CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  uuid text NOT NULL UNIQUE,
  dn text NOT NULL,
  ndn text COLLATE "C" NOT NULL UNIQUE,
  parent bigint REFERENCES entries(id),
  attrs text NOT NULL,
  secrets text
);
CREATE INDEX IF NOT EXISTS entries_parent ON entries(parent);
`;

/** Derived tables: rebuilt from entries whenever the index layout changes (their indexes after they are filled). */
const INDEX_TABLES_SQL = `
CREATE TABLE idx (attr text COLLATE "C" NOT NULL, norm text COLLATE "C" NOT NULL, entry bigint NOT NULL);
CREATE TABLE refs (attr text NOT NULL, target text COLLATE "C" NOT NULL, entry bigint NOT NULL);
`;
const INDEX_INDEXES_SQL = `
CREATE INDEX idx_attr_norm ON idx(attr, norm);
CREATE INDEX idx_entry ON idx(entry, attr, norm);
CREATE INDEX refs_target ON refs(target);
CREATE INDEX refs_entry ON refs(entry);
`;

const DROP_INDEX_SQL = 'DROP TABLE IF EXISTS idx; DROP TABLE IF EXISTS refs;';

/**
 * Bumped when the meaning of idx/refs rows or their indexes change (1:
 * integer keys keep order; trigrams for user attributes only).
 */
const INDEX_FORMAT = 1;

const CHUNK = 500;

/** A SQL string literal (for names from the schema, which are letters, digits and hyphens). */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** int8 (ids, counts) as numbers: ids stay far below 2^53. */
const types: pg.CustomTypesConfig = {
  getTypeParser: (oid, format) => (oid === pg.types.builtins.INT8 && format !== 'binary' ? Number : pg.types.getTypeParser(oid, format)),
};

/**
 * Statements that write an entry's index keys ($n, $n+1: attributes and
 * keys) and references ($n+2, $n+3: attributes and targets) for the entry
 * `id` (an expression over `from`).
 */
function indexInserts(id: string, from: string, n: number): string[] {
  return [
    `i AS (INSERT INTO idx (attr, norm, entry) SELECT k.a, k.n, ${id} FROM ${from}unnest($${n}::text[], $${n + 1}::text[]) AS k(a, n))`,
    `r AS (INSERT INTO refs (attr, target, entry) SELECT k.a, k.t, ${id} FROM ${from}unnest($${n + 2}::text[], $${n + 3}::text[]) AS k(a, t))`,
  ];
}

/** The values of {@link indexInserts}. */
function indexValues(schema: Schema, attrs: Attributes, refs: readonly OutgoingReference[]): string[][] {
  const keys = indexKeys(schema, attrs);
  return [keys.map((k) => k[0]), keys.map((k) => k[1]), refs.map((r) => r.attr), refs.map((r) => r.target)];
}

/** Whether a failed BEGIN, COMMIT or ROLLBACK leaves the connection unusable: anything but the server's answer to the statement. */
function connectionLost(e: unknown): boolean {
  return !(e instanceof pg.DatabaseError);
}

/** The server's own answer that it ended or lost the connection (class 08, or an administrator's or crash shutdown 57P01-57P03). */
function serverEnded(e: pg.DatabaseError): boolean {
  return /^(08|57P0[1-3])/.test(e.code ?? '');
}

/** failures to open a new connection: the server is out of reach, and trying again at once would not help */
const connectFailures = new WeakSet<object>();

/**
 * Whether a statement may have failed for its connection's sake rather
 * than its own: the server ended the connection (a restart leaves broken
 * connections idle in the pool until their first use). Worth another try
 * on another connection when nothing was done on the first.
 */
function brokenConnection(e: unknown): boolean {
  if (e instanceof DirectoryError || (typeof e === 'object' && e !== null && connectFailures.has(e))) return false;
  if (e instanceof pg.DatabaseError) return serverEnded(e);
  return true;
}

/**
 * A failure that is the database's being out of reach (it could not be
 * connected to, or the connection broke) as the directory's `unavailable`,
 * which every transport answers as such; any other failure as it is. The
 * message, for the log, keeps the driver's reason, which never holds the
 * password.
 */
function unreachable(e: unknown): unknown {
  if (e instanceof DirectoryError || !(e instanceof Error)) return e;
  const connecting = connectFailures.has(e);
  const code = (e as { code?: unknown }).code;
  const socketCode = typeof code === 'string' && /^E[A-Z]+$/.test(code);
  const serverGone = e instanceof pg.DatabaseError && serverEnded(e);
  // node-postgres's own words when the server ends a connection under a query
  const terminated = /^Connection terminated/.test(e.message);
  if (!connecting && !socketCode && !serverGone && !terminated) return e;
  // the reason is for the log (no password is ever in it); transports answer with fixed words
  return new DirectoryError('unavailable', `the directory database is unavailable (${typeof code === 'string' ? `${code}: ` : ''}${e.message.slice(0, 200)})`);
}

/**
 * A directory on PostgreSQL: the write path (write-path.ts) over this
 * file's storage. Without `create`, a database holding no directory under
 * `baseDn` is refused.
 */
export async function openPostgresDirectory(o: PostgresOptions): Promise<Directory> {
  const dir = await openDirectory(o, (schema) => new PostgresStorage(o, schema));
  if (!o.create) {
    let found: Entry | null;
    try {
      found = await dir.get(o.baseDn, ['1.1']);
    } catch (e) {
      await dir.close();
      throw e;
    }
    if (!found) {
      await dir.close();
      throw new Error(`the PostgreSQL database holds no directory under ${o.baseDn}; create it first`);
    }
  }
  return dir;
}

class PostgresStorage implements DirectoryStorage<Row> {
  private readonly pool: pg.Pool;
  private readonly connectionString: string;
  /** with several hosts (or a session kind to check): the class whose connections find the right one (pg-hosts.ts) */
  private readonly Client: new (config?: pg.ClientConfig) => pg.Client;
  private readonly parsed = new ParseCache();
  /** indexed attributes whose keys also go to the trigram index */
  private readonly trigramAttrs: ReadonlySet<string>;
  /** the trigram index's predicate: a query repeats it so the planner may use the partial index */
  private readonly trigramPredicate: string;
  /** the tables exist and the index layout is current (every method waits for it) */
  private readonly ready: Promise<void>;
  private closed = false;
  /** the connection that hears other servers' writes (see watch) */
  private listener: pg.Client | undefined;
  private listenTimer: NodeJS.Timeout | undefined;
  /**
   * How often a statement that met a broken connection is tried again:
   * every idle connection of the pool may be broken (the server restarted)
   * before the pool notices, and one more try opens a new connection.
   */
  private readonly retries: number;

  constructor(
    o: PostgresOptions,
    private readonly schema: Schema,
  ) {
    this.trigramAttrs = trigramAttributes(schema);
    this.trigramPredicate = `attr IN (${[...this.trigramAttrs].map(literal).join(', ') || "''"})`;
    const max = o.maxConnections ?? 10;
    this.retries = max + 1;
    const targets = connectionTargets(o.connectionString);
    if (targets.hosts.length > 1 || targets.sessionAttrs !== 'any') {
      // node-postgres takes one host: each connection goes to the one the chooser found fit
      this.connectionString = targets.url(targets.hosts[0]!);
      this.Client = new HostChooser(targets, { types, application_name: 'dirid' }).clientClass();
    } else {
      this.connectionString = o.connectionString;
      this.Client = pg.Client;
    }
    this.pool = new pg.Pool({ connectionString: this.connectionString, max, types, application_name: 'dirid', Client: this.Client });
    // an idle connection that breaks is dropped by the pool; without a listener its error would end the process
    this.pool.on('error', (e) => o.onError?.(e));
    this.ready = this.setup(!!o.create);
    this.ready.catch(() => {});
  }

  // ---- connections -------------------------------------------------------

  /**
   * Runs `body` on one connection of the pool. A connection that breaks
   * while checked out is reported to the statement running on it, not to
   * the process, and is dropped instead of given back (as is one `body`
   * declares lost).
   */
  private async withClient<T>(body: (c: pg.PoolClient, lost: (e: Error) => void) => Promise<T>): Promise<T> {
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect().catch((e: unknown) => {
        // a host remembered from before a failover was gone: the next connection looks for the one that took over
        if (staleHostFailure(e)) return this.pool.connect();
        throw e;
      });
    } catch (e) {
      if (typeof e === 'object' && e !== null) connectFailures.add(e);
      throw e;
    }
    let broken: Error | undefined;
    const lost = (e: Error) => {
      broken ??= e;
    };
    c.on('error', lost);
    try {
      return await body(c, lost);
    } finally {
      c.removeListener('error', lost);
      c.release(broken);
    }
  }

  /**
   * `body` in a transaction begun with `begin`: committed when it returns,
   * rolled back when it throws. A `begin` that fails for its connection's
   * sake is tried again on another (see {@link retries}): nothing has run
   * yet.
   */
  private async inTransaction<T>(begin: string, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let begun = false;
      try {
        return await this.withClient(async (c, lost) => {
          const control = async (sql: string) => {
            try {
              await c.query(sql);
            } catch (e) {
              if (connectionLost(e)) lost(e as Error);
              throw e;
            }
          };
          await control(begin);
          begun = true;
          let out: T;
          try {
            out = await body(c);
          } catch (e) {
            // the body's failure is the one to report; a failed rollback only drops the connection
            await control('ROLLBACK').catch(() => {});
            throw e;
          }
          await control('COMMIT');
          return out;
        });
      } catch (e) {
        if (begun || attempt >= this.retries || !brokenConnection(e)) throw unreachable(e);
      }
    }
  }

  /** A read of one statement, tried again on another connection while it fails for its connection's sake (see {@link retries}). */
  private async read<T>(body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.withClient(body);
      } catch (e) {
        if (attempt >= this.retries || !brokenConnection(e)) throw unreachable(e);
      }
    }
  }

  /**
   * Creates the tables (with `create`) or checks they are there, and
   * rebuilds idx and refs when the schema's indexing changed: under the
   * write lock, so concurrent openers agree.
   */
  private async setup(create: boolean): Promise<void> {
    await this.inTransaction(BEGIN_WRITE, async (c) => {
      const encoding = (await c.query<{ server_encoding: string }>('SHOW server_encoding')).rows[0]!.server_encoding;
      if (encoding !== 'UTF8') throw new Error(`the PostgreSQL database must use the UTF8 encoding, not ${encoding}`);
      if (create) {
        await c.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
        await c.query(TABLES_SQL);
      } else {
        const found = (await c.query<{ e: string | null; m: string | null }>("SELECT to_regclass('entries')::text AS e, to_regclass('meta')::text AS m")).rows[0]!;
        if (found.e === null || found.m === null) throw new Error('the PostgreSQL database holds no directory (no entries table); create it first');
      }
      const layout = indexLayout(this.schema, INDEX_FORMAT);
      const stored = (await c.query<{ value: string }>("SELECT value FROM meta WHERE key = 'indexLayout'")).rows[0]?.value;
      if (stored === layout) return;
      await c.query(DROP_INDEX_SQL);
      await c.query(INDEX_TABLES_SQL);
      await this.rebuildIndexes(c);
      await c.query(INDEX_INDEXES_SQL);
      await c.query(`CREATE INDEX idx_trigrams ON idx USING gin (norm gin_trgm_ops) WITH (fastupdate = off) WHERE ${this.trigramPredicate}`);
      await c.query("INSERT INTO meta (key, value) VALUES ('indexLayout', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [layout]);
    });
  }

  /** Fills idx and refs from every entry, a page of entries per statement. */
  private async rebuildIndexes(c: pg.ClientBase): Promise<void> {
    for (let after = 0; ; ) {
      const rows = (await c.query<Row>(`SELECT ${ROW_COLUMNS} FROM entries WHERE id > $1 ORDER BY id LIMIT ${CHUNK}`, [after])).rows;
      if (rows.length === 0) return;
      const idx = { attr: [] as string[], norm: [] as string[], entry: [] as number[] };
      const refs = { attr: [] as string[], target: [] as string[], entry: [] as number[] };
      for (const row of rows) {
        const attrs = this.parsed.load(row.id, row.attrs, false);
        for (const [attr, norm] of indexKeys(this.schema, attrs)) {
          idx.attr.push(attr);
          idx.norm.push(norm);
          idx.entry.push(row.id);
        }
        for (const r of referencesOf(this.schema, attrs)) {
          refs.attr.push(r.attr);
          refs.target.push(r.target);
          refs.entry.push(row.id);
        }
      }
      await c.query(
        'WITH i AS (INSERT INTO idx (attr, norm, entry) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])) INSERT INTO refs (attr, target, entry) SELECT * FROM unnest($4::text[], $5::text[], $6::bigint[])',
        [idx.attr, idx.norm, idx.entry, refs.attr, refs.target, refs.entry],
      );
      after = rows.at(-1)!.id;
    }
  }

  // ---- reading -------------------------------------------------------------

  private load(row: Row, remember = true): Attributes {
    return this.parsed.load(row.id, row.attrs, remember);
  }

  private async rowByNdn(c: pg.ClientBase, ndn: string, secrets: boolean): Promise<Row | undefined> {
    const cols = secrets ? ROW_COLUMNS_SECRETS : ROW_COLUMNS;
    return (await c.query<Row>({ name: `by_ndn_${+secrets}`, text: `SELECT ${cols} FROM entries WHERE ndn = $1`, values: [ndn] })).rows[0];
  }

  /** The row of a DN, on its own (with its secrets when asked). */
  private async rowOf(dn: string, secrets: boolean): Promise<Row | undefined> {
    const ndn = normalizeDn(dn);
    await this.ready;
    return this.read((c) => this.rowByNdn(c, ndn, secrets));
  }

  async get(dn: string, attrs?: readonly string[]): Promise<Entry | null> {
    const row = await this.rowOf(dn, false);
    if (!row) return null;
    return entryOf(this.schema, row.dn, this.load(row), attrs);
  }

  async sealedSecrets(dn: string): Promise<{ dn: string; uuid: string; sealed: Sealed } | null> {
    const row = await this.rowOf(dn, true);
    if (!row) return null;
    return { dn: row.dn, uuid: row.uuid, sealed: parseSealed(row.secrets, row.dn) };
  }

  /** The ids one index look-up finds. */
  private async lookup(c: pg.ClientBase, l: IndexLookup): Promise<number[]> {
    const q = (name: string, where: string, values: unknown[]) => c.query<[number]>({ name, text: `SELECT entry FROM idx WHERE ${where}`, values, rowMode: 'array' });
    let r: pg.QueryArrayResult<[number]>;
    switch (l.kind) {
      case 'eq':
        r = await q('idx_eq', 'attr = $1 AND norm = $2', [l.attr, l.key]);
        break;
      case 'present':
        r = await q('idx_present', 'attr = $1', [l.attr]);
        break;
      case 'ge':
        r = await q('idx_ge', 'attr = $1 AND norm >= $2', [l.attr, l.key]);
        break;
      case 'le':
        r = await q('idx_le', 'attr = $1 AND norm <= $2', [l.attr, l.key]);
        break;
      case 'range':
        r = await q('idx_range', 'attr = $1 AND norm >= $2 AND norm < $3', [l.attr, l.from, l.to]);
        break;
      case 'trigram':
      case 'like':
        // the trigram index answers escaped patterns too
        r = this.trigramAttrs.has(l.attr)
          ? await q('idx_trigram', `attr = $1 AND ${this.trigramPredicate} AND norm LIKE $2`, [l.attr, l.pattern])
          : await q('idx_like', 'attr = $1 AND norm LIKE $2', [l.attr, l.pattern]);
        break;
    }
    return r.rows.map((x) => x[0]);
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const q = planSearch(this.schema, req);
    const ndn = normalizeDn(req.base);
    await this.ready;
    return this.inTransaction(BEGIN_READ, async (c) => {
      const baseRow = await this.rowByNdn(c, ndn, q.needSecrets);
      if (!baseRow) throw noSuchBase(req.base);
      const secrets = q.needSecrets;
      return searchRows<Row>(
        {
          lookup: (l) => this.lookup(c, l),
          visit: (ids, run) => this.visitIds(c, ids, run, secrets),
          scan: (parent, needed, run) => this.scan(c, parent, needed, run, secrets),
          // the rows carry their secrets when the filter tests them
          secrets: (r) => (r.hasSecrets ? new Set(Object.keys(parseSealed(r.secrets, r.dn))) : NO_SECRETS),
          attrs: (r, remember) => this.load(r, remember),
          schema: this.schema,
          trigrams: this.trigramAttrs,
        },
        q,
        baseRow,
      );
    });
  }

  /** Candidate rows in id order, a chunk at a time, until a limit ends the search. */
  private async visitIds(c: pg.ClientBase, ids: ReadonlySet<number>, run: SearchRun<Row>, secrets: boolean): Promise<void> {
    const cols = secrets ? ROW_COLUMNS_SECRETS : ROW_COLUMNS;
    for (const chunk of idChunks(ids, CHUNK, run.plan.sizeLimit)) {
      if (run.expired()) return;
      const rows = (await c.query<Row>({ name: `by_ids_${+secrets}`, text: `SELECT ${cols} FROM entries WHERE id = ANY($1::bigint[]) ORDER BY id`, values: [chunk] })).rows;
      for (const r of rows) if (!run.sink(r)) return;
    }
  }

  /**
   * Rows in id order, all or the children of one, holding at least one of
   * `needed` when given: a page at a time, until a limit ends the search.
   */
  private async scan(c: pg.ClientBase, parent: number | null, needed: Set<string> | null, run: SearchRun<Row>, secrets: boolean): Promise<void> {
    const where = ['id > $1', parent === null ? '' : 'parent = $3', '($2::text[] IS NULL OR EXISTS (SELECT 1 FROM unnest($2::text[]) AS n(t) WHERE strpos(attrs, n.t) > 0))'].filter(Boolean).join(' AND ');
    const text = `SELECT ${secrets ? ROW_COLUMNS_SECRETS : ROW_COLUMNS} FROM entries WHERE ${where} ORDER BY id LIMIT ${CHUNK}`;
    const name = `scan_${parent === null ? 'all' : 'one'}_${+secrets}`;
    const needles = needed ? scanNeedles(needed) : null;
    for (let after = 0; ; ) {
      if (run.expired()) return;
      const rows = (await c.query<Row>({ name, text, values: parent === null ? [after, needles] : [after, needles, parent] })).rows;
      for (const r of rows) if (!run.sink(r)) return;
      if (rows.length < CHUNK) return;
      after = rows.at(-1)!.id;
    }
  }

  // ---- writing -------------------------------------------------------------

  /**
   * One PostgreSQL transaction around the write path's steps, on one
   * connection, after the write lock: the steps' statements run in turn
   * on it while readers, on other connections, see only what committed.
   */
  async transaction<T>(body: (tx: StorageTx<Row>) => T | Promise<T>): Promise<T> {
    await this.ready;
    return this.inTransaction(BEGIN_WRITE, async (c) => body(this.transactionOps(c)));
  }

  private transactionOps(c: pg.ClientBase): StorageTx<Row> {
    const row = async (name: string, where: string, value: unknown) =>
      (await c.query<Row>({ name, text: `SELECT ${ROW_COLUMNS_SECRETS} FROM entries WHERE ${where}`, values: [value] })).rows[0];
    const refs = async (name: string, where: string, values: unknown[]) =>
      (await c.query<Reference<number>>({ name, text: `SELECT attr, target, entry FROM refs WHERE ${where}`, values })).rows;
    return {
      entry: (ndn) => row('tx_by_ndn', 'ndn = $1', ndn),
      entryById: (id) => row('tx_by_id', 'id = $1', id),
      attrs: (r) => this.load(r),
      // as read with the row: the write path reads secrets before it replaces them
      sealed: (r) => (r.hasSecrets ? parseSealed(r.secrets, r.dn) : {}),
      children: async (id) => (await c.query<Row>({ name: 'tx_children', text: `SELECT ${ROW_COLUMNS_SECRETS} FROM entries WHERE parent = $1 ORDER BY id`, values: [id] })).rows,
      hasChildren: async (id) => (await c.query({ name: 'tx_has_children', text: 'SELECT 1 FROM entries WHERE parent = $1 LIMIT 1', values: [id] })).rows.length > 0,
      insert: async (e) => {
        const r = await c.query<{ id: number }>({
          name: 'tx_insert',
          text: `WITH e AS (INSERT INTO entries (uuid, dn, ndn, parent, attrs, secrets) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id), ${indexInserts('e.id', 'e, ', 7).join(', ')} SELECT id FROM e`,
          values: [e.uuid, e.dn, e.ndn, e.parent, JSON.stringify(e.attrs), e.sealed ? JSON.stringify(e.sealed) : null, ...indexValues(this.schema, e.attrs, e.refs)],
        });
        return r.rows[0]!.id;
      },
      update: async (id, attrs, refs, sealed) => {
        // the deletes see the keys as they were before the statement, never the ones it inserts
        const replace = ['di AS (DELETE FROM idx WHERE entry = $1)', 'dr AS (DELETE FROM refs WHERE entry = $1)'];
        const keys = indexValues(this.schema, attrs, refs);
        if (sealed === undefined) {
          const text = `WITH u AS (UPDATE entries SET attrs = $2 WHERE id = $1), ${[...replace, ...indexInserts('$1::bigint', '', 3)].join(', ')} SELECT 1`;
          await c.query({ name: 'tx_update_attrs', text, values: [id, JSON.stringify(attrs), ...keys] });
        } else {
          const text = `WITH u AS (UPDATE entries SET attrs = $2, secrets = $3 WHERE id = $1), ${[...replace, ...indexInserts('$1::bigint', '', 4)].join(', ')} SELECT 1`;
          await c.query({ name: 'tx_update', text, values: [id, JSON.stringify(attrs), sealed ? JSON.stringify(sealed) : null, ...keys] });
        }
      },
      move: async (id, dn, ndn) => {
        await c.query({ name: 'tx_move', text: 'UPDATE entries SET dn = $2, ndn = $3 WHERE id = $1', values: [id, dn, ndn] });
      },
      remove: async (id) => {
        await c.query({
          name: 'tx_remove',
          text: 'WITH i AS (DELETE FROM idx WHERE entry = $1), r AS (DELETE FROM refs WHERE entry = $1) DELETE FROM entries WHERE id = $1',
          values: [id],
        });
      },
      refsTo: (ndn) => refs('tx_refs_to', 'target = $1', [ndn]),
      refsWithin: (ndn) => refs('tx_refs_within', "target = $1 OR target LIKE $2 ESCAPE '\\'", [ndn, '%,' + likeEscape(ndn)]),
      holding: async (attr, key) => (await c.query<[number]>({ name: 'tx_holding', text: 'SELECT entry FROM idx WHERE attr = $1 AND norm = $2', values: [attr, key], rowMode: 'array' })).rows.map((r) => r[0]),
    };
  }

  /**
   * Calls `changed` whenever a write commits, this process's or another's:
   * a connection of its own LISTENs to the notification every write
   * transaction sends. When that connection breaks (a database restart or
   * failover), it connects again, and calls `changed` once it listens
   * again, since writes may have committed unheard meanwhile.
   */
  watch(changed: () => void): void {
    let delay = LISTEN_RETRY_MS;
    const again = () => {
      if (this.closed) return;
      this.listenTimer = setTimeout(connect, delay);
      this.listenTimer.unref();
      delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
    };
    const connect = () => {
      if (this.closed) return;
      const client = new this.Client({ connectionString: this.connectionString, application_name: 'dirid changes' });
      this.listener = client;
      let failed = false;
      const fail = () => {
        if (failed) return;
        failed = true;
        client.removeAllListeners('notification');
        client.end().catch(() => {});
        if (this.listener === client) this.listener = undefined;
        again();
      };
      client.on('error', fail);
      client.on('end', fail);
      client.on('notification', () => changed());
      client
        .connect()
        .then(() => client.query(`LISTEN ${CHANGES}`))
        .then(() => {
          delay = LISTEN_RETRY_MS;
          changed();
        })
        .catch(fail);
    };
    connect();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.listenTimer);
    const listener = this.listener;
    this.listener = undefined;
    if (listener) {
      listener.removeAllListeners('end');
      listener.removeAllListeners('error');
      listener.on('error', () => {});
      await listener.end().catch(() => {});
    }
    await this.ready.catch(() => {});
    await this.pool.end();
    this.parsed.clear();
  }
}
