/**
 * Derives X-add, X-del, X-find, X-mod and X-show from an object declaration
 * (FreeIPA's crud/baseldap idea, docs/architecture.md, "How the code is built"). Options, validation, output
 * shaping (labels are applied by clients from the API schema), access rules
 * (the command's, and getEntryToWrite's for the entry a write acts on)
 * and the mapping of directory errors to public errors (mapDirectoryError,
 * through writeEntries for every command that writes) all live here once,
 * and so do the rules every object follows: each add and mod (and each
 * membership change, membership.ts) ends in one check of the complete
 * entry (required params, then the object's `complete` hook), a delete of several names is one transaction unless
 * --continue, and find returns entries ordered by their primary key.
 */
import { DirectoryError, UniquenessViolation, type Attributes, type Entry, type Modification } from '../directory/types.js';
import { escapeRdnValue, formatDn, parseDn, sameDn } from '../directory/dn.js';
import { assertMayActOn, assertMayStore, assertMayWriteAttribute, assertReadable, canManage, mayActOn } from './access.js';
import type { ArgDef, CallContext, Command, CommandResult, Inputs, OptionDef } from './command.js';
import { publicError, PublicError } from './errors.js';
import { escapeFilterValue as filterEscape } from '../directory/filter.js';
import type { CrudMethod, ObjectDef, PendingEntry } from './object.js';
import { convertScalar, type ParamDef, type ParamValue } from './params.js';
import { containerDn, placeDn, realmOf } from './place.js';

const FLAG = (label: string, doc: string): OptionDef => ({ type: 'bool', label, doc, flag: true });

export const commonOptions = {
  all: FLAG('All', 'Retrieve and print all attributes from the server. Affects command output.'),
  raw: FLAG('Raw', 'Print entries as stored on the server. Only affects output format.'),
  rights: FLAG('Rights', 'Display the access rights of this entry (requires --all).'),
  setattr: { type: 'str', multivalue: true, label: 'Set attribute', doc: 'Set an attribute to a name/value pair. Format is attr=value.', maxLength: 4096 },
  addattr: { type: 'str', multivalue: true, label: 'Add attribute', doc: 'Add an attribute/value pair. Format is attr=value.', maxLength: 4096 },
  delattr: {
    type: 'str',
    multivalue: true,
    label: 'Delete attribute',
    doc: 'Delete an attribute/value pair, or every value of an attribute given without one. Format is attr=value or attr.',
    maxLength: 4096,
  },
  continue: FLAG('Continue', 'Continuous mode: Don\'t stop on errors.'),
  sizelimit: { type: 'int', label: 'Size Limit', doc: 'Maximum number of entries returned (0 is unlimited)', minValue: 0, maxValue: 1_000_000 },
  timelimit: { type: 'int', label: 'Time Limit', doc: 'Time limit of search in seconds (0 is unlimited)', minValue: 0, maxValue: 86_400 },
  pkey_only: FLAG('Primary key only', 'Results should contain primary key attribute only ("name")'),
} as const satisfies Record<string, OptionDef>;

/**
 * "a user", "an IdP reference": the indefinite article by the sound of the
 * first word (a vowel, or an acronym whose first letter's name starts with
 * a vowel sound, as I in IdP).
 */
export function withArticle(noun: string): string {
  const an = /^[aeio]/i.test(noun) || /^[AEFHILMNORSX][A-Z]/.test(noun) || /^IdP\b/.test(noun);
  return `${an ? 'an' : 'a'} ${noun}`;
}

/** DN of the entry named `pkey` of object `obj`. */
export function dnOf(obj: ObjectDef, baseDn: string, pkey: string): string {
  return `${obj.rdnAttr}=${escapeRdnValue(pkey)},${containerOf(obj, baseDn)}`;
}

export function containerOf(obj: ObjectDef, baseDn: string): string {
  return containerDn(obj, baseDn);
}

/** The DN of the entry a call names: `pkey` in the object's container, or a one-of-a-kind object's one entry. */
function entryDn(ctx: CallContext, obj: ObjectDef, pkey: string): string {
  return obj.singleton ? obj.singleton(realmOf(ctx)) : dnOf(obj, ctx.dir.baseDn, pkey);
}

/** The value of the first RDN of a DN (the primary key of entries we name). */
export function pkeyOfDn(dn: string): string {
  const rdns = parseDn(dn);
  const first = rdns[0];
  if (!first || first.length === 0) return dn;
  return first[0]!.value;
}

