/**
 * Read-then-write steps on one entry, one after another within this
 * process: a counter that is read, changed and written back (the failed
 * login count, the ID range's next free number) would otherwise lose
 * concurrent changes or make them retry. The queues belong to the
 * directory handle, so every caller on one store shares them and two
 * stores do not. Other processes on a shared store are not queued here:
 * their writes are caught by the check each step makes when it writes.
 */
import { normalizeDn } from './dn.js';
import type { Directory } from './types.js';

const queuesOf = new WeakMap<Directory, Map<string, Promise<unknown>>>();

/** Runs `step` after every earlier step queued for the same entry of `dir` has settled. */
export function serialized<T>(dir: Directory, dn: string, step: () => Promise<T>): Promise<T> {
  const key = normalizeDn(dn);
  let pending = queuesOf.get(dir);
  if (!pending) queuesOf.set(dir, (pending = new Map()));
  const next = (pending.get(key) ?? Promise.resolve()).then(step);
  const settled = next.catch(() => {});
  pending.set(key, settled);
  void settled.then(() => {
    if (pending.get(key) === settled) pending.delete(key);
  });
  return next;
}
