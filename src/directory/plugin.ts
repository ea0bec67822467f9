/**
 * Write plugins: the directory's invariants, each enforced where a write
 * commits, as kanidm's write plugins and slapd's overlays (refint, unique)
 * are. The write path (write-path.ts) runs every plugin's `pre`, in order,
 * inside the write's transaction, after the entry passed schema validation
 * and before the storage stores it: on every backend and for every writer
 * (commands, init, replica-prepare, the KDC, the password service), since
 * they all write through it. A plugin refuses a write by throwing a
 * DirectoryError, which rolls the whole transaction back. `verify` checks
 * that the invariant holds over what is stored.
 */
import type { Steps, StorageTx, StoredEntry } from './storage.js';
import type { Attributes, Entry, Schema } from './types.js';

/** One entry about to be stored by an add, a modify or a rename (a batch has one per such operation). */
export interface EntryWrite<E extends StoredEntry> {
  readonly op: 'add' | 'modify' | 'rename';
  /** the DN the entry has once written */
  readonly dn: string;
  /** the entry as stored before the write; undefined for an add */
  readonly entry: E | undefined;
  /** its attributes before the write (operational ones included); undefined for an add */
  readonly before: Attributes | undefined;
  /** its public attributes as they will be stored, validated against the schema */
  readonly after: Attributes;
}

export interface WritePlugin {
  readonly name: string;
  /** Throws a DirectoryError when storing `w` would break the invariant; reads through `tx`, which sees the transaction's own writes. */
  pre?<E extends StoredEntry>(w: EntryWrite<E>, tx: StorageTx<E>): Steps<void>;
  /** What breaks the invariant among `entries` (every entry of a directory, with their operational attributes): one line each. */
  verify?(entries: readonly Entry[]): string[];
}

/** A plugin for a schema; null when the schema gives it nothing to do. */
export type WritePluginFactory = (schema: Schema) => WritePlugin | null;