/** The primary key of a call's argument, in canonical form (a one-of-a-kind object's: its entry's name, given no argument). */
export function pkeyOf(ctx: CallContext, obj: ObjectDef, raw: unknown): string {
  if (obj.singleton) return pkeyOfDn(obj.singleton(realmOf(ctx)));
  if (raw === undefined && obj.defaultPkey !== undefined) return obj.defaultPkey;
  const v = String(raw);
  return obj.normalizePkey ? obj.normalizePkey(v, ctx) : v;
}

function notFound(obj: ObjectDef, pkey: string): PublicError {
  return publicError('NotFound', { reason: `${pkey}: ${obj.labelSingular} not found` });
}

/** Looks up an entry by primary key or raises the object's not-found error. */
export async function getEntry(ctx: CallContext, obj: ObjectDef, pkey: string): Promise<Entry> {
  const entry = await ctx.dir.get(entryDn(ctx, obj, pkey));
  if (!entry) throw notFound(obj, pkey);
  return entry;
}

/**
 * The entry a write of an object acts on (a mod, a delete, a membership
 * change, a password): looked up by primary key, then refused unless the
 * caller may write it (access.ts mayActOn: a delegate's privilege does not
 * reach those who hold more).
 */
export async function getEntryToWrite(ctx: CallContext, obj: ObjectDef, pkey: string): Promise<Entry> {
  const entry = await getEntry(ctx, obj, pkey);
  await assertMayActOn(ctx, entry.dn, `${obj.labelSingular} "${pkey}"`);
  return entry;
}

/** What ReferencedEntry says (the specification's words), alone or before the referrers an object names (idp-del names the linked users). */
export const REFERENCED = 'This entry is being referenced by other entries';

/**
 * The one mapping of a directory failure to the public error a caller sees,
 * for every command that writes an object's entries. `pkey` names the
 * entry the write was about; when the failure names an entry of the same
 * object (err.dn: the name a rename or an add collides with, the entry of a
 * batch that failed), that entry is named instead. A value that is not a
 * DirectoryError, or a code with no public meaning (a fault of the server),
 * is returned unchanged: the transport logs it and answers InternalError.
 */
export function mapDirectoryError(ctx: CallContext, obj: ObjectDef, pkey: string, err: unknown): unknown {
  if (!(err instanceof DirectoryError)) return err;
  // a key another entry holds (a principal name, a POSIX id, an IdP link: directory/unique.ts), in the rule's words
  if (err instanceof UniquenessViolation) return publicError('DuplicateEntry', { reason: err.describe(entryLabel(ctx, err.holder)) });
  const attrName = err.attr ?? '';
  const named = err.dn !== undefined && isEntryOf(ctx, obj, err.dn) ? pkeyOfDn(err.dn) : pkey;
  switch (err.code) {
    case 'noSuchObject':
      return notFound(obj, named);
    case 'entryAlreadyExists':
      return publicError('DuplicateEntry', { reason: `${obj.labelSingular} with name "${named}" already exists` });
    case 'referenced':
      return publicError('ReferencedEntry', { reason: REFERENCED });
    case 'referenceTargetMissing':
      return publicError('NotFound', { reason: `${attrName}: referenced entry not found` });
    case 'constraintViolation': {
      const at = ctx.dir.schema.attribute(attrName);
      if (at?.singleValue) return publicError('OnlyOneValueAllowed', { attr: at.name });
      return publicError('ValidationError', { name: attrName || obj.name, error: 'value not allowed' });
    }
    case 'objectClassViolation':
    case 'undefinedAttributeType':
      return publicError('ObjectclassViolation', { attr: attrName || 'unknown' });
    case 'invalidAttributeSyntax':
      return publicError('ValidationError', { name: attrName, error: 'invalid syntax' });
    case 'attributeOrValueExists':
      return publicError('DatabaseError', { desc: `Type or value exists: ${attrName}` });
    case 'noSuchAttribute':
      return publicError('AttrValueNotFound', { attr: attrName, value: '' });
    case 'notAllowedOnNonLeaf':
      return publicError('NotAllowedOnNonLeaf');
    default:
      return err;
  }
}

/** How an error names the entry at `dn`: `host "web.example.test"` for an object's entry, else `the entry "DN"`. */
function entryLabel(ctx: CallContext, dn: string): string {
  for (const o of ctx.registry.objects.values()) if (isEntryOf(ctx, o, dn)) return `${o.labelSingular} "${pkeyOfDn(dn)}"`;
  return `the entry "${dn}"`;
}

