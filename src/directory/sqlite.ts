/**
 * The embedded backend's storage and query planning: SQLite through
 * better-sqlite3, WAL journal and synchronous=FULL so every commit is
 * fsync'd; every write, and every batch, is one transaction. Tables: entries
 * (entryUUID, DN, normalised DN, parent, public attributes as JSON, sealed
 * secrets as JSON), idx (index keys of indexed attributes, with an FTS5
 * trigram index over the user attributes for substrings), refs (DN-valued
 * references, for referential integrity) and meta. idx and refs are derived:
 * they are rebuilt when the schema's indexing changes. Searches take
 * candidate ids from idx where the filter allows, else scan entries
 * pre-selected in SQL by the attributes the filter needs; the evaluator
 * decides every candidate (the planning and the run over the rows are
 * plan.ts's, shared with the PostgreSQL backend; this file answers their
 * look-ups). An ordered search (RFC 2891 sort, one key) reads
 * candidates in the order of the key's index keys when a size limit makes
 * that cheaper than sorting every match; a size-limited search of one
 * range, substring or presence term asks for its least ids a few at a
 * time instead of all of them. Entries once read are kept parsed
 * (bounded) until a write touches them, so point reads, search bases and
 * small searches mostly skip SQLite, and so do equality look-ups asked
 * again before a write. What does reach SQLite is read through a memory
 * map, and the reads of one event-loop turn share one read transaction
 * (a write ends it first). Every rule of a write (validation,
 * referential integrity, operational attributes, sealing secrets) runs in
 * write-path.ts above this storage; its transaction methods answer
 * synchronously, so a whole write runs in one better-sqlite3 transaction.
 */
import Database from 'better-sqlite3';
import { normalizeDn } from './dn.js';
import {
  compareOrderKeys,
  entryOf,
  idChunks,
  indexKeys,
  indexLayout,
  likeEscape,
  noSuchBase,
  NO_SECRETS,
  parseSealed,
  planSearch,
  scanNeedles,
  searchRows,
  SearchRun,
  trigramAttributes,
  type IndexLookup,
  type RowSource,
} from './plan.js';
import { referencesOf } from './refint.js';
import { isPromise, type DirectoryStorage, type Maybe, type OutgoingReference, type Reference, type Sealed, type StorageTx } from './storage.js';
import type { AttributeType, Attributes, Directory, Entry, Schema, SchemaDefinition, SearchRequest, SearchResult } from './types.js';
import { openDirectory } from './write-path.js';

export interface SqliteOptions {
  path: string;
  baseDn: string;
  schema: SchemaDefinition;
  masterKey: Buffer;
  /** create the file and the base entry when missing */
  create?: boolean;
  /** about how much memory the entries kept parsed may take, in MiB (default 128) */
  cacheMegabytes?: number;
}

/** An entries row without the sealed secrets (those are read only when needed). */
interface Row {
  id: number;
  uuid: string;
  dn: string;
  ndn: string;
  parent: number | null;
  attrs: string;
  /** 1 when the entry holds secrets */
  hasSecrets: number;
}

const ROW_COLUMNS = 'id, uuid, dn, ndn, parent, attrs, secrets IS NOT NULL AS hasSecrets';

