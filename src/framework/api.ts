/**
 * The API contract derived from the declarations: every command with its
 * arguments and options, every object with its params and labels. It is
 * served by the `schema` command (clients build their options, help and
 * labels from it) and committed as api.json (docs/architecture.md, "How the code is built"): a test fails when
 * the code and the file drift. Adding a command or option bumps API_VERSION's
 * minor number.
 */
import { createHash } from 'node:crypto';
import type { ArgDef, Command, CommandRegistry, OptionDef } from './command.js';
import type { ObjectDef } from './object.js';
import { cliName } from './params.js';
import type { ApiContract, CommandSpec, ObjectSpec, ParamSpec } from '../contract/api-contract.js';

export type { ApiContract, CommandSpec, ObjectSpec, ParamSpec } from '../contract/api-contract.js';

export const API_VERSION = '1.14';

function paramSpec(name: string, p: OptionDef | ArgDef): ParamSpec {
  const spec: ParamSpec = {
    name,
    cli_name: cliName(name),
    type: p.type,
    label: p.label,
    doc: p.doc,
    required: p.required === true,
    multivalue: p.multivalue === true,
  };
  if (p.flag) spec.flag = true;
  if (p.prompt || p.secret) spec.prompt = true;
  if (p.values) spec.values = [...p.values];
  if (p.default !== undefined) spec.default = p.default;
  return spec;
}

export function describeCommand(c: Command): CommandSpec {
  return {
    name: c.name,
    cli_name: c.name.replace(/_/g, '-'),
    doc: c.doc,
    object: c.object ?? null,
    output: c.output,
    access: typeof c.access === 'string' ? c.access : `manage:${c.access.manage}`,
    args: c.args.map((a) => paramSpec(a.name, a)),
    options: Object.entries(c.options).map(([k, o]) => paramSpec(k, o)),
  };
}

export function describeObject(o: ObjectDef): ObjectSpec {
  const fields: ObjectSpec['fields'] = [];
  for (const [k, p] of Object.entries(o.params)) {
    if (p.attr && !p.secret) fields.push({ key: p.attr.toLowerCase(), label: p.label, param: k });
  }
  for (const [k, c] of Object.entries(o.computed ?? {})) fields.push({ key: k, label: c.label, param: null });
  return { name: o.name, label: o.label, label_singular: o.labelSingular, pkey: o.pkey, fields };
}

export function apiContract(registry: CommandRegistry): ApiContract {
  return {
    api_version: API_VERSION,
    commands: registry.list().map(describeCommand),
    objects: [...registry.objects.values()].sort((a, b) => a.name.localeCompare(b.name)).map(describeObject),
  };
}

/** Stable text form of the contract (api.json). */
export function contractText(contract: ApiContract): string {
  return JSON.stringify(contract, null, 2) + '\n';
}

export function fingerprint(contract: ApiContract): string {
  return createHash('sha256').update(contractText(contract)).digest('hex').slice(0, 32);
}
