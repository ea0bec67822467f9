/** Reading the server's log lines in tests (docs/logging.md). */
import assert from 'node:assert/strict';
import { createLogger, type LogFormat, type Logger } from '../../src/log/logger.js';

/**
 * Reads a text line as docs/logging.md describes it: time, component,
 * event, then name=value fields, each value bare or a JSON string.
 */
export function parseTextLine(line: string): { time: string; component: string; event: string; fields: Record<string, string> } {
  const head = /^(\S+) (\S+) (\S+)/.exec(line);
  assert.ok(head, line);
  const fields: Record<string, string> = {};
  let rest = line.slice(head[0].length);
  while (rest.length > 0) {
    const m = /^ ([A-Za-z0-9_.-]+)=("(?:[^"\\]|\\.)*"|[^\s"=\\]+)/.exec(rest);
    assert.ok(m, `a field at: ${rest}`);
    assert.ok(!Object.hasOwn(fields, m[1]!), `field ${m[1]} twice in ${line}`);
    fields[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
    rest = rest.slice(m[0].length);
  }
  return { time: head[1]!, component: head[2]!, event: head[3]!, fields };
}

/** A logger whose text lines land in `lines`. */
export function capturedLog(format: LogFormat = 'text'): { lines: string[]; log: Logger } {
  const lines: string[] = [];
  return { lines, log: createLogger({ write: (l) => lines.push(l), format }) };
}

/** A text line without its time: `COMPONENT EVENT fields`. */
export function untimed(line: string): string {
  return line.replace(/^\S+ /, '');
}