/** Whether `dn` names an entry of `obj` (one directly in its container); false for a DN that does not parse. */
function isEntryOf(ctx: CallContext, obj: ObjectDef, dn: string): boolean {
  try {
    if (obj.singleton) return sameDn(dn, obj.singleton(realmOf(ctx)));
    const rdns = parseDn(dn);
    return rdns.length > 1 && sameDn(formatDn(rdns.slice(1)), containerOf(obj, ctx.dir.baseDn));
  } catch {
    return false;
  }
}

/** Runs a write of an object's entries; a directory failure leaves as its public error (mapDirectoryError). */
export async function writeEntries<T>(ctx: CallContext, obj: ObjectDef, pkey: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    throw mapDirectoryError(ctx, obj, pkey, err);
  }
}

/** Stored string form of a converted param value. */
async function storedValues(ctx: CallContext, name: string, p: ParamDef, v: ParamValue): Promise<string[]> {
  const list = Array.isArray(v) ? v : [v];
  const out: string[] = [];
  for (const item of list) {
    if (p.type === 'bool') out.push(item === true || item === 'true' ? 'TRUE' : 'FALSE');
    else if (p.type === 'ref') out.push(await refToDn(ctx, name, p, String(item)));
    else out.push(String(item));
  }
  return out;
}

/** Resolves a reference param (the name of another object) to its DN. */
async function refToDn(ctx: CallContext, _name: string, p: ParamDef, value: string): Promise<string> {
  const target = ctx.registry.objects.get(p.ref ?? '');
  if (!target) throw new Error(`param refers to unknown object ${p.ref}`);
  const dn = dnOf(target, ctx.dir.baseDn, pkeyOf(ctx, target, value));
  if (!(await ctx.dir.get(dn, ['objectClass']))) {
    throw publicError('NotFound', { reason: `${value}: ${target.labelSingular} not found` });
  }
  return dn;
}

function paramByAttr(obj: ObjectDef, attr: string): [string, ParamDef] | undefined {
  const lower = attr.toLowerCase();
  for (const [k, p] of Object.entries(obj.params)) if (p.attr && p.attr.toLowerCase() === lower) return [k, p];
  return undefined;
}

/**
 * Parses --setattr/--addattr/--delattr values (`attr=value`; --delattr also
 * takes `attr` alone for all its values), checks the attribute against the
 * schema, and validates the value with the param that owns the attribute.
 */
async function attrValueOptions(
  ctx: CallContext,
  obj: ObjectDef,
  option: 'setattr' | 'addattr',
  raw: ParamValue | undefined,
): Promise<Array<{ attr: string; value: string }>>;
async function attrValueOptions(
  ctx: CallContext,
  obj: ObjectDef,
  option: 'delattr',
  raw: ParamValue | undefined,
): Promise<Array<{ attr: string; value: string | undefined }>>;
async function attrValueOptions(
  ctx: CallContext,
  obj: ObjectDef,
  option: 'setattr' | 'addattr' | 'delattr',
  raw: ParamValue | undefined,
): Promise<Array<{ attr: string; value: string | undefined }>> {
  if (raw === undefined) return [];
  const out: Array<{ attr: string; value: string | undefined }> = [];
  for (const item of Array.isArray(raw) ? raw : [String(raw)]) {
    const eq = item.indexOf('=');
    const wholeAttribute = option === 'delattr' && eq < 0;
    if (eq === 0 || (eq < 0 && !wholeAttribute)) {
      throw publicError('ValidationError', { name: option, error: option === 'delattr' ? 'Invalid format. Should be name=value or name' : 'Invalid format. Should be name=value' });
    }
    const name = (wholeAttribute ? item : item.slice(0, eq)).trim();
    const value = wholeAttribute ? undefined : item.slice(eq + 1);
    // Whether the entry's classes allow the attribute is the directory's call.
    const at = ctx.dir.schema.attribute(name);
    if (!at) throw publicError('ObjectclassViolation', { attr: name });
    if (at.operational || at.syntax === 'secret') {
      throw publicError('ValidationError', { name: option, error: `attribute '${at.name}' cannot be changed this way` });
    }
    await assertMayWriteAttribute(ctx, at.name);
    const owner = paramByAttr(obj, at.name);
    if (owner?.[0] === obj.pkey) throw publicError('ValidationError', { name: option, error: obj.noRename ? `'${obj.pkey}' cannot be changed` : `use --rename to change '${obj.pkey}'` });
    let stored = value;
    if (owner && value !== undefined && value !== '') {
      const [key, p] = owner;
      if (p.type === 'ref') {
        stored = value.includes('=') ? value : await refToDn(ctx, key, p, value);
      } else if (option !== 'delattr') {
        stored = (await storedValues(ctx, key, p, convertScalar(key, p, value)))[0]!;
      }
    }
    out.push({ attr: at.name, value: stored });
  }
  return out;
}