const TABLES_SQL = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
  id INTEGER PRIMARY KEY,
  uuid TEXT NOT NULL UNIQUE,
  dn TEXT NOT NULL,
  ndn TEXT NOT NULL UNIQUE,
  parent INTEGER REFERENCES entries(id),
  attrs TEXT NOT NULL,
  secrets TEXT
);
CREATE INDEX IF NOT EXISTS entries_parent ON entries(parent);
`;

/** Derived tables: rebuilt from entries whenever the index layout changes. */
const INDEX_SQL = `
CREATE TABLE IF NOT EXISTS idx (attr TEXT NOT NULL, norm TEXT NOT NULL, entry INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_attr_norm ON idx(attr, norm, entry);
CREATE INDEX IF NOT EXISTS idx_entry ON idx(entry, attr, norm);
CREATE TABLE IF NOT EXISTS refs (attr TEXT NOT NULL, target TEXT NOT NULL, entry INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS refs_target ON refs(target);
CREATE INDEX IF NOT EXISTS refs_entry ON refs(entry);
CREATE VIRTUAL TABLE IF NOT EXISTS idx_trigrams USING fts5(norm, content='idx', content_rowid='rowid', tokenize='trigram');
`;

const DROP_INDEX_SQL = `
DROP TRIGGER IF EXISTS idx_trigrams_ins;
DROP TRIGGER IF EXISTS idx_trigrams_del;
DROP TABLE IF EXISTS idx_trigrams;
DROP TABLE IF EXISTS idx;
DROP TABLE IF EXISTS refs;
`;

/**
 * Triggers keeping the trigram index in step with idx, for the attributes
 * that substring searches may use it for (names come from the schema).
 */
function trigramTriggersSql(attrs: readonly string[]): string {
  const list = attrs.map((a) => `'${a.replace(/'/g, "''")}'`).join(', ') || "''";
  return `
CREATE TRIGGER IF NOT EXISTS idx_trigrams_ins AFTER INSERT ON idx WHEN new.attr IN (${list}) BEGIN
  INSERT INTO idx_trigrams(rowid, norm) VALUES (new.rowid, new.norm);
END;
CREATE TRIGGER IF NOT EXISTS idx_trigrams_del AFTER DELETE ON idx WHEN old.attr IN (${list}) BEGIN
  INSERT INTO idx_trigrams(idx_trigrams, rowid, norm) VALUES ('delete', old.rowid, old.norm);
END;
`;
}

/**
 * Bumped when the meaning of idx/refs rows or their indexes change (3: integer
 * keys keep order; trigrams for user attributes only; 4: idx_entry gives an
 * entry's keys of one attribute, for ordered searches; 5: idx_attr_norm
 * covers the entry, so a key's entries are read from the index alone).
 */
const INDEX_FORMAT = 5;

const CHUNK = 500;
/**
 * Most equality look-ups kept between writes, at least: one more per
 * EQ_IDS_BYTES of the bound of entries kept parsed (a kept look-up takes
 * about 150 bytes). Kept look-ups leave oldest first, so a bound below the
 * keys in use (a uid and a member key per user, for a client asking by
 * both) would have each look-up leave before it is asked again.
 */
const EQ_IDS_MIN = 100_000;
const EQ_IDS_BYTES = 2048;
/**
 * How much of the database file SQLite reads through a memory map instead
 * of a read call per page: an entry or index page not in SQLite's own page
 * cache is then a memory access, not a system call and a copy (the file of
 * 100,000 users is about 350 MB; pages the kernel does not keep are read
 * from disk either way). Writes still go through the WAL.
 */
const MMAP_BYTES = 1024 * 1024 * 1024;
/** default bound of the entries kept parsed (see SqliteStorage.known), in MiB */
const DEFAULT_CACHE_MB = 128;
/** what a parsed entry takes beside its JSON text, estimated as a multiple of that text's length */
const PARSED_SIZE_FACTOR = 3;

/** An entry as read: its row (without the JSON text once parsed) and parsed attributes. */
interface Known {
  row: Row;
  attrs: Attributes;
  /** estimated bytes, counted against the cache's bound */
  size: number;
}
/** most index keys per candidate for which an ordered search walks the order's index instead of sorting */
const STREAM_RATIO = 10;

/** A directory on SQLite: the write path (write-path.ts) over this file's storage. */
export function openSqliteDirectory(o: SqliteOptions): Promise<Directory> {
  return openDirectory(o, (schema) => new SqliteStorage(o.path, schema, !!o.create, (o.cacheMegabytes ?? DEFAULT_CACHE_MB) * 1024 * 1024));
}

