/**
 * Errors the KDC answers with: a Kerberos error code (RFC 4120 §7.5.9), an
 * optional e-text for the log and the client, and optional e-data (e.g.
 * METHOD-DATA with pre-authentication hints). The one place that turns them
 * into KRB-ERROR messages is kdc-server.ts. An account's refusal
 * (account/state.ts) becomes its KDC error here.
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

function resolveHints(h: Hints): PaData[] {
  return typeof h === 'function' ? h() : h;
}

/** Makes hints once, on first use. */
export function lazyHints(make: () => PaData[]): () => PaData[] {
  let made: PaData[] | undefined;
  return () => (made ??= make());
}

export class KdcError extends Error {
  readonly code: number;
  private readonly hintSource: Hints | undefined;
  /** `name` may also be the number of a code (an AP-REQ check's, which uses the same codes) */
  constructor(name: ErrorName | 'KDC_ERR_WRONG_REALM' | number, eText: string, hints?: Hints) {
    super(eText);
    this.name = 'KdcError';
    this.code = typeof name === 'number' ? name : name === 'KDC_ERR_WRONG_REALM' ? 68 : ErrorCode[name];
    this.hintSource = hints;
  }

  /** pre-authentication hints for the e-data METHOD-DATA (FAST-wrapped when armored) */
  get hints(): PaData[] | undefined {
    return this.hintSource === undefined ? undefined : resolveHints(this.hintSource);
  }
}

export function errorName(code: number): string {
  for (const [k, v] of Object.entries(ErrorCode)) if (v === code) return k;
  return `ERROR_${code}`;
}

/**
 * An account's refusal as the KDC answers it: disabled or locked, revoked;
 * expired, NAME_EXP for a client and SERVICE_EXP for a service; password
 * expired, KEY_EXPIRED. The e-text says which.
 */
export function refusalError(v: Refusal, role: 'client' | 'server', name: string): KdcError {
  const text = `${role} ${name}: ${describeRefusal(v)}`;
  switch (v.state) {
    case 'disabled':
    case 'locked':
      return new KdcError(role === 'client' ? 'KDC_ERR_CLIENT_REVOKED' : 'KDC_ERR_SERVICE_REVOKED', text);
    case 'expired':
      return new KdcError(role === 'client' ? 'KDC_ERR_NAME_EXP' : 'KDC_ERR_SERVICE_EXP', text);
    case 'password-expired':
      return new KdcError('KDC_ERR_KEY_EXPIRED', text);
  }
}
