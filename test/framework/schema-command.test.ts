/**
 * The `schema` command describes the registry it is called through: two
 * registries in one process, with different commands, each get their own
 * contract and fingerprint (the contract is kept per registry, not once
 * for the whole process).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { apiContract, fingerprint } from '../../src/framework/api.js';
import { CommandRegistry, type CallContext, type Command } from '../../src/framework/command.js';
import { dispatch } from '../../src/framework/dispatch.js';
import type { Directory } from '../../src/directory/types.js';
import { buildRegistry } from '../../src/objects/index.js';

const server = { version: 'test', apiVersion: 'test', realm: 'EXAMPLE.TEST', domain: 'example.test', searchSizeLimit: 100, searchTimeLimit: 2 };

/** A call by an authenticated principal; the schema command reads no directory. */
function contextFor(registry: CommandRegistry): CallContext {
  return { dir: {} as Directory, principal: { name: 'admin@EXAMPLE.TEST', dn: 'uid=admin', uid: 'admin' }, server, cache: new Map(), registry };
}

const extra: Command = {
  name: 'zz_extra',
  doc: 'A command only the second registry has.',
  args: [],
  options: {},
  access: 'authenticated',
  output: 'summary',
  run: async () => ({ result: null, summary: null }),
};

interface SchemaAnswer {
  fingerprint: string;
  unchanged: boolean;
  commands?: Array<{ name: string }>;
}

async function schemaOf(registry: CommandRegistry, known: string[] = []): Promise<SchemaAnswer> {
  return (await dispatch(contextFor(registry), 'schema', [], known.length ? { known_fingerprints: known } : {})).result as SchemaAnswer;
}

/** Two registries in one process: the server's, and the same with one more command. */
function twoRegistries(): { plain: CommandRegistry; larger: CommandRegistry } {
  const plain = buildRegistry();
  const larger = buildRegistry();
  larger.register(extra);
  return { plain, larger };
}

describe('schema command', () => {
  it('two registries with different commands get different fingerprints, each its own contract', async () => {
    const { plain, larger } = twoRegistries();
    const a = await schemaOf(plain);
    const b = await schemaOf(larger);
    assert.equal(a.fingerprint, fingerprint(apiContract(plain)));
    assert.equal(b.fingerprint, fingerprint(apiContract(larger)));
    assert.notEqual(a.fingerprint, b.fingerprint);
    assert.ok(!a.commands!.some((c) => c.name === 'zz_extra'), 'the first registry lists no zz_extra');
    assert.ok(b.commands!.some((c) => c.name === 'zz_extra'), 'the second registry lists zz_extra');
  });

  it('a fingerprint is "unchanged" only for the registry it came from', async () => {
    const { plain, larger } = twoRegistries();
    const a = await schemaOf(plain);
    assert.equal((await schemaOf(plain, [a.fingerprint])).unchanged, true);
    assert.equal((await schemaOf(larger, [a.fingerprint])).unchanged, false);
  });
});
