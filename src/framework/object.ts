/**
 * Declaring a directory-backed object once (docs/architecture.md, "How the code is built"): its container,
 * object classes, primary key and params. crud.ts derives X-add/del/find/
 * mod/show from it; the API schema, CLI options and output labels come from
 * the same declaration. A command file adds only hooks for what is special.
 */
import type { Attributes, Entry, Modification } from '../directory/types.js';
import type { ContainerName } from '../directory/layout.js';
import type { CallContext, Inputs, OptionDef } from './command.js';
import type { ParamDef } from './params.js';

export type CrudMethod = 'add' | 'del' | 'find' | 'mod' | 'show';

/** Extra output fields that are computed, not stored (e.g. member_user). */
export interface ComputedOutput {
  readonly label: string;
  /** shown without --all */
  readonly default?: boolean;
}

/**
 * The entry an add or a mod is about to store, complete: hooks check it
 * and derive attributes from it, whichever options produced it.
 */
export interface PendingEntry {
  /** the stored entry before a mod; null on add */
  readonly before: Entry | null;
  /** values of `attr` after the write ([] when none); secrets only when this write sets them */
  values(attr: string): string[];
  /** whether this write touches `attr` (on add: whether it stores it) */
  changes(attr: string): boolean;
  /** makes the write leave `attr` with `values` ([] removes it) */
  set(attr: string, values: string[]): void;
}

export interface Hooks {
  /** adjust attributes before an add; may throw public errors */
  preAdd?(ctx: CallContext, attrs: Attributes, options: Inputs, pkey: string): Promise<void>;
  /** adjust modifications before a mod; `entry` is the current entry */
  preMod?(ctx: CallContext, mods: Modification[], options: Inputs, entry: Entry): Promise<void>;
  /**
   * Runs on the complete entry after every add and mod, once the required
   * params are known to be present: derives what follows from the entry and
   * throws public errors for entries that would not be usable.
   */
  complete?(ctx: CallContext, entry: PendingEntry, options: Inputs): Promise<void>;
  /** checks before a delete */
  preDel?(ctx: CallContext, entry: Entry): Promise<void>;
  /** add computed fields to an output entry */
  postRead?(ctx: CallContext, entry: Entry, out: Record<string, unknown>, options: Inputs): Promise<void>;
}

export interface ObjectDef {
  /** object name: `idp`, `user`; commands are `<name>_add` ... */
  readonly name: string;
  /** plural label: `IdP references` */
  readonly label: string;
  /** singular label: `IdP reference` */
  readonly labelSingular: string;
  /** the container its entries live in (directory/layout.ts) */
  readonly container: ContainerName;
  /** RDN attribute: `cn`, `uid` */
  readonly rdnAttr: string;
  /** object classes of new entries; the first structural one filters find */
  readonly objectClasses: readonly string[];
  /** option key of the primary key param */
  readonly pkey: string;
  /** params keyed by option name (`client_id`); order is output order */
  readonly params: Readonly<Record<string, ParamDef>>;
  /** attributes returned without --all (option keys) */
  readonly defaultAttributes: readonly string[];
  /** option keys whose attributes CRITERIA searches */
  readonly searchAttributes: readonly string[];
  /** privilege that grants write access besides admins */
  readonly managePrivilege?: string;
  /** derived methods; default all five */
  readonly methods?: readonly CrudMethod[];
  /** extra options per method (hooks consume them) */
  readonly extraOptions?: Partial<Record<CrudMethod, Readonly<Record<string, OptionDef>>>>;
  readonly computed?: Readonly<Record<string, ComputedOutput>>;
  readonly hooks?: Hooks;
  /** canonical form of a primary key as given by a caller (e.g. add the realm) */
  readonly normalizePkey?: (value: string, ctx: CallContext) => string;
  /** one-line description for help */
  readonly doc: string;
}

/** Declares an object; the literal type is kept for typed hooks. */
export function defineObject<const D extends ObjectDef>(def: D): D {
  if (!(def.pkey in def.params)) throw new Error(`${def.name}: pkey ${def.pkey} is not a param`);
  for (const k of [...def.defaultAttributes, ...def.searchAttributes]) {
    if (!(k in def.params)) throw new Error(`${def.name}: unknown param ${k}`);
  }
  return def;
}

/** The option value types a declared object accepts on add. */
export type ParamValueOf<P extends ParamDef> = P['multivalue'] extends true
  ? string[]
  : P['type'] extends 'int'
    ? number
    : P['type'] extends 'bool'
      ? boolean
      : string;

export type AddInputOf<D extends ObjectDef> = {
  [K in keyof D['params']]?: ParamValueOf<D['params'][K]>;
};
