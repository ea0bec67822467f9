/**
 * The Search operation (RFC 4511 §4.5, docs/ldap.md "Search"). The root
 * DSE is readable by anyone; the subschema entry and the directory only by
 * a bound principal, and then only what the one read rule allows
 * (framework/access.ts): a search below a readable root runs as asked, a
 * search from an entry above them (the base DN, cn=accounts, cn=pbac) runs
 * as one search per readable part in scope, and anything else is
 * noSuchObject, so hidden entries are not even confirmed to exist.
 * Anonymous searches of anything but the root DSE get
 * insufficientAccessRights.
 *
 * The filter goes to the directory's engine and indexes; every item on a
 * secret is first made FALSE, as for an attribute the entry lacks, so a
 * filter cannot probe whether a password or key is set. The size limit is
 * the client's or the server's, whichever is lower, and the entries that fit
 * are sent before sizeLimitExceeded; the time limit likewise. With the
 * paged results control the whole result's DNs are found on the first page
 * (within those limits) and kept per connection under a cookie (paged.ts).
 * The views the objects declare (framework/view.ts: the sudo rules as
 * sudoRole entries below ou=sudoers) are searched and read like the
 * directory, in memory; a search from above reaches them as one more
 * readable part.
 * A host bound as itself that names `host` or `authorizedService` gets
 * them computed on users from the access rules (host-access.ts).
 * `memberOf` is computed likewise for any reader (member-of.ts): returned
 * when named or with `+`, and a filter item on it is answered from its
 * index (the directory gets a superset; each entry is then decided).
 */
import { ControlOid, ResultCode } from '../ldap/codes.js';
import { decodePagedResultsValue, findControl, pagedResultsControl, type Control } from '../ldap/controls.js';
import type { SearchRequest } from '../ldap/protocol-requests.js';
import type { PartialAttribute, SearchResultEntry } from '../ldap/protocol-responses.js';
import { isWithin, normalizeDn, parentDn } from '../directory/dn.js';
import { filterAttributeType, matches, MAX_FILTER_LENGTH, type Filter } from '../directory/filter.js';
import { formatFilter } from '../ldap/filter.js';
import { DirectoryError, type Entry, type Schema, type Scope } from '../directory/types.js';
import { readability, readableLayout, type ReadableLayout } from '../framework/access.js';
import type { Principal } from '../framework/command.js';
import { viewHolding, viewSnapshot } from '../framework/view.js';
import { selectFromEntry, selectFromSynthetic, selection, type Selection } from './attributes.js';
import { Abandoned, type LdapConnection, type Operation, type OpResult } from './connection.js';
import type { ServiceContext } from './context.js';
import { refuse } from './errors.js';
import { hostAccessAttributes } from './host-access.js';
import { memberOfAttribute, memberOfSuperset, memberOfTest, membershipIndex, namesMemberOf, wantsMemberOf } from './member-of.js';
import { ROOT_DSE_OPERATIONAL, rootDseAttributes } from './root-dse.js';
import { SUBSCHEMA_DN, SUBSCHEMA_OPERATIONAL, subschemaAttributes } from './subschema.js';
import type { Fields } from '../log/logger.js';

export const ANONYMOUS_REFUSAL = 'anonymous clients may read the root DSE only: bind first (a simple bind over TLS, or SASL GSSAPI)';

const SCOPES: Record<SearchRequest['scope'], Scope> = { baseObject: 'base', singleLevel: 'one', wholeSubtree: 'sub' };

/** The same filter with every item on a secret replaced by FALSE (an empty OR), as for an absent attribute. */
export function withoutSecrets(schema: Schema, f: Filter): Filter {
  switch (f.kind) {
    case 'and':
    case 'or':
      return { kind: f.kind, items: f.items.map((i) => withoutSecrets(schema, i)) };
    case 'not':
      return { kind: 'not', item: withoutSecrets(schema, f.item) };
    default:
      return filterAttributeType(schema, f.attr)?.syntax === 'secret' ? { kind: 'or', items: [] } : f;
  }
}

/**
 * A bound of the length of formatFilter(f), worked out without writing the
 * text: escaping turns a value's character into three at most. Only a
 * filter over the bound is written out to be measured.
 */
export function filterTextBound(f: Filter): number {
  switch (f.kind) {
    case 'and':
    case 'or': {
      let n = 3;
      for (const i of f.items) n += filterTextBound(i);
      return n;
    }
    case 'not':
      return 3 + filterTextBound(f.item);
    case 'present':
      return f.attr.length + 4;
    case 'sub': {
      let n = f.attr.length + 4 + 3 * ((f.initial?.length ?? 0) + (f.final?.length ?? 0));
      for (const a of f.any) n += 3 * a.length + 1;
      return n;
    }
    default:
      return f.attr.length + (f.kind === 'eq' ? 3 : 4) + 3 * f.value.length;
  }
}

