/**
 * The test suite's two tiers (README "Tests"). A test file is in the system
 * tier when it, or a module of ours it imports (directly or through others),
 * imports what reaches outside the process: a server or client socket
 * (node:http, https, http2, net, tls, dgram), a process or thread
 * (child_process, worker_threads, cluster), PostgreSQL's client (pg), a
 * browser (playwright-core), an IdP (oidc-provider), undici, or calls the
 * global fetch. Every other test file is in the fast tier: it runs in
 * process, in seconds, with nothing installed but the npm packages.
 * Imports are read from the syntax tree (TypeScript's parser): static,
 * re-exported, dynamic and require()d modules count; type-only imports,
 * which leave no trace at run time, and text in comments or strings do not.
 *
 *   node scripts/test-tiers.mjs list fast|system   the tier's test files, one a line
 *   node scripts/test-tiers.mjs why                each system-tier file and the imports that put it there
 *
 * scripts/test-tier.sh runs a tier; test/architecture/tiers.test.ts holds
 * the rule and the tiers to it.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** Node's built-in modules that reach outside the process. */
export const SYSTEM_BUILTINS = ['child_process', 'cluster', 'dgram', 'http', 'http2', 'https', 'net', 'tls', 'worker_threads'];
/** npm packages that talk to servers, browsers or IdPs, or are one. */
export const SYSTEM_PACKAGES = ['pg', 'playwright-core', 'oidc-provider', 'undici'];

/** The package or built-in a module specifier names (`node:` dropped, a sub-path cut off); null for a relative one. */
function moduleName(spec) {
  if (spec.startsWith('.') || spec.startsWith('/')) return null;
  const bare = spec.startsWith('node:') ? spec.slice(5) : spec;
  const parts = bare.split('/');
  return bare.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** Why importing `spec` puts a file in the system tier; null when it does not. */
function systemModule(spec) {
  const name = moduleName(spec);
  if (name === null) return null;
  return SYSTEM_PACKAGES.includes(name) || SYSTEM_BUILTINS.includes(name) ? spec : null;
}

/** `import type { A }`, or `import { type A, type B }` (which TypeScript removes as well); `import 'x'` and any value binding load the module. */
function typeOnly(clause) {
  if (!clause) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return !clause.name && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

const stringArg = (call) => (call.arguments.length > 0 && ts.isStringLiteralLike(call.arguments[0]) ? call.arguments[0].text : null);

/** What a source file loads at run time (module specifiers) and whether it calls the global fetch. */
export function runtimeImports(text, fileName = 'file.ts') {
  const kind = fileName.endsWith('x') ? ts.ScriptKind.TSX : fileName.endsWith('js') ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, kind);
  const specs = [];
  let fetches = false;
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      if (!typeOnly(node.importClause) && ts.isStringLiteralLike(node.moduleSpecifier)) specs.push(node.moduleSpecifier.text);
      return;
    }
    if (ts.isExportDeclaration(node)) {
      if (!node.isTypeOnly && node.moduleSpecifier && ts.isStringLiteralLike(node.moduleSpecifier)) specs.push(node.moduleSpecifier.text);
      return;
    }
    if (ts.isImportEqualsDeclaration(node)) {
      const ref = node.moduleReference;
      if (!node.isTypeOnly && ts.isExternalModuleReference(ref) && ts.isStringLiteralLike(ref.expression)) specs.push(ref.expression.text);
      return;
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const arg = stringArg(node);
      // import('x'), require('x'), createRequire(...)('x')
      if (arg !== null && (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require') || (ts.isCallExpression(callee) && ts.isIdentifier(callee.expression) && callee.expression.text === 'createRequire'))) specs.push(arg);
      if (ts.isIdentifier(callee) && callee.text === 'fetch') fetches = true;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return { specs, fetches };
}

/** The file a relative specifier names: `.js` in specifiers is the `.ts` (or `.tsx`) source beside it. */
function resolveLocal(from, spec) {
  const p = resolve(dirname(from), spec);
  const candidates = /\.js$/.test(p) ? [p.replace(/\.js$/, '.ts'), p.replace(/\.js$/, '.tsx'), p] : /\.mjs$/.test(p) ? [p.replace(/\.mjs$/, '.mts'), p] : [p];
  const found = candidates.find((c) => existsSync(c) && statSync(c).isFile());
  if (!found) throw new Error(`${from}: cannot find the module '${spec}' it imports`);
  return found;
}

const CODE = /\.(?:[cm]?[jt]s|tsx)$/;

/** The tiers of a project's tests: `root`'s test/**\/*.test.ts, each fast or system, with why. */
export class Tiers {
  /** per file: the system modules it imports itself, and the local modules it imports */
  #graph = new Map();

  constructor(root) {
    this.root = resolve(root);
  }

  /** Every test file under test/, sorted, relative to the root. */
  testFiles() {
    const out = [];
    const walk = (d) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.test.ts')) out.push(relative(this.root, p));
      }
    };
    walk(join(this.root, 'test'));
    return out.sort();
  }

  #node(file) {
    let n = this.#graph.get(file);
    if (n) return n;
    const { specs, fetches } = runtimeImports(readFileSync(file, 'utf8'), file);
    n = { reasons: [], deps: [] };
    if (fetches) n.reasons.push('calls fetch');
    for (const spec of specs) {
      const sys = systemModule(spec);
      if (sys) n.reasons.push(`imports ${sys}`);
      else if (spec.startsWith('.')) {
        const dep = resolveLocal(file, spec);
        if (CODE.test(dep)) n.deps.push(dep);
      }
    }
    this.#graph.set(file, n);
    return n;
  }

  /**
   * Why `test` (a path relative to the root) is in the system tier: the
   * shortest chain of imports from it to a module that reaches outside the
   * process, ending with what that module does; null when it is fast.
   */
  why(test) {
    const start = resolve(this.root, test);
    const parent = new Map([[start, null]]);
    const queue = [start];
    while (queue.length > 0) {
      const file = queue.shift();
      const n = this.#node(file);
      if (n.reasons.length > 0) {
        const chain = [];
        for (let f = file; f !== null; f = parent.get(f)) chain.unshift(relative(this.root, f));
        return [...chain, n.reasons[0]];
      }
      for (const dep of n.deps) {
        if (parent.has(dep)) continue;
        parent.set(dep, file);
        queue.push(dep);
      }
    }
    return null;
  }

  /** `fast` or `system`. */
  tierOf(test) {
    return this.why(test) === null ? 'fast' : 'system';
  }

  /** The test files of `tier`, sorted. */
  list(tier) {
    return this.testFiles().filter((f) => this.tierOf(f) === tier);
  }
}

function main(argv) {
  const tiers = new Tiers(join(dirname(fileURLToPath(import.meta.url)), '..'));
  const [command, tier] = argv;
  if (command === 'list' && (tier === 'fast' || tier === 'system')) {
    for (const f of tiers.list(tier)) console.log(f);
  } else if (command === 'why' && tier === undefined) {
    for (const f of tiers.testFiles()) {
      const chain = tiers.why(f);
      if (chain) console.log(`${f}: ${chain.slice(1).join(' → ') || chain[0]}`);
    }
  } else {
    console.error('usage: node scripts/test-tiers.mjs list fast|system | why');
    process.exitCode = 2;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (e) {
    console.error(`test-tiers: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
