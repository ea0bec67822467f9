/**
 * The module table of docs/architecture.md, enforced: every import of a
 * file under src/ (value or type-only, static, re-export or dynamic) reaches
 * only its own folder or a folder its row allows, and no files import each
 * other in a circle. The rules are read from the document itself, so the
 * table and the code cannot drift apart silently.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..', '..');
const src = join(root, 'src');

interface Rule {
  folder: string;
  allowed: string[] | 'everything';
}

/** Rows of the "Modules" table: `folder/` | owns | may import. */
export function parseModuleTable(markdown: string): Rule[] {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Modules'));
  if (!section) throw new Error('docs/architecture.md has no "Modules" section');
  const rules: Rule[] = [];
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    if (cells.length < 5) continue;
    const folder = /^`([a-z0-9-]+\/)`$/.exec(cells[1]!)?.[1];
    if (!folder) continue;
    const may = cells[3]!;
    if (may === 'everything') rules.push({ folder, allowed: 'everything' });
    else if (may === 'nothing of ours') rules.push({ folder, allowed: [] });
    else {
      const allowed = [...may.matchAll(/`([a-z0-9-]+\/(?:[a-z0-9-]+\/)?)`/g)].map((m) => m[1]!);
      if (allowed.length === 0) throw new Error(`cannot read the imports allowed to ${folder}: ${may}`);
      rules.push({ folder, allowed });
    }
  }
  return rules;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
}

/** Relative module specifiers of a file: import/export ... from, import type, side-effect and dynamic imports. */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g];
  for (const p of patterns) for (const m of text.matchAll(p)) out.push(m[1]!);
  return out.filter((s) => s.startsWith('.'));
}

/** src-relative path of the file a specifier names (`.js` in specifiers is the `.ts` source). */
function target(file: string, spec: string): string {
  return relative(src, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
}

const rules = parseModuleTable(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8'));
const files = sourceFiles(src);
const graph = new Map(files.map((f) => [relative(src, f), importsOf(readFileSync(f, 'utf8')).map((s) => target(f, s))]));

describe('module table (docs/architecture.md)', () => {
  it('the table has a row for every folder under src/', () => {
    const folders = readdirSync(src, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => `${d.name}/`).sort();
    assert.deepEqual(rules.map((r) => r.folder).sort(), folders);
  });

  it('the parser sees every kind of import', () => {
    const text = `import a from './a.js';\nimport type { B } from '../b/b.js';\nexport { c } from './c.js';\nimport './d.js';\nconst e = await import('./e.js');\ntype F = import('./f.js').F;\nimport {\n  g,\n} from './g.js';\nimport x from 'node:fs';`;
    assert.deepEqual(importsOf(text).sort(), ['../b/b.js', './a.js', './c.js', './d.js', './e.js', './f.js', './g.js']);
  });

  it('every import stays in its folder or reaches a folder its row allows', () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      const folder = file.split('/')[0]! + '/';
      const rule = rules.find((r) => r.folder === folder);
      if (!rule) {
        violations.push(`${file}: its folder has no row in the table`);
        continue;
      }
      for (const t of targets) {
        if (t.startsWith('..')) violations.push(`${file} imports ${t}, outside src/`);
        else if (rule.allowed !== 'everything' && !t.startsWith(folder) && !rule.allowed.some((a) => t.startsWith(a))) violations.push(`src/${file} imports src/${t}`);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('no files import each other in a circle', () => {
    // Tarjan's strongly connected components over the file graph
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    let next = 0;
    const visit = (v: string): void => {
      index.set(v, next);
      low.set(v, next++);
      stack.push(v);
      onStack.add(v);
      for (const w of graph.get(v) ?? []) {
        if (!graph.has(w)) continue;
        if (!index.has(w)) {
          visit(w);
          low.set(v, Math.min(low.get(v)!, low.get(w)!));
        } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
      if (low.get(v) === index.get(v)) {
        const scc: string[] = [];
        let w: string;
        do {
          w = stack.pop()!;
          onStack.delete(w);
          scc.push(w);
        } while (w !== v);
        if (scc.length > 1) circles.push(scc.sort());
      }
    };
    for (const v of graph.keys()) if (!index.has(v)) visit(v);
    assert.deepEqual(circles, []);
  });
});

/**
 * The seams of docs/architecture.md "Where things go": an object's place is
 * read from the registry, not listed by the code that builds the tree, the
 * read rule or the schema; and the directory's version is written by the
 * upgrade alone.
 */
describe('seams (docs/architecture.md, "Where things go")', () => {
  const text = (file: string) => readFileSync(join(src, file), 'utf8');
  /** the files that declare an object */
  const declarations = [...graph.keys()].filter((f) => f.startsWith('objects/') && /\bdefineObject\(/.test(text(f)));

  it('the objects are declared in objects/ and registered in objects/index.ts', () => {
    assert.ok(declarations.length >= 6, declarations.join(', '));
    const registry = graph.get('objects/index.ts') ?? [];
    for (const f of declarations) assert.ok(registry.includes(f), `objects/index.ts registers ${f}`);
  });

  it('server/ and framework/ reach the objects only through the registry (objects/index.ts), never a declaration', () => {
    const bad: string[] = [];
    for (const [file, targets] of graph) {
      if (!file.startsWith('server/') && !file.startsWith('framework/')) continue;
      for (const t of targets) if (declarations.includes(t)) bad.push(`src/${file} imports src/${t}`);
    }
    assert.deepEqual(bad, []);
  });

  it('no file lists containers to add but the registry, which derives them', () => {
    const bad = [...graph.keys()].filter((f) => f !== 'directory/layout.ts' && f !== 'objects/index.ts' && /\bcontainerEntry\(/.test(text(f)));
    assert.deepEqual(bad, []);
  });

  it("the directory's version is written by server/upgrade.ts alone", () => {
    const bad = [...graph.keys()].filter((f) => f !== 'server/upgrade.ts' && f !== 'objects/ldap-schema.ts' && /\bdirVersion\b/.test(text(f)));
    assert.deepEqual(bad, []);
  });
});
