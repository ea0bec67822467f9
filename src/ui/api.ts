/**
 * The console's one way to the server: the same JSON-RPC endpoints as the
 * `dirid` client (docs/architecture.md, "Contracts"). Logging in (a
 * Kerberos ticket through the browser's Negotiate, or a password) leaves a
 * session cookie; every call then goes to /dirid/session/json. Errors are
 * the server's own words: an RpcError carries its name, code and message.
 * The browser sends the Referer the server's CSRF check wants (the page is
 * under /dirid/ and its Referrer-Policy is same-origin).
 */
import type { ApiContract, CommandSpec, ParamSpec } from '../contract/api-contract.js';

export type { CommandSpec, ParamSpec };

export type Wire = null | string | number | boolean | Wire[] | { [k: string]: Wire };

export interface CommandResult {
  result: Wire;
  value: Wire;
  summary: string | null;
  count?: number;
  truncated?: boolean;
}

export class RpcError extends Error {
  constructor(
    readonly name: string,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The `schema` command's answer: the API contract the CLI reads too, and the server's version. */
export type Schema = ApiContract & { version: string };

let nextId = 1;

/** The window event a call raises when the server no longer accepts the session (HTTP 401). */
export const SESSION_ENDED = 'dirid-session-ended';

async function textOf(res: Response): Promise<string> {
  return (await res.text()).trim();
}

/** One JSON-RPC call on the session cookie; throws RpcError with the server's message. */
export async function call(method: string, args: Wire[] = [], options: Record<string, Wire> = {}): Promise<CommandResult> {
  const res = await fetch('/dirid/session/json', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ method, params: [args, options], id: nextId++ }),
  });
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('application/json')) throw new RpcError('HttpError', res.status, (await textOf(res)) || `HTTP ${res.status}`);
  const body = (await res.json()) as { result: CommandResult | null; error: { name: string; code: number; message: string } | null };
  if (body.error) {
    if (res.status === 401) window.dispatchEvent(new Event(SESSION_ENDED));
    throw new RpcError(body.error.name, body.error.code, body.error.message);
  }
  if (!body.result) throw new RpcError('ProtocolError', 909, 'empty answer');
  return body.result;
}

/** Password login: a session cookie, or the server's refusal as an RpcError. */
export async function loginPassword(user: string, password: string): Promise<void> {
  const res = await fetch('/dirid/session/login_password', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ user, password }).toString(),
  });
  if (!res.ok) throw new RpcError('LoginError', res.status, (await textOf(res)) || `HTTP ${res.status}`);
}

/**
 * Kerberos login: one POST to login_kerberos, which the browser answers with
 * Negotiate if it holds a ticket (and trusts this host). 'ok' is a session;
 * 'challenged' a 401 asking for Negotiate that the browser did not answer;
 * 'refused' anything else (no Negotiate offered, a refused ticket, no network).
 */
export async function loginKerberos(): Promise<'ok' | 'challenged' | 'refused'> {
  try {
    const res = await fetch('/dirid/session/login_kerberos', { method: 'POST', credentials: 'include' });
    if (res.ok) return 'ok';
    return res.status === 401 && /^Negotiate\b/i.test(res.headers.get('WWW-Authenticate') ?? '') ? 'challenged' : 'refused';
  } catch {
    return 'refused';
  }
}

/**
 * Pauses (ms) before the console asks login_kerberos again, in the
 * background, after the page's first attempt was challenged and not
 * answered, for as long as the login form stays untouched. Chromium on Linux
 * leaves the first Negotiate challenge a profile ever receives unanswered:
 * it records that it met one and restarts its network service with the
 * GSS-API library allowed, which took 4–134 ms in our runs (docs/console.md).
 */
export const KERBEROS_RETRY_PAUSES_MS = [250, 1000, 3000];

/** The first value of an attribute in an entry as the API returns it. */
export function first(entry: Record<string, Wire> | undefined, key: string): string {
  const v = entry?.[key];
  if (Array.isArray(v)) return v.length > 0 ? String(v[0]) : '';
  return v === undefined || v === null ? '' : String(v);
}

/** Whether the server lets this session run a command: asks with no arguments, so only its authorization answers (nothing runs). */
/** Log out: the server replaces the session cookie (HttpOnly, so only it can) with an expired one. */
export async function logout(): Promise<void> {
  const res = await fetch('/dirid/session/logout', { method: 'POST', credentials: 'same-origin' });
  if (!res.ok) throw new RpcError('HttpError', res.status, (await textOf(res)) || `HTTP ${res.status}`);
}

export async function allowed(method: string): Promise<boolean> {
  try {
    await call(method, [], {});
    return true;
  } catch (e) {
    return !(e instanceof RpcError && (e.name === 'ACIError' || e.name === 'NotAuthenticated'));
  }
}
