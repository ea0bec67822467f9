/**
 * Values derived from subtrees (directory/derived.ts): built once per state
 * of the subtrees and shared by concurrent readers, built again (with the
 * earlier value lent) after a write to them and not after others, and a
 * failed build is not kept.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { derived, type Derivation } from '../../src/directory/derived.js';
import type { Directory } from '../../src/directory/types.js';

/** A directory with only its generations: `write(dn)` commits within dn. */
function generations() {
  const gens = new Map<string, number>();
  let generation = 0;
  const dir = {
    get generation() {
      return generation;
    },
    subtreeGeneration: (dn: string) => gens.get(dn) ?? 0,
  } as unknown as Directory;
  return { dir, write: (dn: string) => gens.set(dn, ++generation) };
}

describe('values derived from subtrees', () => {
  it('are built once per state of their subtrees, shared meanwhile, and lent to the next build', async () => {
    const { dir, write } = generations();
    const built: Array<number | undefined> = [];
    const d: Derivation<number> = {
      subtrees: () => ['cn=rules'],
      build: async (_dir, previous) => {
        built.push(previous);
        return built.length;
      },
    };
    const [a, b] = await Promise.all([derived(dir, d), derived(dir, d)]);
    assert.deepEqual([a, b, built], [1, 1, [undefined]]);
    write('cn=users');
    assert.equal(await derived(dir, d), 1, 'a write elsewhere');
    write('cn=rules');
    assert.equal(await derived(dir, d), 2, 'a write within');
    assert.deepEqual(built, [undefined, 1]);
  });

  it('does not keep a build that failed', async () => {
    const { dir } = generations();
    let fail = true;
    const d: Derivation<string> = {
      subtrees: () => ['cn=rules'],
      build: async () => {
        if (fail) throw new Error('store gone');
        return 'built';
      },
    };
    await assert.rejects(derived(dir, d), /store gone/);
    fail = false;
    assert.equal(await derived(dir, d), 'built');
  });
});