class SqliteStorage implements DirectoryStorage<Row> {
  readonly schema: Schema;
  private readonly db: Database.Database;
  private readonly st: ReturnType<SqliteStorage['prepare']>;
  /** the storage operations of a write, on the one connection */
  private readonly tx: StorageTx<Row>;
  /** what searches read */
  private readonly rows: RowSource<Row>;
  private readonly inStatements = new Map<number, Database.Statement>();
  private readonly keyStatements = new Map<number, Database.Statement>();
  private readonly scanStatements = new Map<string, Database.Statement>();
  /** per look-up kind: its ids (lookup), and its rows in id order (stream) */
  private readonly idsStatements = new Map<IndexLookup['kind'], Database.Statement>();
  private readonly streamStatements = new Map<IndexLookup['kind'], Database.Statement>();
  /**
   * Entries as last read, parsed, by id, with the id of each normalised DN
   * read: point reads, search bases and the candidates of small searches
   * come from here without asking SQLite. An entry leaves when a
   * transaction writes it, and is not kept again before that transaction
   * ends, so what is here is what is committed, as long as this process is
   * the store's only writer: a realm's SQLite store belongs to its one
   * running server.
   */
  private readonly known = new Map<number, Known>();
  private readonly idOfNdn = new Map<string, number>();
  /** ids written by the transaction under way */
  private readonly touched = new Set<number>();
  /**
   * The ids of equality keys looked up since the last write (attribute →
   * key → ids: one map per attribute, so that a look-up hashes the key as
   * it came instead of a string joined from both); every write clears it.
   */
  private readonly eqIds = new Map<string, Map<string, number[]>>();
  /** keys kept in eqIds, all attributes together */
  private eqIdsCount = 0;
  private readonly eqIdsBound: number;
  /** indexed attributes whose values also go to the trigram index */
  private readonly trigramAttrs: ReadonlySet<string>;
  /** index keys per attribute, as of a version (ordered searches choose how to order by it) */
  private readonly keyCounts = new Map<string, { version: number; count: number }>();
  /** moves when a transaction ends, committed or rolled back */
  private version = 0;

  /** estimated bytes of the known entries */
  private knownBytes = 0;
  /** a read transaction is open (see readTx) */
  private reading = false;

  constructor(
    path: string,
    schema: Schema,
    create: boolean,
    private readonly cacheBytes: number,
  ) {
    this.schema = schema;
    this.eqIdsBound = Math.max(EQ_IDS_MIN, Math.floor(cacheBytes / EQ_IDS_BYTES));
    this.db = new Database(path, { fileMustExist: !create });
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      this.db.pragma(`mmap_size = ${MMAP_BYTES}`);
      this.trigramAttrs = trigramAttributes(schema);
      this.db.exec(TABLES_SQL);
      this.db.exec(INDEX_SQL);
      this.st = this.prepare();
      this.checkIndexLayout();
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.tx = this.transactionOps();
    this.rows = this.rowSource();
  }

  private prepare() {
    const db = this.db;
    return {
      byNdn: db.prepare(`SELECT ${ROW_COLUMNS} FROM entries WHERE ndn = ?`),
      byId: db.prepare(`SELECT ${ROW_COLUMNS} FROM entries WHERE id = ?`),
      secretsOf: db.prepare('SELECT secrets FROM entries WHERE id = ?').pluck(),
      children: db.prepare(`SELECT ${ROW_COLUMNS} FROM entries WHERE parent = ? ORDER BY id`),
      hasChildren: db.prepare('SELECT 1 FROM entries WHERE parent = ? LIMIT 1'),
      all: db.prepare(`SELECT ${ROW_COLUMNS} FROM entries ORDER BY id`),
      insert: db.prepare('INSERT INTO entries (uuid, dn, ndn, parent, attrs, secrets) VALUES (?, ?, ?, ?, ?, ?)'),
      update: db.prepare('UPDATE entries SET attrs = ?, secrets = ? WHERE id = ?'),
      updateAttrs: db.prepare('UPDATE entries SET attrs = ? WHERE id = ?'),
      move: db.prepare('UPDATE entries SET dn = ?, ndn = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM entries WHERE id = ?'),
      begin: db.prepare('BEGIN'),
      commit: db.prepare('COMMIT'),
      metaGet: db.prepare('SELECT value FROM meta WHERE key = ?').pluck(),
      metaSet: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      idxInsert: db.prepare('INSERT INTO idx (attr, norm, entry) VALUES (?, ?, ?)'),
      idxClear: db.prepare('DELETE FROM idx WHERE entry = ?'),
      idxOfEntry: db.prepare('SELECT attr, norm FROM idx WHERE entry = ?').raw(),
      idxDelete: db.prepare('DELETE FROM idx WHERE entry = ? AND attr = ? AND norm = ?'),
      idxCount: db.prepare('SELECT count(*) FROM idx WHERE attr = ?').pluck(),
      idxHolding: db.prepare('SELECT entry FROM idx WHERE attr = ? AND norm = ?').pluck(),
      // entries in the order of one attribute's keys (an entry with several values comes first at its least)
      idxInOrder: db.prepare('SELECT entry FROM idx WHERE attr = ? ORDER BY norm, entry').pluck(),
      refInsert: db.prepare('INSERT INTO refs (attr, target, entry) VALUES (?, ?, ?)'),
      refClear: db.prepare('DELETE FROM refs WHERE entry = ?'),
      refsTo: db.prepare('SELECT attr, target, entry FROM refs WHERE target = ?'),
      refsUnder: db.prepare("SELECT attr, target, entry FROM refs WHERE target = ? OR target LIKE ? ESCAPE '\\'"),
    };
  }

