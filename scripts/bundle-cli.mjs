/**
 * The `dirid` client as one start-up file (run by `npm run build`, after
 * tsc): esbuild joins dist/cli/main.js and the modules it imports into
 * dist/cli-bundle/main.js, so a new `dirid` process reads and compiles one
 * file instead of resolving a graph of them. What main.js imports lazily
 * (kinit, the Kerberos/GSS code of Negotiate) stays in separate chunks that
 * load only when a command needs them. Node's built-in modules and npm
 * packages are not bundled. bin/dirid.js runs the bundle when it exists and
 * dist/cli/main.js otherwise; the old bundle is removed first, so a failed
 * or skipped bundling never leaves a stale one behind. See
 * docs/cli-startup.md.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/cli-bundle`;
rmSync(outdir, { recursive: true, force: true });

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // esbuild comes with tsx (a devDependency); without it the CLI runs unbundled
  process.stderr.write('bundle-cli: esbuild is not installed; dirid runs from dist/cli (slower start-up)\n');
  process.exit(0);
}
await esbuild.build({
  entryPoints: [`${root}dist/cli/main.js`],
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  packages: 'external',
  logLevel: 'warning',
});
