/**
 * What `dirid join` learns of the realm before it trusts anything: the
 * realm's servers and their ports from DNS (the records `dirid-server`
 * writes to dns-srv.zone: `_dirid._tcp`, `_kerberos._udp`/`_tcp`,
 * `_kpasswd._udp`/`_tcp`, `_ldap._tcp` and the `_kerberos` TXT record
 * naming the realm, RFC 2782 order), or the server the administrator names
 * (`--server HOST[:PORT]`, first; its other ports from the records that name
 * it, else the usual ones). `--realm` and `--domain` override what DNS says;
 * the domain defaults to the host's own name less its first label, the realm
 * to the domain in capitals, the base DN to the domain's `dc=` components
 * (as `dirid-server init` makes it).
 */
import type { SrvRecord } from 'node:dns';
import { baseDnOfDomain, USUAL_PORTS, type RealmFacts, type RealmServer } from '../host/realm-facts.js';
import { makeResolver, orderSrv } from './discovery.js';
import { CliError } from './errors.js';

/** SRV and TXT look-ups (node's Resolver, or a stand-in in tests). */
export interface DnsLookup {
  resolveSrv(name: string): Promise<SrvRecord[]>;
  resolveTxt(name: string): Promise<string[][]>;
}

/** The resolver `dirid join` asks (discovery.ts makeResolver, two tries a query). */
export function dnsResolver(dnsServer?: string): DnsLookup {
  return makeResolver(dnsServer, 2);
}

export interface FactsRequest {
  /** the host's own fully qualified name */
  fqdn: string;
  /** `--server HOST[:PORT]`: the server's API */
  server?: string;
  domain?: string;
  realm?: string;
}

const NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const REALM = /^[A-Z0-9][A-Z0-9.-]{0,252}$/;

/** A host's fully qualified name, checked and in lower case. */
export function checkFqdn(name: string, what: string): string {
  const n = name.toLowerCase().replace(/\.$/, '');
  if (!NAME.test(n)) throw new CliError(`${what} '${name}' is not a fully qualified host name (such as client.example.test)`);
  return n;
}

/** `HOST` or `HOST:PORT` → its parts. */
export function parseServer(spec: string): { host: string; port?: number } {
  const m = /^([A-Za-z0-9.-]+)(?::(\d{1,5}))?$/.exec(spec);
  if (!m || (m[2] !== undefined && (Number(m[2]) < 1 || Number(m[2]) > 65535))) throw new CliError(`invalid server '${spec}': expected HOST or HOST:PORT`);
  return { host: checkFqdn(m[1]!, 'the server name'), ...(m[2] !== undefined ? { port: Number(m[2]) } : {}) };
}

async function srv(dns: DnsLookup, name: string): Promise<SrvRecord[]> {
  try {
    return orderSrv(await dns.resolveSrv(name)).filter((r) => r.name !== '' && r.name !== '.');
  } catch {
    return [];
  }
}

async function txtRealm(dns: DnsLookup, domain: string): Promise<string | undefined> {
  try {
    const records = await dns.resolveTxt(`_kerberos.${domain}`);
    const value = records.map((chunks) => chunks.join('')).find((v) => REALM.test(v));
    return value;
  } catch {
    return undefined;
  }
}

/** The realm's facts from DNS and the administrator's options; throws when no server is known. */
export async function discoverRealm(req: FactsRequest, dns: DnsLookup): Promise<RealmFacts> {
  const given = req.server !== undefined ? parseServer(req.server) : undefined;
  const domain = req.domain !== undefined ? checkFqdn(req.domain, 'the domain') : req.fqdn.slice(req.fqdn.indexOf('.') + 1);
  if (!domain.includes('.') && req.domain === undefined) throw new CliError(`cannot tell the realm's domain from the host name ${req.fqdn}: give --domain`);
  const [api, kdcUdp, kdcTcp, kpasswdUdp, kpasswdTcp, ldap] = await Promise.all(
    ['_dirid._tcp', '_kerberos._udp', '_kerberos._tcp', '_kpasswd._udp', '_kpasswd._tcp', '_ldap._tcp'].map((s) => srv(dns, `${s}.${domain}`)),
  );
  const portOf = (records: SrvRecord[], host: string) => records.find((r) => r.name.toLowerCase().replace(/\.$/, '') === host)?.port;
  const hosts: string[] = [];
  const add = (h: string) => {
    const n = h.toLowerCase().replace(/\.$/, '');
    if (!hosts.includes(n)) hosts.push(n);
  };
  if (given) add(given.host);
  for (const r of api!) add(r.name);
  if (!given && hosts.length === 0) {
    throw new CliError(`no dirid server found: DNS has no _dirid._tcp.${domain} SRV record; give --server HOST (and --domain if the host's name is not in the realm's domain)`);
  }
  const servers: RealmServer[] = hosts.map((h) => ({
    hostname: h,
    https: (given?.host === h ? given.port : undefined) ?? portOf(api!, h) ?? USUAL_PORTS.https,
    kdc: portOf(kdcUdp!, h) ?? portOf(kdcTcp!, h) ?? USUAL_PORTS.kdc,
    kpasswd: portOf(kpasswdUdp!, h) ?? portOf(kpasswdTcp!, h) ?? USUAL_PORTS.kpasswd,
    ldap: portOf(ldap!, h) ?? USUAL_PORTS.ldap,
  }));
  const realm = req.realm ?? (await txtRealm(dns, domain)) ?? domain.toUpperCase();
  if (!REALM.test(realm)) throw new CliError(`invalid realm '${realm}': expected a name in capitals such as EXAMPLE.TEST`);
  return { realm, domain, baseDn: baseDnOfDomain(domain), servers };
}