  /**
   * The idx and refs tables depend on which attributes are indexed or
   * referencing, and how: when the schema or the format changed since they
   * were written, they are rebuilt from the entries.
   */
  private checkIndexLayout(): void {
    const layout = indexLayout(this.schema, INDEX_FORMAT);
    if (this.st.metaGet.get('indexLayout') === layout) return;
    this.db.transaction(() => {
      this.db.exec(DROP_INDEX_SQL);
      this.db.exec(INDEX_SQL);
      this.db.exec(trigramTriggersSql([...this.trigramAttrs]));
      Object.assign(this.st, this.prepare());
      for (const row of this.st.all.all() as Row[]) {
        const attrs = this.load(row, false);
        this.writeIndexes(row.id, attrs, referencesOf(this.schema, attrs));
      }
      this.st.metaSet.run('indexLayout', layout);
    })();
  }

  // ---- reading -------------------------------------------------------------

  /**
   * Opens a read transaction, unless one (or a write's) is open, that ends
   * when the event loop next reaches its check phase: every statement of
   * the reads of one turn (the searches of the requests that came in it)
   * then shares one, instead of SQLite beginning and ending one per
   * statement, which costs more than an indexed look-up (its WAL read lock).
   * A write ends it first (transaction), so the write is a transaction of
   * its own and later reads see it; this process is the store's only
   * writer, so the snapshot misses nothing committed meanwhile.
   */
  private readTx(): void {
    if (this.reading || this.db.inTransaction) return;
    this.st.begin.run();
    this.reading = true;
    setImmediate(this.endRead);
  }

  private readonly endRead = (): void => {
    if (!this.reading) return;
    this.reading = false;
    if (this.db.open) this.st.commit.run();
  };

  /**
   * Parsed attributes of a row, known or parsed now. Point reads
   * (`remember`) keep the entry; scans only use what is known, so a scan
   * larger than the cache cannot thrash it.
   */
  private load(row: Row, remember = true): Attributes {
    return this.loaded(row, remember).attrs;
  }

  /** The entry of a row, known or parsed now; `remember` keeps it, the oldest kept leaving first past the bound. */
  private loaded(row: Row, remember: boolean): Known {
    const hit = this.known.get(row.id);
    if (hit) return hit;
    const attrs = JSON.parse(row.attrs) as Attributes;
    const size = (row.attrs.length + row.dn.length + row.ndn.length) * PARSED_SIZE_FACTOR;
    const k = { row: remember ? { ...row, attrs: '' } : row, attrs, size };
    if (remember && size <= this.cacheBytes) {
      while (this.knownBytes + size > this.cacheBytes) this.forget(this.known.keys().next().value!);
      this.known.set(row.id, k);
      this.idOfNdn.set(row.ndn, row.id);
      this.knownBytes += size;
    }
    return k;
  }

  private forget(id: number): void {
    const k = this.known.get(id);
    if (!k) return;
    this.known.delete(id);
    this.idOfNdn.delete(k.row.ndn);
    this.knownBytes -= k.size;
  }

  private forgetAll(): void {
    this.known.clear();
    this.idOfNdn.clear();
    this.knownBytes = 0;
  }

  private sealedOf(row: Row): Sealed {
    if (!row.hasSecrets) return {};
    this.readTx();
    return parseSealed(this.st.secretsOf.get(row.id) as string | null, row.dn);
  }

