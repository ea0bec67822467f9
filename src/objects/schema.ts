/**
 * schema: the API contract for clients, with a fingerprint and a TTL so the
 * CLI can cache it per user and per server (docs/conventions.md, "Schema
 * cache"). `known_fingerprints` lets a client ask "has it changed?" cheaply.
 * The contract is worked out once per registry, on the first call, and kept
 * for that registry only.
 */
import { apiContract, fingerprint, type ApiContract } from '../framework/api.js';
import type { Command, CommandRegistry } from '../framework/command.js';

export const SCHEMA_TTL_SECONDS = 3600;

interface Described {
  contract: ApiContract;
  fingerprint: string;
}

/** Each registry's contract, held only as long as the registry itself. */
const described = new WeakMap<CommandRegistry, Described>();

function describedOf(registry: CommandRegistry): Described {
  let d = described.get(registry);
  if (!d) {
    const contract = apiContract(registry);
    d = { contract, fingerprint: fingerprint(contract) };
    described.set(registry, d);
  }
  return d;
}

export const schemaCommand: Command = {
  name: 'schema',
  doc: 'Retrieve the API schema (commands, options, labels).',
  args: [],
  options: {
    known_fingerprints: {
      type: 'str',
      multivalue: true,
      label: 'Known fingerprints',
      doc: 'Fingerprints of schemas the client already has',
      maxLength: 64,
    },
  },
  access: 'authenticated',
  output: 'custom',
  async run(ctx, _args, opts) {
    const d = describedOf(ctx.registry);
    const known = (opts.known_fingerprints as string[] | undefined) ?? [];
    const base = { fingerprint: d.fingerprint, ttl: SCHEMA_TTL_SECONDS, version: ctx.server.version };
    if (known.includes(d.fingerprint)) return { result: { ...base, unchanged: true }, summary: null };
    return { result: { ...base, unchanged: false, ...d.contract }, summary: null };
  },
};
