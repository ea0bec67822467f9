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

/** BER string types a '#' value may carry, decoded to text (X.680 universal tags). */
const BER_STRINGS = { 0x0c: 'utf8', 0x13: 'latin1', 0x16: 'latin1', 0x1e: 'utf16be' } as const;

/** Decodes the BER string of a '#hex' value; other BER values are refused. */
function berString(dn: string, hex: string): string {
  if (hex.length < 4 || hex.length % 2 !== 0) throw bad(dn, 'invalid hex string value');
  const ber = Buffer.from(hex, 'hex');
  const kind = BER_STRINGS[ber[0]! as keyof typeof BER_STRINGS];
  if (!kind) throw bad(dn, 'hex string values must be BER character strings');
  let len = ber[1]!;
  let at = 2;
  if (len === 0x81 && ber.length > 2) [len, at] = [ber[2]!, 3];
  else if (len === 0x82 && ber.length > 3) [len, at] = [ber.readUInt16BE(2), 4];
  else if (len >= 0x80) throw bad(dn, 'unsupported BER length');
  const body = ber.subarray(at);
  if (body.length !== len || len === 0) throw bad(dn, 'BER length does not match');
  let text: string;
  if (kind === 'utf16be') {
    if (len % 2) throw bad(dn, 'odd BMPString length');
    text = Buffer.from(body).swap16().toString('utf16le');
  } else if (kind === 'utf8') {
    text = body.toString('utf8');
    if (!Buffer.from(text, 'utf8').equals(body)) throw bad(dn, 'UTF8String is not valid UTF-8');
  } else {
    if (body.some((b) => b > 0x7e || b < 0x20)) throw bad(dn, 'PrintableString/IA5String outside printable ASCII');
    text = body.toString('latin1');
  }
  if (text.includes('\u0000')) throw bad(dn, 'NUL in value');
  return text;
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
    if (dn[i] === '#') {
      // RFC 4514 §3: '#' and the hex of a BER-encoded string value
      let end = i + 1;
      while (end < dn.length && /[0-9a-fA-F]/.test(dn[end]!)) end++;
      const hex = dn.slice(i + 1, end);
      while (dn[end] === ' ') end++;
      if (end < dn.length && dn[end] !== ',' && dn[end] !== '+') throw bad(dn, 'invalid hex string value');
      rdn.push({ type, value: berString(dn, hex) });
      i = end;
    } else {
      let value = '';
      let lastSignificant = 0;
      const bytes: number[] = [];
      const flush = () => {
        if (bytes.length) {
          const buf = Buffer.from(bytes);
          const text = buf.toString('utf8');
          if (!Buffer.from(text, 'utf8').equals(buf)) throw bad(dn, 'hex escapes are not valid UTF-8');
          value += text;
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
        // '=' may stand unescaped in a value (RFC 4514 §3, SUTF1 includes %x3D)
        if (c === '"' || c === ';' || c === '<' || c === '>') throw bad(dn, `unescaped "${c}"`);
        if (c === '\u0000') throw bad(dn, 'NUL in value');
        flush();
        value += c;
        if (c !== ' ') lastSignificant = value.length;
      }
      flush();
      value = value.slice(0, lastSignificant);
      if (value === '') throw bad(dn, `empty value for "${type}"`);
      rdn.push({ type, value });
    }
    // separator: ',' ends the RDN, '+' adds to it
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

/**
 * A DN of single-valued RDNs with plain attribute names and values holding
 * no character RFC 4514 escapes and no space: its normal form is its lower
 * case, with no parse (most stored DNs, e.g. every `member` value a filter
 * compares, look like this).
 */
const PLAIN_DN = /^[A-Za-z][A-Za-z0-9-]*=[^,+"\\<>;=\s#\x00-\x1f\x7f][^,+"\\<>;=\s\x00-\x1f\x7f]*(?:,[A-Za-z][A-Za-z0-9-]*=[^,+"\\<>;=\s#\x00-\x1f\x7f][^,+"\\<>;=\s\x00-\x1f\x7f]*)*$/;

/** The normalised form of a DN: equal for DNs that name the same entry. */
export function normalizeDn(dn: string): string {
  if (dn.length <= MAX_DN_LENGTH && PLAIN_DN.test(dn)) return dn.toLowerCase();
  return normalizeParsed(dn);
}

/** The normal form through a full parse (every DN the fast path does not take). */
export function normalizeParsed(dn: string): string {
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

/** True when `ndn` is `nAncestor` or below it. Both already normalised. */
export function isWithin(ndn: string, nAncestor: string): boolean {
  if (nAncestor === '' || ndn === nAncestor) return true;
  if (!ndn.endsWith(',' + nAncestor)) return false;
  // the comma must be a separator, not the escaped end of a value ("cn=a\\,dc=x")
  let slashes = 0;
  for (let i = ndn.length - nAncestor.length - 2; i >= 0 && ndn[i] === '\\'; i--) slashes++;
  return slashes % 2 === 0;
}

/** True when `ndn` is a child of `nParent`: one RDN below it. Both already normalised. */
export function isChildOf(ndn: string, nParent: string): boolean {
  if (ndn === nParent || !isWithin(ndn, nParent)) return false;
  const head = nParent === '' ? ndn : ndn.slice(0, ndn.length - nParent.length - 1);
  // a plain RDN has no comma; one with escapes is parsed
  if (!head.includes('\\')) return !head.includes(',');
  return parseDn(head).length === 1;
}

/** True when `dn` is strictly below `ancestor` (any spelling of either). */
export function isDescendant(dn: string, ancestor: string): boolean {
  const n = normalizeDn(dn);
  const a = normalizeDn(ancestor);
  return n !== a && isWithin(n, a);
}

/** Whether two DNs name the same entry. */
export function sameDn(a: string, b: string): boolean {
  return normalizeDn(a) === normalizeDn(b);
}

/**
 * Moves `dn` from below an entry `depth` RDNs deep to below `newAncestor`:
 * its own leading RDNs are kept, the ancestor's replaced (renames of subtrees).
 */
export function rebaseDn(dn: string, depth: number, newAncestor: string): string {
  const rdns = parseDn(dn);
  if (rdns.length < depth) throw bad(dn, 'not below the renamed entry');
  return formatDn([...rdns.slice(0, rdns.length - depth), ...parseDn(newAncestor)]);
}