/** The entry's attributes with the param that owns each: the object's params first, in declaration order, then the rest as stored. */
function attributesInParamOrder(obj: ObjectDef, attrs: Attributes): Array<[string, string[], ParamDef | undefined]> {
  const byName = new Map(Object.keys(attrs).map((k) => [k.toLowerCase(), k]));
  const out: Array<[string, string[], ParamDef | undefined]> = [];
  const done = new Set<string>();
  for (const p of Object.values(obj.params)) {
    const k = p.attr && byName.get(p.attr.toLowerCase());
    if (k && !done.has(k)) {
      out.push([k, attrs[k]!, p]);
      done.add(k);
    }
  }
  for (const [k, v] of Object.entries(attrs)) if (!done.has(k)) out.push([k, v, undefined]);
  return out;
}

/** Shapes a stored entry for the wire. */
export async function outputEntry(ctx: CallContext, obj: ObjectDef, entry: Entry, options: Inputs): Promise<Record<string, unknown>> {
  const all = options.all === true;
  const raw = options.raw === true;
  const out: Record<string, unknown> = {};
  if (all) out.dn = entry.dn;
  const defaultAttrs = new Set(obj.defaultAttributes.map((k) => obj.params[k]!.attr?.toLowerCase()));
  for (const [attr, values, p] of attributesInParamOrder(obj, entry.attrs)) {
    const at = ctx.dir.schema.attribute(attr);
    if (at?.operational || at?.syntax === 'secret') continue;
    const key = attr.toLowerCase();
    if (!all && !defaultAttrs.has(key)) continue;
    if (raw || !p) {
      out[key] = values;
      continue;
    }
    if (p.secret) continue;
    if (p.type === 'ref') out[key] = values.map(pkeyOfDn);
    else if (p.type === 'bool') out[key] = values.map((v) => v.toUpperCase() === 'TRUE');
    else if (p.type === 'int') out[key] = values.map((v) => Number(v));
    else out[key] = values;
  }
  if (obj.hooks?.postRead) await obj.hooks.postRead(ctx, entry, out, options);
  if (options.rights === true) {
    const write = (await canManage(ctx, obj.managePrivilege)) && (await mayActOn(ctx, entry.dn));
    const rights: Record<string, string> = {};
    const attrs = new Set<string>(Object.keys(entry.attrs).map((a) => a.toLowerCase()));
    for (const p of Object.values(obj.params)) if (p.attr) attrs.add(p.attr.toLowerCase());
    for (const a of [...attrs].sort()) {
      const at = ctx.dir.schema.attribute(a);
      if (!at || at.operational) continue;
      const secret = at.syntax === 'secret';
      const letters = (secret ? '' : 'rsc') + (write ? 'wo' : '');
      rights[a] = letters || 'none';
    }
    out.attributelevelrights = rights;
  }
  return out;
}

/** Attributes after `mods` (the directory decides what it accepts; this is what hooks check). */
function applyMods(attrs: Attributes, mods: readonly Modification[]): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attrs)) out[k] = [...v];
  for (const m of mods) {
    const current = out[m.attr] ?? [];
    let next: string[];
    if (m.op === 'replace') next = [...m.values];
    else if (m.op === 'add') next = [...current, ...m.values.filter((v) => !current.includes(v))];
    else next = m.values ? current.filter((v) => !m.values!.includes(v)) : [];
    if (next.length > 0) out[m.attr] = next;
    else delete out[m.attr];
  }
  return out;
}

/**
 * The entry an add or mod will store. On add it wraps the attributes to be
 * added; on mod the modifications, and what they leave of the stored entry.
 */
class Pending implements PendingEntry {
  private attrs: Attributes;
  constructor(
    private readonly schema: CallContext['dir']['schema'],
    readonly dn: string,
    readonly before: Entry | null,
    added: Attributes | null,
    private readonly mods: Modification[] | null,
  ) {
    this.attrs = added ?? applyMods(before?.attrs ?? {}, mods ?? []);
  }

