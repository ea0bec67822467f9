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
 * decides every candidate. An ordered search (RFC 2891 sort, one key) reads
 * candidates in the order of the key's index keys when a size limit makes
 * that cheaper than sorting every match. Entries once read are kept parsed
 * (bounded) until a write touches them, so point reads, search bases and
 * small searches mostly skip SQLite; an equality search reads its rows in
 * one statement. Every rule of a write (validation,
 * referential integrity, operational attributes, sealing secrets) runs in
 * write-path.ts above this storage; its transaction methods answer
 * synchronously, so a whole write runs in one better-sqlite3 transaction.
 */
import Database from 'better-sqlite3';
import { isWithin, normalizeDn } from './dn.js';
import { compileFilter, filterAttributeType, filterAttributes, hasOrderingRule, hasSubstringRule, parseFilter, requiredAttributes, type Filter } from './filter.js';
import { referencesOf } from './refint.js';
import { compareCodePoints, indexKey, normalizeValue } from './schema.js';
import { isPromise, type DirectoryStorage, type Maybe, type OutgoingReference, type Reference, type Sealed, type StorageTx } from './storage.js';
import { DirectoryError, type AttributeType, type Attributes, type Directory, type Entry, type Schema, type SchemaDefinition, type SearchRequest, type SearchResult } from './types.js';
import { openDirectory } from './write-path.js';

export interface SqliteOptions {
  path: string;
  baseDn: string;
  schema: SchemaDefinition;
  masterKey: Buffer;
  /** create the file and the base entry when missing */
  create?: boolean;
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

interface Loaded {
  row: Row;
  attrs: Attributes;
}

const ROW_COLUMNS = 'id, uuid, dn, ndn, parent, attrs, secrets IS NOT NULL AS hasSecrets';
/** entries kept as last read (see SqliteStorage.known) */
const KNOWN_SIZE = 10_000;

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
/** most attributes a scan pre-selects rows by */
const MAX_SCAN_TERMS = 16;
/** most index keys per candidate for which an ordered search walks the order's index instead of sorting */
const STREAM_RATIO = 10;

/** Order of two entries' sort keys: code point order, entries without a key last. */
function compareOrderKeys(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  return compareCodePoints(a, b);
}

/**
 * The least string above every string that starts with `prefix` (code point
 * order, as SQLite compares UTF-8): the prefix with its last code point
 * raised by one; undefined when there is none.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = [...prefix].map((c) => c.codePointAt(0)!);
  while (cps.length && cps[cps.length - 1] === 0x10ffff) cps.pop();
  if (cps.length === 0) return undefined;
  let last = cps.pop()! + 1;
  if (last === 0xd800) last = 0xe000; // surrogates are not characters
  return String.fromCodePoint(...cps, last);
}

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/** A directory on SQLite: the write path (write-path.ts) over this file's storage. */
export function openSqliteDirectory(o: SqliteOptions): Promise<Directory> {
  return openDirectory(o, (schema) => new SqliteStorage(o.path, schema, !!o.create));
}

class SqliteStorage implements DirectoryStorage<Row> {
  readonly schema: Schema;
  private readonly db: Database.Database;
  private readonly st: ReturnType<SqliteStorage['prepare']>;
  /** the storage operations of a write, on the one connection */
  private readonly tx: StorageTx<Row>;
  private readonly inStatements = new Map<number, Database.Statement>();
  private readonly keyStatements = new Map<number, Database.Statement>();
  private readonly scanStatements = new Map<string, Database.Statement>();
  /**
   * Entries as last read, parsed, by id, with the id of each normalised DN
   * read: point reads and small searches answer from here without asking
   * SQLite. An entry leaves when a transaction writes it, and is not kept
   * again before that transaction ends, so what is here is what is
   * committed, as long as this process is the store's only writer: a
   * realm's store belongs to its one running server.
   */
  private readonly known = new Map<number, Loaded>();
  private readonly idOfNdn = new Map<string, number>();
  /** ids written by the transaction under way */
  private readonly touched = new Set<number>();
  /** indexed attributes whose values also go to the trigram index */
  private readonly trigramAttrs: ReadonlySet<string>;
  /** index keys per attribute, as of a version (ordered searches choose how to order by it) */
  private readonly keyCounts = new Map<string, { version: number; count: number }>();
  /** moves when a transaction ends, committed or rolled back */
  private version = 0;

