/**
 * The suite's two tiers (scripts/test-tiers.mjs, README "Tests"). The rule
 * is checked on files made for it: a test is in the system tier when it or
 * a module of ours it imports reaches outside the process (a socket, a
 * process, PostgreSQL, a browser, an IdP), whatever the path; type-only
 * imports and text that only looks like an import do not count. The suite
 * is held to it: the tests of the objects' and the framework's rules run in
 * process, in the fast tier, so a change that makes one start a server
 * moves it out loudly; the in-process realm reaches nothing outside the
 * process; and tests and benchmarks share test/support, neither importing
 * the other's files.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { Tiers } from '../../scripts/test-tiers.mjs';

const root = resolve(import.meta.dirname, '..', '..');

/** The rule tests that run in process (test/support/in-process.ts). */
const IN_PROCESS_RULE_TESTS = [
  'test/framework/crud-rules.test.ts',
  'test/framework/delegated-posix-identity.test.ts',
  'test/framework/delegated-privilege-escalation.test.ts',
  'test/framework/delegation-bounds.test.ts',
  'test/objects/gid-reuse.test.ts',
  'test/objects/hbac.test.ts',
  'test/objects/host-del-services.test.ts',
  'test/objects/host-reserved-names.test.ts',
  'test/objects/idp-generic-needs.test.ts',
  'test/objects/idp-integrity.test.ts',
  'test/objects/last-admin.test.ts',
  'test/objects/posix.test.ts',
  'test/objects/principal-name-unique.test.ts',
  'test/objects/realm-own-principals.test.ts',
  'test/objects/service-host-names.test.ts',
  'test/objects/sudo.test.ts',
  'test/objects/user-disable.test.ts',
  'test/objects/user-link-unique.test.ts',
];

describe('the tiers rule, on files made for it', () => {
  let dir: string;
  let tiers: Tiers;
  const files: Record<string, string> = {
    'test/support/socket.ts': "import { connect } from 'node:net';\nexport const open = connect;\n",
    'test/support/typed.ts': "import type { Socket } from 'node:net';\nimport { type TLSSocket } from 'node:tls';\nexport type Either = Socket | TLSSocket;\n",
    'test/support/quiet.ts': "// import { request } from 'node:https';\nexport const text = \"import { request } from 'node:https'\";\n",
    'test/support/circle-a.ts': "import { b } from './circle-b.js';\nexport const a = () => b;\n",
    'test/support/circle-b.ts': "import { a } from './circle-a.js';\nimport pg from 'pg';\nexport const b = () => [a, pg];\n",
    'test/deep.test.ts': "import { it } from 'node:test';\nimport { open } from './support/socket.js';\nit('x', () => open);\n",
    'test/typed.test.ts': "import type { Either } from './support/typed.js';\nimport { text } from './support/quiet.js';\nexport const t: Either | string = text;\n",
    'test/dynamic.test.ts': "const { spawn } = await import('node:child_process');\nexport { spawn };\n",
    'test/circle.test.ts': "import { a } from './support/circle-a.js';\nexport { a };\n",
    'test/fetch.test.ts': "export const get = () => fetch('https://example.test/');\n",
    'test/required.test.ts': "import { createRequire } from 'node:module';\nexport const u = createRequire(import.meta.url)('undici');\n",
    'test/reexport.test.ts': "export { open } from './support/socket.js';\n",
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dirid-tiers-'));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    tiers = new Tiers(dir);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('a test reaching a socket through a support module is system, and the chain says how', () => {
    assert.deepEqual(tiers.why('test/deep.test.ts'), ['test/deep.test.ts', 'test/support/socket.ts', 'imports node:net']);
    assert.deepEqual(tiers.why('test/reexport.test.ts'), ['test/reexport.test.ts', 'test/support/socket.ts', 'imports node:net']);
  });

  it('type-only imports, comments and strings keep a test fast', () => {
    assert.equal(tiers.why('test/typed.test.ts'), null);
    assert.equal(tiers.tierOf('test/typed.test.ts'), 'fast');
  });

  it('a dynamic import, a require, a call of the global fetch, and modules importing each other in a circle', () => {
    assert.deepEqual(tiers.why('test/dynamic.test.ts'), ['test/dynamic.test.ts', 'imports node:child_process']);
    assert.deepEqual(tiers.why('test/required.test.ts'), ['test/required.test.ts', 'imports undici']);
    assert.deepEqual(tiers.why('test/fetch.test.ts'), ['test/fetch.test.ts', 'calls fetch']);
    assert.deepEqual(tiers.why('test/circle.test.ts'), ['test/circle.test.ts', 'test/support/circle-a.ts', 'test/support/circle-b.ts', 'imports pg']);
  });

  it('lists each tier, every test in one', () => {
    assert.deepEqual(tiers.list('fast'), ['test/typed.test.ts']);
    assert.deepEqual(tiers.list('system'), ['test/circle.test.ts', 'test/deep.test.ts', 'test/dynamic.test.ts', 'test/fetch.test.ts', 'test/reexport.test.ts', 'test/required.test.ts']);
  });

  it('an import it cannot find is an error, not a fast test', () => {
    writeFileSync(join(dir, 'test', 'missing.test.ts'), "import { gone } from './support/gone.js';\nexport { gone };\n");
    assert.throws(() => new Tiers(dir).list('fast'), /missing\.test\.ts: cannot find the module '\.\/support\/gone\.js' it imports/);
  });
});