  private name(attr: string): string {
    return this.schema.attribute(attr)?.name ?? attr;
  }

  values(attr: string): string[] {
    return [...(this.attrs[this.name(attr)] ?? [])];
  }

  changes(attr: string): boolean {
    const name = this.name(attr);
    if (this.mods === null) return (this.attrs[name]?.length ?? 0) > 0;
    return this.mods.some((m) => this.name(m.attr) === name);
  }

  set(attr: string, values: string[]): void {
    const name = this.name(attr);
    if (sameValues(this.values(name), values)) return;
    if (this.mods !== null) {
      this.mods.push({ op: 'replace', attr: name, values: [...values] });
      this.attrs = applyMods(this.attrs, [this.mods[this.mods.length - 1]!]);
    } else if (values.length > 0) this.attrs[name] = [...values];
    else delete this.attrs[name];
  }
}

/**
 * The rules every add and mod ends with, whichever options made the entry:
 * required params are present (a mod may not empty one; secrets cannot be
 * read back, so only an add checks them), the caller may store what the
 * entry now holds (access.ts assertMayStore: the POSIX identity a delegate
 * gives), then the object's own checks on the complete entry.
 */
async function completeEntry(ctx: CallContext, obj: ObjectDef, entry: Pending, options: Inputs): Promise<void> {
  for (const [key, p] of Object.entries(obj.params)) {
    if (!p.required || !p.attr) continue;
    const checked = entry.before === null || (!p.secret && entry.changes(p.attr));
    if (checked && entry.values(p.attr).length === 0) throw publicError('RequirementError', { name: key });
  }
  await assertMayStore(ctx, entry, obj);
  await obj.hooks?.complete?.(ctx, entry, options);
}

/**
 * The check of the complete entry (completeEntry) for a write that changes
 * `entry` by `mods` outside X-mod (a membership change); the object's
 * `complete` hook may add to `mods`, which the caller then writes.
 */
export async function checkModification(ctx: CallContext, obj: ObjectDef, entry: Entry, mods: Modification[]): Promise<void> {
  await completeEntry(ctx, obj, new Pending(ctx.dir.schema, entry.dn, entry, null, mods), {});
}

function pkeyArg(obj: ObjectDef, multivalue = false): ArgDef {
  const p = obj.params[obj.pkey]!;
  return { ...p, name: obj.pkey, required: true, multivalue };
}

/** The name show and mod take: optional when the object has a default one (defaultPkey). */
function pkeyArgOrDefault(obj: ObjectDef): ArgDef {
  const arg = pkeyArg(obj);
  return obj.defaultPkey === undefined ? arg : { ...arg, required: false, doc: `${arg.doc} (default: ${obj.defaultPkey})` };
}

function paramOptions(obj: ObjectDef, pick: (key: string, p: ParamDef) => boolean, patch: (p: ParamDef) => Partial<OptionDef> = () => ({})): Record<string, OptionDef> {
  const out: Record<string, OptionDef> = {};
  for (const [k, p] of Object.entries(obj.params)) {
    if (k === obj.pkey || !pick(k, p)) continue;
    out[k] = { ...p, ...(p.secret ? { prompt: true } : {}), ...patch(p) };
  }
  return out;
}

function checkRights(options: Inputs): void {
  if (options.rights === true && options.all !== true) {
    throw publicError('ValidationError', { name: 'rights', error: 'requires --all' });
  }
}

