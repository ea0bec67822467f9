/**
 * Distinguished names (RFC 4514): parsing with escapes (`\,` and `\2C`),
 * formatting, and the normalised form used for comparison and as the store's
 * key (attribute types lower-cased, values lower-cased and canonically
 * escaped, AVAs of multi-valued RDNs sorted). DN comparison is
 * case-insensitive throughout dirid.
 */
import { DirectoryError } from './types.js';

export interface Ava {
  type: string;
  value: string;
}
export type Rdn = Ava[];

const MAX_DN_LENGTH = 4096;
const TYPE = /^([A-Za-z][A-Za-z0-9-]*|\d+(\.\d+)*)$/;

function bad(dn: string, why: string): DirectoryError {
  return new DirectoryError('invalidDNSyntax', `invalid DN "${dn.slice(0, 200)}": ${why}`, { dn });
}

/** Parses a DN string into RDNs, most specific first. The empty string is the root DN. */
export function parseDn(dn: string): Rdn[] {
  if (dn.length > MAX_DN_LENGTH) throw bad(dn, 'too long');
  const rdns: Rdn[] = [];
  if (dn.trim() === '') return rdns;
  let i = 0;
  let rdn: Rdn = [];
  while (i <= dn.length) {
    // attribute type
    while (dn[i] === ' ') i++;
    const eq = dn.indexOf('=', i);
    if (eq < 0) throw bad(dn, 'missing "="');
    const type = dn.slice(i, eq).trim();
    if (!TYPE.test(type)) throw bad(dn, `invalid attribute type "${type}"`);
    i = eq + 1;
    while (dn[i] === ' ') i++;
    // value
    let value = '';
    let lastSignificant = 0;
    if (dn[i] === '#') throw bad(dn, 'hex-encoded BER values are not supported');
    const bytes: number[] = [];
    const flush = () => {
      if (bytes.length) {
        value += Buffer.from(bytes).toString('utf8');
        bytes.length = 0;
        lastSignificant = value.length;
      }
    };
    for (; i < dn.length; i++) {
      const c = dn[i]!;
      if (c === ',' || c === '+') break;
      if (c === '\\') {
        const n = dn[i + 1];
        if (n === undefined) throw bad(dn, 'trailing backslash');
        if (/[0-9a-fA-F]/.test(n) && /[0-9a-fA-F]/.test(dn[i + 2] ?? '')) {
          bytes.push(parseInt(dn.slice(i + 1, i + 3), 16));
          i += 2;
        } else if (' "#+,;<=>\\'.includes(n)) {
          flush();
          value += n;
          lastSignificant = value.length;
          i += 1;
        } else throw bad(dn, `invalid escape "\\${n}"`);
        continue;
      }
      if (c === '"' || c === ';' || c === '<' || c === '>' || c === '=') throw bad(dn, `unescaped "${c}"`);
      if (c === '\u0000') throw bad(dn, 'NUL in value');
      flush();
      value += c;
      if (c !== ' ') lastSignificant = value.length;
    }
    flush();
    value = value.slice(0, lastSignificant);
    if (value === '') throw bad(dn, `empty value for "${type}"`);
    rdn.push({ type, value });
    if (i >= dn.length) {
      rdns.push(rdn);
      break;
    }
    if (dn[i] === ',') {
      rdns.push(rdn);
      rdn = [];
    }
    i++;
    if (i >= dn.length) throw bad(dn, 'ends with a separator');
  }
  return rdns;
}

/** Escapes an attribute value for use in a DN (RFC 4514 §2.4). */
export function escapeRdnValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (',+"\\<>;='.includes(c)) out += '\\' + c;
    else if (c === '\u0000') out += '\\00';
    else if ((i === 0 && (c === ' ' || c === '#')) || (i === value.length - 1 && c === ' ')) out += '\\' + c;
    else out += c;
  }
  return out;
}

export function formatDn(rdns: readonly Rdn[]): string {
  return rdns.map((r) => r.map((a) => `${a.type}=${escapeRdnValue(a.value)}`).join('+')).join(',');
}

function normalizeRdn(r: Rdn): string {
  return r
    .map((a) => `${a.type.toLowerCase()}=${escapeRdnValue(a.value.toLowerCase())}`)
    .sort()
    .join('+');
}

/** The normalised form of a DN: equal for DNs that name the same entry. */
export function normalizeDn(dn: string): string {
  return parseDn(dn).map(normalizeRdn).join(',');
}

/** The parent of a DN ('' for a single-RDN DN). */
export function parentDn(dn: string): string {
  return formatDn(parseDn(dn).slice(1));
}

/** The first RDN of a DN, formatted. */
export function rdnOf(dn: string): string {
  const rdns = parseDn(dn);
  if (rdns.length === 0) throw bad(dn, 'the root DN has no RDN');
  return formatDn([rdns[0]!]);
}

/** True when `dn` is `ancestor` or below it. Both normalised. */
export function isWithin(ndn: string, nAncestor: string): boolean {
  return nAncestor === '' || ndn === nAncestor || ndn.endsWith(',' + nAncestor);
}
