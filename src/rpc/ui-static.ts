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
import { existsSync, readFileSync, statSync } from 'node:fs';
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
    if (!existsSync(join(root, 'index.html'))) {
      plain(res, 503, 'the web console is not built (npm run build)\n');
      return true;
    }
    let file = resolve(root, rel);
    if (file !== root && !file.startsWith(root + sep)) {
      plain(res, 404, 'not found\n');
      return true;
    }
    let isFile = false;
    try {
      isFile = statSync(file).isFile();
    } catch {
      isFile = false;
    }
    if (!isFile) {
      // a missing asset is a 404; any other path is a page of the console, answered by its one document
      if (rel.startsWith('assets/') || extname(rel) !== '') {
        plain(res, 404, 'not found\n');
        return true;
      }
      file = join(root, 'index.html');
    }
    const body = readFileSync(file);
    const type = TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
    const immutable = file.startsWith(join(root, 'assets') + sep);
    res.writeHead(200, headersFor(type, body.length, immutable));
    res.end(req.method === 'HEAD' ? undefined : body);
    return true;
  };
}