  /** The committed entry named `dn`, known or read now. */
  private byDn(dn: string): Known | undefined {
    const ndn = normalizeDn(dn);
    const id = this.idOfNdn.get(ndn);
    const hit = id === undefined ? undefined : this.known.get(id);
    if (hit) return hit;
    this.readTx();
    const row = this.st.byNdn.get(ndn) as Row | undefined;
    return row && this.loaded(row, true);
  }

  async get(dn: string, attrs?: readonly string[]): Promise<Entry | null> {
    const k = this.byDn(dn);
    return k ? entryOf(this.schema, k.row.dn, k.attrs, attrs) : null;
  }

  async sealedSecrets(dn: string): Promise<{ dn: string; uuid: string; sealed: Sealed } | null> {
    const row = this.byDn(dn)?.row;
    return row ? { dn: row.dn, uuid: row.uuid, sealed: this.sealedOf(row) } : null;
  }

  /** One look-up as the SQL selecting its ids and that SQL's parameters: the one text of each look-up, for its ids and for its rows. */
  private lookupCondition(l: IndexLookup): [string, unknown[]] {
    switch (l.kind) {
      case 'eq':
        return ['SELECT entry FROM idx WHERE attr = ? AND norm = ?', [l.attr, l.key]];
      case 'present':
        return ['SELECT entry FROM idx WHERE attr = ?', [l.attr]];
      case 'ge':
        return ['SELECT entry FROM idx WHERE attr = ? AND norm >= ?', [l.attr, l.key]];
      case 'le':
        return ['SELECT entry FROM idx WHERE attr = ? AND norm <= ?', [l.attr, l.key]];
      case 'range':
        return ['SELECT entry FROM idx WHERE attr = ? AND norm >= ? AND norm < ?', [l.attr, l.from, l.to]];
      case 'trigram':
        // substrings through the trigram index (pieces of 3+ characters without LIKE wildcards)
        return ['SELECT idx.entry FROM idx_trigrams JOIN idx ON idx.rowid = idx_trigrams.rowid WHERE idx_trigrams.norm LIKE ? AND idx.attr = ?', [l.pattern, l.attr]];
      case 'like':
        return ["SELECT entry FROM idx WHERE attr = ? AND norm LIKE ? ESCAPE '\\'", [l.attr, l.pattern]];
    }
  }

  /** The ids one index look-up finds; an equality's are kept until the next write. */
  private lookup(l: IndexLookup): number[] {
    const eqKey = l.kind === 'eq' ? l.key : undefined;
    const byKey = eqKey === undefined ? undefined : this.eqIds.get(l.attr);
    const kept = eqKey === undefined ? undefined : byKey?.get(eqKey);
    if (kept) return kept;
    this.readTx();
    const [where, params] = this.lookupCondition(l);
    let st = this.idsStatements.get(l.kind);
    if (!st) this.idsStatements.set(l.kind, (st = this.db.prepare(where).pluck()));
    const ids = st.all(...params) as number[];
    if (eqKey !== undefined) this.keepEqIds(l.attr, eqKey, ids, byKey);
    return ids;
  }

  /** Keeps an equality's ids; past the bound, the oldest kept key leaves (of the same attribute when it has one). */
  private keepEqIds(attr: string, key: string, ids: number[], byKey: Map<string, number[]> | undefined): void {
    if (!byKey) this.eqIds.set(attr, (byKey = new Map()));
    if (this.eqIdsCount >= this.eqIdsBound) {
      let from = byKey;
      if (from.size === 0) {
        for (const m of this.eqIds.values()) {
          if (m.size > 0) {
            from = m;
            break;
          }
        }
      }
      from.delete(from.keys().next().value!);
      this.eqIdsCount--;
    }
    byKey.set(key, ids);
    this.eqIdsCount++;
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const q = planSearch(this.schema, req);
    const baseRow = this.byDn(req.base)?.row;
    if (!baseRow) throw noSuchBase(req.base);
    return searchRows(this.rows, q, baseRow) as SearchResult;
  }

