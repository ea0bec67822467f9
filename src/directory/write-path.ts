/**
 * The write path of the directory, the same for every backend: DN checks
 * (inside the base, parent present, no duplicate), drafts validated against
 * the schema (entry.ts), RDN values, the write plugins run in order on each
 * entry about to be stored (plugin.ts: new references name entries,
 * refint.ts; keys no other entry holds, unique.ts), the
 * operational attributes entryUUID, createTimestamp and modifyTimestamp,
 * secrets sealed before the storage sees them (secrets.ts), descendants and
 * references that follow a rename, references dropped by a delete, atomic
 * batches and the `generation` counter. It runs above a
 * {@link DirectoryStorage} that only stores (storage.ts); reads go to the
 * storage's own query planning. {@link openDirectory} joins the two into a
 * {@link Directory}.
 *
 * Synchronous and asynchronous storage, one write path: each write is a
 * generator that yields only when a storage call returned a promise. The
 * SQLite backend answers every call at once, so a whole write (a batch of
 * thousands included) runs inside one synchronous better-sqlite3
 * transaction: no reader can run between its first statement and its
 * commit, so none sees a write in progress, and one connection suffices. A
 * PostgreSQL backend returns promises and the same generator then runs
 * asynchronously on the transaction's own connection while readers use
 * others, which see committed data only; writes through one handle queue
 * behind each other, and the queue costs nothing when the storage is
 * synchronous. Driving SQLite asynchronously as well (BEGIN IMMEDIATE held
 * across event-loop turns) cost about the same CPU per write, but would
 * need a second connection for readers and a lock held while other work
 * runs; docs/architecture.md ("How the code is built") has the figures.
 * `generation` moves after every commit and every rollback, so nothing
 * cached against it outlives a write that rolled back.
 */
import { randomUUID } from 'node:crypto';
import { formatDn, isWithin, normalizeDn, parseDn, rebaseDn, type Rdn } from './dn.js';
import { addRdnValues, applyModifications, draftFromInput, draftFromStored, removeRdnValues, validateDraft, type Draft } from './entry.js';
import type { EntryWrite, WritePlugin, WritePluginFactory } from './plugin.js';
import { planDelete, referencesOf, referrersWithin, refint, rewriteReferences, withoutTarget } from './refint.js';
import { compileSchema, generalizedTime } from './schema.js';
import { openSecret, sealSecret } from './secrets.js';
import { isPromise, wait, type DirectoryStorage, type Maybe, type Sealed, type Steps, type StorageTx, type StoredEntry } from './storage.js';
import { unique } from './unique.js';
import { written } from './written.js';
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

export interface DirectoryOptions {
  baseDn: string;
  schema: SchemaDefinition;
  /** 32 bytes: the realm's master key, which seals secrets at rest */
  masterKey: Buffer;
  /** create the base entry when missing */
  create?: boolean;
}

/**
 * A directory over a storage: checks the options, opens the storage with
 * the compiled schema, and creates the base entry when asked to and
 * missing. The storage is closed again when that fails.
 */
export async function openDirectory<E extends StoredEntry>(o: DirectoryOptions, open: (schema: Schema) => DirectoryStorage<E>): Promise<Directory> {
  if (!Buffer.isBuffer(o.masterKey) || o.masterKey.length !== 32) throw new Error('the master key must be 32 bytes');
  const schema = compileSchema(o.schema);
  if (normalizeDn(o.baseDn) === '') throw new DirectoryError('invalidDNSyntax', 'the base DN cannot be empty');
  const storage = open(schema);
  const dir = new StoreDirectory(o.baseDn, schema, storage, o.masterKey);
  try {
    if (o.create && !(await storage.get(o.baseDn, ['1.1']))) await dir.createBase();
  } catch (e) {
    await storage.close();
    throw e;
  }
  return dir;
}

/** The write plugins, in the order they run: a key is looked up only once the references it may hold are known to name entries. */
const PLUGINS: readonly WritePluginFactory[] = [refint, unique];

