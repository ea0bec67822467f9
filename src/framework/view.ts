/**
 * Views (ObjectDef.views): entries computed from the directory and shown by
 * the LDAP service beside it, never stored, as FreeIPA's compat tree shows
 * its sudo rules as sudoRole entries. A view's entries are built once per
 * state of what they are computed from: they are kept while the subtrees
 * the view watches are unchanged (Directory.subtreeGeneration: a write
 * within them, references a rename or delete rewrote included, and on a
 * shared backend any other server's commit), or, for a view that names
 * none, while the directory's generation is; the first read after such a
 * write builds them again, so a read never sees a view older than the
 * directory it read. A search of a view runs in memory: the
 * snapshot keeps, per attribute, its entries by normalised value (and the
 * values in order, for >= and <=), the filter's items take their candidates
 * from there (an AND its most selective item's, an OR the union of its
 * items'; a NOT, or an item on an attribute the view does not index, every
 * entry), and the directory's own evaluator (directory/filter.ts) decides
 * each candidate, within the scope and a size limit. A host's refresh
 * (entries naming the host, or changed since a time) so reads a few
 * entries, not every rule; a filter that names an attribute or object class
 * no entry of the view has is answered at once.
 *
 * Each entry below the root carries `entryUSN` (389-ds's and FreeIPA's
 * name, which SSSD's LDAP provider finds announced as `lastUSN` in the root
 * DSE and then uses instead of modifyTimestamp): the time, in milliseconds,
 * of the build at which the entry's content last changed, each build's
 * greater than every earlier one's in this process (the clock, or the last
 * value plus one). A host's smart refresh asks for the entries above the
 * greatest it saw; with modifyTimestamp, whole seconds, a change made in the
 * same second as the last one a host saw had the same time and was missed
 * until the next full refresh. A server started again gives every entry
 * its start's value, greater than any it gave before: hosts read the rules
 * once more.
 */
import { isWithin, normalizeDn, parentDn } from '../directory/dn.js';
import { compileFilter, filterAttributeType, hasOrderingRule, hasSubstringRule, substringMatch, type EvalEntry } from '../directory/filter.js';
import { compareValues, normalizeValue } from '../directory/schema.js';
import { DirectoryError, type AttributeType, type Entry, type Filter, type Schema, type Scope } from '../directory/types.js';
import type { CommandRegistry, ViewDef, ViewSource } from './command.js';
import { declaredViews, viewRootDn } from './place.js';

const NO_SECRETS: ReadonlySet<string> = new Set();

/** A view's entries as built from one state of the directory, its root first. */
export class ViewSnapshot {
  readonly entries: readonly Entry[];
  private readonly evals: readonly EvalEntry[];
  private readonly ndns: readonly string[];
  private readonly parents: readonly string[];
  private readonly byNdn = new Map<string, number>();
  /** DNs as the entries spell them: the DNs a paged search kept are found without parsing them again */
  private readonly byDn = new Map<string, number>();
  /** lower-cased names of the attributes some entry holds, and of the object classes */
  private readonly attrs = new Set<string>();
  private readonly classes = new Set<string>();
  /** per attribute (canonical name): its entries by normalised value, in entry order */
  private readonly byValue = new Map<string, Map<string, number[]>>();
  /** per attribute: the entries that hold it */
  private readonly holders = new Map<string, number[]>();
  /** per attribute with an ordering rule: its distinct normalised values in order, made when a search first needs them */
  private readonly ordered = new Map<string, string[]>();

