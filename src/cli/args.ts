/**
 * Command lines from the schema: positional arguments and --options (both
 * `--opt=value` and `--opt value`), flags, repeated multi-value options,
 * options that prompt when given without a value (--secret), arguments that
 * are always prompted for (a secret such as passwd's new password: never
 * taken from the command line, so positionals fill only the others), the
 * current password passwd of one's own password asks for first, and the
 * check that every required argument is there before anything is sent.
 */
import type { CommandSpec, ParamSpec } from '../contract/api-contract.js';
import type { WireValue } from '../rpc/codec/types.js';
import { CliError } from './errors.js';

export interface ParsedCommand {
  args: WireValue[];
  options: Record<string, WireValue>;
  /** options or arguments to prompt for; `once`: not asked again to verify on a terminal (a current password) */
  prompts: Array<{ spec: ParamSpec; where: 'option' | 'arg'; index?: number; once?: boolean }>;
  help: boolean;
}

function scalar(spec: ParamSpec, raw: string): WireValue {
  if (spec.type === 'int' && /^-?\d{1,15}$/.test(raw)) return Number(raw);
  if (spec.type === 'bool') {
    if (/^(true|yes|1)$/i.test(raw)) return true;
    if (/^(false|no|0)$/i.test(raw)) return false;
    throw new CliError(`invalid '${spec.cli_name}': must be True or False`);
  }
  return raw;
}

export function parseCommandLine(spec: CommandSpec, argv: string[]): ParsedCommand {
  const out: ParsedCommand = { args: [], options: {}, prompts: [], help: false };
  const positional: string[] = [];
  const byCli = new Map(spec.options.map((o) => [o.cli_name, o]));
  for (let i = 0; i < argv.length; i++) {
    const tok = argv[i]!;
    if (tok === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (tok === '--help' || tok === '-h') {
      out.help = true;
      continue;
    }
    if (!tok.startsWith('--') || tok === '-') {
      positional.push(tok);
      continue;
    }
    const eq = tok.indexOf('=');
    const name = eq > 0 ? tok.slice(2, eq) : tok.slice(2);
    const o = byCli.get(name);
    if (!o) throw new CliError(`no such option: --${name}`);
    let value: string | undefined = eq > 0 ? tok.slice(eq + 1) : undefined;
    if (o.flag) {
      if (value !== undefined) throw new CliError(`--${name} does not take a value`);
      out.options[o.name] = true;
      continue;
    }
    if (value === undefined) {
      const next = argv[i + 1];
      if (o.prompt && (next === undefined || next.startsWith('--'))) {
        out.prompts.push({ spec: o, where: 'option' });
        continue;
      }
      if (next === undefined) throw new CliError(`--${name} option requires an argument`);
      value = next;
      i++;
    }
    const v = scalar(o, value);
    if (o.multivalue) out.options[o.name] = [...((out.options[o.name] as WireValue[] | undefined) ?? []), v];
    else out.options[o.name] = v;
  }
  spec.args.forEach((a, idx) => {
    const last = idx === spec.args.length - 1;
    if (a.prompt) {
      // a secret: on the command line it would show in the process list and the shell's history
      if (a.required) out.prompts.push({ spec: a, where: 'arg', index: idx });
    } else if (a.multivalue && last) {
      const rest = positional.splice(0);
      if (rest.length) out.args[idx] = rest.map((r) => scalar(a, r));
    } else {
      const v = positional.shift();
      if (v !== undefined) out.args[idx] = scalar(a, v);
    }
  });
  if (positional.length) throw new CliError(`command '${spec.cli_name}' takes at most ${commandLineArgs(spec).length} argument(s)`);
  for (let i = 0; i < out.args.length; i++) if (out.args[i] === undefined) out.args[i] = null;
  return out;
}

/** The arguments given on the command line (those prompted for are not). */
function commandLineArgs(spec: CommandSpec): ParamSpec[] {
  return spec.args.filter((a) => !a.prompt);
}

/**
 * Once the prompts are answered: refuses a required argument still missing
 * (the server would refuse it too, after the call; required options are left
 * to the server, which checks the arguments' values first), and fills the argument
 * list so that no gap is left (a gap would be sent as an undefined value,
 * which the codecs cannot encode); a missing optional argument is null.
 */
export function completeArguments(spec: CommandSpec, parsed: ParsedCommand): void {
  spec.args.forEach((a, idx) => {
    const v = parsed.args[idx];
    const missing = v === undefined || v === null || (Array.isArray(v) && v.length === 0);
    if (missing && a.required) throw new CliError(`'${a.name}' is required`);
  });
  for (let i = 0; i < parsed.args.length; i++) if (parsed.args[i] === undefined) parsed.args[i] = null;
  while (parsed.args.length && parsed.args[parsed.args.length - 1] === null) parsed.args.pop();
}

/**
 * `passwd` of one's own password (no LOGIN, or the LOGIN of `caller`, the
 * principal of the credential cache) asks for the current password first,
 * once, unless --current-password gave it; from standard input the current
 * password is the first line and the new one the second. A server whose
 * passwd has no such option is asked nothing more.
 */
export function promptOwnCurrentPassword(spec: CommandSpec, parsed: ParsedCommand, caller: string | null): void {
  if (spec.name !== 'passwd') return;
  const current = spec.options.find((o) => o.name === 'current_password');
  if (!current || parsed.options.current_password !== undefined) return;
  const login = parsed.args[0];
  const own = login === undefined || login === null || (caller !== null && !caller.includes('/') && caller.slice(0, caller.lastIndexOf('@')) === login);
  if (!own) return;
  const asked = parsed.prompts.findIndex((p) => p.spec.name === 'current_password');
  if (asked >= 0) parsed.prompts.splice(asked, 1);
  parsed.prompts.unshift({ spec: current, where: 'option', once: true });
}

function metavar(o: ParamSpec): string {
  if (o.values) return `{${o.values.join(',')}}`;
  if (o.type === 'int') return 'INT';
  if (o.type === 'bool') return 'BOOL';
  return o.name.toUpperCase();
}

/** `dirid COMMAND --help`: usage, the command's doc, arguments and options with their docs. */
/** An option the client handles itself, not sent to the server: one declaration for its help row and its parsing. */
export interface LocalOption {
  /** the key of its value in takeLocalOptions' result */
  key: string;
  /** a short form (`-k`), and the long one */
  short?: string;
  long: string;
  metavar: string;
  doc: string;
}

/** Each API command's options the client handles itself, by the command's wire name. */
export const LOCAL_OPTIONS: Readonly<Record<string, readonly LocalOption[]>> = {
  ping: [{ key: 'server', long: '--server', metavar: 'HOST[:PORT]', doc: 'ping this server instead of the configured one (its port unless one is given)' }],
  keytab_get: [{ key: 'keytab', short: '-k', long: '--keytab', metavar: 'FILE', doc: 'write the keytab to FILE (required)' }],
};

/**
 * Takes a command's local options out of its arguments, in each form its
 * help shows: `-k FILE`, `--keytab FILE` and `--keytab=FILE`.
 */
export function takeLocalOptions(method: string, argv: readonly string[]): { local: Record<string, string>; rest: string[] } {
  const local: Record<string, string> = {};
  const rest: string[] = [];
  const options = LOCAL_OPTIONS[method] ?? [];
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i]!;
    const o = options.find((x) => t === x.long || t === x.short || t.startsWith(`${x.long}=`));
    if (!o) {
      rest.push(t);
      continue;
    }
    const value = t.startsWith(`${o.long}=`) ? t.slice(o.long.length + 1) : argv[++i];
    if (!value) throw new CliError(`${o.long} option requires an argument`);
    local[o.key] = value;
  }
  return { local, rest };
}

