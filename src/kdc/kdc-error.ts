/**
 * Errors the KDC answers with: a Kerberos error code (RFC 4120 §7.5.9), an
 * optional e-text for the log and the client, and optional e-data (e.g.
 * METHOD-DATA with pre-authentication hints). The one place that turns them
 * into KRB-ERROR messages is kdc-server.ts.
 */
import { ErrorCode } from '../kerberos/iana.js';

export type ErrorName = keyof typeof ErrorCode;

export class KdcError extends Error {
  readonly code: number;
  readonly eData: Buffer | undefined;
  constructor(name: ErrorName | 'KDC_ERR_WRONG_REALM', eText: string, eData?: Buffer) {
    super(eText);
    this.name = 'KdcError';
    this.code = name === 'KDC_ERR_WRONG_REALM' ? 68 : ErrorCode[name];
    this.eData = eData;
  }
}

export function errorName(code: number): string {
  if (code === 68) return 'KDC_ERR_WRONG_REALM';
  for (const [k, v] of Object.entries(ErrorCode)) if (v === code) return k;
  return `ERROR_${code}`;
}
