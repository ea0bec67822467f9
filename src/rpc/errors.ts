/**
 * The one place where public errors become their RPC wire form (JSON-RPC
 * error object, XML-RPC fault): code, name, message and the template params
 * as data. Internal errors carry no detail.
 */
import type { PublicError } from '../framework/errors.js';
import type { RpcError, WireValue } from './codec/types.js';

export function errorToWire(err: PublicError): RpcError {
  const data: Record<string, WireValue> = {};
  for (const [k, v] of Object.entries(err.params)) data[k] = v;
  return { code: err.code, name: err.errorName, message: err.message, data };
}
