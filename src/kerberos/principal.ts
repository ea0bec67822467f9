/**
 * Principal names as text (RFC 1964 §2.1.1, MIT krb5_parse_name /
 * krb5_unparse_name): `comp1/comp2@REALM`, where `\` escapes `/`, `@` and
 * itself, and `\n`, `\t`, `\b`, `\0` stand for those control characters.
 * The structured form is the PrincipalName of RFC 4120 §5.2.2.
 */
import { NameType } from './iana.js';

export interface PrincipalName {
  nameType: number;
  nameString: string[];
}

export class PrincipalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PrincipalError';
  }
}

const MAX_TEXT = 4096;
const MAX_COMPONENTS = 16;

const ESCAPE_OUT: Record<string, string> = { '\\': '\\\\', '/': '\\/', '@': '\\@', '\n': '\\n', '\t': '\\t', '\b': '\\b', '\0': '\\0' };
const ESCAPE_IN: Record<string, string> = { n: '\n', t: '\t', b: '\b', '0': '\0' };

// names almost never need escaping; testing first spares a replace (the KDC formats several names per request)
const escaper = (special: RegExp) => {
  const all = new RegExp(special.source, 'g');
  return (s: string) => (special.test(s) ? s.replace(all, (c) => ESCAPE_OUT[c]!) : s);
};
const escapeComponent = escaper(/[\\/@\n\t\b\0]/);
const escapeRealm = escaper(/[\\@\n\t\b\0]/);

/** Formats `a/b@REALM`; without a realm, just the escaped components. */
export function formatPrincipal(p: PrincipalName, realm?: string): string {
  // concatenated in a loop: no array of escaped components per call
  const c = p.nameString;
  let s = c.length > 0 ? escapeComponent(c[0]!) : '';
  for (let i = 1; i < c.length; i++) s += '/' + escapeComponent(c[i]!);
  return realm !== undefined ? s + '@' + escapeRealm(realm) : s;
}


export interface ParsedPrincipal {
  name: PrincipalName;
  realm: string;
}

/**
 * Parses `a/b@REALM`. Without `@`, the realm is `defaultRealm`. The name
 * type is `nameType` (default NT-PRINCIPAL), or NT-SRV-INST for `krbtgt/...`
 * when `nameType` is not given, as MIT does.
 */
export function parsePrincipalName(text: string, defaultRealm: string, nameType?: number): ParsedPrincipal {
  if (text.length > MAX_TEXT) throw new PrincipalError('principal name too long');
  const parts: string[] = [''];
  let realm: string | undefined;
  for (let i = 0; i < text.length; i++) {
    let c = text[i]!;
    if (c === '\\') {
      const next = text[++i];
      if (next === undefined) throw new PrincipalError(`principal name "${text}" ends with a backslash`);
      c = ESCAPE_IN[next] ?? next;
      if (realm === undefined) parts[parts.length - 1] += c;
      else realm += c;
    } else if (realm !== undefined) {
      if (c === '@') throw new PrincipalError(`principal name "${text}" has more than one realm`);
      realm += c;
    } else if (c === '@') realm = '';
    else if (c === '/') parts.push('');
    else parts[parts.length - 1] += c;
  }
  if (parts.length > MAX_COMPONENTS) throw new PrincipalError(`principal name "${text}" has too many components`);
  if (parts.some((p) => p === '')) throw new PrincipalError(`invalid principal name "${text}"`);
  if (realm === '') throw new PrincipalError(`principal name "${text}" has an empty realm`);
  const type = nameType ?? (parts.length === 2 && parts[0] === 'krbtgt' ? NameType.SRV_INST : NameType.PRINCIPAL);
  return { name: { nameType: type, nameString: parts }, realm: realm ?? defaultRealm };
}

/**
 * True when two names have the same components (name types are not
 * compared, RFC 4120 §6.2): what their texts comparing equal means, since
 * escaping is one-to-one. A loop, not every() with a closure: the KDC
 * compares an authenticator's name with its ticket's on every AP-REQ.
 */
export function samePrincipalName(a: PrincipalName, b: PrincipalName): boolean {
  const x = a.nameString;
  const y = b.nameString;
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * A name made from a realm, the last realm's kept: the KDC looks its
 * krbtgt up several times a request, and a name made afresh is a new
 * string whose hash a Map look-up computes again.
 */
function perRealm(make: (realm: string) => string): (realm: string) => string {
  let lastRealm: string | undefined;
  let lastName = '';
  return (realm) => {
    if (realm !== lastRealm) {
      lastRealm = realm;
      lastName = make(realm);
    }
    return lastName;
  };
}

/** The ticket-granting service of a realm, `krbtgt/REALM@REALM` (RFC 4120 §7.3). */
export const tgsPrincipal = perRealm((realm) => `krbtgt/${realm}@${realm}`);

/**
 * The password-change service of a realm, `kadmin/changepw@REALM`: the
 * name MIT's clients (kpasswd, kinit with an expired password) ask an
 * initial ticket for before they send a password change (RFC 3244).
 */
export const changepwPrincipal = perRealm((realm) => `kadmin/changepw@${realm}`);

/** The same name as a PrincipalName (NT-SRV-INST, without the realm). */
export function tgsPrincipalName(realm: string): PrincipalName {
  return { nameType: NameType.SRV_INST, nameString: ['krbtgt', realm] };
}

/** The realm of the anonymous principal (RFC 8062 §3). */
export const ANONYMOUS_REALM = 'WELLKNOWN:ANONYMOUS';

/** `WELLKNOWN/ANONYMOUS` (NT-WELLKNOWN): the client name of an anonymous ticket, and what a client asks for one with. */
export function anonymousPrincipalName(): PrincipalName {
  return { nameType: NameType.WELLKNOWN, nameString: ['WELLKNOWN', 'ANONYMOUS'] };
}

/** Whether a name is the anonymous principal's, whatever its name type (as MIT compares it). */
export function isAnonymousName(p: PrincipalName): boolean {
  return samePrincipalName(p, anonymousPrincipalName());
}

/** Whether a principal as text (`WELLKNOWN/ANONYMOUS@any realm`) is the anonymous principal: never an account. */
export function isAnonymousPrincipal(text: string): boolean {
  return text.startsWith('WELLKNOWN/ANONYMOUS@');
}
