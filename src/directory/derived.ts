/**
 * Values derived from some subtrees of a directory (an index of the access
 * rules, the reverse of `member`), built once per state of those subtrees
 * (Directory.subtreeGeneration) and shared by every reader, concurrent ones
 * included. While the directory's generation has not moved nothing was
 * written anywhere, so not even the subtrees' generations are asked. A
 * build that fails is not kept: the next reader builds again.
 */
import type { Directory } from './types.js';

interface Kept<T> {
  /** the subtrees' generations the value was built from */
  state: string;
  /** the directory's generation when the state was last found unchanged */
  generation: number;
  value: Promise<T>;
}

/** One kind of derived value: what it is read from, and how it is built (`previous`, the value of an earlier state, when one was built). */
export interface Derivation<T> {
  subtrees(dir: Directory): readonly string[];
  build(dir: Directory, previous: T | undefined): Promise<T>;
}

const kept = new WeakMap<Directory, Map<Derivation<unknown>, Kept<unknown>>>();

/** The value `d` derives from the directory as it stands: the one kept, or one built now (once). */
export function derived<T>(dir: Directory, d: Derivation<T>): Promise<T> {
  let perDir = kept.get(dir);
  if (!perDir) kept.set(dir, (perDir = new Map()));
  const hit = perDir.get(d as Derivation<unknown>) as Kept<T> | undefined;
  if (hit && hit.generation === dir.generation) return hit.value;
  const generation = dir.generation;
  const state = d
    .subtrees(dir)
    .map((dn) => dir.subtreeGeneration(dn))
    .join(',');
  if (hit && hit.state === state) {
    hit.generation = generation;
    return hit.value;
  }
  const value = (async () => d.build(dir, hit ? await hit.value.catch(() => undefined) : undefined))();
  const k: Kept<T> = { state, generation, value };
  perDir.set(d as Derivation<unknown>, k as Kept<unknown>);
  value.catch(() => {
    if (perDir.get(d as Derivation<unknown>) === k) perDir.delete(d as Derivation<unknown>);
  });
  return value;
}
