/**
 * The KDC's PA-FX-COOKIE (RFC 6113 §5.2): state the KDC hands the client
 * between the requests of one AS conversation, sealed (crypto/sealed-box.ts)
 * under a key derived from the master key, so it is opaque to clients, and
 * stamped with its time so an old cookie is refused. A jar can bind fields
 * (the conversation's armor digest) into every cookie it seals. A jar
 * remembers the last cookie it opened, and a jar bound from it starts with
 * that one, so the two readers of an armored request's cookie (the armor
 * check in fast.ts, which then binds the request's jar, and the
 * mechanism's step) open it once.
 */
import type { PaData } from '../kerberos/asn1/primitives.js';
import { PaType } from '../kerberos/iana.js';
import { BOX_OVERHEAD, open, seal } from '../crypto/sealed-box.js';

const COOKIE_MAGIC = Buffer.from('DIRID1');

/** The last cookie a jar opened: the request's cookie Buffer (a view into that request) and what it held. */
interface LastOpened {
  value: Buffer | undefined;
  state: { t: number } | undefined;
}

/** KDC-sealed cookies (sealed boxes, crypto/sealed-box.ts); the state they carry is opaque to clients. */
export class CookieJar {
  constructor(
    private readonly key: Buffer,
    private readonly bound: object = {},
    private readonly last: LastOpened = { value: undefined, state: undefined },
  ) {}

  /** A jar whose cookies also carry `fields` (an armored conversation's armor digest). */
  binding(fields: object): CookieJar {
    return new CookieJar(this.key, { ...this.bound, ...fields }, { ...this.last });
  }

  seal(state: object): PaData {
    const box = seal(this.key, JSON.stringify({ ...state, ...this.bound, t: Date.now() }));
    return { type: PaType.FX_COOKIE, value: Buffer.concat([COOKIE_MAGIC, box]) };
  }

  /**
   * The state in the request's cookie, or null when it has none of ours or
   * it is older than `maxAgeMs`. What it returns may be returned again to
   * another reader of the same request: callers do not modify it.
   */
  open<T extends object>(padata: readonly PaData[], maxAgeMs: number): (T & { t: number }) | null {
    const pa = padata.find((p) => p.type === PaType.FX_COOKIE);
    if (!pa) return null;
    // the very Buffer opened last (request Buffers are never modified): the same state, its age checked anew
    const s = pa.value === this.last.value ? (this.last.state as T & { t: number }) : this.openBox<T>(pa.value);
    if (!s) return null;
    if (Date.now() - s.t > maxAgeMs) return null;
    return s;
  }

  private openBox<T extends object>(value: Buffer): (T & { t: number }) | null {
    if (value.length < COOKIE_MAGIC.length + BOX_OVERHEAD || !value.subarray(0, COOKIE_MAGIC.length).equals(COOKIE_MAGIC)) return null;
    const plain = open(this.key, value.subarray(COOKIE_MAGIC.length));
    if (!plain) return null;
    let s: T & { t: number };
    try {
      s = JSON.parse(plain.toString('utf8')) as T & { t: number };
    } catch {
      return null;
    }
    if (typeof s?.t !== 'number') return null;
    this.last.value = value;
    this.last.state = s;
    return s;
  }
}
