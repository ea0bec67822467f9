/**
 * Several database servers in one connection string, as libpq accepts
 * them (`postgresql://user@h1:p1,h2:p2/db?target_session_attrs=read-write`),
 * for node-postgres, which takes one host only: the string is split into
 * one URL per host, and a pg.Client class connects to the first host that
 * answers and has the session kind asked for (`any`; `read-write`: not in
 * recovery and not read-only by default; `primary`: not in recovery). The
 * host found is kept for the next connections and forgotten when a
 * connection to it fails or finds it no longer fit (a failover: the old
 * primary is gone, a promoted standby now takes writes), so the next
 * connection looks again, in the order the string gives.
 */
import pg from 'pg';

/** What a connection must be talking to. */
export type SessionAttrs = 'any' | 'read-write' | 'primary';

export interface DbHost {
  /** host name or address, IPv6 without brackets */
  readonly host: string;
  /** absent: node-postgres's default */
  readonly port?: number;
}

export interface ConnectionTargets {
  readonly hosts: readonly DbHost[];
  readonly sessionAttrs: SessionAttrs;
  /** the connection string for one host: the original with that host alone and without target_session_attrs */
  url(h: DbHost): string;
}

const SUPPORTED: readonly string[] = ['any', 'read-write', 'primary'];

/**
 * The hosts and the session kind a connection string asks for. Throws on
 * a malformed host list or a session kind dirid cannot use (it writes);
 * the message never repeats the string (it may hold a password).
 */
