/**
 * The web console's files (docs/console.md): serves the built front end
 * (`dist/ui`, made by `vite build`) under `/dirid/ui/`, GET and HEAD only.
 * It owns the path rules (no traversal: encoded dots and slashes, backslashes
 * and NUL are refused before anything touches the disk, and the resolved
 * path must stay inside the UI directory), the content types, the caching
 * (index.html revalidated on every load, the hashed assets kept for a year)
 * and the console's security headers, among them the strict
 * Content-Security-Policy: only our own scripts, styles and API.
 * The console itself talks to the same JSON-RPC endpoints as the CLI.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IncomingMessage, ServerResponse } from 'node:http';

export const UI_PREFIX = '/dirid/ui/';

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/** Where `vite build` puts the console: dist/ui, whether this module runs from dist/ or (under tsx) from src/. */
export function defaultUiDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const parent = dirname(here);
  return basename(parent) === 'dist' ? join(parent, 'ui') : join(dirname(parent), 'dist', 'ui');
}

function headersFor(type: string, length: number, immutable: boolean): Record<string, string | number> {
  return {
    'Content-Type': type,
    'Content-Length': length,
    'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    'Content-Security-Policy': CONSOLE_CSP,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // the API's CSRF check wants a Referer inside /dirid/: same-origin keeps the full path for our own requests only
    'Referrer-Policy': 'same-origin',
    'Strict-Transport-Security': 'max-age=31536000',
  };
}

/** A built file of the console, as it is served. */
interface UiFile {
  body: Buffer;
  type: string;
  immutable: boolean;
}

function plain(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
  res.writeHead(status, { ...headersFor('text/plain; charset=utf-8', Buffer.byteLength(text), false), ...extra });
  res.end(text);
}

/**
 * A handler for requests under /dirid/ui/ (and /dirid/ui itself, redirected).
 * Returns false for paths it does not own.
 */
export function createUiHandler(uiDir: string = defaultUiDir()): (req: IncomingMessage, res: ServerResponse) => boolean {
  const root = resolve(uiDir);
  // the built files do not change while the server runs: each is read from disk once, off no request's path after that
  const files = new Map<string, UiFile>();
  const fileAt = (file: string): UiFile | null => {
    let f = files.get(file);
    if (f) return f;
    try {
      if (!statSync(file).isFile()) return null;
    } catch {
      return null;
    }
    f = { body: readFileSync(file), type: TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream', immutable: file.startsWith(join(root, 'assets') + sep) };
    files.set(file, f);
    return f;
  };
  return (req, res) => {
    const raw = (req.url ?? '/').split('?')[0]!.split('#')[0]!;
    if (raw === '/dirid/ui') {
      res.writeHead(308, { Location: UI_PREFIX, 'Content-Length': 0 });
      res.end();
      return true;
    }
    if (!raw.startsWith(UI_PREFIX)) return false;
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      plain(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
      return true;
    }
    const rest = raw.slice(UI_PREFIX.length);
    // the raw target, before any decoding: encoded separators or dots, backslashes and control bytes are refused outright
    if (/%(?:2e|2f|5c|00)|\\|[\x00-\x1f]/i.test(rest)) {
      plain(res, 400, 'bad path\n');
      return true;
    }
    let rel: string;
    try {
      rel = decodeURIComponent(rest);
    } catch {
      plain(res, 400, 'bad path\n');
      return true;
    }
    const parts = rel.split('/');
    if (rel.includes('\0') || parts.some((p) => p === '..' || p === '.')) {
      plain(res, 400, 'bad path\n');
      return true;
    }
    const index = fileAt(join(root, 'index.html'));
    if (!index) {
      plain(res, 503, 'the web console is not built (npm run build)\n');
      return true;
    }
    const file = resolve(root, rel);
    if (file !== root && !file.startsWith(root + sep)) {
      plain(res, 404, 'not found\n');
      return true;
    }
    let f = fileAt(file);
    if (!f) {
      // a missing asset is a 404; any other path is a page of the console, answered by its one document
      if (rel.startsWith('assets/') || extname(rel) !== '') {
        plain(res, 404, 'not found\n');
        return true;
      }
      f = index;
    }
    res.writeHead(200, headersFor(f.type, f.body.length, f.immutable));
    res.end(req.method === 'HEAD' ? undefined : f.body);
    return true;
  };
}
