/**
 * The repository stands on its own: a source comment that points to a
 * document points into this repository (docs/*.md or the README, and the
 * file exists), never to the product specification or design notes kept
 * outside it; and every module starts with a header comment saying what it
 * owns.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return d.name.endsWith('.ts') ? [p] : [];
  });
}

/** Comment text only: line comments and block comments (strings are left out, roughly). */
function comments(text: string): string {
  return [...text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)].map((m) => m[0]).join('\n');
}

describe('documents the code refers to', () => {
  const files = sourceFiles(join(root, 'src'));

  it('no comment cites the specification or notes outside the repository', () => {
    const bad: string[] = [];
    for (const f of files) {
      const c = comments(readFileSync(f, 'utf8'));
      for (const m of c.matchAll(/\b(?:the )?spec(?:ification)?\s*§\s*[\d.]+|\.\.\/shared\b|[A-Z][A-Z-]+\.md\b/g)) {
        if (m[0] === 'README.md') continue;
        bad.push(`${relative(root, f)}: "${m[0]}"`);
      }
    }
    assert.deepEqual(bad, []);
  });

  it('every docs/ file a comment names exists', () => {
    const missing: string[] = [];
    for (const f of files) {
      for (const m of comments(readFileSync(f, 'utf8')).matchAll(/docs\/([\w-]+\.md)/g)) {
        if (!existsSync(join(root, 'docs', m[1]!))) missing.push(`${relative(root, f)}: docs/${m[1]}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('every module starts with a header comment', () => {
    const bare = files.filter((f) => !/^(#![^\n]*\n)?\s*\/\*\*/.test(readFileSync(f, 'utf8'))).map((f) => relative(root, f));
    assert.deepEqual(bare, []);
  });
});
