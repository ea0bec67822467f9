/**
 * The public error registry has one home and holds only what is used:
 * every registered error is raised somewhere in src/ (a `publicError('Name'`
 * or `new PublicError('Name'` call, read from the source), docs/errors.md
 * lists exactly the registry (number, name, template, exit code), and the
 * server's registry and the client's table (contract/errors.ts) agree.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorRegistry } from '../../src/framework/errors.js';
import { errorCodes, ExitCode, exitCodeOf } from '../../src/contract/errors.js';

const SRC = new URL('../../src/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sources(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

/** Names raised in src/: the first argument of every publicError(...) and new PublicError(...) call that is a string literal. */
function raisedNames(): Set<string> {
  const names = new Set<string>();
  for (const file of sources(SRC)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\b(?:publicError|new\s+PublicError)\(\s*(['"])(\w+)\1/g)) names.add(m[2]!);
  }
  return names;
}

describe('public error registry', () => {
  it('every registered error is raised somewhere in src/, and only registered names are raised', () => {
    const raised = raisedNames();
    const registered = Object.keys(errorRegistry);
    const unraised = registered.filter((n) => !raised.has(n));
    assert.deepEqual(unraised, [], `registered but never raised: ${unraised.join(', ')}`);
    const unknown = [...raised].filter((n) => !registered.includes(n));
    assert.deepEqual(unknown, [], `raised but not registered: ${unknown.join(', ')}`);
  });

  it('docs/errors.md lists exactly the registry: number, name, template and exit code, in order', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+) \| (\w+) \| (.*) \| (\d+) \|$/gm)].map((m) => ({ code: Number(m[1]), name: m[2], template: m[3], exit: Number(m[4]) }));
    const want = Object.entries(errorRegistry).map(([name, e]) => ({ code: e.code, name, template: e.template, exit: e.exit }));
    assert.deepEqual(rows, want);
  });

  it('the registry takes its names, numbers and exit codes from the contract', () => {
    assert.deepEqual(Object.keys(errorRegistry), Object.keys(errorCodes));
    for (const [name, e] of Object.entries(errorRegistry)) {
      const c = errorCodes[name as keyof typeof errorCodes];
      assert.equal(e.code, c.code, name);
      assert.equal(e.exit, c.exit, name);
      assert.equal(exitCodeOf(e.code), e.exit, name);
    }
    const codes = Object.values(errorCodes).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length, 'numbers are unique');
  });

  it('exit codes: 2 for not found, 1 for any other error, 1 for a number the client does not know', () => {
    assert.equal(exitCodeOf(errorCodes.NotFound.code), ExitCode.notFound);
    assert.equal(ExitCode.notFound, 2);
    assert.equal(exitCodeOf(errorCodes.DuplicateEntry.code), 1);
    assert.equal(exitCodeOf(errorCodes.InternalError.code), 1);
    assert.equal(exitCodeOf(4999), 1);
    const notFound = Object.entries(errorCodes).filter(([, e]) => e.exit === ExitCode.notFound).map(([n]) => n);
    assert.deepEqual(notFound, ['NotFound']);
  });
});
