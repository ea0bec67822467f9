/**
 * The one place where anything thrown on an RPC path becomes its wire form:
 * the JSON-RPC error object, the XML-RPC fault, the 401 answers and the
 * text answers of the login endpoints all come from toRpcError. A public
 * error goes out as it is (code, name, message, its template params as
 * data); a request the codecs cannot read is a ProtocolError; anything else
 * is InternalError with no detail, and the original (stack included) goes
 * to the caller's log only.
 */
import { publicError, PublicError, toPublicError, type ErrorName } from '../framework/errors.js';
import { CodecError, type RpcError, type WireValue } from './codec/types.js';
import { errorFields, type Logger } from '../log/logger.js';

/** Any thrown value as the RPC error a client may see; an internal one is logged through `log`. */
export function toRpcError(err: unknown, log: Logger): RpcError {
  let pub: PublicError;
  if (err instanceof CodecError) pub = publicError('ProtocolError', { reason: err.message });
  else {
    pub = toPublicError(err);
    if (pub === err) {
      // a public error says it all
    } else if (pub.errorName === 'DatabaseError') log.error('database_error', errorFields(err, false));
    else log.error('internal_error', errorFields(err));
  }
  const data: Record<string, WireValue> = {};
  for (const [k, v] of Object.entries(pub.params)) data[k] = v;
  return { code: pub.code, name: pub.errorName, message: pub.message, data };
}

/** `X-Dirid-Rejection-Reason` of a refused password login, FreeIPA's names where it has one. */
const rejectionReasons: Partial<Record<ErrorName, string>> = {
  InvalidCredentials: 'invalid-password',
  AccountDisabled: 'account-disabled',
  AccountLocked: 'user-locked',
  AccountExpired: 'krbprincipal-expired',
  PasswordExpired: 'password-expired',
};

/** The rejection reason a refused password login names, for the error it was refused with. */
export function rejectionReason(e: RpcError): string {
  return (Object.hasOwn(rejectionReasons, e.name) ? rejectionReasons[e.name as ErrorName] : undefined) ?? 'denied';
}