interface Part {
  base: string;
  scope: Scope;
  /** a container below the requested base, which a realm may lack */
  optional?: boolean;
}

/**
 * The directory searches that cover what `principal` may read of
 * (base, scope), base first; null when the base itself is hidden.
 */
export function searchParts(principal: Principal, known: ReadableLayout, base: string, scope: Scope): Part[] | null {
  const r = readability(principal, base, known);
  if (r === 'none') return null;
  if (r === 'subtree' || scope === 'base') return [{ base, scope }];
  const nBase = normalizeDn(base);
  // the readable roots and the entries on the way down to them, the base DN included (worked out once per registry and realm)
  const { roots, paths } = known;
  // the base entry itself, for a subtree search (a one-level search returns only its children)
  const parts: Part[] = scope === 'sub' ? [{ base, scope: 'base' }] : [];
  const below = (dn: string) => {
    const n = normalizeDn(dn);
    return n !== nBase && isWithin(n, nBase) && (scope === 'sub' || normalizeDn(parentDn(dn)) === nBase);
  };
  for (const p of paths) if (below(p)) parts.push({ base: p, scope: 'base', optional: true });
  for (const root of roots) if (below(root)) parts.push({ base: root, scope: scope === 'sub' ? 'sub' : 'base', optional: true });
  return parts;
}

function done(resultCode: ResultCode, diagnosticMessage = ''): OpResult['response'] {
  return { op: 'searchResDone', resultCode, matchedDN: '', diagnosticMessage };
}

/** The lower of two limits, 0 meaning none. */
function lower(a: number, b: number): number {
  return a === 0 ? b : b === 0 ? a : Math.min(a, b);
}

/** The limits of this search: the lower of the client's and the server's (0 means none on either side). */
function limits(ctx: ServiceContext, req: SearchRequest): { size: number; deadline: number } {
  const size = lower(req.sizeLimit, ctx.sizeLimit);
  const seconds = lower(req.timeLimit, ctx.timeLimit);
  return { size: size === 0 ? Infinity : size, deadline: seconds === 0 ? Infinity : performance.now() + seconds * 1000 };
}

const limitCode = (limit: 'size' | 'time' | undefined) => (limit === 'size' ? ResultCode.sizeLimitExceeded : limit === 'time' ? ResultCode.timeLimitExceeded : ResultCode.success);

/** A search of one synthetic entry (root DSE, subschema): the entry when the filter selects it. */
async function syntheticSearch(ctx: ServiceContext, conn: LdapConnection, op: Operation, dn: string, attrs: Record<string, string[]>, operational: ReadonlySet<string>, req: SearchRequest, paged: boolean): Promise<OpResult> {
  if (matches(ctx.dir.schema, req.filter, { attrs, secrets: new Set() })) {
    await conn.send(op, { op: 'searchResEntry', objectName: dn, attributes: selectFromSynthetic(attrs, operational, selection(ctx.dir.schema, req.attributes), req.typesOnly) });
  }
  return { response: done(ResultCode.success), ...(paged ? { controls: [pagedResultsControl({ size: 0, cookie: Buffer.alloc(0) })] } : {}) };
}