function pluginsFor(schema: Schema): WritePlugin[] {
  return PLUGINS.map((p) => p(schema)).filter((p): p is WritePlugin => p !== null);
}

/**
 * What breaks an invariant of the write plugins in a directory as it is
 * (every entry read through `dir`): one line per problem, [] when every
 * invariant holds.
 */
export async function verifyDirectory(dir: Directory): Promise<string[]> {
  const { entries } = await dir.search({ base: dir.baseDn, scope: 'sub' });
  return pluginsFor(dir.schema).flatMap((p) => (p.verify ? p.verify(entries).map((line) => `${p.name}: ${line}`) : []));
}

/** Runs steps to the end: synchronously while the storage answers at once, else asynchronously from the first promise. */
function drive<T>(steps: Steps<T>): Maybe<T> {
  const first = steps.next();
  return first.done ? first.value : finish(steps, first.value);
}

async function finish<T>(steps: Steps<T>, pending: Promise<unknown>): Promise<T> {
  for (;;) {
    let value: unknown;
    let failed = false;
    try {
      value = await pending;
    } catch (e) {
      failed = true;
      value = e;
    }
    const step = failed ? steps.throw(value) : steps.next(value);
    if (step.done) return step.value;
    pending = step.value;
  }
}

const settle = (): void => {};

class StoreDirectory<E extends StoredEntry> implements Directory {
  readonly baseDn: string;
  readonly schema: Schema;
  generation = 0;
  private readonly nBase: string;
  /** the plugins that have something to do under this schema, in order */
  private readonly plugins: readonly WritePlugin[];
  /** the subtrees readers asked about (subtreeGeneration): normal form → the generation of the last commit that wrote within or above it */
  private readonly watched = new Map<string, number>();
  /** the normal forms of the DNs subtreeGeneration was asked about, as asked */
  private readonly normalOf = new Map<string, string>();
  /** normal forms of the DNs the transaction under way writes (writes run one at a time) */
  private touched: string[] = [];
  /** the last write still running (asynchronous storage only): the next one starts after it */
  private queue: Promise<void> | undefined;

  constructor(
    baseDn: string,
    schema: Schema,
    private readonly storage: DirectoryStorage<E>,
    private readonly key: Buffer,
  ) {
    this.baseDn = baseDn;
    this.schema = schema;
    this.nBase = normalizeDn(baseDn);
    this.plugins = pluginsFor(schema);
    // another server's commit moves the generation too, and, not saying where it wrote, every watched subtree's
    storage.watch?.(() => {
      this.generation++;
      for (const k of this.watched.keys()) this.watched.set(k, this.generation);
    });
  }

  subtreeGeneration(dn: string): number {
    // callers ask about the same few containers at every read: their normal forms are kept
    let n = this.normalOf.get(dn);
    if (n === undefined) {
      n = normalizeDn(dn);
      if (this.normalOf.size >= 1024) this.normalOf.clear();
      this.normalOf.set(dn, n);
    }
    const known = this.watched.get(n);
    if (known !== undefined) return known;
    // watched from now on; what was written before is taken as written now
    this.watched.set(n, this.generation);
    return this.generation;
  }

  /** After a commit: the watched subtrees it wrote within, or above (a rename or delete of an ancestor), move to the generation it made. */
  private committed(touched: readonly string[]): void {
    if (this.watched.size === 0) return;
    for (const k of this.watched.keys()) if (touched.some((t) => isWithin(t, k) || isWithin(k, t))) this.watched.set(k, this.generation);
  }

  // ---- reading: the storage's ----------------------------------------------

  get(dn: string, attrs?: readonly string[]): Promise<Entry | null> {
    return this.storage.get(dn, attrs);
  }

  search(req: SearchRequest): Promise<SearchResult> {
    return this.storage.search(req);
  }

