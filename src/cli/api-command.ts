/**
 * Running an API command from the command line: find a server, get the
 * schema (cache or server), parse the command line against it, prompt for
 * secrets (passwd of one's own password: the current one first), refuse a
 * missing required value, call, and print (with -v, ping also says who the
 * caller is and how it authenticated; keytab-get adds the keys to its -k
 * FILE, made ready before the call: keytab-file.ts). Exit codes: 0 ok, 1
 * error, 2 not found; a server's error gets its exit code from cli/errors.ts
 * (serverError).
 */
import type { ApiContract, CommandSpec } from '../contract/api-contract.js';
import type { RpcResponse, WireValue } from '../rpc/codec/types.js';
import { completeArguments, helpText, parseCommandLine, promptOwnCurrentPassword, takeLocalOptions } from './args.js';
import { loadClientConfig } from './config.js';
import { firstServerUrl } from './discovery.js';
import { CliError, serverError } from './errors.js';
import { openKeytabTarget, type KeytabTarget } from './keytab-file.js';
import { callerLine, formatResult, summaryBlock } from './output.js';
import { ticketPrincipal } from './principal.js';
import { readSecret } from './prompt.js';
import { currentSchema, type CachedSchema } from './schema-cache.js';
import { connect, type Session } from './transport.js';

export interface GlobalOptions {
  config?: string;
  verbose: boolean;
}

function fail(resp: RpcResponse): never {
  throw serverError(resp.error!);
}

export async function runApiCommand(g: GlobalOptions, cliName: string, argv: string[]): Promise<number> {
  const conf = loadClientConfig(g.config);
  const method = cliName.replace(/-/g, '_');
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(method)) throw new CliError(`unknown command '${cliName}'`);
  // `ping --server HOST` chooses the server; `keytab-get -k FILE` where the keytab goes
  const { local, rest } = takeLocalOptions(method, argv);
  const serverOverride = local.server;
  const keytabFile = local.keytab;
  const firstServer = firstServerUrl(conf, serverOverride);
  let session: Session | undefined;
  const connectWith = (m: string, args: WireValue[], options: Record<string, WireValue>) => connect(conf, { verbose: g.verbose, ...(serverOverride ? { server: serverOverride } : {}) }, { method: m, args, options });
  const schema = await currentSchema(firstServer, async (known) => {
    const r = await connectWith('schema', [], known.length ? { known_fingerprints: known } : {});
    if (r.response.error) fail(r.response);
    session = r.session;
    return r.response;
  });
  const spec = findCommand(schema, method, cliName);
  const parsed = parseCommandLine(spec, rest);
  if (parsed.help) {
    process.stdout.write(helpText(spec));
    return 0;
  }
  promptOwnCurrentPassword(spec, parsed, ticketPrincipal());
  for (const p of parsed.prompts) {
    const label = p.spec.label;
    const value = await readSecret(label, process.stdin.isTTY && !p.once ? `Enter ${label} again to verify` : undefined);
    if (p.where === 'option') parsed.options[p.spec.name] = value;
    else parsed.args[p.index!] = value;
  }
  completeArguments(spec, parsed);
  if (method === 'keytab_get' && !keytabFile) throw new CliError('keytab-get needs -k FILE to write the keytab to');
  // the keytab is made ready before the server makes new keys: a file that cannot be written changes none
  const target: KeytabTarget | undefined = method === 'keytab_get' ? openKeytabTarget(keytabFile!) : undefined;
  let resp: RpcResponse;
  try {
    if (session) resp = await session.call(method, parsed.args, parsed.options);
    else {
      const r = await connectWith(method, parsed.args, parsed.options);
      session = r.session;
      resp = r.response;
    }
    if (resp.error) fail(resp);
  } catch (e) {
    target?.abandon();
    throw e;
  }
  const result = (resp.result ?? {}) as Record<string, unknown>;
  if (target) {
    const kt = (result.result as { keytab?: unknown } | undefined)?.keytab;
    if (!Buffer.isBuffer(kt)) {
      target.abandon();
      throw new CliError('the server sent no keytab');
    }
    target.commit(kt);
    process.stdout.write(summaryBlock(`${String(result.summary)} written to ${keytabFile}`));
    return 0;
  }
  const out = formatResult(spec.output, spec.object, result, schema.contract, { all: parsed.options.all === true, raw: parsed.options.raw === true });
  if (method === 'ping' && g.verbose) process.stderr.write(callerLine(result.result));
  process.stdout.write(out.text);
  return out.exitCode;
}

function findCommand(schema: CachedSchema, method: string, cliName: string): CommandSpec {
  const spec = schema.contract.commands.find((c) => c.name === method);
  if (!spec) throw new CliError(`unknown command '${cliName}'`);
  return spec;
}

export async function listCommands(g: GlobalOptions): Promise<string> {
  const conf = loadClientConfig(g.config);
  const schema = await currentSchema(firstServerUrl(conf), async (known) => {
    const r = await connect(conf, { verbose: g.verbose }, { method: 'schema', args: [], options: known.length ? { known_fingerprints: known } : {} });
    if (r.response.error) fail(r.response);
    return r.response;
  });
  const c: ApiContract = schema.contract;
  return c.commands.map((x) => `  ${x.cli_name.padEnd(24)} ${x.doc}`).join('\n') + '\n';
}
