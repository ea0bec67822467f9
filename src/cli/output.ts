/**
 * Printing results as administrators of identity servers expect
 * (PRODUCT-NOTES.md): summaries between dash lines, entries with labels in
 * declaration order, --all with dn first and unlabelled extras sorted,
 * --raw with attribute names and one value per line, find counts.
 */
import type { ApiContract, ObjectSpec } from '../framework/api.js';

export interface OutputOptions {
  all: boolean;
  raw: boolean;
}

export function summaryBlock(text: string): string {
  const dashes = '-'.repeat(Math.max(1, [...text].length));
  return `${dashes}\n${text}\n${dashes}\n`;
}

function show(v: unknown): string {
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (v === null || v === undefined) return '';
  if (typeof v === 'object' && !Array.isArray(v)) return Object.entries(v as Record<string, unknown>).map(([k, x]) => `${k}: ${show(x)}`).join(', ');
  return String(v);
}

const asList = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);

export function formatEntry(entry: Record<string, unknown>, obj: ObjectSpec | undefined, o: OutputOptions): string {
  const lines: string[] = [];
  if (o.raw) {
    if (entry.dn !== undefined) lines.push(`  dn: ${show(entry.dn)}`);
    for (const [k, v] of Object.entries(entry)) {
      if (k === 'dn' || k === 'attributelevelrights') continue;
      for (const x of asList(v)) lines.push(`  ${k}: ${show(x)}`);
    }
  } else {
    if (entry.dn !== undefined) lines.push(`  dn: ${show(entry.dn)}`);
    const known = new Set<string>(['dn', 'attributelevelrights']);
    for (const f of obj?.fields ?? []) {
      known.add(f.key);
      if (entry[f.key] === undefined) continue;
      lines.push(`  ${f.label}: ${asList(entry[f.key]).map(show).join(', ')}`);
    }
    if (o.all) {
      for (const k of Object.keys(entry).filter((x) => !known.has(x)).sort()) lines.push(`  ${k}: ${asList(entry[k]).map(show).join(', ')}`);
    }
  }
  if (entry.attributelevelrights && typeof entry.attributelevelrights === 'object') {
    const r = entry.attributelevelrights as Record<string, string>;
    lines.push(`  attributelevelrights: ${Object.entries(r).map(([k, v]) => `${k}: ${v}`).join(', ')}`);
  }
  return lines.join('\n') + (lines.length ? '\n' : '');
}

export interface CommandOutput {
  text: string;
  exitCode: number;
}

/** Formats one command result; `kind` is the command's output kind from the schema. */
export function formatResult(kind: string, objectName: string | null, result: Record<string, unknown>, contract: ApiContract, o: OutputOptions): CommandOutput {
  const obj = contract.objects.find((x) => x.name === objectName);
  const summary = typeof result.summary === 'string' ? result.summary : null;
  let text = '';
  if (kind === 'entries') {
    const entries = (result.result as Record<string, unknown>[]) ?? [];
    if (summary) text += summaryBlock(summary);
    text += entries.map((e) => formatEntry(e, obj, o)).join('\n');
    const n = typeof result.count === 'number' ? result.count : entries.length;
    text += summaryBlock(`Number of entries returned ${n}`).replace(/^/, '');
    if (result.truncated === true) text += 'Search result has been truncated: the size or time limit was reached\n';
    return { text, exitCode: n === 0 ? 1 : 0 };
  }
  if (summary) text += summaryBlock(summary);
  if (kind === 'entry' && result.result && typeof result.result === 'object') {
    const failed = result.failed as Record<string, Record<string, Array<[string, string]>>> | undefined;
    text += formatEntry(result.result as Record<string, unknown>, obj, o);
    if (failed) {
      const lines: string[] = [];
      for (const [attr, kinds] of Object.entries(failed)) {
        for (const [k, list] of Object.entries(kinds)) for (const [name, reason] of list) lines.push(`  ${attr} ${k}: ${name}: ${reason}`);
      }
      if (lines.length) text += `Failed ${Object.keys(failed).join(', ')}:\n${lines.join('\n')}\n`;
    }
  } else if (kind === 'custom' && result.result && typeof result.result === 'object' && !summary) {
    text += formatEntry(result.result as Record<string, unknown>, obj, o);
  }
  return { text, exitCode: 0 };
}
