/**
 * Query planning and search evaluation shared by the storage backends
 * (sqlite.ts, postgres.ts), which differ only in how they fetch rows and
 * index keys: which attributes get substring (trigram) indexes, the index
 * layout both keep in their meta table, the index keys of an entry, the
 * candidate ids a filter can take from the index (as a sequence of index
 * look-ups the backend answers at once or with promises), a search's
 * checked request and the run that decides every candidate row with the
 * evaluator (scope, size and time limits, the order of an ordered search),
 * the search itself over the rows a backend offers, the entries handed out,
 * parsed attributes kept per entry id, and stored sealed secrets read back.
 */
import { isWithin } from './dn.js';
import { compileFilter, filterAttributeType, filterAttributes, hasOrderingRule, hasSubstringRule, parseFilter, requiredAttributes, type EvalEntry, type Filter } from './filter.js';
import { compareCodePoints, indexKey, normalizeValue } from './schema.js';
import { isPromise, type Maybe, type Sealed } from './storage.js';
import { DirectoryError, type AttributeType, type Attributes, type Entry, type Schema, type SearchRequest, type SearchResult } from './types.js';

/** Order of two entries' sort keys: code point order, entries without a key last. */
export function compareOrderKeys(a: string | undefined, b: string | undefined): number {
  if (a === undefined || b === undefined) return a === b ? 0 : a === undefined ? 1 : -1;
  return compareCodePoints(a, b);
}

/**
 * The least string above every string that starts with `prefix` (code point
 * order, as both backends compare UTF-8 text bytewise): the prefix with its
 * last code point raised by one; undefined when there is none.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const cps = [...prefix].map((c) => c.codePointAt(0)!);
  while (cps.length && cps[cps.length - 1] === 0x10ffff) cps.pop();
  if (cps.length === 0) return undefined;
  let last = cps.pop()! + 1;
  if (last === 0xd800) last = 0xe000; // surrogates are not characters
  return String.fromCodePoint(...cps, last);
}

/**
 * Entry ids in ascending order, in lists of at most `size` (one
 * statement's worth). Under a size limit below `size` the lists grow from a
 * little over the limit, doubling: most candidates of an index match, so
 * the limit usually ends a search after the first.
 */
export function idChunks(ids: Iterable<number>, size: number, sizeLimit = Infinity): number[][] {
  const list = [...ids].sort((a, b) => a - b);
  const out: number[][] = [];
  let n = sizeLimit < size ? Math.max(16, sizeLimit + 1) : size;
  for (let i = 0; i < list.length; i += n, n = Math.min(size, n * 2)) out.push(list.slice(i, i + n));
  return out;
}

/** A LIKE pattern matching `s` literally (escape character: backslash). */
export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => '\\' + c);
}

/**
 * Indexed attributes whose keys also go to a trigram index for substring
 * searches: user attributes of the string syntaxes (objectClass and the
 * operational ones are never searched by substring).
 */
export function trigramAttributes(schema: Schema): ReadonlySet<string> {
  return new Set(
    schema.definition.attributeTypes.filter((a) => a.indexed && (a.syntax === 'string' || a.syntax === 'exact') && !a.operational && a.name !== 'objectClass').map((a) => a.name),
  );
}

/**
 * What the derived tables (index keys, references, trigrams) depend on: the
 * backend's format number and which attributes are indexed or referencing,
 * and how. A backend rebuilds them when the stored layout differs.
 */
export function indexLayout(schema: Schema, format: number): string {
  return JSON.stringify({
    format,
    attrs: schema.definition.attributeTypes
      .filter((a) => a.indexed || a.references)
      .map((a) => [a.name, a.syntax, !!a.indexed, a.references ?? null, !!a.operational])
      .sort(),
  });
}

