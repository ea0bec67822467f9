/**
 * What the write path reports of the writes it commits, to whoever asked
 * (framework/dispatch.ts: the audit trail of a command, docs/logging.md).
 * The report follows the asynchronous context, so only the writes a
 * command makes reach its recorder, whichever module makes them; writes
 * made outside one (the KDC's failed-login counters) are reported to no
 * one and cost one look-up.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { WriteOp } from './types.js';

/** Takes the writes of one committed transaction, in order. */
export type WriteRecorder = (ops: readonly WriteOp[]) => void;

const recorders = new AsyncLocalStorage<WriteRecorder>();

/** Runs `body`, reporting to `record` every write committed in its asynchronous context. */
export function recordingWrites<T>(record: WriteRecorder, body: () => T): T {
  return recorders.run(record, body);
}

/** Reports a committed transaction's writes (the write path calls it). */
export function written(ops: readonly WriteOp[]): void {
  recorders.getStore()?.(ops);
}
