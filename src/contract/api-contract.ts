/**
 * The shape of the API contract: what the `schema` command serves and
 * api.json holds — every command with its arguments and options, every
 * object with its labels. The server derives it from its declarations
 * (framework/api.ts); the client builds its options, help and output from
 * it (cli/). Keys are as they travel on the wire.
 */

export interface ParamSpec {
  name: string;
  cli_name: string;
  type: string;
  label: string;
  doc: string;
  required: boolean;
  multivalue: boolean;
  flag?: boolean;
  prompt?: boolean;
  values?: string[];
  default?: unknown;
}

export interface CommandSpec {
  name: string;
  cli_name: string;
  doc: string;
  object: string | null;
  output: string;
  access: string;
  args: ParamSpec[];
  options: ParamSpec[];
}

export interface ObjectSpec {
  name: string;
  label: string;
  label_singular: string;
  pkey: string;
  /** output keys (lower-case attribute names or computed keys) with their labels, in output order */
  fields: Array<{ key: string; label: string; param: string | null }>;
}

export interface ApiContract {
  api_version: string;
  commands: CommandSpec[];
  objects: ObjectSpec[];
}