  async readSecret(dn: string, attr: string): Promise<string[]> {
    const at = this.schema.attribute(attr);
    if (!at || at.syntax !== 'secret') throw new DirectoryError('undefinedAttributeType', `${attr} is not a secret attribute`, { attr });
    const found = await this.storage.sealedSecrets(dn);
    if (!found) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    const sealed: unknown = found.sealed[at.name] ?? [];
    if (!Array.isArray(sealed)) throw new DirectoryError('unwillingToPerform', `the stored secret ${at.name} of ${found.dn} is damaged`, { dn: found.dn, attr: at.name });
    return sealed.map((s: unknown) => openSecret(this.key, found.uuid, at.name, s as string));
  }

  // ---- writing -------------------------------------------------------------

  // each reports what it committed (written.ts: a command's audit trail)
  async add(dn: string, attrs: Attributes): Promise<void> {
    await this.write((tx) => this.addSteps(tx, dn, attrs));
    written([{ kind: 'add', dn, attrs }]);
  }
  async modify(dn: string, mods: Modification[]): Promise<void> {
    await this.write((tx) => this.modifySteps(tx, dn, mods));
    written([{ kind: 'modify', dn, mods }]);
  }
  async delete(dn: string): Promise<void> {
    await this.write((tx) => this.deleteSteps(tx, dn));
    written([{ kind: 'delete', dn }]);
  }
  async rename(dn: string, newRdn: string): Promise<string> {
    const to = await this.write((tx) => this.renameSteps(tx, dn, newRdn));
    written([{ kind: 'rename', dn, newRdn }]);
    return to;
  }
  async batch(ops: WriteOp[]): Promise<void> {
    if (!Array.isArray(ops)) throw new DirectoryError('unwillingToPerform', 'a batch is a list of writes');
    await this.write((tx) => this.batchSteps(tx, ops));
    written(ops);
  }
  async close(): Promise<void> {
    if (this.queue) await this.queue;
    await this.storage.close();
  }

  /** The base entry: a domain for a dc= base, else a container. */
  createBase(): Maybe<void> {
    const first = parseDn(this.baseDn)[0]![0]!;
    const attrs: Attributes =
      first.type.toLowerCase() === 'dc'
        ? { objectClass: ['top', 'domain'], dc: [first.value] }
        : { objectClass: ['top', 'dirContainer'], cn: [first.value] };
    return this.write((tx) => this.addSteps(tx, this.baseDn, attrs, true));
  }

  /**
   * One transaction; one at a time. `generation` moves when it ends,
   * committed or rolled back (a cache keyed by it may hold what rolled back).
   */
  private write<T>(steps: (tx: StorageTx<E>) => Steps<T>): Maybe<T> {
    const run = (): Maybe<T> => {
      let out: Maybe<T>;
      const touched: string[] = (this.touched = []);
      try {
        out = this.storage.transaction((tx) => drive(steps(tx)));
      } catch (e) {
        this.generation++;
        throw e;
      }
      if (!isPromise(out)) {
        this.generation++;
        this.committed(touched);
        return out;
      }
      return out.then(
        (v) => {
          this.generation++;
          this.committed(touched);
          return v;
        },
        (e: unknown) => {
          this.generation++;
          throw e;
        },
      );
    };
    if (this.queue === undefined) {
      const out = run();
      return isPromise(out) ? this.enqueue(out) : out;
    }
    return this.enqueue(this.queue.then(run));
  }

  private enqueue<T>(p: Promise<T>): Promise<T> {
    const done = p.then(settle, settle);
    this.queue = done;
    void done.then(() => {
      if (this.queue === done) this.queue = undefined;
    });
    return p;
  }

  /** Every plugin, in order, on an entry about to be stored. */
  private *runPlugins(tx: StorageTx<E>, w: EntryWrite<E>): Steps<void> {
    for (const p of this.plugins) if (p.pre) yield* p.pre(w, tx);
  }

  /** Sealed secrets of a draft: kept values as they are, new plaintexts sealed for this entry. */
  private seal(d: Draft, uuid: string): Sealed | null {
    const out: Sealed = {};
    for (const [attr, s] of d.secrets) {
      const sealed = [...(s.sealed ?? []), ...(s.plain ?? []).map((p) => sealSecret(this.key, uuid, attr, p))];
      if (sealed.length) out[attr] = sealed;
    }
    return Object.keys(out).length ? out : null;
  }

