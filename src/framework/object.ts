/**
 * Declaring a directory-backed object once (docs/architecture.md, "How the code is built"): its container,
 * object classes, primary key and params. crud.ts derives X-add/del/find/
 * mod/show from it; the API schema, CLI options and output labels come from
 * the same declaration. A command file adds only hooks for what is special.
 * The declaration's types live in command.ts beside the call context, which
 * they refer to and which refers to them.
 */
import type { ObjectDef } from './command.js';
import type { ParamDef } from './params.js';
import { checkPlace } from './place.js';

export type { ComputedOutput, CrudMethod, DefaultEntry, Hooks, ObjectDef, PendingEntry, RealmPlace } from './command.js';

/** Declares an object; the literal type is kept for typed hooks. */
export function defineObject<const D extends ObjectDef>(def: D): D {
  checkPlace(def);
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
