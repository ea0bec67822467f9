/**
 * Kerberos time (RFC 4120 §5.2.3): KerberosTime has whole seconds only;
 * the microseconds travel beside it (cusec, pausec, susec, usec). One
 * conversion from a millisecond clock for every message that carries both.
 */

/** Seconds-precision time (KerberosTime has no fractions). */
export function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/** The microseconds field that goes with `wholeSeconds(ms)`. */
export function microseconds(ms: number): number {
  return (ms % 1000) * 1000;
}