  private *addSteps(tx: StorageTx<E>, dn: string, input: Attributes, isBase = false): Steps<void> {
    const rdns = parseDn(dn);
    if (rdns.length === 0) throw new DirectoryError('invalidDNSyntax', 'cannot add the root DN', { dn });
    const ndn = normalizeDn(dn);
    if (!isBase && (ndn === this.nBase || !isWithin(ndn, this.nBase))) throw new DirectoryError('noSuchObject', `${dn} is outside ${this.baseDn}`, { dn });
    if (yield* wait(tx.entry(ndn))) throw new DirectoryError('entryAlreadyExists', `${dn} already exists`, { dn });
    let parent: E['id'] | null = null;
    if (!isBase) {
      const p = yield* wait(tx.entry(normalizeDn(formatDn(rdns.slice(1)))));
      if (!p) throw new DirectoryError('noSuchObject', `the parent of ${dn} does not exist`, { dn });
      parent = p.id;
    }
    if (input === null || typeof input !== 'object') throw new DirectoryError('invalidAttributeSyntax', 'attributes must be an object', { dn });
    const d = draftFromInput(this.schema, input);
    // the RDN's values belong to the entry (RFC 4511 §4.7)
    addRdnValues(this.schema, d, rdns[0]!);
    validateDraft(this.schema, d, rdns[0]!);
    yield* this.runPlugins(tx, { op: 'add', dn, entry: undefined, before: undefined, after: d.attrs });
    this.touched.push(ndn);
    const uuid = randomUUID();
    const now = generalizedTime();
    const attrs: Attributes = { ...d.attrs, entryUUID: [uuid], createTimestamp: [now], modifyTimestamp: [now] };
    yield* wait(tx.insert({ uuid, dn: formatDn(rdns), ndn, parent, attrs, sealed: this.seal(d, uuid), refs: referencesOf(this.schema, attrs) }));
  }

  private *modifySteps(tx: StorageTx<E>, dn: string, mods: readonly Modification[]): Steps<void> {
    const e = yield* wait(tx.entry(normalizeDn(dn)));
    if (!e) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (!Array.isArray(mods)) throw new DirectoryError('unwillingToPerform', 'modifications must be a list', { dn });
    if (mods.length === 0) return;
    this.touched.push(e.ndn);
    const before = yield* wait(tx.attrs(e));
    const { draft, operational } = draftFromStored(this.schema, before, yield* wait(tx.sealed(e)));
    applyModifications(this.schema, draft, mods, (attr, sealed) => sealed.map((s) => openSecret(this.key, e.uuid, attr, s)));
    validateDraft(this.schema, draft, parseDn(e.dn)[0]!);
    yield* this.runPlugins(tx, { op: 'modify', dn: e.dn, entry: e, before, after: draft.attrs });
    const attrs: Attributes = { ...draft.attrs, ...operational, modifyTimestamp: [generalizedTime()] };
    yield* wait(tx.update(e.id, attrs, referencesOf(this.schema, attrs), this.seal(draft, e.uuid)));
  }

  private *deleteSteps(tx: StorageTx<E>, dn: string): Steps<void> {
    const e = yield* wait(tx.entry(normalizeDn(dn)));
    if (!e) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (e.ndn === this.nBase) throw new DirectoryError('unwillingToPerform', 'the base entry cannot be deleted', { dn });
    if (yield* wait(tx.hasChildren(e.id))) throw new DirectoryError('notAllowedOnNonLeaf', `${dn} has subordinate entries`, { dn });
    const ndn = e.ndn;
    this.touched.push(ndn);
    const plan = planDelete(this.schema, dn, e.id, yield* wait(tx.refsTo(ndn)));
    for (const [id, attrNames] of plan) {
      const referrer = (yield* wait(tx.entryById(id)))!;
      const attrs = yield* wait(tx.attrs(referrer));
      yield* this.modifySteps(tx, referrer.dn, [...attrNames].map((a) => ({ op: 'replace' as const, attr: a, values: withoutTarget(attrs[a] ?? [], ndn) })));
    }
    yield* wait(tx.remove(e.id));
  }

