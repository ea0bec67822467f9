/**
 * schema: the API contract for clients, with a fingerprint and a TTL so the
 * CLI can cache it per user and per server (specification §9.3).
 * `known_fingerprints` lets a client ask "has it changed?" cheaply.
 */
import { apiContract, fingerprint, type ApiContract } from '../framework/api.js';
import type { Command } from '../framework/command.js';

export const SCHEMA_TTL_SECONDS = 3600;

let cached: { contract: ApiContract; fingerprint: string } | undefined;

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
    if (!cached) {
      const contract = apiContract(ctx.registry);
      cached = { contract, fingerprint: fingerprint(contract) };
    }
    const known = (opts.known_fingerprints as string[] | undefined) ?? [];
    const base = { fingerprint: cached.fingerprint, ttl: SCHEMA_TTL_SECONDS, version: ctx.server.version };
    if (known.includes(cached.fingerprint)) return { result: { ...base, unchanged: true }, summary: null };
    return { result: { ...base, unchanged: false, ...cached.contract }, summary: null };
  },
};