function addCommand(obj: ObjectDef): Command {
  const options: Record<string, OptionDef> = {
    ...paramOptions(obj, (_k, p) => !p.noCreate),
    setattr: commonOptions.setattr,
    addattr: commonOptions.addattr,
    ...obj.extraOptions?.add,
    all: commonOptions.all,
    raw: commonOptions.raw,
  };
  return {
    name: `${obj.name}_add`,
    doc: `Add a new ${obj.labelSingular}.`,
    object: obj.name,
    args: [pkeyArg(obj)],
    options,
    access: { manage: obj.name },
    output: 'entry',
    async run(ctx, args, opts): Promise<CommandResult> {
      const pkey = pkeyOf(ctx, obj, args[0]);
      const attrs: Attributes = { objectClass: [...obj.objectClasses], [obj.rdnAttr]: [pkey] };
      for (const [key, p] of Object.entries(obj.params)) {
        const v = opts[key];
        if (key === obj.pkey || !p.attr || v === undefined || p.noCreate) continue;
        attrs[p.attr] = await storedValues(ctx, key, p, v);
      }
      for (const { attr, value } of await attrValueOptions(ctx, obj, 'setattr', opts.setattr)) {
        if (!Array.isArray(attrs[attr]) || attrs[attr] === undefined) attrs[attr] = [];
        attrs[attr] = [...(attrs[attr] ?? []), value];
      }
      for (const { attr, value } of await attrValueOptions(ctx, obj, 'addattr', opts.addattr)) {
        attrs[attr] = [...new Set([...(attrs[attr] ?? []), value])];
      }
      await obj.hooks?.preAdd?.(ctx, attrs, opts, pkey);
      const dn = dnOf(obj, ctx.dir.baseDn, pkey);
      await completeEntry(ctx, obj, new Pending(ctx.dir.schema, dn, null, attrs, null), opts);
      await writeEntries(ctx, obj, pkey, () => ctx.dir.add(dn, attrs));
      const entry = await getEntry(ctx, obj, pkey);
      return { result: await outputEntry(ctx, obj, entry, opts), value: pkey, summary: `Added ${obj.labelSingular} "${pkey}"` };
    },
  };
}

/** Deletes the entries named `pkeys`, and those their alsoDelete hook names, in one transaction, or none of them. */
async function deleteEntries(ctx: CallContext, obj: ObjectDef, pkeys: readonly string[]): Promise<void> {
  const dns: string[] = [];
  for (const pkey of pkeys) {
    const entry = await getEntryToWrite(ctx, obj, pkey);
    await obj.hooks?.preDel?.(ctx, entry);
    // what goes with the entry goes first, so that nothing is left naming it
    for (const dn of (await obj.hooks?.alsoDelete?.(ctx, entry)) ?? []) if (!dns.some((d) => sameDn(d, dn))) dns.push(dn);
    dns.push(entry.dn);
  }
  await writeEntries(ctx, obj, pkeys[0]!, () => ctx.dir.batch(dns.map((dn) => ({ kind: 'delete' as const, dn }))));
}

function delCommand(obj: ObjectDef): Command {
  return {
    name: `${obj.name}_del`,
    doc: `Delete ${obj.label}.`,
    object: obj.name,
    args: [pkeyArg(obj, true)],
    options: { continue: commonOptions.continue, ...obj.extraOptions?.del },
    access: { manage: obj.name },
    output: 'deleted',
    async run(ctx, args, opts): Promise<CommandResult> {
      const names = [...new Set((Array.isArray(args[0]) ? args[0] : [String(args[0])]).map((n) => pkeyOf(ctx, obj, n)))];
      const deleted: string[] = [];
      const failed: string[] = [];
      if (opts.continue === true) {
        // each name on its own: what can be deleted is, the rest is listed
        for (const pkey of names) {
          try {
            await deleteEntries(ctx, obj, [pkey]);
            deleted.push(pkey);
          } catch (err) {
            if (!(err instanceof PublicError)) throw err;
            failed.push(pkey);
          }
        }
      } else {
        // all or nothing: one transaction, and the first failure says why
        await deleteEntries(ctx, obj, names);
        deleted.push(...names);
      }
      return {
        result: { failed },
        value: deleted,
        summary: deleted.length > 0 ? `Deleted ${obj.labelSingular} "${deleted.join(',')}"` : null,
      };
    },
  };
}

