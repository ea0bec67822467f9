/**
 * Which servers the client tries, in order (docs/conventions.md, "Server
 * discovery and -v"): the configured xmlrpc_uri, or the
 * host of `ping --server HOST` alone; then servers from DNS SRV records
 * `_dirid._tcp.<domain>` and `_ldap._tcp.<domain>`, each set ordered by
 * priority and, within a priority, by RFC 2782 weighted random selection.
 * SRV look-ups run only when the configured server did not answer.
 *
 * `--server HOST` keeps the configured port and path when HOST has no port
 * (`HOST:PORT` picks one); an explicitly chosen server is not failed over.
 * `_ldap._tcp` records name hosts only: their port is LDAP's, so the API
 * port of xmlrpc_uri is used with them.
 */
import type { SrvRecord } from 'node:dns';
import { createRequire } from 'node:module';
import type { ClientConfig } from './config.js';
import { CliError } from './errors.js';

/** RFC 2782: lowest priority first; within one priority, weighted random order. */
export function orderSrv(records: readonly SrvRecord[], random: () => number = Math.random): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const out: SrvRecord[] = [];
  for (const prio of [...byPriority.keys()].sort((a, b) => a - b)) {
    // zero-weight records first, so they have a small chance when others exist (RFC 2782)
    const pool = [...byPriority.get(prio)!].sort((a, b) => (a.weight === 0 ? 0 : 1) - (b.weight === 0 ? 0 : 1));
    while (pool.length) {
      const total = pool.reduce((n, r) => n + r.weight, 0);
      let pick = 0;
      if (total > 0) {
        const target = random() * total;
        let running = 0;
        pick = pool.findIndex((r) => (running += r.weight) > target);
        if (pick < 0) pick = pool.length - 1;
      }
      out.push(pool.splice(pick, 1)[0]!);
    }
  }
  return out;
}

function hostPort(host: string, port: number): string {
  const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return port === 443 ? h : `${h}:${port}`;
}

/** The server tried first: xmlrpc_uri, or `--server HOST[:PORT]` with the configured port and path. */
export function firstServerUrl(conf: Pick<ClientConfig, 'xmlrpcUri'>, serverOverride?: string): string {
  const configured = new URL(conf.xmlrpcUri);
  if (serverOverride === undefined) return configured.toString();
  if (!/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(serverOverride)) throw new CliError(`invalid server '${serverOverride}': expected HOST or HOST:PORT`);
  const hasPort = /(\]|^[^:]*):\d+$/.test(serverOverride);
  let url: URL;
  try {
    url = new URL(`https://${hasPort ? serverOverride : serverOverride + (configured.port ? `:${configured.port}` : '')}${configured.pathname}`);
  } catch {
    throw new CliError(`invalid server '${serverOverride}': expected HOST or HOST:PORT`);
  }
  return url.toString();
}

/** Something that answers SRV queries (node's Resolver, or a stand-in in tests). */
export interface SrvLookup {
  resolveSrv(name: string): Promise<SrvRecord[]>;
}

/**
 * A DNS resolver (node's Resolver: SRV and TXT records), asking `dnsServer`
 * when one is given; `tries` per query (the API's failover asks once, `dirid
 * join` twice).
 */
export function makeResolver(dnsServer?: string, tries = 1): import('node:dns/promises').Resolver {
  // loaded here, not at start-up: most calls never look up SRV records
  const { Resolver } = createRequire(import.meta.url)('node:dns/promises') as typeof import('node:dns/promises');
  const resolver = new Resolver({ timeout: 2000, tries });
  if (dnsServer) {
    try {
      resolver.setServers([dnsServer]);
    } catch {
      throw new CliError(`invalid DNS server '${dnsServer}': expected IP or IP:PORT`);
    }
  }
  return resolver;
}

async function srv(lookup: SrvLookup, name: string): Promise<SrvRecord[]> {
  try {
    return await lookup.resolveSrv(name);
  } catch {
    return [];
  }
}

/** Server URLs from DNS SRV records, `_dirid._tcp` before `_ldap._tcp`. */
export async function srvServerUrls(conf: Pick<ClientConfig, 'xmlrpcUri' | 'domain' | 'dnsServer'>, lookup: SrvLookup = makeResolver(conf.dnsServer), random: () => number = Math.random): Promise<string[]> {
  if (!conf.domain) return [];
  const configured = new URL(conf.xmlrpcUri);
  const apiPort = Number(configured.port || 443);
  const out: string[] = [];
  for (const [name, isApi] of [
    [`_dirid._tcp.${conf.domain}`, true],
    [`_ldap._tcp.${conf.domain}`, false],
  ] as const) {
    for (const r of orderSrv(await srv(lookup, name), random)) {
      const host = r.name.replace(/\.$/, '');
      if (host === '') continue; // target "." means: no such service here (RFC 2782)
      const u = `https://${hostPort(host, isApi ? r.port : apiPort)}${configured.pathname}`;
      if (!out.includes(u)) out.push(u);
    }
  }
  return out;
}

/** All servers to try, in order; SRV look-ups happen only if the caller asks for more than the first. */
export async function* serverCandidates(conf: ClientConfig, serverOverride?: string, lookup?: SrvLookup): AsyncGenerator<string> {
  const first = firstServerUrl(conf, serverOverride);
  yield first;
  if (serverOverride !== undefined) return;
  for (const u of await srvServerUrls(conf, lookup ?? makeResolver(conf.dnsServer))) if (u !== first) yield u;
}