  constructor(
    private readonly schema: Schema,
    root: Entry,
    below: readonly Entry[],
  ) {
    this.entries = [root, ...below];
    this.evals = this.entries.map((e) => ({ attrs: e.attrs, secrets: NO_SECRETS }));
    this.ndns = this.entries.map((e) => normalizeDn(e.dn));
    this.parents = this.ndns.map((n) => normalizeDn(parentDn(n)));
    this.entries.forEach((e, i) => {
      this.byNdn.set(this.ndns[i]!, i);
      this.byDn.set(e.dn, i);
      for (const [name, values] of Object.entries(e.attrs)) {
        if (values.length === 0) continue;
        const at = schema.attribute(name);
        this.attrs.add((at?.name ?? name).toLowerCase());
        if (name === 'objectClass') for (const c of values) this.classes.add(c.toLowerCase());
        if (!at || at.syntax === 'secret') continue;
        push(this.holders, at.name, i);
        let values_ = this.byValue.get(at.name);
        if (!values_) this.byValue.set(at.name, (values_ = new Map()));
        for (const v of values) {
          const n = tryNormalize(at, v);
          if (n === undefined) continue;
          const list = values_.get(n);
          if (!list) values_.set(n, [i]);
          else if (list[list.length - 1] !== i) list.push(i);
        }
      }
    });
  }

  /**
   * The entries that may match (a superset, in entry order), or null for
   * every entry: what the view's values tell of the filter, as the
   * directory's planner does with its indexes (directory/plan.ts).
   */
  private candidates(f: Filter): number[] | null {
    switch (f.kind) {
      case 'and': {
        let best: number[] | null = null;
        for (const item of f.items) {
          // (a>=v)(!(a=v)), a smart refresh's "changed after the last seen": only the values above v
          const c = item.kind === 'ge' && f.items.some((o) => this.excludes(o, item.attr, item.value)) ? this.above(item.attr, item.value) : this.candidates(item);
          if (c && (!best || c.length < best.length)) best = c;
          if (best && best.length === 0) break;
        }
        return best;
      }
      case 'or': {
        const out = new Set<number>();
        for (const item of f.items) {
          const c = this.candidates(item);
          if (!c) return null;
          for (const i of c) out.add(i);
        }
        return [...out].sort((a, b) => a - b);
      }
      case 'not':
        return null;
      default: {
        const at = filterAttributeType(this.schema, f.attr);
        // an attribute the schema does not know is Undefined: nothing matches
        if (!at) return [];
        if (at.syntax === 'secret') return null;
        const values = this.byValue.get(at.name);
        if (!values) return [];
        if (f.kind === 'present') return this.holders.get(at.name) ?? [];
        if (f.kind === 'eq') {
          const n = tryNormalize(at, f.value);
          return n === undefined ? [] : (values.get(n) ?? []);
        }
        if (f.kind === 'sub') {
          if (!hasSubstringRule(at)) return [];
          const norm = (x: string) => normalizeValue(at.syntax, x);
          const pattern = { initial: f.initial === undefined ? undefined : norm(f.initial), any: f.any.map(norm), final: f.final === undefined ? undefined : norm(f.final) };
          return union(values, (v) => substringMatch(v, pattern));
        }
        if (!hasOrderingRule(at)) return [];
        const bound = tryNormalize(at, f.value);
        if (bound === undefined) return [];
        const sorted = this.orderedValues(at);
        // the first value at or above the bound (ge), or the first above it (le: those before it)
        const lo = this.split(at, sorted, bound, f.kind === 'le');
        const picked = f.kind === 'ge' ? sorted.slice(lo) : sorted.slice(0, lo);
        return union(values, undefined, picked);
      }
    }
  }

  /** Whether `f` is (!(attr=value)) for the same attribute type and normalised value. */
  private excludes(f: Filter, attr: string, value: string): boolean {
    if (f.kind !== 'not' || f.item.kind !== 'eq') return false;
    const at = filterAttributeType(this.schema, attr);
    if (!at || filterAttributeType(this.schema, f.item.attr) !== at || !hasOrderingRule(at)) return false;
    const a = tryNormalize(at, value);
    return a !== undefined && a === tryNormalize(at, f.item.value);
  }

  /** The entries with a value of `attr` strictly above `value` (an attribute with an ordering rule). */
  private above(attr: string, value: string): number[] {
    const at = filterAttributeType(this.schema, attr)!;
    const values = this.byValue.get(at.name);
    const bound = tryNormalize(at, value);
    if (!values || bound === undefined) return [];
    const sorted = this.orderedValues(at);
    return union(values, undefined, sorted.slice(this.split(at, sorted, bound, true)));
  }