  /** What a search reads, all of it answered at once. */
  private rowSource(): RowSource<Row> {
    return {
      schema: this.schema,
      trigrams: this.trigramAttrs,
      attrs: (r, remember) => this.load(r, remember),
      secrets: (r) => (r.hasSecrets ? new Set(Object.keys(this.sealedOf(r))) : NO_SECRETS),
      lookup: (l) => this.lookup(l),
      visit: (ids, run) => {
        // An ordered search either visits rows in the order (when the order's
        // index walks past few non-candidates) or collects every match and sorts.
        const { order, sizeLimit } = run.plan;
        const plan = order ? this.orderPlan(order, ids.size, sizeLimit) : 'collect';
        if (plan === 'walk') this.visitInOrder(this.walkOrder(order!, ids), sizeLimit, run);
        else if (plan === 'keys') this.visitInOrder(this.keyOrder(order!, ids), sizeLimit, run);
        else this.visitIds(ids, run);
      },
      stream: (l, run) => this.stream(l, run),
      scan: (parent, needed, run) => {
        const it = this.scan(parent, needed);
        for (const r of it) {
          if (!run.sink(r)) {
            it.return?.();
            break;
          }
        }
      },
    };
  }

  /**
   * The rows of one look-up's ids in id order until the run refuses one:
   * the look-up's least ids above the last one offered, a few more each
   * time (as many as the size limit needs, then twice as many), SQLite
   * sorting only those it keeps instead of gathering every id of the
   * look-up first; the rows are read by id, known ones not again. A
   * search of (uid=user12*) with a size limit of 10 thus reads 11 ids out
   * of the 1,111 keys in its range and 11 rows.
   */
  private stream(l: IndexLookup, run: SearchRun<Row>): void {
    this.readTx();
    const [where, params] = this.lookupCondition(l);
    let st = this.streamStatements.get(l.kind);
    if (!st) {
      st = this.db.prepare(`SELECT entry FROM (${where}) WHERE entry > ? ORDER BY entry LIMIT ?`).pluck();
      this.streamStatements.set(l.kind, st);
    }
    let after = -1;
    let want = Math.max(16, run.plan.sizeLimit + 1);
    for (;;) {
      const got = st.all(...params, after, want) as number[];
      // an entry with several keys in the range comes once per key
      const ids = got.filter((id, i) => i === 0 || id !== got[i - 1]);
      for (let i = 0; i < ids.length; i += CHUNK) if (!this.offerChunk(ids.slice(i, i + CHUNK), run)) return;
      if (got.length < want || run.expired()) return;
      after = got[got.length - 1]!;
      want *= 2;
    }
  }

  /**
   * Candidate rows in id order, a chunk at a time (idChunks), until the
   * run's time limit passes or a limit ends it. Known entries are not read
   * again.
   */
  private visitIds(ids: ReadonlySet<number>, run: SearchRun<Row>): void {
    for (const chunk of idChunks(ids, CHUNK, run.plan.sizeLimit)) {
      if (run.expired() || !this.offerChunk(chunk, run)) return;
    }
  }

  /** The rows of `chunk`'s ids, in its order, to the run (known entries not read again); false once the run refuses one. */
  private offerChunk(chunk: readonly number[], run: SearchRun<Row>): boolean {
    if (chunk.length === 1) {
      // one candidate (an equality on a unique value): its row, known or read by id
      const id = chunk[0]!;
      let r = this.known.get(id)?.row;
      if (!r) {
        this.readTx();
        r = this.st.byId.get(id) as Row | undefined;
      }
      return !r || run.sink(r);
    }
    const missing = chunk.filter((id) => !this.known.has(id));
    if (missing.length > 0) this.readTx();
    const read = missing.length === 0 ? undefined : new Map((this.inStatement(missing.length).all(...missing) as Row[]).map((r) => [r.id, r]));
    for (const id of chunk) {
      const r = this.known.get(id)?.row ?? read?.get(id);
      if (r && !run.sink(r)) return false;
    }
    return true;
  }

  /**
   * How an ordered search with `candidates` ids and a size limit below them
   * finds its first entries without reading every candidate: `walk` the
   * order's index, skipping non-candidates, when it holds at most
   * STREAM_RATIO keys per candidate (a key is read at a fraction of the cost
   * of an entry); else sort the candidates by their `keys` read from the
   * index. Without a limit below the candidates (or an index) every match
   * is read anyway: `collect` and sort them.
   */
  private orderPlan(at: AttributeType, candidates: number, sizeLimit: number): 'walk' | 'keys' | 'collect' {
    if (!at.indexed || sizeLimit >= candidates) return 'collect';
    let cached = this.keyCounts.get(at.name);
    if (!cached || cached.version !== this.version) {
      this.readTx();
      cached = { version: this.version, count: this.st.idxCount.get(at.name) as number };
      this.keyCounts.set(at.name, cached);
    }
    return cached.count <= candidates * STREAM_RATIO ? 'walk' : 'keys';
  }