export function helpText(spec: CommandSpec): string {
  const usageArgs = commandLineArgs(spec).map((a) => (a.required ? a.name.toUpperCase() : `[${a.name.toUpperCase()}]`) + (a.multivalue ? '...' : '')).join(' ');
  const lines = [`Usage: dirid [global-options] ${spec.cli_name}${usageArgs ? ' ' + usageArgs : ''} [options]`, '', spec.doc, ''];
  const row = (left: string, doc: string) => lines.push(left.length < 30 ? `  ${left.padEnd(30)}${doc}` : `  ${left}\n  ${''.padEnd(30)}${doc}`);
  if (spec.args.length) {
    lines.push('Arguments:');
    for (const a of spec.args) row(a.name.toUpperCase(), a.doc + (a.prompt ? ' (prompted for, not taken from the command line)' : a.required ? '' : ' (optional)'));
    lines.push('');
  }
  lines.push('Options:');
  row('-h, --help', 'show this help message and exit');
  for (const o of LOCAL_OPTIONS[spec.name] ?? []) row(`${o.short ? `${o.short}, ` : ''}${o.long}=${o.metavar}`, o.doc);
  for (const o of spec.options) {
    const left = o.flag ? `--${o.cli_name}` : o.prompt ? `--${o.cli_name}[=${metavar(o)}]` : `--${o.cli_name}=${metavar(o)}`;
    // a note the server's own text already makes is not repeated
    const notes = [o.required ? 'required' : '', o.multivalue && !o.flag ? 'repeatable' : '', o.prompt ? 'prompted for when given without a value' : ''].filter((n) => n && !o.doc.includes(n));
    row(left, o.doc + (notes.length ? ` (${notes.join('; ')})` : ''));
  }
  return lines.join('\n') + '\n';
}