  /** In values sorted by the attribute's order: the index of the first above `bound`, or at or above it unless `pastEqual`. */
  private split(at: AttributeType, sorted: readonly string[], bound: string, pastEqual: boolean): number {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const c = compareValues(at.syntax, sorted[mid]!, bound);
      if (c < 0 || (pastEqual && c === 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private orderedValues(at: AttributeType): string[] {
    let sorted = this.ordered.get(at.name);
    if (!sorted) this.ordered.set(at.name, (sorted = [...(this.byValue.get(at.name)?.keys() ?? [])].sort((a, b) => compareValues(at.syntax, a, b))));
    return sorted;
  }

  /** The entry at `dn`, if the view has it. */
  get(dn: string): Entry | undefined {
    const i = this.byDn.get(dn) ?? this.byNdn.get(normalizeDn(dn));
    return i === undefined ? undefined : this.entries[i];
  }

  /**
   * Whether the filter may select an entry of the view: false when it needs
   * an attribute no entry holds, or an object class none has (an AND of
   * such an item with anything, an OR of only such items). Cheap: the
   * LDAP service asks it before every search that reaches the view from
   * above (a host's user and group look-ups from the base DN).
   */
  mayMatch(f: Filter): boolean {
    switch (f.kind) {
      case 'and':
        return f.items.every((i) => this.mayMatch(i));
      case 'or':
        return f.items.some((i) => this.mayMatch(i));
      case 'not':
        return true;
      default: {
        const at = filterAttributeType(this.schema, f.attr);
        if (!at) return false;
        if (at.name === 'objectClass') return f.kind !== 'eq' || this.classes.has(f.value.toLowerCase());
        return this.attrs.has(at.name.toLowerCase());
      }
    }
  }

  /**
   * The entries of (base, scope) the filter selects, in the view's order,
   * at most `sizeLimit` (0: no limit); throws noSuchObject when the view
   * has no entry at `base`.
   */
  search(base: string, scope: Scope, filter: Filter, sizeLimit = 0): { entries: Entry[]; truncated: boolean; limit?: 'size' } {
    const nBase = normalizeDn(base);
    const at = this.byNdn.get(nBase);
    if (at === undefined) throw new DirectoryError('noSuchObject', `no entry ${base}`, { dn: base });
    if (!this.mayMatch(filter)) return { entries: [], truncated: false };
    const test = compileFilter(this.schema, filter);
    const out: Entry[] = [];
    const limit = sizeLimit > 0 ? sizeLimit : Infinity;
    const inScope = (i: number) => (scope === 'base' ? i === at : scope === 'one' ? this.parents[i] === nBase : i === at || isWithin(this.ndns[i]!, nBase));
    // a search of the whole view (its root, or below it) needs no scope test but the root's
    const whole = at === 0;
    const candidates = scope === 'base' ? [at] : (this.candidates(filter) ?? this.entries.keys());
    for (const i of candidates) {
      if (whole ? scope === 'one' && i === 0 : !inScope(i)) continue;
      if (!test(this.evals[i]!)) continue;
      if (out.length >= limit) return { entries: out, truncated: true, limit: 'size' };
      out.push(this.entries[i]!);
    }
    return { entries: out, truncated: false };
  }
}

function tryNormalize(at: AttributeType, v: string): string | undefined {
  try {
    return normalizeValue(at.syntax, v);
  } catch {
    return undefined;
  }
}

function push(m: Map<string, number[]>, key: string, i: number): void {
  const list = m.get(key);
  if (!list) m.set(key, [i]);
  else if (list[list.length - 1] !== i) list.push(i);
}

/** The entries of the values `keep` selects (or of the values `keys`), in entry order, each once. */
function union(values: ReadonlyMap<string, readonly number[]>, keep?: (v: string) => boolean, keys?: readonly string[]): number[] {
  const out = new Set<number>();
  if (keys) for (const k of keys) for (const i of values.get(k) ?? []) out.add(i);
  else for (const [v, list] of values) if (keep!(v)) for (const i of list) out.add(i);
  return [...out].sort((a, b) => a - b);
}

interface Kept {
  /** the state of the directory it was built from: the generations of the subtrees it watches, or the directory's */
  state: string;
  snapshot: Promise<ViewSnapshot>;
  /** per entry (normalised DN): its content as built, and the entryUSN given to that content */
  usns: Promise<ReadonlyMap<string, { content: string; usn: number }>>;
}
const kept = new WeakMap<object, Map<ViewDef, Kept>>();

/** The greatest entryUSN given so far (0: none): the root DSE's lastUSN. */
let lastUsn = 0;

/** The greatest entryUSN a view's entries have been given in this process, 0 before the first build. */
export function highestUsn(): number {
  return lastUsn;
}

/** A value greater than every one given before. */
function nextUsn(): number {
  lastUsn = Math.max(Date.now(), lastUsn + 1);
  return lastUsn;
}

/**
 * The entries with their entryUSN: the one given before to an entry whose
 * content is unchanged, one new value (the same for every changed entry of
 * this build) otherwise.
 */
function stamped(below: readonly Entry[], before: ReadonlyMap<string, { content: string; usn: number }>): { entries: Entry[]; usns: Map<string, { content: string; usn: number }> } {
  let usn: number | undefined;
  const usns = new Map<string, { content: string; usn: number }>();
  const entries = below.map((e) => {
    const n = normalizeDn(e.dn);
    const { entryUSN: _ignored, ...attrs } = e.attrs;
    const content = JSON.stringify(attrs);
    const prior = before.get(n);
    const given = prior && prior.content === content ? prior.usn : (usn ??= nextUsn());
    usns.set(n, { content, usn: given });
    return { dn: e.dn, attrs: { ...attrs, entryUSN: [String(given)] } };
  });
  return { entries, usns };
}

/**
 * The view's entries as of the directory's current state: those built at
 * its current generation, or built now (once: concurrent readers share the
 * build). A build that fails is not kept.
 */
export function viewSnapshot(view: ViewDef, src: ViewSource): Promise<ViewSnapshot> {
  let perView = kept.get(src.dir);
  if (!perView) kept.set(src.dir, (perView = new Map()));
  const hit = perView.get(view);
  const watched = view.watches?.(src);
  const state = watched ? watched.map((dn) => src.dir.subtreeGeneration(dn)).join(',') : String(src.dir.generation);
  if (hit && hit.state === state) return hit.snapshot;
  const root: Entry = { dn: viewRootDn(view, src.dir.baseDn), attrs: view.rootAttrs };
  const before = hit ? hit.usns.catch(() => new Map()) : Promise.resolve(new Map());
  const built = Promise.all([view.build(src), before]).then(([below, prior]) => stamped(below, prior));
  const snapshot = built.then(({ entries }) => new ViewSnapshot(src.dir.schema, root, entries));
  const k: Kept = { state, snapshot, usns: built.then(({ usns }) => usns) };
  k.usns.catch(() => undefined);
  perView.set(view, k);
  snapshot.catch(() => {
    if (perView.get(view) === k) perView.delete(view);
  });
  return snapshot;
}

const roots = new WeakMap<CommandRegistry, Map<string, Array<{ view: ViewDef; nRoot: string }>>>();

/** The views of a registry with their roots' normal forms, worked out once per registry and base DN. */
function viewRoots(registry: CommandRegistry, baseDn: string): Array<{ view: ViewDef; nRoot: string }> {
  let perBase = roots.get(registry);
  if (!perBase) roots.set(registry, (perBase = new Map()));
  let list = perBase.get(baseDn);
  if (!list) perBase.set(baseDn, (list = declaredViews(registry.objects.values()).map((view) => ({ view, nRoot: normalizeDn(viewRootDn(view, baseDn)) }))));
  return list;
}

/** The view of the registry whose subtree holds `dn` (its root included), if any. */
export function viewHolding(registry: CommandRegistry, baseDn: string, dn: string): ViewDef | undefined {
  const list = viewRoots(registry, baseDn);
  if (list.length === 0) return undefined;
  let n: string;
  try {
    n = normalizeDn(dn);
  } catch {
    return undefined;
  }
  return list.find((v) => isWithin(n, v.nRoot))?.view;
}
