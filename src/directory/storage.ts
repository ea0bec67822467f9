/**
 * The contract between the write path (write-path.ts, where every rule of a
 * write runs) and a backend that only stores: entries by normalised DN and by
 * id, their children, inserts, attribute updates with already sealed
 * secrets, moves, removals, the DN-valued references the write path hands
 * over, the entries holding an index key (for the uniqueness plugin), and
 * transactions. A backend also answers reads (get, search) on committed
 * data; query planning is its own business.
 *
 * Every transaction method returns a value or a promise ({@link Maybe}): the
 * embedded SQLite backend answers synchronously and its transactions run in
 * one synchronous call; a network backend (PostgreSQL) answers with
 * promises, and the same write path then runs asynchronously.
 */
import type { Attributes, Entry, SearchRequest, SearchResult } from './types.js';

/** A value now, or later. */
export type Maybe<T> = T | Promise<T>;

export function isPromise<T>(x: Maybe<T>): x is Promise<T> {
  return typeof (x as { then?: unknown } | null | undefined)?.then === 'function';
}

/**
 * Steps of a write (the write path's, and its plugins'): a generator that
 * yields the storage's promises and gets their values back.
 */
export type Steps<T> = Generator<Promise<unknown>, T, unknown>;

/** A storage answer inside a write: `yield* wait(tx.x())` is the value, at once or after the promise. */
export function* wait<T>(x: Maybe<T>): Steps<T> {
  return isPromise(x) ? ((yield x) as T) : x;
}

/**
 * An entry as the write path addresses it. A backend may hand out objects
 * of its own with more fields (the write path gives them back unchanged).
 */
export interface StoredEntry {
  readonly id: unknown;
  /** entryUUID: the AAD of its sealed secrets, never changed */
  readonly uuid: string;
  /** as stored (original case) */
  readonly dn: string;
  readonly ndn: string;
}

/** Sealed secret values by canonical attribute name (crypto/sealed-box ciphertexts, never plaintext). */
export type Sealed = Record<string, string[]>;

/** One stored reference: entry `entry` holds in `attr` a value naming `target` (normalised DN). */
export interface Reference<Id> {
  attr: string;
  target: string;
  entry: Id;
}

/** A DN-valued reference of an entry being written: attribute and normalised target. */
export interface OutgoingReference {
  attr: string;
  target: string;
}

/**
 * The storage operations of one transaction. What one method writes, the
 * next reads (read-your-writes inside the transaction). An entry object
 * describes the entry as it was read (a later move does not change it).
 * Attributes returned are read-only to the caller; attributes given are
 * owned by the storage from then on.
 */
export interface StorageTx<E extends StoredEntry> {
  entry(ndn: string): Maybe<E | undefined>;
  entryById(id: E['id']): Maybe<E | undefined>;
  /** the entry's attributes, operational ones included, secrets excluded */
  attrs(e: E): Maybe<Attributes>;
  /** the entry's sealed secrets ({} without any) */
  sealed(e: E): Maybe<Sealed>;
  children(id: E['id']): Maybe<E[]>;
  hasChildren(id: E['id']): Maybe<boolean>;
  /** stores a new entry; `refs` are its references (answered by refsTo/refsWithin) */
  insert(row: { uuid: string; dn: string; ndn: string; parent: E['id'] | null; attrs: Attributes; sealed: Sealed | null; refs: OutgoingReference[] }): Maybe<E['id']>;
  /** replaces the attributes and references; the sealed secrets too unless `sealed` is undefined */
  update(id: E['id'], attrs: Attributes, refs: OutgoingReference[], sealed?: Sealed | null): Maybe<void>;
  /** gives the entry a new DN (its parent stays) */
  move(id: E['id'], dn: string, ndn: string): Maybe<void>;
  /** removes the entry with its references and index keys */
  remove(id: E['id']): Maybe<void>;
  /** references whose target is `ndn` */
  refsTo(ndn: string): Maybe<Reference<E['id']>[]>;
  /** references whose target is `ndn` or below it (a superset is allowed: the write path filters) */
  refsWithin(ndn: string): Maybe<Reference<E['id']>[]>;
  /** the entries whose indexed attribute `attr` has a value of index key `key` (plan.ts indexKeys) */
  holding(attr: string, key: string): Maybe<E['id'][]>;
}

/**
 * A backend. `transaction` runs `body` atomically: all of its writes commit
 * or none do (a throw or a rejected promise rolls back). Reads (get, search,
 * sealedSecrets) see committed data only, never a transaction in progress.
 * The write path runs one transaction at a time per handle; a backend
 * shared by several processes serialises writers itself (SQLite's write
 * lock; on PostgreSQL a transaction-level lock).
 */
export interface DirectoryStorage<E extends StoredEntry> {
  transaction<T>(body: (tx: StorageTx<E>) => Maybe<T>): Maybe<T>;
  get(dn: string, attrs?: readonly string[]): Promise<Entry | null>;
  search(req: SearchRequest): Promise<SearchResult>;
  /** the entry's stored DN, entryUUID and sealed secrets; null when there is no entry */
  sealedSecrets(dn: string): Promise<{ dn: string; uuid: string; sealed: Sealed } | null>;
  /**
   * A backend several processes share calls `changed` whenever a write
   * commits in any of them (the write path then moves its generation, so
   * caches keyed by it see other servers' writes); a backend only this
   * process writes has no such method.
   */
  watch?(changed: () => void): void;
  close(): Promise<void>;
}
