/**
 * The names a dirid server accepts service tickets for (docs/access.md,
 * "Tickets a dirid server accepts"): for the API's Negotiate, HTTP/ of each
 * server of the realm; for LDAP's SASL GSSAPI, ldap/ of each server; as
 * servers.ts lists them (kerberos-init.ts serverPrincipalNames) from this
 * server and the servers the directory records. Nothing else: a ticket for
 * another HTTP/ or ldap/ service of the realm belongs to that service.
 *
 * Another server of a realm on PostgreSQL records itself when it starts,
 * while this one runs. So a name not in the set makes this server read the
 * recorded servers again, at most once every `minRefreshMs` (a stream of
 * foreign tickets costs one directory search per interval), and the name
 * is accepted only if it is then in the set. A failed read keeps the set it
 * had.
 */
import type { Directory } from '../directory/types.js';
import { ownServerNames, realmServerNames, type ServerNames } from './servers.js';
import type { Logger } from '../log/logger.js';

/** The services that accept tickets: the HTTPS API and the LDAP service. */
export type AcceptingService = 'http' | 'ldap';

type NameSets = Record<AcceptingService, ReadonlySet<string>>;

/** How often at most an unknown name makes the server read the recorded servers again. */
export const ACCEPTOR_REFRESH_MS = 10_000;

function nameSets(servers: readonly ServerNames[]): NameSets {
  return { http: new Set(servers.map((s) => s.names.http)), ldap: new Set(servers.flatMap((s) => s.names.ldap)) };
}

export interface AcceptorNamesOptions {
  /** the names of the servers the directory records now, and this server's */
  load(): Promise<readonly ServerNames[]>;
  /** this server's names, known without the directory */
  initial: readonly ServerNames[];
  minRefreshMs?: number;
  now?: () => number;
  log: Logger;
}

export class AcceptorNames {
  private sets: NameSets;
  private lastLoad = -Infinity;
  private loading: Promise<void> | undefined;
  private readonly minRefreshMs: number;
  private readonly now: () => number;

  constructor(private readonly o: AcceptorNamesOptions) {
    this.sets = nameSets(o.initial);
    this.minRefreshMs = o.minRefreshMs ?? ACCEPTOR_REFRESH_MS;
    this.now = o.now ?? Date.now;
  }

  /** Whether `service` accepts a ticket whose server is `name` (name@REALM, compared exactly). */
  async accepts(service: AcceptingService, name: string): Promise<boolean> {
    if (this.sets[service].has(name)) return true;
    await this.refresh();
    return this.sets[service].has(name);
  }

  /** Reads the recorded servers again, unless a read is under way (then waits for it) or the last began less than minRefreshMs ago. */
  private refresh(): Promise<void> {
    if (this.loading) return this.loading;
    const now = this.now();
    if (now - this.lastLoad < this.minRefreshMs) return Promise.resolve();
    this.lastLoad = now;
    this.loading = this.o
      .load()
      .then(
        (servers) => {
          this.sets = nameSets(servers);
        },
        (e: unknown) => {
          this.o.log.warn('servers_unread', { error: e instanceof Error ? e.message : String(e), effect: "tickets for servers recorded since the last read are refused" });
        },
      )
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}

/** The acceptor names of the server `self` of `realm`, over the servers `dir` records. */
export function realmAcceptorNames(dir: Directory, realm: string, self: string, log: Logger, minRefreshMs?: number): AcceptorNames {
  return new AcceptorNames({
    load: () => realmServerNames(dir, realm, self),
    initial: [ownServerNames(realm, self)],
    log,
    ...(minRefreshMs !== undefined ? { minRefreshMs } : {}),
  });
}
