/**
 * Commands: the unit the API exposes. A command has positional arguments and
 * named options (both declared as params), an access rule, and a run
 * function. CRUD commands are derived from object declarations (crud.ts);
 * other commands (ping, schema, group-add-member...) are declared directly.
 * Input checking happens here, once, for every transport.
 */
import type { Directory } from '../directory/types.js';
import { publicError, PublicError } from './errors.js';
import { convertParam, type ParamDef, type ParamValue } from './params.js';

/** Who is calling. */
export interface Principal {
  /** Kerberos-style principal name, e.g. admin@EXAMPLE.TEST */
  name: string;
  /** directory entry of the user or service */
  dn: string;
  /** login / service name */
  uid: string;
}

export interface ServerInfo {
  version: string;
  apiVersion: string;
  realm: string;
  domain: string;
  /** default search limits (realm policy) */
  searchSizeLimit: number;
  searchTimeLimit: number;
}

/**
 * An OpenID Provider's metadata (OpenID Connect Discovery 1.0 §3), the
 * fields IdP references use.
 */
export interface OidcProviderMetadata {
  issuer: string;
  authorization_endpoint?: string;
  device_authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  jwks_uri?: string;
}

/**
 * What commands reach beyond the directory. The server wires these in when
 * it builds the registry: objects/ may not import the clients themselves.
 */
export interface Services {
  /**
   * OIDC discovery (OpenID Connect Discovery 1.0 §4) for an issuer URL; its
   * errors carry messages fit to show the caller.
   */
  oidcDiscovery?(issuerUrl: string): Promise<OidcProviderMetadata>;
}

export interface CallContext {
  dir: Directory;
  principal: Principal | null;
  server: ServerInfo;
  /** per-call cache for authorization lookups */
  cache: Map<string, unknown>;
  /** the registry, for commands that describe the API (schema) */
  registry: CommandRegistry;
}

/** An argument or option of a command. */
export interface OptionDef extends ParamDef {
  /** flags take no value on the CLI */
  readonly flag?: boolean;
  /** default applied when absent */
  readonly default?: ParamValue;
  /** the CLI prompts (twice, without echo) when given without a value */
  readonly prompt?: boolean;
}

export interface ArgDef extends OptionDef {
  readonly name: string;
  /** more than one value (e.g. X-del NAME...) */
  readonly multivalue?: boolean;
}

export type Access =
  /** anyone, authenticated or not (login endpoints only) */
  | 'anonymous'
  /** any authenticated principal */
  | 'authenticated'
  /** writes to an object: admins or holders of the object's privilege */
  | { manage: string };

export type OutputKind = 'entry' | 'entries' | 'summary' | 'deleted' | 'custom';

export interface CommandResult {
  result: unknown;
  value?: unknown;
  summary: string | null;
  count?: number;
  truncated?: boolean;
  /** membership commands: how many were added/removed */
  completed?: number;
  /** membership commands: what failed, per attribute and kind, as [name, reason] */
  failed?: Record<string, Record<string, Array<[string, string]>>>;
}

export type Inputs = Record<string, ParamValue | undefined>;

export interface Command {
  /** wire name, `idp_add` */
  readonly name: string;
  readonly doc: string;
  /** object this command acts on, for labels in output */
  readonly object?: string;
  readonly args: readonly ArgDef[];
  readonly options: Readonly<Record<string, OptionDef>>;
  readonly access: Access;
  readonly output: OutputKind;
  run(ctx: CallContext, args: ParamValue[], options: Inputs): Promise<CommandResult>;
}

/** Options every command accepts and ignores (sent by clients). */
const ALWAYS_ACCEPTED = new Set(['version']);

/**
 * Validates raw wire arguments and options against the declaration:
 * unknown options, argument count, required values, types.
 */
export function checkInputs(cmd: Command, rawArgs: unknown[], rawOptions: Record<string, unknown>): { args: ParamValue[]; options: Inputs } {
  const args: ParamValue[] = [];
  const declared = cmd.args;
  const lastMulti = declared.length > 0 && declared[declared.length - 1]!.multivalue;
  if (rawArgs.length > declared.length && !lastMulti) {
    throw publicError('ArgumentCountError', { command: cmd.name, expected: declared.length, given: rawArgs.length });
  }
  declared.forEach((a, i) => {
    // a trailing multi-valued argument may come as separate values or as one list
    let raw: unknown = a.multivalue && i === declared.length - 1 ? rawArgs.slice(i).flatMap((x) => (Array.isArray(x) ? x : [x])) : rawArgs[i];
    if (Array.isArray(raw) && raw.length === 0) raw = undefined;
    if (Array.isArray(raw) && !a.multivalue && raw.length === 1) raw = raw[0];
    if (raw === undefined || raw === null) {
      if (a.required) throw publicError('RequirementError', { name: a.name });
      return;
    }
    args[i] = convertParam(a.name, a, raw);
  });
  const options: Inputs = {};
  for (const [key, raw] of Object.entries(rawOptions)) {
    if (ALWAYS_ACCEPTED.has(key)) continue;
    const def = Object.prototype.hasOwnProperty.call(cmd.options, key) ? cmd.options[key] : undefined;
    if (!def) throw publicError('OptionError', { option: key });
    if (raw === undefined || raw === null) continue;
    options[key] = convertParam(key, def, raw);
  }
  for (const [key, def] of Object.entries(cmd.options)) {
    if (options[key] === undefined && def.default !== undefined) options[key] = def.default;
    if (options[key] === undefined && def.required) throw publicError('RequirementError', { name: key });
  }
  return { args, options };
}

export class CommandRegistry {
  private readonly commands = new Map<string, Command>();
  readonly objects = new Map<string, import('./object.js').ObjectDef>();

  constructor(readonly services: Services = {}) {}

  register(...cmds: Command[]): void {
    for (const c of cmds) {
      if (this.commands.has(c.name)) throw new Error(`command ${c.name} registered twice`);
      this.commands.set(c.name, c);
    }
  }

  get(name: string): Command {
    const c = this.commands.get(name);
    if (!c) throw publicError('CommandError', { name: name.slice(0, 64) });
    return c;
  }

  has(name: string): boolean {
    return this.commands.has(name);
  }

  list(): Command[] {
    return [...this.commands.values()].sort((a, b) => a.name.localeCompare(b.name));
  }
}

export { PublicError };
