/**
 * Session cookies: stateless sealed boxes (crypto/sealed-box.ts) naming the principal
 * (with the authentication indicators of the ticket that opened the session),
 * what the session is bound to (the account's entry and security stamp when
 * it began, account/state.ts SessionBinding) and an expiry, under a key
 * derived from the realm's master key. Any dirid server of the realm can
 * read them and a restart keeps sessions; tampering or expiry makes the
 * cookie worthless, and so does a password change, a disablement, a rename
 * or a deletion of the account, checked at each use against the binding
 * (rpc/server.ts). Cookie flags: Secure, HttpOnly, SameSite=Strict,
 * Path=/dirid. Logging out replaces the cookie with an expired empty one in
 * that browser; being stateless, a copy taken before stays valid until its
 * expiry (docs/console.md).
 */
import { deriveKey, open, seal } from '../crypto/sealed-box.js';
import type { Principal } from '../framework/command.js';
import type { SessionBinding } from '../account/state.js';

export const SESSION_COOKIE = 'dirid_session';

export class SessionCodec {
  private readonly key: Buffer;
  constructor(
    masterKey: Buffer,
    readonly lifetimeSeconds = 20 * 60,
    private readonly now: () => number = Date.now,
  ) {
    this.key = deriveKey(masterKey, 'dirid session cookie v1');
  }

  seal(principal: Principal, binding: SessionBinding): string {
    const ind = principal.authIndicators?.length ? { i: principal.authIndicators } : {};
    const payload = { n: principal.name, d: principal.dn, u: principal.uid, ...ind, a: binding.entry, s: binding.stamp, e: this.now() + this.lifetimeSeconds * 1000 };
    return seal(this.key, Buffer.from(JSON.stringify(payload))).toString('base64url');
  }

  cookieFor(principal: Principal, binding: SessionBinding): string {
    return `${SESSION_COOKIE}=${this.seal(principal, binding)}; Path=/dirid; Max-Age=${this.lifetimeSeconds}; Secure; HttpOnly; SameSite=Strict`;
  }

  /** The Set-Cookie value that removes the session cookie from the client (log out). */
  clearingCookie(): string {
    return `${SESSION_COOKIE}=; Path=/dirid; Max-Age=0; Secure; HttpOnly; SameSite=Strict`;
  }

  /**
   * The principal of a valid, unexpired token and what its session is bound
   * to; null otherwise (a cookie sealed before sessions were bound included).
   * Whether the account still matches the binding is the caller's to ask.
   */
  sessionFrom(token: string): { principal: Principal; binding: SessionBinding } | null {
    if (token.length > 4096) return null;
    const pt = open(this.key, Buffer.from(token, 'base64url'));
    if (!pt) return null;
    try {
      const v = JSON.parse(pt.toString('utf8')) as { n: string; d: string; u: string; i?: unknown; a?: unknown; s?: unknown; e: number };
      if (typeof v.e !== 'number' || v.e < this.now()) return null;
      if (typeof v.a !== 'string' || typeof v.s !== 'string') return null;
      const p: Principal = { name: v.n, dn: v.d, uid: v.u };
      if (Array.isArray(v.i) && v.i.every((x) => typeof x === 'string')) p.authIndicators = v.i as string[];
      return { principal: p, binding: { entry: v.a, stamp: v.s } };
    } catch {
      return null;
    }
  }

  /** The principal of a valid, unexpired token; null otherwise. */
  principalFrom(token: string): Principal | null {
    return this.sessionFrom(token)?.principal ?? null;
  }
}

export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  if (!header || header.length > 16384) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    out[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return out;
}
