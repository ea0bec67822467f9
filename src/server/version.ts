/** The server version, from package.json (one source of truth). */
import { readFileSync } from 'node:fs';

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
  return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
}

export const SERVER_VERSION = readVersion();
