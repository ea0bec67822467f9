/**
 * Errors the KDC answers with: a Kerberos error code (RFC 4120 §7.5.9), an
 * optional e-text for the log and the client, and optional e-data (e.g.
 * METHOD-DATA with pre-authentication hints). The one place that turns them
 * into KRB-ERROR messages is kdc-server.ts.
 */
import type { PaData } from '../kerberos/asn1/primitives.js';
import { ErrorCode } from '../kerberos/iana.js';

export type ErrorName = keyof typeof ErrorCode;

export class KdcError extends Error {
  readonly code: number;
  /** pre-authentication hints for the e-data METHOD-DATA (FAST-wrapped when armored) */
  readonly hints: PaData[] | undefined;
  constructor(name: ErrorName | 'KDC_ERR_WRONG_REALM', eText: string, hints?: PaData[]) {
    super(eText);
    this.name = 'KdcError';
    this.code = name === 'KDC_ERR_WRONG_REALM' ? 68 : ErrorCode[name];
    this.hints = hints;
  }
}

export function errorName(code: number): string {
  if (code === 68) return 'KDC_ERR_WRONG_REALM';
  for (const [k, v] of Object.entries(ErrorCode)) if (v === code) return k;
  return `ERROR_${code}`;
}