  constructor(path: string, schema: Schema, create: boolean) {
    this.schema = schema;
    this.db = new Database(path, { fileMustExist: !create });
    try {
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = FULL');
      this.db.pragma('foreign_keys = ON');
      this.trigramAttrs = new Set(
        this.schema.definition.attributeTypes.filter((a) => a.indexed && (a.syntax === 'string' || a.syntax === 'exact') && !a.operational && a.name !== 'objectClass').map((a) => a.name),
      );
      this.db.exec(TABLES_SQL);
      this.db.exec(INDEX_SQL);
      this.st = this.prepare();
      this.checkIndexLayout();
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.tx = this.transactionOps();
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
      metaGet: db.prepare('SELECT value FROM meta WHERE key = ?').pluck(),
      metaSet: db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value'),
      idxInsert: db.prepare('INSERT INTO idx (attr, norm, entry) VALUES (?, ?, ?)'),
      idxClear: db.prepare('DELETE FROM idx WHERE entry = ?'),
      idxEq: db.prepare('SELECT entry FROM idx WHERE attr = ? AND norm = ?').pluck(),
      idxEqRows: db.prepare(`SELECT ${ROW_COLUMNS} FROM entries WHERE id IN (SELECT entry FROM idx WHERE attr = ? AND norm = ?) ORDER BY id`),
      idxGe: db.prepare('SELECT entry FROM idx WHERE attr = ? AND norm >= ?').pluck(),
      idxLe: db.prepare('SELECT entry FROM idx WHERE attr = ? AND norm <= ?').pluck(),
      idxRange: db.prepare('SELECT entry FROM idx WHERE attr = ? AND norm >= ? AND norm < ?').pluck(),
      idxLike: db.prepare("SELECT entry FROM idx WHERE attr = ? AND norm LIKE ? ESCAPE '\\'").pluck(),
      idxPresent: db.prepare('SELECT entry FROM idx WHERE attr = ?').pluck(),
      idxCount: db.prepare('SELECT count(*) FROM idx WHERE attr = ?').pluck(),
      // entries in the order of one attribute's keys (an entry with several values comes first at its least)
      idxInOrder: db.prepare('SELECT entry FROM idx WHERE attr = ? ORDER BY norm, entry').pluck(),
      // substrings through the trigram index (pieces of 3+ characters without LIKE wildcards)
      idxTrigram: db.prepare('SELECT idx.entry FROM idx_trigrams JOIN idx ON idx.rowid = idx_trigrams.rowid WHERE idx_trigrams.norm LIKE ? AND idx.attr = ?').pluck(),
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
    const layout = JSON.stringify({
      format: INDEX_FORMAT,
      attrs: this.schema.definition.attributeTypes
        .filter((a) => a.indexed || a.references)
        .map((a) => [a.name, a.syntax, !!a.indexed, a.references ?? null, !!a.operational])
        .sort(),
    });
    if (this.st.metaGet.get('indexLayout') === layout) return;
    this.db.transaction(() => {
      this.db.exec(DROP_INDEX_SQL);
      this.db.exec(INDEX_SQL);
      this.db.exec(trigramTriggersSql([...this.trigramAttrs]));
      Object.assign(this.st, this.prepare());
      for (const row of this.st.all.all() as Row[]) {
        const attrs = this.load(row, false).attrs;
        this.writeIndexes(row.id, attrs, referencesOf(this.schema, attrs), false);
      }
      this.st.metaSet.run('indexLayout', layout);
    })();
  }

  // ---- reading -------------------------------------------------------------

  /**
   * The parsed entry of a row, known or parsed now. Point reads
   * (`remember`) keep it; scans only use what is known, so a scan larger
   * than the cache cannot thrash it.
   */
  private load(row: Row, remember = true): Loaded {
    const hit = this.known.get(row.id);
    if (hit) return hit;
    const l = { row, attrs: JSON.parse(row.attrs) as Attributes };
    if (remember) {
      if (this.known.size >= KNOWN_SIZE) this.forgetAll();
      this.known.set(row.id, l);
      this.idOfNdn.set(row.ndn, row.id);
    }
    return l;
  }

  private forget(id: number): void {
    const l = this.known.get(id);
    if (!l) return;
    this.known.delete(id);
    this.idOfNdn.delete(l.row.ndn);
  }

  private forgetAll(): void {
    this.known.clear();
    this.idOfNdn.clear();
  }

  private sealedOf(row: Row): Record<string, string[]> {
    if (!row.hasSecrets) return {};
    const text = this.st.secretsOf.get(row.id) as string | null;
    if (!text) return {};
    try {
      const sealed = JSON.parse(text) as unknown;
      if (sealed && typeof sealed === 'object' && !Array.isArray(sealed)) return sealed as Record<string, string[]>;
    } catch {
      // reported below
    }
    throw new DirectoryError('unwillingToPerform', `the stored secrets of ${row.dn} are damaged`, { dn: row.dn });
  }

  /** The committed entry named `dn`, known or read now. */
  private byDn(dn: string): Loaded | undefined {
    const ndn = normalizeDn(dn);
    const id = this.idOfNdn.get(ndn);
    const hit = id === undefined ? undefined : this.known.get(id);
    if (hit) return hit;
    const row = this.st.byNdn.get(ndn) as Row | undefined;
    return row && this.load(row);
  }

  /** A copy for the caller (known entries must not be mutated from outside). */
  private toEntry(l: Loaded, attrs?: readonly string[]): Entry {
    const out: Attributes = {};
    if (!attrs || attrs.length === 0 || attrs.includes('*')) {
      for (const k in l.attrs) out[k] = l.attrs[k]!.slice();
    } else {
      for (const a of attrs) {
        if (a === '1.1') continue;
        if (a === '+') {
          // operational attributes (RFC 3673)
          for (const k in l.attrs) if (this.schema.attribute(k)?.operational) out[k] = l.attrs[k]!.slice();
          continue;
        }
        const at = this.schema.attribute(a);
        const v = at && l.attrs[at.name];
        if (v) out[at.name] = v.slice();
      }
    }
    return { dn: l.row.dn, attrs: out };
  }

  async get(dn: string, attrs?: readonly string[]): Promise<Entry | null> {
    const l = this.byDn(dn);
    return l ? this.toEntry(l, attrs) : null;
  }

  async sealedSecrets(dn: string): Promise<{ dn: string; uuid: string; sealed: Sealed } | null> {
    const row = this.byDn(dn)?.row;
    return row ? { dn: row.dn, uuid: row.uuid, sealed: this.sealedOf(row) } : null;
  }

  /**
   * Candidate entry ids from the indexes (a superset of the matches), or null
   * when the filter cannot use them and the entries must be scanned.
   */
  private candidates(f: Filter): Set<number> | null {
    switch (f.kind) {
      case 'and': {
        // the most selective usable term narrows; the evaluator checks the rest
        const rank = (x: Filter) => (x.kind === 'eq' ? (x.attr.toLowerCase() === 'objectclass' ? 4 : 0) : x.kind === 'sub' ? 1 : x.kind === 'ge' || x.kind === 'le' ? 2 : 3);
        const sorted = [...f.items].sort((a, b) => rank(a) - rank(b));
        let best: Set<number> | null = null;
        for (const item of sorted) {
          // objectClass equality rarely narrows anything: fetching its ids costs more than it saves
          if (best && rank(item) === 4) break;
          const c = this.candidates(item);
          if (c && (!best || c.size < best.size)) best = c;
          if (best && (best.size < 64 || rank(item) === 0)) break;
        }
        return best;
      }
      case 'or': {
        const out = new Set<number>();
        for (const item of f.items) {
          const c = this.candidates(item);
          if (!c) return null;
          for (const id of c) out.add(id);
        }
        return out;
      }
      case 'not':
        return null;
      default:
        break;
    }
    const at = filterAttributeType(this.schema, f.attr);
    // an unknown attribute is Undefined: nothing matches
    if (!at) return new Set();
    if (!at.indexed || at.syntax === 'secret') return null;
    const ids = (rows: unknown[]) => new Set(rows as number[]);
    const key = (v: string) => indexKey(at.syntax, normalizeValue(at.syntax, v));
    try {
      switch (f.kind) {
        case 'eq':
          return ids(this.st.idxEq.all(at.name, key(f.value)));
        case 'present':
          // every entry has object classes: a scan is cheaper than fetching every id
          return at.name === 'objectClass' ? null : ids(this.st.idxPresent.all(at.name));
        case 'ge':
        case 'le':
          if (!hasOrderingRule(at)) return new Set();
          return ids((f.kind === 'ge' ? this.st.idxGe : this.st.idxLe).all(at.name, key(f.value)));
        case 'sub': {
          if (!hasSubstringRule(at)) return new Set();
          const norm = (x: string) => normalizeValue(at.syntax, x);
          const pieces = [f.initial, ...f.any, f.final].filter((x): x is string => x !== undefined).map(norm);
          const initial = f.initial === undefined ? '' : norm(f.initial);
          if (initial.length >= 2 || (initial.length > 0 && !pieces.some((x) => x.length >= 3))) {
            // a prefix: a range scan of the B-tree
            const upper = prefixUpperBound(initial);
            return ids(upper === undefined ? this.st.idxGe.all(at.name, initial) : this.st.idxRange.all(at.name, initial, upper));
          }
          if (this.trigramAttrs.has(at.name) && pieces.some((x) => x.length >= 3) && !pieces.some((x) => /[%_\\]/.test(x))) {
            const pattern = initial + '%' + f.any.map((a) => norm(a) + '%').join('') + (f.final !== undefined ? norm(f.final) : '');
            return ids(this.st.idxTrigram.all(pattern, at.name));
          }
          const like = (x: string) => likeEscape(norm(x));
          const pattern = likeEscape(initial) + '%' + f.any.map((a) => like(a) + '%').join('') + (f.final !== undefined ? like(f.final) : '');
          return ids(this.st.idxLike.all(at.name, pattern));
        }
      }
    } catch (e) {
      if (e instanceof DirectoryError) throw e;
      // an assertion value the syntax cannot hold is Undefined: nothing matches
      return new Set();
    }
  }

  /**
   * The equality term whose index key gives a filter's candidates, when
   * {@link candidates} would take them from that one key (an equality on
   * an indexed attribute other than objectClass, alone or as the first
   * such term of an and): the search then reads those rows in one
   * statement. Null otherwise, also when the value cannot be keyed.
   */
  private eqTerm(f: Filter): { attr: string; key: string } | null {
    if (f.kind === 'and') {
      for (const item of f.items) {
        if (item.kind !== 'eq' || item.attr.toLowerCase() === 'objectclass') continue;
        const t = this.eqTerm(item);
        if (t) return t;
      }
      return null;
    }
    if (f.kind !== 'eq') return null;
    const at = filterAttributeType(this.schema, f.attr);
    if (!at?.indexed || at.syntax === 'secret') return null;
    try {
      return { attr: at.name, key: indexKey(at.syntax, normalizeValue(at.syntax, f.value)) };
    } catch {
      return null;
    }
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const filter = typeof req.filter === 'object' ? req.filter : parseFilter(req.filter ?? '(objectClass=*)');
    const test = compileFilter(this.schema, filter);
    const needSecrets = [...filterAttributes(filter)].some((a) => filterAttributeType(this.schema, a)?.syntax === 'secret');
    if (!['base', 'one', 'sub'].includes(req.scope)) throw new DirectoryError('unwillingToPerform', `unknown scope ${String(req.scope)}`);
    const order = req.orderBy === undefined ? undefined : this.orderAttribute(req.orderBy);
    const baseRow = this.byDn(req.base)?.row;
    if (!baseRow) throw new DirectoryError('noSuchObject', `no entry ${req.base}`, { dn: req.base });
    const sizeLimit = req.sizeLimit && req.sizeLimit > 0 ? req.sizeLimit : Infinity;
    const deadline = req.timeLimit && req.timeLimit > 0 ? performance.now() + req.timeLimit * 1000 : Infinity;
    const nBaseDn = baseRow.ndn;
    const inScope = (r: Row) =>
      req.scope === 'base' ? r.id === baseRow.id : req.scope === 'one' ? r.parent === baseRow.id : isWithin(r.ndn, nBaseDn);
    const entries: Entry[] = [];
    let limit: 'size' | 'time' | undefined;
    let n = 0;
    const noSecrets: ReadonlySet<string> = new Set();
    let remember = true;
    /** the row's entry when it is in scope and matches; false when the time limit ends the search */
    const match = (r: Row): Loaded | null | false => {
      if ((++n & 63) === 0 && performance.now() > deadline) {
        limit = 'time';
        return false;
      }
      if (!inScope(r)) return null;
      const l = this.load(r, remember);
      const secrets = needSecrets && r.hasSecrets ? new Set(Object.keys(this.sealedOf(r))) : noSecrets;
      return test({ attrs: l.attrs, secrets }) ? l : null;
    };
    /** takes a match in the order rows come; false when a limit ends the search */
    const take = (r: Row): boolean => {
      const l = match(r);
      if (l === false) return false;
      if (l === null) return true;
      if (entries.length >= sizeLimit) {
        limit = 'size';
        return false;
      }
      entries.push(this.toEntry(l, req.attrs));
      return true;
    };
    // An ordered search either visits rows in the order (when the order's
    // index walks past few non-candidates) or collects every match and sorts.
    const pool: Array<{ key: string | undefined; id: number; l: Loaded }> = [];
    const collect = (r: Row): boolean => {
      const l = match(r);
      if (l === false) return false;
      if (l !== null) pool.push({ key: this.orderKey(order!, l.attrs), id: r.id, l });
      return true;
    };
    const sink = order ? collect : take;
    const term = order || req.scope === 'base' ? null : this.eqTerm(filter);
    if (req.scope === 'base') sink(baseRow);
    else if (term) {
      let rows = 0;
      for (const r of this.st.idxEqRows.iterate(term.attr, term.key) as IterableIterator<Row>) {
        remember = ++rows <= 256;
        if (!sink(r)) break;
      }
    } else {
      const ids = this.candidates(filter);
      if (ids) {
        remember = ids.size <= 256;
        const plan = order ? this.orderPlan(order, ids.size, sizeLimit) : 'collect';
        if (plan === 'walk') this.visitInOrder(this.walkOrder(order!, ids), sizeLimit, take);
        else if (plan === 'keys') this.visitInOrder(this.keyOrder(order!, ids), sizeLimit, take);
        else if (!this.visitIds(ids, deadline, order ? Infinity : sizeLimit, sink)) limit = 'time';
      } else {
        remember = false;
        const needed = requiredAttributes(this.schema, filter, MAX_SCAN_TERMS);
        if (needed && needed.size === 0) return { entries, truncated: false };
        const it = this.scan(req.scope === 'one' ? baseRow.id : null, needed);
        for (const r of it) {
          if (!sink(r)) {
            it.return?.();
            break;
          }
        }
      }
    }
    if (pool.length > 0) {
      pool.sort((a, b) => compareOrderKeys(a.key, b.key) || a.id - b.id);
      for (const p of pool.slice(0, sizeLimit)) entries.push(this.toEntry(p.l, req.attrs));
      if (pool.length > sizeLimit) limit ??= 'size';
    }
    return limit ? { entries, truncated: true, limit } : { entries, truncated: false };
  }

  /**
   * Candidate rows in id order; false when the time limit ended the visit.
   * Known entries are not read again. Under a size limit the rows are read
   * in chunks growing from a little over the limit, as most candidates of
   * an index match and the limit usually ends the visit early.
   */
  private visitIds(ids: ReadonlySet<number>, deadline: number, sizeLimit: number, sink: (r: Row) => boolean): boolean {
    const list = [...ids].sort((a, b) => a - b);
    let size = Math.min(CHUNK, sizeLimit < CHUNK ? Math.max(16, sizeLimit + 1) : CHUNK);
    for (let i = 0; i < list.length; i += size, size = Math.min(CHUNK, size * 2)) {
      if (performance.now() > deadline) return false;
      const chunk = list.slice(i, i + size);
      const missing = chunk.filter((id) => !this.known.has(id));
      const read = missing.length === 0 ? undefined : new Map((this.inStatement(missing.length).all(...missing) as Row[]).map((r) => [r.id, r]));
      for (const id of chunk) {
        const r = this.known.get(id)?.row ?? read?.get(id);
        if (r && !sink(r)) return true;
      }
    }
    return true;
  }

  /** The attribute a search orders by; secrets have no order. */
  private orderAttribute(name: string): AttributeType {
    const at = this.schema.attribute(name);
    if (!at) throw new DirectoryError('undefinedAttributeType', `cannot order by ${name}: no such attribute`, { attr: name });
    if (at.syntax === 'secret') throw new DirectoryError('unwillingToPerform', `cannot order by the secret ${at.name}`, { attr: at.name });
    return at;
  }

  /** An entry's place in the order: its least index key of `at` (the idx table's `norm`), undefined without one. */
  private orderKey(at: AttributeType, attrs: Attributes): string | undefined {
    let least: string | undefined;
    for (const v of attrs[at.name] ?? []) {
      let k: string;
      try {
        k = indexKey(at.syntax, normalizeValue(at.syntax, v));
      } catch {
        continue;
      }
      if (least === undefined || compareCodePoints(k, least) < 0) least = k;
    }
    return least;
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
      cached = { version: this.version, count: this.st.idxCount.get(at.name) as number };
      this.keyCounts.set(at.name, cached);
    }
    return cached.count <= candidates * STREAM_RATIO ? 'walk' : 'keys';
  }