export async function search(ctx: ServiceContext, conn: LdapConnection, op: Operation, req: SearchRequest): Promise<OpResult> {
  const pagedControl = findControl(op.controls, ControlOid.pagedResults);
  const paged = pagedControl ? decodePagedResultsValue(pagedControl.value) : undefined;
  const scope = SCOPES[req.scope];
  const isRoot = req.baseObject.trim() === '';
  if (isRoot && scope === 'base') {
    return syntheticSearch(ctx, conn, op, '', rootDseAttributes(ctx.dir.baseDn, ctx.server.version), ROOT_DSE_OPERATIONAL, req, paged !== undefined);
  }
  const p = conn.principal;
  if (!p) throw refuse('insufficientAccessRights', ANONYMOUS_REFUSAL);
  // the root's only child is our naming context
  const base = isRoot ? ctx.dir.baseDn : req.baseObject;
  const effectiveScope: Scope = isRoot ? (scope === 'one' ? 'base' : 'sub') : scope;
  if (!isRoot && normalizeDn(base) === SUBSCHEMA_DN) {
    if (scope !== 'base') throw refuse('noSuchObject', 'the subschema entry has no children');
    return syntheticSearch(ctx, conn, op, SUBSCHEMA_DN, subschemaAttributes(ctx.dir.schema), SUBSCHEMA_OPERATIONAL, req, paged !== undefined);
  }
  const parts = searchParts(p, readableLayout(ctx.registry, { baseDn: ctx.dir.baseDn, realm: ctx.realm }), base, effectiveScope);
  if (!parts) throw refuse('noSuchObject', 'no such entry');
  if (parts[0]?.base !== base && !(await ctx.dir.get(base, ['1.1']))) throw refuse('noSuchObject', 'no such entry');
  // the decoded filter goes to the directory as it is, not as text to be parsed again; its text form keeps the directory's bound
  const filter = withoutSecrets(ctx.dir.schema, req.filter);
  if (filterTextBound(filter) > MAX_FILTER_LENGTH && formatFilter(filter).length > MAX_FILTER_LENGTH) throw refuse('adminLimitExceeded', `the filter is longer than ${MAX_FILTER_LENGTH} characters as text`);
  const sel = selection(ctx.dir.schema, req.attributes);
  const memberOf = wantsMemberOf(sel) || namesMemberOf(filter) ? await membershipIndex(ctx) : undefined;
  const hostAccess = await hostAccessAttributes(ctx, p, sel, req.typesOnly);
  const virtual =
    memberOf && wantsMemberOf(sel)
      ? (e: Entry) => {
          const attrs = memberOfAttribute(memberOf, e, req.typesOnly);
          return hostAccess ? [...attrs, ...hostAccess(e)] : attrs;
        }
      : hostAccess;
  const decide = memberOf && namesMemberOf(filter) ? { dirFilter: memberOfSuperset(filter, memberOf), test: memberOfTest(ctx, filter, memberOf) } : undefined;
  const out: Output = { ctx, conn, op, sel, typesOnly: req.typesOnly, attrs: directoryAttributes(sel), sent: 0, virtual, ...(decide ? { decide } : {}) };

  if (paged) return pagedSearch(req, out, { parts, filter, base, scope: effectiveScope, size: paged.size, cookie: paged.cookie });

  const { size, deadline } = limits(ctx, req);
  const limit = await runParts(out, parts, filter, size, deadline);
  return { response: done(limitCode(limit)), note: { base, scope: effectiveScope, entries: out.sent } };
}

/**
 * The entry at `dn`, the directory's or a view's (framework/view.ts), with
 * `attrs` (the directory's projection; a view's entries come whole), or
 * null.
 */
export async function entryAt(ctx: ServiceContext, dn: string, attrs?: readonly string[]): Promise<Entry | null> {
  const view = viewHolding(ctx.registry, ctx.dir.baseDn, dn);
  if (view) return (await viewSnapshot(view, ctx)).get(dn) ?? null;
  return ctx.dir.get(dn, attrs);
}

/** Where a search's entries go, and what of them: one per search. */
interface Output {
  ctx: ServiceContext;
  conn: LdapConnection;
  op: Operation;
  sel: Selection;
  typesOnly: boolean;
  /** the attributes to ask the directory for (undefined: all) */
  attrs: string[] | undefined;
  /** entries sent so far */
  sent: number;
  /** the attributes computed for the principal (a host's host and authorizedService: host-access.ts; memberOf: member-of.ts), if any */
  virtual: ((e: Entry) => PartialAttribute[]) | null;
  /**
   * for a filter on memberOf: the superset the directory is asked for and
   * the exact test of each entry it finds (which then comes whole, and
   * without the directory's size limit: the limit counts the entries kept)
   */
  decide?: { dirFilter: Filter; test: (e: Entry) => boolean };
}

/**
 * The attributes the directory has to hand over for a selection: all of
 * them when every user attribute is wanted, else the named ones (the
 * schema's spelling) and the operational ones when asked for, so that it
 * does not copy the rest of each entry only for selectFromEntry to drop.
 */
export function directoryAttributes(sel: Selection): string[] | undefined {
  if (sel.allUser) return undefined;
  const names = [...sel.canonical];
  if (sel.allOperational) names.push('+');
  return names.length > 0 ? names : ['1.1'];
}

/** Sends one entry as the selection shapes it. */
async function sendEntry(out: Output, e: Entry): Promise<void> {
  const attributes = selectFromEntry(out.ctx.dir.schema, e.attrs, out.sel, out.typesOnly);
  if (out.virtual) attributes.push(...out.virtual(e));
  const entry: SearchResultEntry = { op: 'searchResEntry', objectName: e.dn, attributes };
  await out.conn.send(out.op, entry);
  out.sent++;
}