  /** The candidates in the order of `at`'s keys, by walking its index; those without a key follow in id order. */
  private *walkOrder(at: AttributeType, ids: ReadonlySet<number>): Generator<number> {
    const seen = new Set<number>();
    this.readTx();
    for (const id of this.st.idxInOrder.iterate(at.name) as IterableIterator<number>) {
      if (!ids.has(id) || seen.has(id)) continue;
      seen.add(id);
      yield id;
    }
    yield* [...ids].filter((id) => !seen.has(id)).sort((a, b) => a - b);
  }

  /** The candidates sorted by their least key of `at` (the index by entry gives it), those without one last. */
  private keyOrder(at: AttributeType, ids: ReadonlySet<number>): number[] {
    const list = [...ids];
    const keys = new Map<number, string>();
    this.readTx();
    for (let i = 0; i < list.length; i += CHUNK) {
      const chunk = list.slice(i, i + CHUNK);
      for (const [id, key] of this.keysStatement(chunk.length).raw().all(at.name, ...chunk) as Array<[number, string]>) keys.set(id, key);
    }
    return list.sort((a, b) => compareOrderKeys(keys.get(a), keys.get(b)) || a - b);
  }

  /**
   * Visits ids in the given order, reading entries a batch at a time (a
   * little over the limit: most candidates of a find match) to the run's
   * take, which returns false when a limit ends the search.
   */
  private visitInOrder(order: Iterable<number>, sizeLimit: number, run: SearchRun<Row>): void {
    const batchSize = Math.min(CHUNK, Math.max(16, sizeLimit + 1));
    let batch: number[] = [];
    const flush = (): boolean => {
      this.readTx();
      const rows = new Map((this.inStatement(batch.length).all(...batch) as Row[]).map((r) => [r.id, r]));
      const ok = batch.every((id) => run.take(rows.get(id)!));
      batch = [];
      return ok;
    };
    const it = order[Symbol.iterator]();
    for (let next = it.next(); !next.done; next = it.next()) {
      batch.push(next.value);
      if (batch.length >= batchSize && !flush()) {
        it.return?.();
        return;
      }
    }
    if (batch.length > 0) flush();
  }

  /** Rows in id order, all or the children of one, holding at least one of `needed` when given. */
  private scan(parent: number | null, needed: Set<string> | null): IterableIterator<Row> {
    const terms = needed ? [...needed] : [];
    const key = `${parent === null ? 'all' : 'one'}:${terms.length}`;
    let st = this.scanStatements.get(key);
    if (!st) {
      const where = [parent === null ? '' : 'parent = ?', terms.length ? `(${terms.map(() => 'instr(attrs, ?) > 0').join(' OR ')})` : ''].filter(Boolean);
      st = this.db.prepare(`SELECT ${ROW_COLUMNS} FROM entries ${where.length ? 'WHERE ' + where.join(' AND ') : ''} ORDER BY id`);
      this.scanStatements.set(key, st);
    }
    const params: unknown[] = [...(parent === null ? [] : [parent]), ...scanNeedles(terms)];
    this.readTx();
    return st.iterate(...params) as IterableIterator<Row>;
  }

  /** The least key of one attribute of each of n entries. */
  private keysStatement(n: number): Database.Statement {
    let st = this.keyStatements.get(n);
    if (!st) {
      st = this.db.prepare(`SELECT entry, min(norm) FROM idx WHERE attr = ? AND entry IN (${Array.from({ length: n }, () => '?').join(',')}) GROUP BY entry`);
      if (this.keyStatements.size < 64) this.keyStatements.set(n, st);
    }
    return st;
  }

  private inStatement(n: number): Database.Statement {
    let st = this.inStatements.get(n);
    if (!st) {
      st = this.db.prepare(`SELECT ${ROW_COLUMNS} FROM entries WHERE id IN (${Array.from({ length: n }, () => '?').join(',')}) ORDER BY id`);
      if (this.inStatements.size < 64) this.inStatements.set(n, st);
    }
    return st;
  }