function findCommand(obj: ObjectDef): Command {
  const options: Record<string, OptionDef> = {
    [obj.pkey]: { ...obj.params[obj.pkey]!, required: false },
    ...paramOptions(obj, (_k, p) => !p.noSearch && !p.secret, () => ({ required: false })),
    ...obj.extraOptions?.find,
    timelimit: commonOptions.timelimit,
    sizelimit: commonOptions.sizelimit,
    all: commonOptions.all,
    raw: commonOptions.raw,
    pkey_only: commonOptions.pkey_only,
  };
  const criteria: ArgDef = { name: 'criteria', type: 'str', label: 'Criteria', doc: 'A string searched in all relevant object attributes', maxLength: 255 };
  return {
    name: `${obj.name}_find`,
    doc: `Search for ${obj.label}.`,
    object: obj.name,
    args: [criteria],
    options,
    access: 'authenticated',
    output: 'entries',
    async run(ctx, args, opts): Promise<CommandResult> {
      assertReadable(ctx, containerOf(obj, ctx.dir.baseDn));
      const structural = obj.objectClasses.find((c) => ctx.dir.schema.objectClass(c)?.kind === 'structural') ?? obj.objectClasses[0]!;
      const terms = [`(objectClass=${filterEscape(structural)})`];
      const crit = args[0] === undefined ? undefined : String(args[0]);
      if (crit) {
        const ors = obj.searchAttributes.map((k) => `(${obj.params[k]!.attr}=*${filterEscape(crit)}*)`);
        terms.push(`(|${ors.join('')})`);
      }
      for (const [key, p] of Object.entries(obj.params)) {
        const v = opts[key];
        if (v === undefined || !p.attr) continue;
        for (const stored of await storedValues(ctx, key, p, v)) terms.push(`(${p.attr}=${filterEscape(stored)})`);
      }
      const sizeLimit = typeof opts.sizelimit === 'number' ? opts.sizelimit : ctx.server.searchSizeLimit;
      const timeLimit = typeof opts.timelimit === 'number' ? opts.timelimit : ctx.server.searchTimeLimit;
      const res = await ctx.dir.search({
        base: containerOf(obj, ctx.dir.baseDn),
        scope: 'one',
        filter: `(&${terms.join('')})`,
        sizeLimit,
        timeLimit,
        // by name: the size limit keeps the first names, and repeated calls agree
        orderBy: obj.rdnAttr,
      });
      const rdn = obj.rdnAttr;
      const result: unknown[] = [];
      for (const e of res.entries) {
        if (opts.pkey_only === true) result.push({ [rdn.toLowerCase()]: e.attrs[rdn] ?? [] });
        else result.push(await outputEntry(ctx, obj, e, opts));
      }
      const n = result.length;
      return {
        result,
        count: n,
        truncated: res.truncated,
        summary: `${n} ${n === 1 ? obj.labelSingular : obj.label} matched`,
      };
    },
  };
}

function modCommand(obj: ObjectDef): Command {
  const pk = obj.params[obj.pkey]!;
  const options: Record<string, OptionDef> = {
    // an empty value removes the attribute (a required one is then refused by completeEntry); never a secret's or a flag's
    ...paramOptions(obj, (_k, p) => !p.noUpdate, (p) => ({ required: false, ...(p.secret || p.type === 'bool' ? {} : { clearable: true }) })),
    setattr: commonOptions.setattr,
    addattr: commonOptions.addattr,
    delattr: commonOptions.delattr,
    ...obj.extraOptions?.mod,
    rights: commonOptions.rights,
    all: commonOptions.all,
    raw: commonOptions.raw,
    ...(obj.noRename || obj.singleton ? {} : { rename: { ...pk, label: 'Rename', doc: `Rename the ${obj.labelSingular} object`, required: false } }),
  };
  return {
    name: `${obj.name}_mod`,
    doc: obj.singleton ? `Modify the ${obj.labelSingular}.` : `Modify ${withArticle(obj.labelSingular)}.`,
    object: obj.name,
    args: obj.singleton ? [] : [pkeyArgOrDefault(obj)],
    options,
    access: { manage: obj.name },
    output: 'entry',
    async run(ctx, args, opts): Promise<CommandResult> {
      checkRights(opts);
      assertReadable(ctx, placeDn(obj, realmOf(ctx)));
      const pkey = pkeyOf(ctx, obj, args[0]);
      const entry = await getEntryToWrite(ctx, obj, pkey);
      const mods: Modification[] = [];
      for (const [key, p] of Object.entries(obj.params)) {
        const v = opts[key];
        if (key === obj.pkey || !p.attr || v === undefined || p.noUpdate) continue;
        mods.push({ op: 'replace', attr: p.attr, values: await storedValues(ctx, key, p, v) });
      }
      const set = new Map<string, string[]>();
      for (const { attr, value } of await attrValueOptions(ctx, obj, 'setattr', opts.setattr)) {
        set.set(attr, [...(set.get(attr) ?? []), ...(value === '' ? [] : [value])]);
      }
      for (const [attr, values] of set) mods.push({ op: 'replace', attr, values });
      for (const { attr, value } of await attrValueOptions(ctx, obj, 'addattr', opts.addattr)) {
        mods.push({ op: 'add', attr, values: [value] });
      }
      for (const { attr, value } of await attrValueOptions(ctx, obj, 'delattr', opts.delattr)) {
        const current = entry.attrs[attr] ?? [];
        if (value === undefined) {
          // the attribute by name alone: all its values, if it has any
          if (current.length > 0 && !mods.some((m) => m.op === 'delete' && m.attr === attr && !m.values)) mods.push({ op: 'delete', attr });
          continue;
        }
        const match = current.find((c) => c.toLowerCase() === value.toLowerCase());
        if (match === undefined) throw publicError('AttrValueNotFound', { attr, value });
        mods.push({ op: 'delete', attr, values: [match] });
      }
      const finalName = await modifyEntry(ctx, obj, pkey, entry, mods, opts);
      const updated = await getEntry(ctx, obj, finalName);
      return {
        result: await outputEntry(ctx, obj, updated, opts),
        value: finalName,
        summary: `Modified ${obj.labelSingular} "${finalName}"`,
      };
    },
  };
}

