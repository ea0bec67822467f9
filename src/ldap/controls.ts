/**
 * LDAP controls (RFC 4511 §4.1.11): the Controls field of an LDAPMessage
 * in both directions, and the values of the controls we interpret: the
 * Simple Paged Results control (RFC 2696, docs/ldap.md): the client sends
 * the page size it wants and the cookie of the previous page (empty on the
 * first), the server answers each page with an estimate of the total and the
 * cookie to continue with, an empty cookie meaning there is nothing more;
 * and the password policy response control (draft-behera-ldap-password-policy
 * §6.2), which answers a bind that asked for it with why the password was
 * refused (expired, account locked) or how soon it expires.
 */
import { Ber, BerReader, LdapDecodeError, Tag, boolean, constructed, context, integer, octetString, octets, readOid, encodeBer, sequence, utf8String } from './ber.js';
import { ControlOid, MAX_INT } from './codes.js';

export interface Control {
  /** the control's OID */
  type: string;
  /** whether the operation must fail (unavailableCriticalExtension) when the control is not understood */
  criticality: boolean;
  /** the control's value, still encoded as the control defines it */
  value?: Buffer;
}

/** Identifier of the LDAPMessage's controls field: [0] SEQUENCE OF Control. */
export const CONTROLS_ID = context(0, true);

/** Reads the controls from the content of the [0] field. */
export function decodeControls(r: BerReader): Control[] {
  const out: Control[] = [];
  while (!r.atEnd) {
    const c = r.sequence(Tag.sequence, 'control');
    const type = readOid(c, Tag.octetString, 'control type');
    const criticality = c.peek() === Tag.boolean ? c.boolean(Tag.boolean, 'control criticality') : false;
    const control: Control = { type, criticality };
    if (!c.atEnd) control.value = c.octets(Tag.octetString, 'control value');
    c.finish('control');
    out.push(control);
  }
  return out;
}

/** The controls field, or undefined when there are none (the field is then omitted). */
export function encodeControls(controls: readonly Control[] | undefined): Ber | undefined {
  if (!controls || controls.length === 0) return undefined;
  return constructed(
    CONTROLS_ID,
    controls.map((c) =>
      sequence(utf8String(Tag.octetString, c.type), c.criticality ? boolean(true) : undefined, c.value === undefined ? undefined : octets(Tag.octetString, c.value)),
    ),
  );
}

/** The value of a paged results control, request or response. */
export interface PagedResults {
  /** requested page size (request), or the server's estimate of the total, 0 when unknown (response) */
  size: number;
  /** opaque; empty on a first request and on the last page's response */
  cookie: Buffer;
}

/** Decodes a paged results control value: SEQUENCE { size INTEGER (0..maxInt), cookie OCTET STRING }. */
export function decodePagedResultsValue(value: Buffer | undefined): PagedResults {
  if (value === undefined) throw new LdapDecodeError('paged results control without a value');
  const r = BerReader.of(value);
  const s = r.sequence(Tag.sequence, 'paged results value');
  r.finish('paged results value');
  const size = s.integer(Tag.integer, 'paged results size', 0, MAX_INT);
  const cookie = s.octets(Tag.octetString, 'paged results cookie');
  s.finish('paged results value');
  return { size, cookie };
}

export function encodePagedResultsValue(p: PagedResults): Buffer {
  return encodeBer(sequence(integer(Tag.integer, p.size), octetString(p.cookie)));
}

/** A paged results control (RFC 2696 lets the client choose criticality; the server sends it non-critical). */
export function pagedResultsControl(p: PagedResults, criticality = false): Control {
  return { type: ControlOid.pagedResults, criticality, value: encodePagedResultsValue(p) };
}

/** The first control of type `oid`, if any. */
export function findControl(controls: readonly Control[], oid: string): Control | undefined {
  return controls.find((c) => c.type === oid);
}

/** The errors of a password policy response we send (draft-behera-ldap-password-policy §6.2). */
export const PasswordPolicyError = { passwordExpired: 0, accountLocked: 1 } as const;

/**
 * A password policy response control: SEQUENCE { warning [0] CHOICE {
 * timeBeforeExpiration [0] INTEGER } OPTIONAL, error [1] ENUMERATED
 * OPTIONAL }, as OpenLDAP's ppolicy overlay writes it.
 */
export function passwordPolicyControl(v: { error?: number; timeBeforeExpiration?: number }): Control {
  const warning = v.timeBeforeExpiration === undefined ? undefined : constructed(context(0, true), [integer(context(0, false), v.timeBeforeExpiration)]);
  const error = v.error === undefined ? undefined : integer(context(1, false), v.error);
  return { type: ControlOid.passwordPolicy, criticality: false, value: encodeBer(sequence(warning, error)) };
}
