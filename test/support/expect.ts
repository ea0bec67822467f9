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

/** Refused with ValidationError (3009) naming `option`, `name` as a name hosts reserve (objects/posix.ts) and `why`. */
export async function reservedName(p: Promise<unknown>, option: string, name: string, why: RegExp): Promise<void> {
  const e = await rpcError(p);
  assert.equal(e.code, 3009, e.message);
  assert.match(e.message, new RegExp(`^invalid '${option}': "${name}" is a name hosts reserve \\(`));
  assert.match(e.message, why);
  assert.match(e.message, /a user or group of that name would get its rights on hosts; choose another$/);
}
