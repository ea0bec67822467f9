/**
 * What the exchanges throw: a KdcError names its Kerberos error code by its
 * IANA name (RFC 4120 §7.5.9, kerberos/iana.ts) and carries an e-text for
 * the log and the client and, for pre-authentication, hints for the e-data
 * (METHOD-DATA) or e-data of its own (TYPED-DATA); an AccountRefused says that account/state.ts refused a
 * client's or a server's account. kdc-error.ts turns either, and anything
 * else thrown, into the KRB-ERROR on the wire.
 */
import { describeRefusal, type Refusal } from '../account/state.js';
import type { PaData } from '../kerberos/asn1/primitives.js';
import { ErrorCode } from '../kerberos/iana.js';

export type ErrorName = keyof typeof ErrorCode;

/**
 * Pre-authentication hints, or how to make them: hints cost a cookie and an
 * encryption, so a request that succeeds should never build them.
 */
export type Hints = PaData[] | (() => PaData[]);

/** Makes hints once, on first use. */
export function lazyHints(make: () => PaData[]): () => PaData[] {
  let made: PaData[] | undefined;
  return () => (made ??= make());
}

export class KdcError extends Error {
  readonly code: number;
  private readonly hintSource: Hints | undefined;
  /** e-data other than METHOD-DATA, as the error defines it (PKINIT's TYPED-DATA); it wins over hints */
  readonly eData: Buffer | undefined;
  constructor(name: ErrorName, eText: string, hints?: Hints, eData?: Buffer) {
    // an answer to the client, not a fault: no stack trace (capturing one cost more than the rest of a PREAUTH_REQUIRED answer's error)
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(eText);
    Error.stackTraceLimit = limit;
    this.name = 'KdcError';
    this.code = ErrorCode[name];
    this.hintSource = hints;
    this.eData = eData;
  }

  /** pre-authentication hints for the e-data METHOD-DATA (FAST-wrapped when armored) */
  get hints(): PaData[] | undefined {
    const h = this.hintSource;
    return h === undefined ? undefined : typeof h === 'function' ? h() : h;
  }
}

/** An account that may not authenticate now, in the role it has in the request; the message says why. */
export class AccountRefused extends Error {
  constructor(
    readonly refusal: Refusal,
    readonly role: 'client' | 'server',
    readonly principal: string,
  ) {
    super(`${role} ${principal}: ${describeRefusal(refusal)}`);
    this.name = 'AccountRefused';
  }
}

/** IANA names by code, made once: every refused request's log line names its error. */
const errorNames = new Map<number, string>();
for (const [k, v] of Object.entries(ErrorCode)) if (!errorNames.has(v)) errorNames.set(v, k);

/** The IANA name of an error code, for the log. */
export function errorName(code: number): string {
  return errorNames.get(code) ?? `ERROR_${code}`;
}
