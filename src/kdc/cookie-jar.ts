/**
 * The KDC's PA-FX-COOKIE (RFC 6113 §5.2): state the KDC hands the client
 * between the requests of one AS conversation, sealed (crypto/sealed-box.ts)
 * under a key derived from the master key, so it is opaque to clients, and
 * stamped with its time so an old cookie is refused. A jar can bind fields
 * (the conversation's armor digest) into every cookie it seals.
 */
import type { PaData } from '../kerberos/asn1/primitives.js';
import { PaType } from '../kerberos/iana.js';
import { BOX_OVERHEAD, open, seal } from '../crypto/sealed-box.js';

const COOKIE_MAGIC = Buffer.from('DIRID1');

/** KDC-sealed cookies (sealed boxes, crypto/sealed-box.ts); the state they carry is opaque to clients. */
export class CookieJar {
  constructor(
    private readonly key: Buffer,
    private readonly bound: object = {},
  ) {}

  /** A jar whose cookies also carry `fields` (an armored conversation's armor digest). */
  binding(fields: object): CookieJar {
    return new CookieJar(this.key, { ...this.bound, ...fields });
  }

  seal(state: object): PaData {
    const box = seal(this.key, JSON.stringify({ ...state, ...this.bound, t: Date.now() }));
    return { type: PaType.FX_COOKIE, value: Buffer.concat([COOKIE_MAGIC, box]) };
  }

  open<T extends object>(padata: readonly PaData[], maxAgeMs: number): (T & { t: number }) | null {
    const pa = padata.find((p) => p.type === PaType.FX_COOKIE);
    if (!pa || pa.value.length < COOKIE_MAGIC.length + BOX_OVERHEAD || !pa.value.subarray(0, COOKIE_MAGIC.length).equals(COOKIE_MAGIC)) return null;
    const plain = open(this.key, pa.value.subarray(COOKIE_MAGIC.length));
    if (!plain) return null;
    try {
      const s = JSON.parse(plain.toString('utf8')) as T & { t: number };
      if (typeof s.t !== 'number' || Date.now() - s.t > maxAgeMs) return null;
      return s;
    } catch {
      return null;
    }
  }
}

