/**
 * One home for the ticket-granting service's name: `krbtgt/REALM@REALM` is
 * made by kerberos/principal.ts (tgsPrincipal, tgsPrincipalName) and nowhere
 * else; the client's ticket look-ups and the directory's DN of the realm's
 * krbtgt entry ask it instead of spelling the name out again.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const HOME = 'src/kerberos/principal.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sourceFiles(p);
    return /\.tsx?$/.test(d.name) ? [p] : [];
  });
}

/** The code without its comments (roughly: block and line comments), its lines where they were. */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, '')).replace(/(^|[^:])\/\/[^\n]*/g, '$1');

describe('the TGS principal', () => {
  it(`is built only in ${HOME}`, () => {
    const spelled: string[] = [];
    for (const f of sourceFiles(join(root, 'src'))) {
      const rel = relative(root, f);
      if (rel === HOME) continue;
      code(readFileSync(f, 'utf8'))
        .split('\n')
        .forEach((line, i) => {
          // a template or concatenation that makes krbtgt/<realm>
          if (/krbtgt\/\$\{|['"`]krbtgt\/['"`]\s*\+/.test(line)) spelled.push(`${rel}:${i + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(spelled, []);
  });
});
