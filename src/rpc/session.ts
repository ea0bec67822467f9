/**
 * Session cookies: stateless, AES-256-GCM sealed tokens naming the principal
 * and an expiry, under a key derived from the realm's master key. Any dirid
 * server of the realm can read them and a restart keeps sessions; tampering
 * or expiry makes the cookie worthless. Cookie flags: Secure, HttpOnly,
 * SameSite=Strict, Path=/dirid.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Principal } from '../framework/command.js';

export const SESSION_COOKIE = 'dirid_session';

export class SessionCodec {
  private readonly key: Buffer;
  constructor(
    masterKey: Buffer,
    readonly lifetimeSeconds = 20 * 60,
    private readonly now: () => number = Date.now,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'dirid session cookie v1', 32));
  }

  seal(principal: Principal): string {
    const payload = Buffer.from(JSON.stringify({ n: principal.name, d: principal.dn, u: principal.uid, e: this.now() + this.lifetimeSeconds * 1000 }));
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    const ct = Buffer.concat([c.update(payload), c.final()]);
    return Buffer.concat([iv, ct, c.getAuthTag()]).toString('base64url');
  }

  cookieFor(principal: Principal): string {
    return `${SESSION_COOKIE}=${this.seal(principal)}; Path=/dirid; Max-Age=${this.lifetimeSeconds}; Secure; HttpOnly; SameSite=Strict`;
  }

  /** The principal of a valid, unexpired token; null otherwise. */
  principalFrom(token: string): Principal | null {
    if (token.length > 4096) return null;
    const raw = Buffer.from(token, 'base64url');
    if (raw.length < 12 + 16 + 2) return null;
    try {
      const d = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, 12));
      d.setAuthTag(raw.subarray(raw.length - 16));
      const pt = Buffer.concat([d.update(raw.subarray(12, raw.length - 16)), d.final()]);
      const v = JSON.parse(pt.toString('utf8')) as { n: string; d: string; u: string; e: number };
      if (typeof v.e !== 'number' || v.e < this.now()) return null;
      return { name: v.n, dn: v.d, uid: v.u };
    } catch {
      return null;
    }
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
