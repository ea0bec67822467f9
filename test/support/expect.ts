/** The RPC error a promise rejects with (fails the test when it resolves). */
import assert from 'node:assert/strict';

export async function rpcError(p: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code: number; message: string };
  }
  return assert.fail('expected an error');
}
