/**
 * Printing command results as administrators of identity servers expect
 * (docs/conventions.md "Output"): summaries between dash lines as long as the
 * text; entries with a two-space indent and labels in the object's field
 * order; `--all` with `dn:` first and unlabelled extras after, sorted;
 * `--raw` with attribute names and one value per line; find counts;
 * membership failures and counts; checks (`PASS`, `FAIL` or `SKIP`, one
 * line each, exit 1 when one failed); verdicts (exit 1 on a no); who ping
 * says the caller is. Pure
 * functions: text in, text out.
 */
import type { ApiContract, ObjectSpec } from '../contract/api-contract.js';

export interface OutputOptions {
  all: boolean;
  raw: boolean;
}

export interface CommandOutput {
  text: string;
  exitCode: number;
}

export function summaryBlock(text: string): string {
  const dashes = '-'.repeat(Math.max(1, [...text].length));
  return `${dashes}\n${text}\n${dashes}\n`;
}

/** Control characters from the server never reach the terminal as such. */
function printable(s: string): string {
  return s.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

function generalizedTime(d: Date): string {
  return d.toISOString().replace(/[-:T]/g, '').replace(/\.\d+Z$/, 'Z');
}

/** One value as text: booleans as True/False, binary as base64, dates as LDAP generalized time. */
export function showValue(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return '';
  if (Buffer.isBuffer(v)) return v.toString('base64');
  if (v instanceof Date) return generalizedTime(v);
  if (Array.isArray(v)) return v.map(showValue).join(', ');
  if (typeof v === 'object') return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${printable(k)}: ${showValue(x)}`).join(', ');
  return printable(String(v));
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

function rightsLine(entry: Record<string, unknown>): string[] {
  const r = entry.attributelevelrights;
  if (!r || typeof r !== 'object' || Array.isArray(r)) return [];
  return [`  attributelevelrights: ${showValue(r)}`];
}

/** The lines of one entry, each ending in a newline. */
export function formatEntry(entry: Record<string, unknown>, obj: ObjectSpec | undefined, o: OutputOptions): string {
  const lines: string[] = [];
  if (entry.dn !== undefined) lines.push(`  dn: ${showValue(entry.dn)}`);
  const skip = new Set(['dn', 'attributelevelrights']);
  if (o.raw) {
    for (const [k, v] of Object.entries(entry)) {
      if (skip.has(k)) continue;
      for (const x of asList(v)) lines.push(`  ${printable(k)}: ${showValue(x)}`);
    }
  } else {
    for (const f of obj?.fields ?? []) {
      skip.add(f.key);
      const v = entry[f.key];
      if (v === undefined || v === null || (Array.isArray(v) && v.length === 0)) continue;
      lines.push(`  ${f.label}: ${asList(v).map(showValue).join(', ')}`);
    }
    // without a known object (custom results) every key is an extra
    if (o.all || !obj) {
      for (const k of Object.keys(entry).filter((x) => !skip.has(x)).sort()) lines.push(`  ${printable(k)}: ${asList(entry[k]).map(showValue).join(', ')}`);
    }
  }
  lines.push(...rightsLine(entry));
  return lines.map((l) => l + '\n').join('');
}

/** `failed` of a membership result: `{member: {user: [[name, reason]], group: [...]}}`. */
function failureLines(failed: unknown): string[] {
  if (!failed || typeof failed !== 'object') return [];
  const lines: string[] = [];
  for (const [attr, kinds] of Object.entries(failed as Record<string, unknown>)) {
    if (!kinds || typeof kinds !== 'object') continue;
    for (const [kind, list] of Object.entries(kinds as Record<string, unknown>)) {
      if (!Array.isArray(list)) continue;
      for (const item of list) {
        const [name, reason] = Array.isArray(item) ? item : [item, ''];
        lines.push(`    ${printable(attr)} ${printable(kind)}: ${showValue(name)}: ${showValue(reason)}`);
      }
    }
  }
  return lines.length ? ['  Failed members:', ...lines] : [];
}

/**
 * Formats one command result; `kind` is the command's output kind from the
 * schema (entry, entries, deleted, summary, custom, checks). Find with no
 * match exits 1 (docs/conventions.md), and so do a membership change with
 * failures, a `--continue` delete that could not delete every name,
 * checks of which one failed, and a verdict that says no (hbactest: access
 * denied).
 */
export function formatResult(kind: string, objectName: string | null, result: Record<string, unknown>, contract: ApiContract, o: OutputOptions): CommandOutput {
  const obj = contract.objects.find((x) => x.name === objectName);
  const summary = typeof result.summary === 'string' && result.summary !== '' ? printable(result.summary) : null;
  const body = result.result;
  if (kind === 'entries') {
    const entries = Array.isArray(body) ? (body.filter((e) => e && typeof e === 'object') as Record<string, unknown>[]) : [];
    const n = typeof result.count === 'number' ? result.count : entries.length;
    let text = summary ? summaryBlock(summary) : '';
    text += entries.map((e) => formatEntry(e, obj, o)).join('\n');
    text += summaryBlock(`Number of entries returned ${n}`);
    if (result.truncated === true) text += 'Search result has been truncated: the size or time limit was reached\n';
    return { text, exitCode: n === 0 ? 1 : 0 };
  }
  if (kind === 'checks') {
    // one line per check, then the summary; any FAIL (or a result that is not a list of checks) exits 1
    const checks = Array.isArray(body) ? body.filter((c): c is Record<string, unknown> => !!c && typeof c === 'object') : [];
    let text = checks.map((c) => `${showValue(c.status)} ${showValue(c.check)}: ${showValue(c.message)}\n`).join('');
    if (summary) text += summaryBlock(summary);
    const failed = !Array.isArray(body) || checks.length === 0 || checks.some((c) => c.status !== 'PASS' && c.status !== 'SKIP');
    return { text, exitCode: failed ? 1 : 0 };
  }
  const entry = body && typeof body === 'object' && !Array.isArray(body) && !Buffer.isBuffer(body) && !(body instanceof Date) ? (body as Record<string, unknown>) : null;
  if (kind === 'verdict') {
    // the summary says yes or no, then each non-empty list; a no (or anything but a yes) exits 1
    let text = summary ? summaryBlock(summary) : '';
    for (const [k, v] of Object.entries(entry ?? {})) {
      const list = asList(v).filter((x) => x !== null && x !== undefined && x !== '');
      if (list.length > 0) text += `  ${printable(k)}: ${list.map(showValue).join(', ')}\n`;
    }
    return { text, exitCode: result.value === true ? 0 : 1 };
  }
  if (typeof result.completed === 'number') {
    // membership: the entry, what failed, then the count as the summary
    const failures = failureLines(result.failed);
    let text = entry ? formatEntry(entry, obj, o) : '';
    text += failures.map((l) => l + '\n').join('');
    if (summary) text += summaryBlock(summary);
    return { text, exitCode: failures.length ? 1 : 0 };
  }
  let text = summary ? summaryBlock(summary) : '';
  if (kind === 'deleted') {
    // `--continue`: the names that could not be deleted
    const failed = entry && Array.isArray(entry.failed) ? entry.failed : [];
    if (failed.length) text += `  Failed to remove: ${failed.map(showValue).join(', ')}\n`;
    return { text, exitCode: failed.length ? 1 : 0 };
  }
  if (entry && (kind === 'entry' || (kind === 'custom' && !summary))) text += formatEntry(entry, obj, o);
  return { text, exitCode: 0 };
}

/**
 * What `dirid -v ping` adds on standard error: who the server says the
 * caller is and how its ticket says it authenticated; empty for a result
 * without a principal (an older server's).
 */
export function callerLine(result: unknown): string {
  if (!result || typeof result !== 'object') return '';
  const r = result as { principal?: unknown; auth_indicators?: unknown };
  if (typeof r.principal !== 'string') return '';
  const ind = Array.isArray(r.auth_indicators) ? r.auth_indicators.filter((x): x is string => typeof x === 'string') : [];
  return `dirid: INFO: Authenticated as ${printable(r.principal)}, authentication indicators: ${ind.length ? ind.map(printable).join(', ') : 'none'}\n`;
}