describe("the suite's tiers", () => {
  const tiers = new Tiers(root);

  it('the rule tests run in process, in the fast tier', () => {
    const out = IN_PROCESS_RULE_TESTS.map((f) => [f, tiers.why(f)] as const).filter(([, why]) => why !== null);
    assert.deepEqual(out, [], 'moved to the system tier by these imports');
  });

  it('the in-process realm reaches nothing outside the process', () => {
    assert.equal(tiers.why('test/support/in-process.ts'), null);
  });

  it('both tiers hold tests, and the interop tests are in the system tier', () => {
    const fast = tiers.list('fast');
    const system = tiers.list('system');
    assert.deepEqual([...fast, ...system].sort(), tiers.testFiles());
    assert.ok(fast.length >= IN_PROCESS_RULE_TESTS.length);
    for (const f of ['test/api/negotiate.test.ts', 'test/sssd/pam-idp-login.test.ts', 'test/directory/postgres.test.ts', 'test/ui/console.test.ts']) assert.equal(tiers.tierOf(f), 'system', f);
  });
});

describe('one support folder for tests and benchmarks', () => {
  const codeUnder = (dir: string): string[] =>
    readdirSync(join(root, dir), { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? codeUnder(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : []));
  const specifiers = (file: string) => [...readFileSync(join(root, file), 'utf8').matchAll(/\bfrom\s*['"]([^'"]+)['"]|\bimport\s*\(\s*['"]([^'"]+)['"]|new URL\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
  const reaches = (file: string, spec: string) => relative(root, resolve(root, dirname(file), spec));

  it('bench/ has no support folder of its own, and nothing under test/ imports from bench/', () => {
    assert.deepEqual(readdirSync(join(root, 'bench'), { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name), []);
    const bad = codeUnder('test').flatMap((f) => specifiers(f).filter((s) => s.startsWith('.') && reaches(f, s).startsWith('bench/')).map((s) => `${f} imports ${s}`));
    assert.deepEqual(bad, []);
  });

  it('benchmarks reach test/ only through test/support', () => {
    const bad = codeUnder('bench').flatMap((f) => specifiers(f).filter((s) => s.startsWith('.') && reaches(f, s).startsWith('test/') && !reaches(f, s).startsWith('test/support/')).map((s) => `${f} imports ${s}`));
    assert.deepEqual(bad, []);
  });
});