export function connectionTargets(connectionString: string): ConnectionTargets {
  const m = /^(postgres(?:ql)?:\/\/)([^/?#]*)(.*)$/i.exec(connectionString);
  if (!m) return { hosts: [{ host: '' }], sessionAttrs: 'any', url: () => connectionString };
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const at = authority.lastIndexOf('@');
  const userinfo = at >= 0 ? authority.slice(0, at + 1) : '';
  const hosts = authority
    .slice(at + 1)
    .split(',')
    .map((h) => {
      const x = /^(?:\[([^\]]+)\]|([^:[\]]*))(?::(\d*))?$/.exec(h);
      if (!x) throw new Error('the database URL has a malformed host list');
      const host = decodeURIComponent(x[1] ?? x[2] ?? '');
      const port = x[3] ? Number(x[3]) : undefined;
      if (port !== undefined && (port < 1 || port > 65535)) throw new Error('the database URL has a port out of range');
      return { host, ...(port !== undefined ? { port } : {}) };
    });
  if (hosts.length > 1 && hosts.some((h) => h.host === '')) throw new Error('the database URL has an empty host in its host list');
  // the query, without target_session_attrs (node-postgres would not act on it)
  const q = /^([^?#]*)(?:\?([^#]*))?(#.*)?$/.exec(rest)!;
  let sessionAttrs = 'any';
  const params = (q[2] ?? '').split('&').filter((p) => {
    if (p === '') return false;
    const key = decodeURIComponent(p.split('=')[0]!);
    if (key !== 'target_session_attrs') return true;
    sessionAttrs = decodeURIComponent(p.slice(key.length + 1));
    return false;
  });
  if (!SUPPORTED.includes(sessionAttrs)) throw new Error(`target_session_attrs=${sessionAttrs} cannot be used: dirid writes, so it takes any, read-write or primary`);
  const tail = `${q[1]}${params.length ? `?${params.join('&')}` : ''}${q[3] ?? ''}`;
  const hostPart = (h: DbHost) => `${h.host.includes(':') ? `[${h.host}]` : encodeURIComponent(h.host)}${h.port !== undefined ? `:${h.port}` : ''}`;
  return { hosts, sessionAttrs: sessionAttrs as SessionAttrs, url: (h) => `${scheme}${userinfo}${hostPart(h)}${tail}` };
}

/** A host as messages show it. */
export function shownHost(h: DbHost): string {
  const host = h.host.includes(':') ? `[${h.host}]` : h.host;
  return h.port !== undefined ? `${host}:${h.port}` : host;
}

/** Whether the server a connected client talks to is the kind asked for. */
async function fit(c: pg.ClientBase, attrs: SessionAttrs): Promise<boolean> {
  if (attrs === 'any') return true;
  const r = (await c.query<{ recovery: boolean; ro: string }>("SELECT pg_is_in_recovery() AS recovery, current_setting('transaction_read_only') AS ro")).rows[0]!;
  return !r.recovery && (attrs === 'primary' || r.ro === 'off');
}

/** connection failures worth one more try at once: the host was remembered, and the next connection looks for another */
const staleHostFailures = new WeakSet<object>();

/** Whether a failure to connect was to a remembered host that has since been forgotten. */
export function staleHostFailure(e: unknown): boolean {
  return typeof e === 'object' && e !== null && staleHostFailures.has(e);
}

/**
 * Finds and remembers the host to connect to: one look at a time, shared
 * by every connection that waits for it.
 */
export class HostChooser {
  private current: DbHost | undefined;
  private looking: Promise<DbHost> | undefined;

  constructor(
    readonly targets: ConnectionTargets,
    private readonly options: pg.ClientConfig,
  ) {}

  /** The remembered host (`fresh` false), or the first fit one found now. */
  async choose(): Promise<{ host: DbHost; fresh: boolean }> {
    if (this.current) return { host: this.current, fresh: false };
    this.looking ??= this.look().finally(() => (this.looking = undefined));
    return { host: await this.looking, fresh: true };
  }

  forget(h: DbHost): void {
    if (this.current === h) this.current = undefined;
  }

  /** Tries every host in order on a connection of its own, ended at once. */
  private async look(): Promise<DbHost> {
    const why: string[] = [];
    for (const h of this.targets.hosts) {
      const c = new pg.Client({ ...this.options, connectionString: this.targets.url(h) });
      c.on('error', () => {});
      try {
        await c.connect();
        if (await fit(c, this.targets.sessionAttrs)) {
          this.current = h;
          return h;
        }
        why.push(`${shownHost(h)} is ${this.targets.sessionAttrs === 'primary' ? 'a standby' : 'read-only'}`);
      } catch (e) {
        why.push(`${shownHost(h)}: ${e instanceof Error ? e.message : String(e)}`);
      } finally {
        await c.end().catch(() => {});
      }
    }
    throw new Error(`no ${this.targets.sessionAttrs === 'any' ? '' : `${this.targets.sessionAttrs} `}PostgreSQL server among the database URL's hosts (${why.join('; ')})`);
  }

  /**
   * A pg.Client class whose connections go to the chosen host and are
   * checked to be the kind asked for; a failure makes the chooser forget
   * the host.
   */
  clientClass(): new (config?: pg.ClientConfig) => pg.Client {
    const chooser = this;
    const attrs = this.targets.sessionAttrs;
    return class ChosenHostClient extends pg.Client {
      override connect(): Promise<pg.Client>;
      override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
      override connect(callback?: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): Promise<pg.Client> | void {
        const done = (async () => {
          const { host: h, fresh } = await chooser.choose();
          this.host = h.host;
          this.port = h.port ?? (pg.defaults.port as number);
          try {
            await super.connect();
            if (!(await fit(this, attrs))) throw new Error(`${shownHost(h)} is no longer ${attrs === 'primary' ? 'the primary' : 'read-write'}`);
          } catch (e) {
            chooser.forget(h);
            if (!fresh && typeof e === 'object' && e !== null) staleHostFailures.add(e);
            // not awaited: a connection that never opened may never report its end
            super.end().catch(() => {});
            throw e;
          }
          return this as pg.Client;
        })();
        if (!callback) return done;
        done.then(
          (c) => (callback as (err: null, c: pg.Client) => void)(null, c),
          (e: Error) => (callback as (err: Error) => void)(e),
        );
      }
    };
  }
}
