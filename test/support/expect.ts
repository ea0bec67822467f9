/** What a promise rejects with, checked (each fails the test when the promise resolves). */
import assert from 'node:assert/strict';
import { DirectoryError } from '../../src/directory/types.js';

/** The RPC error a call rejects with. */
export async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code: number; message: string };
  }
  return assert.fail('expected an error');
}

/** The error of a rejected directory call, checked to be a DirectoryError. */
export async function directoryFailure(p: Promise<unknown>): Promise<DirectoryError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof DirectoryError, String(e));
    return e;
  }
  return assert.fail('expected a DirectoryError');
}