/**
 * The write of a modification of `entry` (looked up by getEntryToWrite, so
 * the caller may act on it): the object's preMod hook, the check of the
 * complete entry, the modifications that change something (none, and no
 * rename, is EmptyModlist), and a rename when `opts.rename` names one, in
 * one batch; a directory failure leaves as its public error. X-mod and the
 * commands that change one thing of an entry (user-disable) write through
 * it, so none skips a rule. Returns the entry's name after the write.
 */
export async function modifyEntry(ctx: CallContext, obj: ObjectDef, pkey: string, entry: Entry, mods: Modification[], opts: Inputs): Promise<string> {
  await obj.hooks?.preMod?.(ctx, mods, opts, entry);
  await completeEntry(ctx, obj, new Pending(ctx.dir.schema, entry.dn, entry, null, mods), opts);
  // a replace that leaves what is stored, before anything else changes that attribute, changes nothing
  const earlier = (i: number, attr: string) => mods.slice(0, i).some((x) => x.attr.toLowerCase() === attr.toLowerCase());
  const effective = mods.filter((m, i) => !(m.op === 'replace' && !earlier(i, m.attr) && sameValues(entry.attrs[m.attr] ?? [], m.values)));
  const newName = typeof opts.rename === 'string' ? opts.rename : undefined;
  if (newName !== undefined && newName === pkey) {
    throw publicError('ValidationError', { name: 'rename', error: 'New name must be different from the old one' });
  }
  if (effective.length === 0 && newName === undefined) throw publicError('EmptyModlist');
  const ops: Parameters<typeof ctx.dir.batch>[0] = [];
  if (effective.length > 0) ops.push({ kind: 'modify', dn: entry.dn, mods: effective });
  // a rename onto a taken name fails naming that name (the DN it collides with)
  if (newName !== undefined) ops.push({ kind: 'rename', dn: entry.dn, newRdn: `${obj.rdnAttr}=${escapeRdnValue(newName)}` });
  await writeEntries(ctx, obj, pkey, () => ctx.dir.batch(ops));
  return newName ?? pkey;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((v) => set.has(v));
}

function showCommand(obj: ObjectDef): Command {
  return {
    name: `${obj.name}_show`,
    doc: obj.singleton ? `Display the ${obj.labelSingular}.` : `Display information about ${withArticle(obj.labelSingular)}.`,
    object: obj.name,
    args: obj.singleton ? [] : [pkeyArgOrDefault(obj)],
    options: { ...obj.extraOptions?.show, rights: commonOptions.rights, all: commonOptions.all, raw: commonOptions.raw },
    access: 'authenticated',
    output: 'entry',
    async run(ctx, args, opts): Promise<CommandResult> {
      checkRights(opts);
      assertReadable(ctx, placeDn(obj, realmOf(ctx)));
      const pkey = pkeyOf(ctx, obj, args[0]);
      const entry = await getEntry(ctx, obj, pkey);
      return { result: await outputEntry(ctx, obj, entry, opts), value: pkey, summary: null };
    },
  };
}

const builders: Record<CrudMethod, (obj: ObjectDef) => Command> = {
  add: addCommand,
  del: delCommand,
  find: findCommand,
  mod: modCommand,
  show: showCommand,
};

/** The CRUD commands of a declared object (a one-of-a-kind object's: show and mod), then its own (ObjectDef.commands). */
export function objectCommands(obj: ObjectDef): Command[] {
  const methods = obj.methods ?? (obj.singleton ? (['mod', 'show'] as const) : (['add', 'del', 'find', 'mod', 'show'] as const));
  return [...methods.map((m) => builders[m](obj)), ...(obj.commands?.(obj) ?? [])];
}