/** The index keys of an entry's indexed attributes: [attribute, key] without duplicates; values the syntax cannot hold have none. */
export function indexKeys(schema: Schema, attrs: Attributes): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name in attrs) {
    const at = schema.attribute(name);
    if (!at?.indexed) continue;
    const seen = new Set<string>();
    for (const v of attrs[name]!) {
      let k: string;
      try {
        k = indexKey(at.syntax, normalizeValue(at.syntax, v));
      } catch {
        continue;
      }
      if (!seen.has(k)) out.push([at.name, k]);
      seen.add(k);
    }
  }
  return out;
}

/**
 * Text a stored attributes JSON holds for each attribute name: names are
 * JSON keys, and `"name":` appears in the text only as a key. A scan
 * pre-selects the rows holding one of them.
 */
export function scanNeedles(attrNames: Iterable<string>): string[] {
  return [...attrNames].map((t) => JSON.stringify(t) + ':');
}

/** Stored sealed secrets (JSON text, or nothing) read back; damaged text is an error naming the entry. */
export function parseSealed(text: string | null | undefined, dn: string): Sealed {
  if (!text) return {};
  try {
    const sealed = JSON.parse(text) as unknown;
    if (sealed && typeof sealed === 'object' && !Array.isArray(sealed)) return sealed as Sealed;
  } catch {
    // reported below
  }
  throw new DirectoryError('unwillingToPerform', `the stored secrets of ${dn} are damaged`, { dn });
}

/** parsed attribute JSON kept per entry id, reused while the stored text is unchanged */
const PARSE_CACHE_SIZE = 10_000;

/**
 * Parsed attributes by entry id; a parse is reused while the stored JSON is
 * the same text, so no write has to invalidate anything (a rollback
 * included). Point reads (`remember`) fill the cache; scans only use it, so
 * a scan larger than the cache cannot thrash it.
 */
export class ParseCache {
  private readonly parsed = new Map<number, { json: string; attrs: Attributes }>();

  load(id: number, json: string, remember = true): Attributes {
    const hit = this.parsed.get(id);
    if (hit && hit.json === json) return hit.attrs;
    const attrs = JSON.parse(json) as Attributes;
    if (remember) {
      if (this.parsed.size >= PARSE_CACHE_SIZE) this.parsed.clear();
      this.parsed.set(id, { json, attrs });
    }
    return attrs;
  }

  clear(): void {
    this.parsed.clear();
  }
}

/** What of an entry a caller asked for: every attribute, the operational ones (`+`), and these (the schema's names). */
export interface Projection {
  all: boolean;
  operational: boolean;
  names: readonly string[];
}

/** The projection an attribute list asks for (none or `*`: all), worked out once per search rather than per entry. */
export function projectionOf(schema: Schema, attrs?: readonly string[]): Projection {
  if (!attrs || attrs.length === 0 || attrs.includes('*')) return { all: true, operational: false, names: [] };
  const names: string[] = [];
  let operational = false;
  for (const a of attrs) {
    if (a === '1.1') continue;
    if (a === '+') operational = true;
    else {
      const at = schema.attribute(a);
      if (at && !names.includes(at.name)) names.push(at.name);
    }
  }
  return { all: false, operational, names };
}

/**
 * An entry for the caller with the attributes a projection keeps: copies (a
 * parse cache must not be mutated from outside), unless `shared`, for a
 * caller that only reads them (SearchRequest.shared).
 */
export function project(schema: Schema, dn: string, stored: Attributes, p: Projection, shared = false): Entry {
  const out: Attributes = {};
  const take = (k: string) => {
    const v = stored[k];
    if (v) out[k] = shared ? v : v.slice();
  };
  if (p.all) for (const k in stored) take(k);
  else {
    // operational attributes (RFC 3673)
    if (p.operational) for (const k in stored) if (schema.attribute(k)?.operational) take(k);
    for (const k of p.names) take(k);
  }
  return { dn, attrs: out };
}

/** An entry for the caller with the attributes asked for: copies (a parse cache must not be mutated from outside). */
export function entryOf(schema: Schema, dn: string, stored: Attributes, attrs?: readonly string[]): Entry {
  return project(schema, dn, stored, projectionOf(schema, attrs));
}