  // ---- writing -------------------------------------------------------------

  /**
   * One better-sqlite3 transaction around the write path's steps, which
   * get every answer at once and so finish before it commits: no reader
   * runs in between. The entries it writes leave the known entries and
   * are not kept again before it ends (they may yet roll back); the
   * version moves either way.
   */
  transaction<T>(body: (tx: StorageTx<Row>) => Maybe<T>): T {
    this.endRead();
    this.touched.clear();
    try {
      return this.db.transaction(() => {
        const out = body(this.tx);
        if (isPromise(out)) {
          out.catch(() => {});
          throw new Error('a SQLite write waited for a promise: its transactions are synchronous');
        }
        return out;
      })();
    } finally {
      this.touched.clear();
      this.eqIds.clear();
      this.eqIdsCount = 0;
      this.version++;
    }
  }

  /** Marks an entry written by the transaction under way. */
  private touch(id: number): void {
    this.touched.add(id);
    this.forget(id);
  }

  private transactionOps(): StorageTx<Row> {
    const st = this.st;
    return {
      entry: (ndn) => st.byNdn.get(ndn) as Row | undefined,
      entryById: (id) => st.byId.get(id) as Row | undefined,
      // what the transaction wrote is not committed yet: not kept
      attrs: (row) => this.load(row, !this.touched.has(row.id)),
      sealed: (row) => this.sealedOf(row),
      children: (id) => st.children.all(id) as Row[],
      hasChildren: (id) => st.hasChildren.get(id) !== undefined,
      insert: (e) => {
        const id = Number(st.insert.run(e.uuid, e.dn, e.ndn, e.parent, JSON.stringify(e.attrs), e.sealed ? JSON.stringify(e.sealed) : null).lastInsertRowid);
        this.touch(id);
        this.writeIndexes(id, e.attrs, e.refs);
        return id;
      },
      update: (id, attrs, refs, sealed) => {
        this.touch(id);
        if (sealed === undefined) st.updateAttrs.run(JSON.stringify(attrs), id);
        else st.update.run(JSON.stringify(attrs), sealed ? JSON.stringify(sealed) : null, id);
        this.updateIndexes(id, attrs, refs);
      },
      move: (id, dn, ndn) => {
        this.touch(id);
        st.move.run(dn, ndn, id);
      },
      remove: (id) => {
        this.touch(id);
        st.idxClear.run(id);
        st.refClear.run(id);
        st.remove.run(id);
      },
      refsTo: (ndn) => st.refsTo.all(ndn) as Reference<number>[],
      refsWithin: (ndn) => st.refsUnder.all(ndn, '%,' + likeEscape(ndn)) as Reference<number>[],
      holding: (attr, key) => st.idxHolding.all(attr, key) as number[],
    };
  }

  /**
   * An updated entry's index keys: only those that changed are deleted and
   * inserted (each key also moves the trigram index, and a modify usually
   * changes one attribute of twenty keys); its references anew.
   */
  private updateIndexes(id: number, attrs: Attributes, refs: readonly OutgoingReference[]): void {
    const stale = new Set((this.st.idxOfEntry.all(id) as [string, string][]).map(([attr, norm]) => `${attr}\u0000${norm}`));
    for (const [attr, key] of indexKeys(this.schema, attrs)) {
      if (!stale.delete(`${attr}\u0000${key}`)) this.st.idxInsert.run(attr, key, id);
    }
    for (const k of stale) {
      const cut = k.indexOf('\u0000');
      this.st.idxDelete.run(id, k.slice(0, cut), k.slice(cut + 1));
    }
    this.st.refClear.run(id);
    for (const r of refs) this.st.refInsert.run(r.attr, r.target, id);
  }

  /** A new entry's index keys (those of its indexed attributes) and references. */
  private writeIndexes(id: number, attrs: Attributes, refs: readonly OutgoingReference[]): void {
    for (const [attr, key] of indexKeys(this.schema, attrs)) this.st.idxInsert.run(attr, key, id);
    for (const r of refs) this.st.refInsert.run(r.attr, r.target, id);
  }

  async close(): Promise<void> {
    this.endRead();
    if (this.db.open) {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.close();
    }
    this.forgetAll();
  }
}
