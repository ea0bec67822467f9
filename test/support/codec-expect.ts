/** Codec test helper: the CodecError a call throws, checked against the expected reason and message. */
import assert from 'node:assert/strict';
import { CodecError, type CodecFailure } from '../../src/rpc/codec/types.js';

/** Asserts that fn throws a CodecError, with the given reason and message when named. */
export function throwsCodec(fn: () => unknown, reason?: CodecFailure, message?: RegExp): CodecError {
  let caught: unknown;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof CodecError, `expected a CodecError, got ${caught === undefined ? 'no error' : String(caught)}`);
  if (reason) assert.equal(caught.reason, reason, caught.message);
  if (message) assert.match(caught.message, message);
  return caught;
}
