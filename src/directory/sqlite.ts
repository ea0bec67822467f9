/**
 * The embedded backend: SQLite through better-sqlite3, WAL journal and
 * synchronous=FULL so every commit is fsync'd. Tables: entries (DN,
 * normalised DN, parent, public attributes as JSON, sealed secrets as JSON),
 * idx (normalised values of indexed attributes) and refs (DN-valued
 * references, for referential integrity). Validation, filters and secrets
 * come from the backend-independent modules; this file holds only storage.
 */
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { formatDn, isWithin, normalizeDn, parseDn, type Rdn } from './dn.js';
import { applyModifications, draftFromInput, validateDraft, type Draft } from './entry.js';
import { matches, parseFilter, type Filter } from './filter.js';
import { compileSchema, generalizedTime, normalizeValue } from './schema.js';
import { openSecret, sealSecret } from './secrets.js';
import {
  DirectoryError,
  type Attributes,
  type Directory,
  type Entry,
  type Modification,
  type Schema,
  type SchemaDefinition,
  type SearchRequest,
  type SearchResult,
  type WriteOp,
} from './types.js';

export interface SqliteOptions {
  path: string;
  baseDn: string;
  schema: SchemaDefinition;
  masterKey: Buffer;
  /** create the file and the base entry when missing */
  create?: boolean;
}

interface Row {
  id: number;
  uuid: string;
  dn: string;
  ndn: string;
  parent: number | null;
  attrs: string;
  secrets: string | null;
}

interface Loaded {
  row: Row;
  attrs: Attributes;
  sealed: Record<string, string[]>;
}

const SCHEMA_SQL = `
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
CREATE TABLE IF NOT EXISTS idx (attr TEXT NOT NULL, norm TEXT NOT NULL, entry INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS idx_attr_norm ON idx(attr, norm);
CREATE INDEX IF NOT EXISTS idx_entry ON idx(entry);
CREATE TABLE IF NOT EXISTS refs (attr TEXT NOT NULL, target TEXT NOT NULL, entry INTEGER NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS idx_trigrams USING fts5(norm, content='idx', content_rowid='rowid', tokenize='trigram');
CREATE TRIGGER IF NOT EXISTS idx_trigrams_ins AFTER INSERT ON idx BEGIN
  INSERT INTO idx_trigrams(rowid, norm) VALUES (new.rowid, new.norm);
END;
CREATE TRIGGER IF NOT EXISTS idx_trigrams_del AFTER DELETE ON idx BEGIN
  INSERT INTO idx_trigrams(idx_trigrams, rowid, norm) VALUES ('delete', old.rowid, old.norm);
END;
CREATE INDEX IF NOT EXISTS refs_target ON refs(target);
CREATE INDEX IF NOT EXISTS refs_entry ON refs(entry);
`;

const CHUNK = 500;

function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

export async function openSqliteDirectory(o: SqliteOptions): Promise<Directory> {
  return new SqliteDirectory(o);
}

class SqliteDirectory implements Directory {
  readonly baseDn: string;
  readonly schema: Schema;
  private readonly db: Database.Database;
  private readonly key: Buffer;
  private readonly nBase: string;
  private readonly st: Record<string, Database.Statement>;
  private readonly inStatements = new Map<number, Database.Statement>();
  generation = 0;