/** An entry's place in an order: its least index key of `at` (the idx table's `norm`), undefined without one. */
export function orderKey(at: AttributeType, attrs: Attributes): string | undefined {
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

// ---- candidates from the index ----------------------------------------------

/**
 * One look-up of entry ids in the index (attr, norm → entry): keys equal to,
 * at least or at most `key`, in [from, to), any key of the attribute, or
 * keys matching a LIKE pattern, which the backend may answer through its
 * trigram index (`trigram`: the pattern holds no escaped characters and a
 * piece of three or more characters; the attribute is a trigram attribute).
 */
export type IndexLookup =
  | { kind: 'eq' | 'ge' | 'le'; attr: string; key: string }
  | { kind: 'present'; attr: string }
  | { kind: 'range'; attr: string; from: string; to: string }
  | { kind: 'trigram' | 'like'; attr: string; pattern: string };

/** Steps of a plan: each yields a look-up and gets its ids back. */
type PlanSteps = Generator<IndexLookup, Set<number> | null, Set<number>>;

/**
 * Candidate entry ids from the index (a superset of the matches), or null
 * when the filter cannot use it and the entries must be scanned. `lookup`
 * answers each look-up at once (the result is then at once too) or with a
 * promise; its failures are the caller's, never an empty answer.
 */
export function indexCandidates(schema: Schema, f: Filter, trigrams: ReadonlySet<string>, lookup: (l: IndexLookup) => Maybe<Iterable<number>>): Maybe<Set<number> | null> {
  const steps = planCandidates(schema, f, trigrams);
  let step = steps.next();
  while (!step.done) {
    const ids = lookup(step.value);
    if (isPromise(ids)) return finishCandidates(steps, ids, lookup);
    step = steps.next(new Set(ids));
  }
  return step.value;
}

async function finishCandidates(steps: PlanSteps, pending: Promise<Iterable<number>>, lookup: (l: IndexLookup) => Maybe<Iterable<number>>): Promise<Set<number> | null> {
  let step = steps.next(new Set(await pending));
  while (!step.done) step = steps.next(new Set(await lookup(step.value)));
  return step.value;
}

/** How early an item of an AND is tried for candidates: equality first, objectClass equality last. */
function rank(x: Filter): number {
  return x.kind === 'eq' ? (x.attr.toLowerCase() === 'objectclass' ? 4 : 0) : x.kind === 'sub' ? 1 : x.kind === 'ge' || x.kind === 'le' ? 2 : 3;
}

function* planCandidates(schema: Schema, f: Filter, trigrams: ReadonlySet<string>): PlanSteps {
  switch (f.kind) {
    case 'and': {
      // the most selective usable term narrows; the evaluator checks the rest
      const sorted = [...f.items].sort((a, b) => rank(a) - rank(b));
      let best: Set<number> | null = null;
      for (const item of sorted) {
        // objectClass equality rarely narrows anything: fetching its ids costs more than it saves
        if (best && rank(item) === 4) break;
        const c: Set<number> | null = yield* planCandidates(schema, item, trigrams);
        if (c && (!best || c.size < best.size)) best = c;
        if (best && (best.size < 64 || rank(item) === 0)) break;
      }
      return best;
    }
    case 'or': {
      const out = new Set<number>();
      for (const item of f.items) {
        const c: Set<number> | null = yield* planCandidates(schema, item, trigrams);
        if (!c) return null;
        for (const id of c) out.add(id);
      }
      return out;
    }
    case 'not':
      return null;
    default: {
      const l = leafLookup(schema, f, trigrams);
      if (l === null) return null;
      if (l === 'none') return new Set();
      return yield l;
    }
  }
}

/** The look-up of one filter item; null when it needs a scan, 'none' when nothing can match. */
function leafLookup(schema: Schema, f: Exclude<Filter, { kind: 'and' | 'or' | 'not' }>, trigrams: ReadonlySet<string>): IndexLookup | null | 'none' {
  const at = filterAttributeType(schema, f.attr);
  // an unknown attribute is Undefined: nothing matches
  if (!at) return 'none';
  if (!at.indexed || at.syntax === 'secret') return null;
  const attr = at.name;
  try {
    switch (f.kind) {
      case 'eq':
        return { kind: 'eq', attr, key: indexKey(at.syntax, normalizeValue(at.syntax, f.value)) };
      case 'present':
        // every entry has object classes: a scan is cheaper than fetching every id
        return attr === 'objectClass' ? null : { kind: 'present', attr };
      case 'ge':
      case 'le':
        if (!hasOrderingRule(at)) return 'none';
        return { kind: f.kind, attr, key: indexKey(at.syntax, normalizeValue(at.syntax, f.value)) };
      case 'sub': {
        if (!hasSubstringRule(at)) return 'none';
        const norm = (x: string) => normalizeValue(at.syntax, x);
        const pieces = [f.initial, ...f.any, f.final].filter((x): x is string => x !== undefined).map(norm);
        const initial = f.initial === undefined ? '' : norm(f.initial);
        if (initial.length >= 2 || (initial.length > 0 && !pieces.some((x) => x.length >= 3))) {
          // a prefix: a range scan of the B-tree
          const upper = prefixUpperBound(initial);
          return upper === undefined ? { kind: 'ge', attr, key: initial } : { kind: 'range', attr, from: initial, to: upper };
        }
        if (trigrams.has(attr) && pieces.some((x) => x.length >= 3) && !pieces.some((x) => /[%_\\]/.test(x))) {
          const pattern = initial + '%' + f.any.map((a) => norm(a) + '%').join('') + (f.final !== undefined ? norm(f.final) : '');
          return { kind: 'trigram', attr, pattern };
        }
        const like = (x: string) => likeEscape(norm(x));
        const pattern = likeEscape(initial) + '%' + f.any.map((a) => like(a) + '%').join('') + (f.final !== undefined ? like(f.final) : '');
        return { kind: 'like', attr, pattern };
      }
    }
  } catch (e) {
    if (e instanceof DirectoryError) throw e;
    // an assertion value the syntax cannot hold is Undefined: nothing matches
    return 'none';
  }
}

// ---- searching ----------------------------------------------------------------

/** A search request checked and compiled: what every backend needs before it reads a row. */
export interface SearchPlan {
  req: SearchRequest;
  filter: Filter;
  test: (e: EvalEntry) => boolean;
  /** the filter tests secrets (presence): rows need their secrets' names */
  needSecrets: boolean;
  /** the attribute of an ordered search */
  order: AttributeType | undefined;
  sizeLimit: number;
  /** performance.now() value after which the search stops */
  deadline: number;
}

/** Checks and compiles a request, in the order its errors are reported (the base entry is looked up after). */
export function planSearch(schema: Schema, req: SearchRequest): SearchPlan {
  const filter = typeof req.filter === 'object' ? req.filter : parseFilter(req.filter ?? '(objectClass=*)');
  const test = compileFilter(schema, filter);
  const needSecrets = [...filterAttributes(filter)].some((a) => filterAttributeType(schema, a)?.syntax === 'secret');
  if (!['base', 'one', 'sub'].includes(req.scope)) throw new DirectoryError('unwillingToPerform', `unknown scope ${String(req.scope)}`);
  const order = req.orderBy === undefined ? undefined : orderAttribute(schema, req.orderBy);
  const sizeLimit = req.sizeLimit && req.sizeLimit > 0 ? req.sizeLimit : Infinity;
  const deadline = req.timeLimit && req.timeLimit > 0 ? performance.now() + req.timeLimit * 1000 : Infinity;
  return { req, filter, test, needSecrets, order, sizeLimit, deadline };
}

/** The attribute a search orders by; secrets have no order. */
function orderAttribute(schema: Schema, name: string): AttributeType {
  const at = schema.attribute(name);
  if (!at) throw new DirectoryError('undefinedAttributeType', `cannot order by ${name}: no such attribute`, { attr: name });
  if (at.syntax === 'secret') throw new DirectoryError('unwillingToPerform', `cannot order by the secret ${at.name}`, { attr: at.name });
  return at;
}

export function noSuchBase(dn: string): DirectoryError {
  return new DirectoryError('noSuchObject', `no entry ${dn}`, { dn });
}

/** What a search run needs of a stored row. */
export interface SearchRow {
  id: number;
  dn: string;
  ndn: string;
  parent: number | null;
}

/** How a run reads a row's attributes (`remember`: worth keeping parsed) and the names of its secrets. */
export interface RowReader<R> {
  attrs(r: R, remember: boolean): Attributes;
  secrets(r: R): ReadonlySet<string>;
}

/** most attributes a scan pre-selects rows by */
export const MAX_SCAN_TERMS = 16;
/** most candidates whose parsed attributes a search keeps */
const REMEMBER_CANDIDATES = 256;

/** What a backend answers for {@link searchRows}, at once or with promises. */
export interface RowSource<R extends SearchRow> extends RowReader<R> {
  readonly schema: Schema;
  readonly trigrams: ReadonlySet<string>;
  lookup(l: IndexLookup): Maybe<Iterable<number>>;
  /** offers the candidates' rows to the run (in id order, or an ordered search's order), until it refuses one */
  visit(ids: ReadonlySet<number>, run: SearchRun<R>): Maybe<void>;
  /** offers rows in id order, all or the children of `parent`, holding one of `needed` when given, until the run refuses one */
  scan(parent: number | null, needed: Set<string> | null, run: SearchRun<R>): Maybe<void>;
  /**
   * Offers the rows of one look-up's ids in id order, read as they come
   * (without gathering the ids first), until the run refuses one; for a
   * size-limited search of one range, substring or presence term, which
   * the limit usually ends long before its candidates do. Optional.
   */
  stream?(l: IndexLookup, run: SearchRun<R>): Maybe<void>;
}

/**
 * The one look-up that gives a filter of a single term its candidates, when
 * it may yield many (not an equality: those are few, and kept by a
 * backend between writes); null otherwise.
 */
function loneLookup(schema: Schema, f: Filter, trigrams: ReadonlySet<string>): IndexLookup | null {
  if (f.kind === 'and' || f.kind === 'or' || f.kind === 'not') return null;
  const l = leafLookup(schema, f, trigrams);
  return l === null || l === 'none' || l.kind === 'eq' ? null : l;
}

function then<T, U>(x: Maybe<T>, f: (t: T) => Maybe<U>): Maybe<U> {
  return isPromise(x) ? x.then(f) : f(x);
}

/**
 * A search below the base entry's row: the base alone, the candidates
 * from the index, or a scan of the rows that hold an attribute the filter
 * needs; synchronous while the source answers at once.
 */
export function searchRows<R extends SearchRow>(source: RowSource<R>, plan: SearchPlan, base: R): Maybe<SearchResult> {
  const run = new SearchRun(source.schema, plan, base, source);
  if (plan.req.scope === 'base') {
    run.sink(base);
    return run.result();
  }
  const lone = source.stream && !plan.order && Number.isFinite(plan.sizeLimit) ? loneLookup(source.schema, plan.filter, source.trigrams) : null;
  if (lone) {
    run.remember = false;
    return then(source.stream!(lone, run), () => run.result());
  }
  return then(indexCandidates(source.schema, plan.filter, source.trigrams, (l) => source.lookup(l)), (ids) => {
    if (ids) {
      run.remember = plan.req.keep === true || ids.size <= REMEMBER_CANDIDATES;
      return then(source.visit(ids, run), () => run.result());
    }
    run.remember = plan.req.keep === true;
    const needed = requiredAttributes(source.schema, plan.filter, MAX_SCAN_TERMS);
    if (needed && needed.size === 0) return run.result();
    return then(source.scan(plan.req.scope === 'one' ? base.id : null, needed, run), () => run.result());
  });
}

export const NO_SECRETS: ReadonlySet<string> = new Set();

/**
 * One search over the rows a backend offers (candidates or a scan): each
 * row in scope is decided by the evaluator. Without an order, matches are
 * taken in the order rows come until the size limit; with one, every match
 * is collected and sorted at the end (a backend that visits rows in the
 * order already uses {@link take}). The time limit is checked every 64 rows
 * and by {@link expired}.
 */
export class SearchRun<R extends SearchRow> {
  /** takes or collects a row; false when a limit ends the search */
  readonly sink: (r: R) => boolean;
  /** whether the rows' parsed attributes are worth keeping (few candidates, not a scan) */
  remember = true;
  private readonly entries: Entry[] = [];
  private limit: 'size' | 'time' | undefined;
  private n = 0;
  private readonly pool: Array<{ key: string | undefined; id: number; dn: string; attrs: Attributes }> = [];
  private readonly nBase: string;
  /** the attributes each entry found is given */
  private readonly projection: Projection;

  constructor(
    private readonly schema: Schema,
    readonly plan: SearchPlan,
    private readonly base: R,
    private readonly read: RowReader<R>,
  ) {
    this.nBase = base.ndn;
    this.projection = projectionOf(schema, plan.req.attrs);
    this.sink = plan.order ? (r) => this.collect(r) : (r) => this.take(r);
  }

  /** Whether the time limit has passed (it then ends the search). */
  expired(): boolean {
    if (performance.now() <= this.plan.deadline) return false;
    this.limit = 'time';
    return true;
  }

  private inScope(r: R): boolean {
    const scope = this.plan.req.scope;
    return scope === 'base' ? r.id === this.base.id : scope === 'one' ? r.parent === this.base.id : isWithin(r.ndn, this.nBase);
  }

  /** The row's attributes when it is in scope and matches; false when the time limit ends the search. */
  private match(r: R): Attributes | null | false {
    if ((++this.n & 63) === 0 && this.expired()) return false;
    if (!this.inScope(r)) return null;
    const attrs = this.read.attrs(r, this.remember);
    const secrets = this.plan.needSecrets ? this.read.secrets(r) : NO_SECRETS;
    return this.plan.test({ attrs, secrets }) ? attrs : null;
  }

  /** Takes a match in the order rows come; false when a limit ends the search. */
  take(r: R): boolean {
    const attrs = this.match(r);
    if (attrs === false) return false;
    if (attrs === null) return true;
    if (this.entries.length >= this.plan.sizeLimit) {
      this.limit = 'size';
      return false;
    }
    this.entries.push(project(this.schema, r.dn, attrs, this.projection, this.plan.req.shared === true));
    return true;
  }

  private collect(r: R): boolean {
    const attrs = this.match(r);
    if (attrs === false) return false;
    if (attrs !== null) this.pool.push({ key: orderKey(this.plan.order!, attrs), id: r.id, dn: r.dn, attrs });
    return true;
  }

  /** The entries found: collected ones sorted by the order's keys (ties by id), the size limit applied. */
  result(): SearchResult {
    const { entries, pool, plan } = this;
    if (pool.length > 0) {
      pool.sort((a, b) => compareOrderKeys(a.key, b.key) || a.id - b.id);
      for (const p of pool.slice(0, plan.sizeLimit)) entries.push(project(this.schema, p.dn, p.attrs, this.projection, plan.req.shared === true));
      if (pool.length > plan.sizeLimit) this.limit ??= 'size';
    }
    return this.limit ? { entries, truncated: true, limit: this.limit } : { entries, truncated: false };
  }
}