  private *renameSteps(tx: StorageTx<E>, dn: string, newRdn: string): Steps<string> {
    const e = yield* wait(tx.entry(normalizeDn(dn)));
    if (!e) throw new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
    if (e.ndn === this.nBase) throw new DirectoryError('unwillingToPerform', 'the base entry cannot be renamed', { dn });
    const parsed = parseDn(newRdn);
    if (parsed.length !== 1) throw new DirectoryError('invalidDNSyntax', `"${newRdn}" is not a single RDN`, { dn: newRdn });
    const rdn: Rdn = parsed[0]!;
    const oldNdn = e.ndn;
    const oldRdns = parseDn(e.dn);
    const newDn = formatDn([rdn, ...oldRdns.slice(1)]);
    const newNdn = normalizeDn(newDn);
    if (newNdn !== oldNdn && (yield* wait(tx.entry(newNdn)))) throw new DirectoryError('entryAlreadyExists', `${newDn} already exists`, { dn: newDn });
    // RDN values: the old ones leave, the new ones join (deleteoldrdn, RFC 4511 §4.9)
    const before = yield* wait(tx.attrs(e));
    const { draft, operational } = draftFromStored(this.schema, before, yield* wait(tx.sealed(e)));
    removeRdnValues(this.schema, draft, oldRdns[0]!);
    addRdnValues(this.schema, draft, rdn);
    validateDraft(this.schema, draft, rdn);
    yield* this.runPlugins(tx, { op: 'rename', dn: newDn, entry: e, before, after: draft.attrs });
    this.touched.push(oldNdn, newNdn);
    const attrs: Attributes = { ...draft.attrs, ...operational, modifyTimestamp: [generalizedTime()] };
    // the secrets stay as sealed: they are bound to the entryUUID, not the DN
    yield* wait(tx.update(e.id, attrs, referencesOf(this.schema, attrs)));
    yield* wait(tx.move(e.id, newDn, newNdn));
    if (newNdn === oldNdn) return newDn;
    // descendants move with it
    const stack = [e.id];
    while (stack.length) {
      const id = stack.pop()!;
      for (const child of yield* wait(tx.children(id))) {
        const childDn = rebaseDn(child.dn, oldRdns.length, newDn);
        yield* wait(tx.move(child.id, childDn, normalizeDn(childDn)));
        stack.push(child.id);
      }
    }
    // references to the entry or its descendants follow; each referrer is modified by it, and says so in its
    // modifyTimestamp, as OpenLDAP's refint overlay modifies them (a client reading changes since a time sees it)
    const modified = generalizedTime();
    for (const [id, attrNames] of referrersWithin(yield* wait(tx.refsWithin(oldNdn)), oldNdn)) {
      const referrer = (yield* wait(tx.entryById(id)))!;
      this.touched.push(referrer.ndn);
      const rewritten = { ...rewriteReferences(yield* wait(tx.attrs(referrer)), attrNames, oldNdn, oldRdns.length, newDn), modifyTimestamp: [modified] };
      yield* wait(tx.update(referrer.id, rewritten, referencesOf(this.schema, rewritten)));
    }
    return newDn;
  }

  private *batchSteps(tx: StorageTx<E>, ops: readonly WriteOp[]): Steps<void> {
    for (const op of ops) {
      if (op === null || typeof op !== 'object') throw new DirectoryError('unwillingToPerform', 'a batch holds write operations');
      switch (op.kind) {
        case 'add':
          yield* this.addSteps(tx, op.dn, op.attrs);
          break;
        case 'modify':
          yield* this.modifySteps(tx, op.dn, op.mods);
          break;
        case 'delete':
          yield* this.deleteSteps(tx, op.dn);
          break;
        case 'rename':
          yield* this.renameSteps(tx, op.dn, op.newRdn);
          break;
        default:
          throw new DirectoryError('unwillingToPerform', `unknown write ${String((op as { kind: unknown }).kind)}`);
      }
    }
  }
}