  /** The candidates in the order of `at`'s keys, by walking its index; those without a key follow in id order. */
  private *walkOrder(at: AttributeType, ids: ReadonlySet<number>): Generator<number> {
    const seen = new Set<number>();
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
    for (let i = 0; i < list.length; i += CHUNK) {
      const chunk = list.slice(i, i + CHUNK);
      for (const [id, key] of this.keysStatement(chunk.length).raw().all(at.name, ...chunk) as Array<[number, string]>) keys.set(id, key);
    }
    return list.sort((a, b) => compareOrderKeys(keys.get(a), keys.get(b)) || a - b);
  }

  /**
   * Visits ids in the given order, reading entries a batch at a time (a
   * little over the limit: most candidates of a find match); `take`
   * returns false when a limit ends the search.
   */
  private visitInOrder(order: Iterable<number>, sizeLimit: number, take: (r: Row) => boolean): void {
    const batchSize = Math.min(CHUNK, Math.max(16, sizeLimit + 1));
    let batch: number[] = [];
    const flush = (): boolean => {
      const rows = new Map((this.inStatement(batch.length).all(...batch) as Row[]).map((r) => [r.id, r]));
      const ok = batch.every((id) => take(rows.get(id)!));
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
    // attribute names are JSON keys: '"name":' appears in the text only as a key
    const params: unknown[] = [...(parent === null ? [] : [parent]), ...terms.map((t) => JSON.stringify(t) + ':')];
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
      attrs: (row) => this.load(row, !this.touched.has(row.id)).attrs,
      sealed: (row) => this.sealedOf(row),
      children: (id) => st.children.all(id) as Row[],
      hasChildren: (id) => st.hasChildren.get(id) !== undefined,
      insert: (e) => {
        const id = Number(st.insert.run(e.uuid, e.dn, e.ndn, e.parent, JSON.stringify(e.attrs), e.sealed ? JSON.stringify(e.sealed) : null).lastInsertRowid);
        this.touch(id);
        this.writeIndexes(id, e.attrs, e.refs, false);
        return id;
      },
      update: (id, attrs, refs, sealed) => {
        this.touch(id);
        if (sealed === undefined) st.updateAttrs.run(JSON.stringify(attrs), id);
        else st.update.run(JSON.stringify(attrs), sealed ? JSON.stringify(sealed) : null, id);
        this.writeIndexes(id, attrs, refs);
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
    };
  }

  /** The index keys of the entry's indexed attributes, and its references. */
  private writeIndexes(id: number, attrs: Attributes, refs: readonly OutgoingReference[], clear = true): void {
    if (clear) {
      this.st.idxClear.run(id);
      this.st.refClear.run(id);
    }
    for (const name in attrs) {
      const at = this.schema.attribute(name);
      if (!at?.indexed) continue;
      const seen = new Set<string>();
      for (const v of attrs[name]!) {
        let k: string;
        try {
          k = indexKey(at.syntax, normalizeValue(at.syntax, v));
        } catch {
          continue;
        }
        if (!seen.has(k)) this.st.idxInsert.run(at.name, k, id);
        seen.add(k);
      }
    }
    for (const r of refs) this.st.refInsert.run(r.attr, r.target, id);
  }

  async close(): Promise<void> {
    if (this.db.open) {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.close();
    }
    this.forgetAll();
  }
}
