/**
 * Parameters: what an object's attribute or a command's option is, and how a
 * raw wire value becomes a validated value. One declaration drives the RPC
 * validation, the CLI option parser (through the API schema) and the output
 * labels (docs/architecture.md, "How the code is built").
 */
import { publicError } from './errors.js';

export type ParamType =
  /** free text, one line */
  | 'str'
  /** integer */
  | 'int'
  /** boolean (TRUE/FALSE on the wire as true/false) */
  | 'bool'
  /** an https:// URL with a host */
  | 'url'
  /** one of `values` */
  | 'enum'
  /** a write-only secret; the CLI prompts for it when given without a value */
  | 'password'
  /** the primary key of another object (`ref`); stored as that entry's DN */
  | 'ref';

export interface ParamDef {
  /** directory attribute that stores it (absent for virtual params) */
  readonly attr?: string;
  /** label in output and help */
  readonly label: string;
  /** one-line help text */
  readonly doc: string;
  readonly type: ParamType;
  readonly values?: readonly string[];
  /** for type 'ref': the object whose primary key the value names */
  readonly ref?: string;
  /** required when adding */
  readonly required?: boolean;
  readonly multivalue?: boolean;
  /** never output; write-only */
  readonly secret?: boolean;
  /** not an option of X-add */
  readonly noCreate?: boolean;
  /** not an option of X-mod */
  readonly noUpdate?: boolean;
  /** not a filter option of X-find */
  readonly noSearch?: boolean;
  readonly maxLength?: number;
  /** allowed shape for 'str' */
  readonly pattern?: RegExp;
  readonly patternError?: string;
  /** 'exact' compares case-sensitively when filtering */
  readonly caseExact?: boolean;
  readonly minValue?: number;
  readonly maxValue?: number;
}

/** A DNS host name in lower case: one or more labels (RFC 1123). */
export const HOST_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;
/** A fully qualified one: two labels or more (a DNS domain, a host of the realm). */
export const FQDN = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;

/** A validated option value. */
export type ParamValue = string | number | boolean | string[];

const DEFAULT_MAX_LENGTH = 255;
export const URL_MAX_LENGTH = 2048;

/** Validates that `value` is an https:// URL with a host; returns an error text or null. */
export function httpsUrlProblem(value: string): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an https:// URL with a host';
  }
  if (u.protocol !== 'https:') return 'must be an https:// URL with a host';
  if (!u.hostname) return 'must be an https:// URL with a host';
  if (u.username || u.password) return 'must not contain credentials';
  if (u.hash) return 'must not contain a fragment';
  return null;
}

/** Control characters other than tab are never accepted in text values. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000a-\u001f\u007f]/;

/**
 * Converts and validates one raw value of param `name`. Throws the public
 * ValidationError with the param's option name.
 */
export function convertScalar(name: string, p: ParamDef, raw: unknown): string | number | boolean {
  const invalid = (error: string) => publicError('ValidationError', { name, error });
  switch (p.type) {
    case 'bool': {
      if (typeof raw === 'boolean') return raw;
      if (typeof raw === 'string') {
        const s = raw.trim().toLowerCase();
        if (s === 'true' || s === 'yes' || s === '1') return true;
        if (s === 'false' || s === 'no' || s === '0') return false;
      }
      throw invalid('must be True or False');
    }
    case 'int': {
      let n: number;
      if (typeof raw === 'number') n = raw;
      else if (typeof raw === 'string' && /^-?\d{1,15}$/.test(raw.trim())) n = Number(raw.trim());
      else throw invalid('must be an integer');
      if (!Number.isSafeInteger(n)) throw invalid('must be an integer');
      if (p.minValue !== undefined && n < p.minValue) throw invalid(`must be at least ${p.minValue}`);
      if (p.maxValue !== undefined && n > p.maxValue) throw invalid(`can be at most ${p.maxValue}`);
      return n;
    }
    default: {
      if (typeof raw === 'number' && p.type === 'str') raw = String(raw);
      if (typeof raw !== 'string') throw invalid('must be Unicode text');
      const value = p.type === 'password' ? raw : raw.trim();
      if (value === '') throw invalid('must not be empty');
      const max = p.maxLength ?? (p.type === 'url' ? URL_MAX_LENGTH : p.type === 'password' ? 1024 : DEFAULT_MAX_LENGTH);
      // a param with a format states one rule, length included, whatever is wrong with the value
      const rule = p.patternError === undefined ? undefined : `${p.patternError} (at most ${max} characters)`;
      if (value.length > max) throw invalid(rule ?? `can be at most ${max} characters`);
      if (p.type !== 'password' && CONTROL.test(value)) throw invalid('must not contain control characters');
      if (p.type === 'password' && /[\u0000\n\r]/.test(value)) throw invalid('must not contain NUL or line breaks');
      if (p.type === 'url') {
        const problem = httpsUrlProblem(value);
        if (problem) throw invalid(problem);
      }
      if (p.type === 'enum' && p.values && !p.values.includes(value)) {
        throw invalid(`must be one of ${p.values.map((v) => `'${v}'`).join(', ')}`);
      }
      if (p.pattern && !p.pattern.test(value)) throw invalid(rule ?? 'has an invalid format');
      return value;
    }
  }
}

/** Converts a raw option value, honouring `multivalue`. */
export function convertParam(name: string, p: ParamDef, raw: unknown): ParamValue {
  if (p.multivalue) {
    const list = Array.isArray(raw) ? raw : [raw];
    if (list.length > 100) throw publicError('ValidationError', { name, error: 'too many values' });
    const out = list.map((v) => String(convertScalar(name, p, v)));
    return [...new Set(out)];
  }
  if (Array.isArray(raw)) {
    if (raw.length !== 1) throw publicError('ValidationError', { name, error: 'Only one value is allowed' });
    raw = raw[0];
  }
  return convertScalar(name, p, raw);
}

/** The CLI spelling of an option key: `client_id` → `client-id`. */
export function cliName(key: string): string {
  return key.replace(/_/g, '-');
}
