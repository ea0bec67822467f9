/**
 * Which servers to try, in order (specification §4): the configured
 * xmlrpc_uri (or `--server HOST`), then DNS SRV records `_dirid._tcp.<domain>`
 * and `_ldap._tcp.<domain>`, ordered by priority and, within a priority,
 * by RFC 2782 weighted random selection.
 */
import { Resolver } from 'node:dns/promises';
import type { SrvRecord } from 'node:dns';
import type { ClientConfig } from './config.js';

export function orderSrv(records: SrvRecord[], random: () => number = Math.random): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const out: SrvRecord[] = [];
  for (const prio of [...byPriority.keys()].sort((a, b) => a - b)) {
    const pool = [...byPriority.get(prio)!];
    while (pool.length) {
      const total = pool.reduce((n, r) => n + r.weight, 0);
      let pick = 0;
      if (total > 0) {
        let x = random() * total;
        pick = pool.findIndex((r) => (x -= r.weight) < 0);
        if (pick < 0) pick = pool.length - 1;
      }
      out.push(pool.splice(pick, 1)[0]!);
    }
  }
  return out;
}

async function srv(resolver: Resolver, name: string): Promise<SrvRecord[]> {
  try {
    return await resolver.resolveSrv(name);
  } catch {
    return [];
  }
}

export async function serverCandidates(conf: ClientConfig, serverOverride?: string): Promise<string[]> {
  const configured = new URL(conf.xmlrpcUri);
  const first = serverOverride ? new URL(`https://${serverOverride.includes(':') ? serverOverride : `${serverOverride}${configured.port ? `:${configured.port}` : ''}`}${configured.pathname}`) : configured;
  const out = [first.toString()];
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  if (conf.dnsServer) resolver.setServers([conf.dnsServer]);
  for (const [name, isApi] of [
    [`_dirid._tcp.${conf.domain}`, true],
    [`_ldap._tcp.${conf.domain}`, false],
  ] as const) {
    for (const r of orderSrv(await srv(resolver, name))) {
      const host = r.name.replace(/\.$/, '');
      const port = isApi ? r.port : Number(configured.port || 443);
      const u = `https://${host}${port === 443 ? '' : `:${port}`}${configured.pathname}`;
      if (!out.includes(u)) out.push(u);
    }
  }
  return out;
}
