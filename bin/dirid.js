#!/usr/bin/env node
/**
 * Start-up of the `dirid` client (docs/cli-startup.md): turns on Node's
 * on-disk compile cache under the user's cache directory, then runs the
 * bundled client (dist/cli-bundle, written by `npm run build`) or, without
 * it, dist/cli/main.js. A cache directory that cannot be made or written
 * only costs speed.
 */
import module from 'node:module';
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

try {
  // the same directory as the schema and session caches (src/cli/config.ts cacheDir)
  const xdg = process.env.XDG_CACHE_HOME;
  const dir = join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'dirid', 'compile');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  module.enableCompileCache?.(dir); // Node 22.1 and later
} catch {
  // no compile cache: slower start, same behaviour
}
const bundle = new URL('../dist/cli-bundle/main.js', import.meta.url);
await import(existsSync(bundle) ? bundle.href : '../dist/cli/main.js');