/**
 * Runs the parts in order until the size limit or the deadline, sending
 * each entry found, or with `dns` keeping only their DNs there (the
 * directory is then asked for no attributes); returns the limit that cut
 * the result short, if any.
 */
async function runParts(out: Output, parts: Part[], filter: Filter, size: number, deadline: number, dns?: string[]): Promise<'size' | 'time' | undefined> {
  const { ctx, op } = out;
  const attrs = dns ? ['1.1'] : out.attrs;
  let remaining = size;
  for (const part of parts) {
    if (op.abandoned) throw new Abandoned();
    const left = deadline - performance.now();
    if (left <= 0) return 'time';
    const wanted = remaining === 0 ? 1 : remaining;
    let res;
    try {
      const view = viewHolding(ctx.registry, ctx.dir.baseDn, part.base);
      if (view) res = (await viewSnapshot(view, ctx)).search(part.base, part.scope, filter, Number.isFinite(wanted) ? wanted : 0);
      else if (out.decide) {
        const found = await ctx.dir.search({ base: part.base, scope: part.scope, filter: out.decide.dirFilter, timeLimit: Number.isFinite(left) ? left / 1000 : 0 });
        const kept = found.entries.filter(out.decide.test);
        const cut = found.truncated ? found.limit : kept.length > wanted ? ('size' as const) : undefined;
        res = { entries: kept.slice(0, wanted), truncated: cut !== undefined, ...(cut ? { limit: cut } : {}) };
      } else
        res = await ctx.dir.search({
          base: part.base,
          scope: part.scope,
          filter,
          sizeLimit: Number.isFinite(wanted) ? wanted : 0,
          timeLimit: Number.isFinite(left) ? left / 1000 : 0,
          // encoded and let go: the store's cached values, not copies
          shared: true,
          ...(remaining === 0 ? { attrs: ['1.1'] } : attrs ? { attrs } : {}),
        });
    } catch (e) {
      // a container above or beside the base that this realm lacks holds nothing
      if (part.optional && e instanceof DirectoryError && e.code === 'noSuchObject') continue;
      throw e;
    }
    if (remaining === 0) {
      // the limit is reached: one more match anywhere means the result was cut
      if (res.entries.length > 0) return 'size';
      continue;
    }
    if (dns) for (const e of res.entries) dns.push(e.dn);
    else for (const e of res.entries) await sendEntry(out, e);
    remaining -= res.entries.length;
    if (res.truncated) return res.limit ?? 'size';
  }
  return undefined;
}

interface PagedArgs {
  parts: Part[];
  filter: Filter;
  base: string;
  scope: Scope;
  size: number;
  cookie: Buffer;
}

async function pagedSearch(req: SearchRequest, out: Output, a: PagedArgs): Promise<OpResult> {
  const { ctx, conn } = out;
  const key = JSON.stringify([conn.principal?.dn ?? '', normalizeDn(a.base), a.scope, a.filter, req.attributes, req.typesOnly]);
  const end = (code: ResultCode, total: number, note: Fields): OpResult => ({ response: done(code), controls: [pagedResultsControl({ size: total, cookie: Buffer.alloc(0) })], note });
  let dns: string[];
  let total: number;
  let limit: 'size' | 'time' | undefined;
  if (a.cookie.length > 0) {
    const state = conn.paged.take(a.cookie);
    if (!state || state.key !== key) throw refuse('unwillingToPerform', 'the paged results cookie is unknown on this connection or belongs to another search');
    // a page size of 0 ends the paged search (RFC 2696 §3)
    if (a.size === 0) return end(ResultCode.success, state.total, { paged: 'ended' });
    dns = state.dns;
    total = state.total;
    limit = state.limit;
  } else {
    if (a.size === 0) return end(ResultCode.success, 0, { paged: 'empty' });
    const { size, deadline } = limits(ctx, req);
    dns = [];
    limit = await runParts(out, a.parts, a.filter, size, deadline, dns);
    total = dns.length;
  }
  const page = dns.splice(0, a.size);
  for (const dn of page) {
    const e = await entryAt(ctx, dn, out.attrs);
    if (e) await sendEntry(out, e);
  }
  const note = { base: a.base, scope: a.scope, paged: true, entries: page.length, left: dns.length };
  if (dns.length === 0) return end(limitCode(limit), total, note);
  const cookie = conn.paged.keep({ key, dns, total, ...(limit ? { limit } : {}) });
  const controls: Control[] = [pagedResultsControl({ size: total, cookie })];
  return { response: done(ResultCode.success), controls, note };
}