  constructor(o: SqliteOptions) {
    if (o.masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
    this.key = o.masterKey;
    this.schema = compileSchema(o.schema);
    this.baseDn = o.baseDn;
    this.nBase = normalizeDn(o.baseDn);
    this.db = new Database(o.path, { fileMustExist: !o.create });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    const hadTrigrams = !!this.db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'idx_trigrams'").get();
    this.db.exec(SCHEMA_SQL);
    // stores made before the trigram index get it filled once
    if (!hadTrigrams) this.db.exec("INSERT INTO idx_trigrams(idx_trigrams) VALUES ('rebuild')");
    this.st = {
      byNdn: this.db.prepare('SELECT * FROM entries WHERE ndn = ?'),
      byId: this.db.prepare('SELECT * FROM entries WHERE id = ?'),
      children: this.db.prepare('SELECT * FROM entries WHERE parent = ?'),
      hasChildren: this.db.prepare('SELECT 1 FROM entries WHERE parent = ? LIMIT 1'),
      all: this.db.prepare('SELECT * FROM entries'),
      insert: this.db.prepare('INSERT INTO entries (uuid, dn, ndn, parent, attrs, secrets) VALUES (?, ?, ?, ?, ?, ?)'),
      update: this.db.prepare('UPDATE entries SET attrs = ?, secrets = ? WHERE id = ?'),
      move: this.db.prepare('UPDATE entries SET dn = ?, ndn = ?, parent = ? WHERE id = ?'),
      remove: this.db.prepare('DELETE FROM entries WHERE id = ?'),
      idxInsert: this.db.prepare('INSERT INTO idx (attr, norm, entry) VALUES (?, ?, ?)'),
      idxClear: this.db.prepare('DELETE FROM idx WHERE entry = ?'),
      idxEq: this.db.prepare('SELECT DISTINCT entry FROM idx WHERE attr = ? AND norm = ?'),
      idxLike: this.db.prepare("SELECT DISTINCT entry FROM idx WHERE attr = ? AND norm LIKE ? ESCAPE '\\'"),
      idxPresent: this.db.prepare('SELECT DISTINCT entry FROM idx WHERE attr = ?'),
      // substring search through the trigram index (pieces of 3+ characters, no LIKE wildcards in them)
      idxTrigram: this.db.prepare('SELECT DISTINCT idx.entry FROM idx_trigrams JOIN idx ON idx.rowid = idx_trigrams.rowid WHERE idx_trigrams.norm LIKE ? AND idx.attr = ?'),
      refInsert: this.db.prepare('INSERT INTO refs (attr, target, entry) VALUES (?, ?, ?)'),
      refClear: this.db.prepare('DELETE FROM refs WHERE entry = ?'),
      refsTo: this.db.prepare('SELECT attr, target, entry FROM refs WHERE target = ?'),
      refsUnder: this.db.prepare("SELECT attr, target, entry FROM refs WHERE target = ? OR target LIKE ? ESCAPE '\\'"),
    };
    if (o.create && !this.st.byNdn!.get(this.nBase)) this.createBase();
  }

  private createBase(): void {
    const rdn = parseDn(this.baseDn)[0]!;
    const first = rdn[0]!;
    const attrs: Attributes =
      first.type.toLowerCase() === 'dc'
        ? { objectClass: ['top', 'domain'], dc: [first.value] }
        : { objectClass: ['top', 'dirContainer'], cn: [first.value] };
    this.write(() => this.addTx(this.baseDn, attrs, true));
  }

  // ---- reading -------------------------------------------------------------

  private load(row: Row): Loaded {
    return { row, attrs: JSON.parse(row.attrs) as Attributes, sealed: row.secrets ? (JSON.parse(row.secrets) as Record<string, string[]>) : {} };
  }

  private rowByDn(dn: string): Row | undefined {
    return this.st.byNdn!.get(normalizeDn(dn)) as Row | undefined;
  }

  private toEntry(l: Loaded, attrs?: readonly string[]): Entry {
    let out: Attributes;
    if (!attrs || attrs.length === 0 || attrs.includes('*')) out = l.attrs;
    else {
      out = {};
      for (const a of attrs) {
        const at = this.schema.attribute(a);
        if (at && l.attrs[at.name]) out[at.name] = l.attrs[at.name]!;
      }
    }
    return { dn: l.row.dn, attrs: structuredClone(out) };
  }

  async get(dn: string, attrs?: readonly string[]): Promise<Entry | null> {
    const row = this.rowByDn(dn);
    return row ? this.toEntry(this.load(row), attrs) : null;
  }

  async readSecret(dn: string, attr: string): Promise<string[]> {
    const row = this.rowByDn(dn);
    if (!row) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    const at = this.schema.attribute(attr);
    if (!at || at.syntax !== 'secret') throw new DirectoryError('undefinedAttributeType', `${attr} is not a secret attribute`, { attr });
    const sealed = this.load(row).sealed[at.name] ?? [];
    return sealed.map((s) => openSecret(this.key, row.uuid, at.name, s));
  }

  /** Candidate entry ids from indexes, or null when the filter cannot use them. */
  private candidates(f: Filter): Set<number> | null {
    switch (f.kind) {
      case 'and': {
        // prefer the most selective usable term: equality on a non-objectClass attribute, then substrings, then objectClass
        const rank = (x: Filter) => (x.kind === 'eq' ? (x.attr.toLowerCase() === 'objectclass' ? 3 : 0) : x.kind === 'sub' ? 1 : 2);
        const sorted = [...f.items].sort((a, b) => rank(a) - rank(b));
        let best: Set<number> | null = null;
        for (const item of sorted) {
          // objectClass equality rarely narrows anything; fetching its ids would cost more than it saves
          if (best && rank(item) === 3) break;
          const c = this.candidates(item);
          if (c && (!best || c.size < best.size)) best = c;
          if (best && best.size < 64) break;
          if (best && rank(item) === 0) break;
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
    const at = this.schema.attribute(f.attr);
    if (!at) return f.kind === 'present' ? new Set() : new Set();
    if (!at.indexed || at.syntax === 'secret') return null;
    const ids = (rows: unknown[]) => new Set((rows as Array<{ entry: number }>).map((r) => r.entry));
    try {
      if (f.kind === 'eq') return ids(this.st.idxEq!.all(at.name, normalizeValue(at.syntax, f.value)));
      if (f.kind === 'present') return ids(this.st.idxPresent!.all(at.name));
      if (f.kind === 'sub' && (at.syntax === 'string' || at.syntax === 'exact')) {
        const pieces = [f.initial, ...f.any, f.final].filter((x): x is string => x !== undefined).map((x) => normalizeValue(at.syntax, x));
        if (pieces.some((x) => x.length >= 3) && !pieces.some((x) => /[%_\\]/.test(x))) {
          const pattern = (f.initial !== undefined ? pieces[0] : '') + '%' + f.any.map((a) => normalizeValue(at.syntax, a) + '%').join('') + (f.final !== undefined ? normalizeValue(at.syntax, f.final) : '');
          return ids(this.st.idxTrigram!.all(pattern, at.name));
        }
        const n = (s: string) => likeEscape(normalizeValue(at.syntax, s));
        const pattern = (f.initial !== undefined ? n(f.initial) : '') + '%' + f.any.map((a) => n(a) + '%').join('') + (f.final !== undefined ? n(f.final) : '');
        return ids(this.st.idxLike!.all(at.name, pattern));
      }
    } catch {
      return new Set();
    }
    return null;
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const filter = parseFilter(req.filter ?? '(objectClass=*)');
    const baseRow = this.rowByDn(req.base);
    if (!baseRow) throw new DirectoryError('noSuchObject', `no entry ${req.base}`, { dn: req.base });
    const sizeLimit = req.sizeLimit && req.sizeLimit > 0 ? req.sizeLimit : Infinity;
    const deadline = req.timeLimit && req.timeLimit > 0 ? Date.now() + req.timeLimit * 1000 : Infinity;
    const nBaseDn = baseRow.ndn;
    const inScope = (r: Row) =>
      req.scope === 'base' ? r.id === baseRow.id : req.scope === 'one' ? r.parent === baseRow.id : isWithin(r.ndn, nBaseDn);
    const entries: Entry[] = [];
    let truncated = false;
    let limit: 'size' | 'time' | undefined;
    let n = 0;
    const consider = (r: Row): boolean => {
      if ((++n & 255) === 0 && Date.now() > deadline) {
        truncated = true;
        limit = 'time';
        return false;
      }
      if (!inScope(r)) return true;
      const l = this.load(r);
      const secrets = new Set(Object.keys(l.sealed).filter((k) => l.sealed[k]!.length > 0));
      if (!matches(this.schema, filter, { attrs: l.attrs, secrets })) return true;
      if (entries.length >= sizeLimit) {
        truncated = true;
        limit = 'size';
        return false;
      }
      entries.push(this.toEntry(l, req.attrs));
      return true;
    };
    if (req.scope === 'base') consider(baseRow);
    else {
      const ids = this.candidates(filter);
      if (ids) {
        const list = [...ids].sort((a, b) => a - b);
        outer: for (let i = 0; i < list.length; i += CHUNK) {
          const chunk = list.slice(i, i + CHUNK);
          const rows = this.inStatement(chunk.length).all(...chunk) as Row[];
          for (const r of rows) if (!consider(r)) break outer;
        }
      } else {
        const it = (req.scope === 'one' ? this.st.children!.iterate(baseRow.id) : this.st.all!.iterate()) as IterableIterator<Row>;
        for (const r of it) {
          if (!consider(r)) {
            it.return?.();
            break;
          }
        }
      }
    }
    if (Date.now() > deadline && !truncated) {
      truncated = true;
      limit = 'time';
    }
    return { entries, truncated, ...(limit ? { limit } : {}) };
  }

  private inStatement(n: number): Database.Statement {
    let st = this.inStatements.get(n);
    if (!st) {
      st = this.db.prepare(`SELECT * FROM entries WHERE id IN (${Array.from({ length: n }, () => '?').join(',')}) ORDER BY id`);
      if (this.inStatements.size < 64) this.inStatements.set(n, st);
    }
    return st;
  }

  // ---- writing -------------------------------------------------------------

  private write<T>(fn: () => T): T {
    try {
      return this.db.transaction(fn)();
    } finally {
      this.generation++;
    }
  }

  private writeIndexes(id: number, attrs: Attributes): void {
    this.st.idxClear!.run(id);
    this.st.refClear!.run(id);
    for (const [name, values] of Object.entries(attrs)) {
      const at = this.schema.attribute(name)!;
      if (at.indexed) {
        const seen = new Set<string>();
        for (const v of values) {
          const norm = normalizeValue(at.syntax, v);
          if (!seen.has(norm)) this.st.idxInsert!.run(at.name, norm, id);
          seen.add(norm);
        }
      }
      if (at.references) for (const v of values) this.st.refInsert!.run(at.name, normalizeDn(v), id);
    }
  }

  /** DN-valued references must name existing entries. */
  private checkReferenceTargets(attrs: Attributes, before?: Attributes): void {
    for (const [name, values] of Object.entries(attrs)) {
      const at = this.schema.attribute(name)!;
      if (!at.references) continue;
      const old = new Set((before?.[name] ?? []).map((v) => normalizeDn(v)));
      for (const v of values) {
        const n = normalizeDn(v);
        if (old.has(n)) continue;
        if (!this.st.byNdn!.get(n)) throw new DirectoryError('referenceTargetMissing', `${name}: no entry ${v}`, { attr: name, dn: v });
      }
    }
  }

  private seal(d: Draft, uuid: string, keep: Record<string, string[]>): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const [attr, s] of d.secrets) {
      const sealed = [...(s.sealed ?? []), ...(s.plain ?? []).map((p) => sealSecret(this.key, uuid, attr, p))];
      if (sealed.length) out[attr] = sealed;
    }
    void keep;
    return out;
  }

  private addTx(dn: string, input: Attributes, isBase = false): void {
    const rdns = parseDn(dn);
    if (rdns.length === 0) throw new DirectoryError('invalidDNSyntax', 'cannot add the root DN', { dn });
    const ndn = normalizeDn(dn);
    if (!isBase && !isWithin(ndn, this.nBase)) throw new DirectoryError('noSuchObject', `${dn} is outside ${this.baseDn}`, { dn });
    if (this.st.byNdn!.get(ndn)) throw new DirectoryError('entryAlreadyExists', `${dn} already exists`, { dn });
    let parentId: number | null = null;
    if (!isBase) {
      const parent = this.st.byNdn!.get(normalizeDn(formatDn(rdns.slice(1)))) as Row | undefined;
      if (!parent) throw new DirectoryError('noSuchObject', `the parent of ${dn} does not exist`, { dn });
      parentId = parent.id;
    }
    const d = draftFromInput(this.schema, input);
    // the RDN's values belong to the entry (RFC 4511 §4.7)
    for (const ava of rdns[0]!) {
      const at = this.schema.attribute(ava.type);
      if (!at) throw new DirectoryError('undefinedAttributeType', `unknown RDN attribute ${ava.type}`, { attr: ava.type });
      const cur = d.attrs[at.name] ?? [];
      if (!cur.some((v) => normalizeValue(at.syntax, v) === normalizeValue(at.syntax, ava.value))) d.attrs[at.name] = [...cur, ava.value];
    }
    validateDraft(this.schema, d, rdns[0]!);
    this.checkReferenceTargets(d.attrs);
    const uuid = randomUUID();
    const now = generalizedTime();
    const attrs: Attributes = { ...d.attrs, entryUUID: [uuid], createTimestamp: [now], modifyTimestamp: [now] };
    const sealed = this.seal(d, uuid, {});
    const info = this.st.insert!.run(uuid, formatDn(rdns), ndn, parentId, JSON.stringify(attrs), Object.keys(sealed).length ? JSON.stringify(sealed) : null);
    this.writeIndexes(Number(info.lastInsertRowid), attrs);
  }

  private modifyTx(dn: string, mods: readonly Modification[]): void {
    const row = this.rowByDn(dn);
    if (!row) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (mods.length === 0) return;
    const l = this.load(row);
    const { entryUUID, createTimestamp, modifyTimestamp, ...publicAttrs } = l.attrs;
    void modifyTimestamp;
    const d: Draft = { attrs: structuredClone(publicAttrs), secrets: new Map(Object.entries(l.sealed).map(([k, v]) => [k, { sealed: v }])) };
    applyModifications(this.schema, d, mods);
    validateDraft(this.schema, d, parseDn(row.dn)[0]!);
    this.checkReferenceTargets(d.attrs, l.attrs);
    const attrs: Attributes = { ...d.attrs, entryUUID: entryUUID!, createTimestamp: createTimestamp!, modifyTimestamp: [generalizedTime()] };
    const sealed = this.seal(d, row.uuid, l.sealed);
    this.st.update!.run(JSON.stringify(attrs), Object.keys(sealed).length ? JSON.stringify(sealed) : null, row.id);
    this.writeIndexes(row.id, attrs);
  }

  private deleteTx(dn: string): void {
    const row = this.rowByDn(dn);
    if (!row) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (row.ndn === this.nBase) throw new DirectoryError('unwillingToPerform', 'the base entry cannot be deleted', { dn });
    if (this.st.hasChildren!.get(row.id)) throw new DirectoryError('notAllowedOnNonLeaf', `${dn} has subordinate entries`, { dn });
    const refs = this.st.refsTo!.all(row.ndn) as Array<{ attr: string; target: string; entry: number }>;
    for (const r of refs) {
      if (r.entry === row.id) continue;
      if (this.schema.attribute(r.attr)!.references === 'restrict') {
        throw new DirectoryError('referenced', `${dn} is referenced by ${r.attr}`, { dn, attr: r.attr });
      }
    }
    for (const r of refs) {
      if (r.entry === row.id) continue;
      const referrer = this.st.byId!.get(r.entry) as Row;
      const l = this.load(referrer);
      const left = (l.attrs[r.attr] ?? []).filter((v) => normalizeDn(v) !== row.ndn);
      this.modifyTx(referrer.dn, [{ op: 'replace', attr: r.attr, values: left }]);
    }
    this.st.idxClear!.run(row.id);
    this.st.refClear!.run(row.id);
    this.st.remove!.run(row.id);
  }

  private renameTx(dn: string, newRdn: string): string {
    const row = this.rowByDn(dn);
    if (!row) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (row.ndn === this.nBase) throw new DirectoryError('unwillingToPerform', 'the base entry cannot be renamed', { dn });
    const rdn: Rdn = parseDn(newRdn)[0] ?? [];
    if (parseDn(newRdn).length !== 1) throw new DirectoryError('invalidDNSyntax', `"${newRdn}" is not a single RDN`, { dn: newRdn });
    const rest = parseDn(row.dn).slice(1);
    const newDn = formatDn([rdn, ...rest]);
    const newNdn = normalizeDn(newDn);
    if (newNdn === row.ndn) return row.dn;
    if (this.st.byNdn!.get(newNdn)) throw new DirectoryError('entryAlreadyExists', `${newDn} already exists`, { dn: newDn });
    // RDN attribute values: drop the old RDN values, add the new ones (deleteoldrdn)
    const oldRdn = parseDn(row.dn)[0]!;
    const l = this.load(row);
    const attrs = structuredClone(l.attrs);
    for (const ava of oldRdn) {
      const at = this.schema.attribute(ava.type)!;
      attrs[at.name] = (attrs[at.name] ?? []).filter((v) => normalizeValue(at.syntax, v) !== normalizeValue(at.syntax, ava.value));
      if (attrs[at.name]!.length === 0) delete attrs[at.name];
    }
    for (const ava of rdn) {
      const at = this.schema.attribute(ava.type);
      if (!at) throw new DirectoryError('undefinedAttributeType', `unknown RDN attribute ${ava.type}`, { attr: ava.type });
      attrs[at.name] = [...(attrs[at.name] ?? []), ava.value];
    }
    const { entryUUID, createTimestamp, modifyTimestamp, ...publicAttrs } = attrs;
    void modifyTimestamp;
    const d: Draft = { attrs: publicAttrs, secrets: new Map(Object.entries(l.sealed).map(([k, v]) => [k, { sealed: v }])) };
    validateDraft(this.schema, d, rdn);
    const finalAttrs = { ...d.attrs, entryUUID: entryUUID!, createTimestamp: createTimestamp!, modifyTimestamp: [generalizedTime()] };
    this.st.update!.run(JSON.stringify(finalAttrs), row.secrets, row.id);
    this.st.move!.run(newDn, newNdn, row.parent, row.id);
    this.writeIndexes(row.id, finalAttrs);
    // descendants move with it
    const oldSuffix = row.ndn;
    const stack = [row.id];
    while (stack.length) {
      const id = stack.pop()!;
      for (const child of this.st.children!.all(id) as Row[]) {
        const childDn = formatDn([...parseDn(child.dn).slice(0, parseDn(child.dn).length - parseDn(row.dn).length), rdn, ...rest]);
        this.st.move!.run(childDn, normalizeDn(childDn), child.parent, child.id);
        stack.push(child.id);
      }
    }
    // references to the entry or its descendants follow
    const refs = this.st.refsUnder!.all(oldSuffix, '%,' + likeEscape(oldSuffix)) as Array<{ attr: string; target: string; entry: number }>;
    const byEntry = new Map<number, Set<string>>();
    for (const r of refs) byEntry.set(r.entry, (byEntry.get(r.entry) ?? new Set()).add(r.attr));
    for (const [entryId, attrNames] of byEntry) {
      const referrer = this.st.byId!.get(entryId) as Row;
      const rl = this.load(referrer);
      for (const a of attrNames) {
        rl.attrs[a] = (rl.attrs[a] ?? []).map((v) => {
          const n = normalizeDn(v);
          if (n === oldSuffix) return newDn;
          if (n.endsWith(',' + oldSuffix)) {
            const vr = parseDn(v);
            return formatDn([...vr.slice(0, vr.length - parseDn(row.dn).length), rdn, ...rest]);
          }
          return v;
        });
      }
      this.st.update!.run(JSON.stringify(rl.attrs), referrer.secrets, referrer.id);
      this.writeIndexes(referrer.id, rl.attrs);
    }
    return newDn;
  }

  private runOp(op: WriteOp): string | void {
    switch (op.kind) {
      case 'add':
        return this.addTx(op.dn, op.attrs);
      case 'modify':
        return this.modifyTx(op.dn, op.mods);
      case 'delete':
        return this.deleteTx(op.dn);
      case 'rename':
        return this.renameTx(op.dn, op.newRdn);
    }
  }

  async add(dn: string, attrs: Attributes): Promise<void> {
    this.write(() => this.addTx(dn, attrs));
  }
  async modify(dn: string, mods: Modification[]): Promise<void> {
    this.write(() => this.modifyTx(dn, mods));
  }
  async delete(dn: string): Promise<void> {
    this.write(() => this.deleteTx(dn));
  }
  async rename(dn: string, newRdn: string): Promise<string> {
    return this.write(() => this.renameTx(dn, newRdn));
  }
  async batch(ops: WriteOp[]): Promise<void> {
    this.write(() => {
      for (const op of ops) this.runOp(op);
    });
  }
  async close(): Promise<void> {
    if (this.db.open) {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.close();
    }
  }
}
