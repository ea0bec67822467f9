/**
 * The servers of a realm, as the directory records them: one entry per
 * server (cn=HOSTNAME,cn=servers,cn=etc,BASE, object class dirServer) with
 * the ports it answers on, written by each server when it starts, so every
 * server can name all of them in the client files it writes (krb5.conf's
 * KDCs and password services, the DNS SRV records an administrator
 * publishes). With one server (the SQLite store) the list is that server.
 */
import { containers } from '../directory/layout.js';
import { escapeRdnValue } from '../directory/dn.js';
import { DirectoryError, type Directory } from '../directory/types.js';
import { hasObjectClass } from '../directory/entry.js';
import type { ServerConfig } from './config.js';
import { writeFileAtomic, type DataPaths } from './data-paths.js';
import { writeKrb5Conf } from './krb5-conf.js';
import { ldapNames, serverPrincipalNames } from './kerberos-init.js';
import { writeSssdConf } from './sssd-conf.js';

/** The ports one server answers on. */
export interface ServerPorts {
  kdc: number;
  kpasswd: number;
  https: number;
  ldap: number;
  ldaps: number;
}

export interface RealmServer {
  hostname: string;
  ports: ServerPorts;
}

const SERVICES: ReadonlyArray<keyof ServerPorts> = ['kdc', 'kpasswd', 'https', 'ldap', 'ldaps'];

/** The realm's servers' container (in the realm's tree: directory/layout.ts REALM_CONTAINERS). */
export function serversDn(baseDn: string): string {
  return containers(baseDn).servers;
}

function serverDn(baseDn: string, hostname: string): string {
  return `cn=${escapeRdnValue(hostname)},${serversDn(baseDn)}`;
}

function addresses(ports: ServerPorts): string[] {
  return SERVICES.map((s) => `${s}=${ports[s]}`);
}

/** Records (or updates) a server and its ports. */
export async function registerServer(dir: Directory, server: RealmServer): Promise<void> {
  const dn = serverDn(dir.baseDn, server.hostname);
  const values = addresses(server.ports);
  const current = await dir.get(dn, ['dirServerAddress']);
  if (current) {
    const same = current.attrs.dirServerAddress?.length === values.length && values.every((v) => current.attrs.dirServerAddress!.includes(v));
    if (!same) await dir.modify(dn, [{ op: 'replace', attr: 'dirServerAddress', values }]);
    return;
  }
  await dir.add(dn, { objectClass: ['top', 'dirServer'], cn: [server.hostname], dirServerAddress: values });
}

/** The realm's servers, `first` (this server) first, then by name. */
export async function realmServers(dir: Directory, first: RealmServer): Promise<RealmServer[]> {
  let found: RealmServer[] = [];
  try {
    const r = await dir.search({ base: serversDn(dir.baseDn), scope: 'one', filter: '(objectClass=dirServer)', attrs: ['cn', 'objectClass', 'dirServerAddress'] });
    found = r.entries.flatMap((e) => {
      const hostname = e.attrs.cn?.[0];
      if (!hostname || !hasObjectClass(e.attrs.objectClass, 'dirServer')) return [];
      const ports = parsePorts(e.attrs.dirServerAddress ?? []);
      return ports ? [{ hostname, ports }] : [];
    });
  } catch (e) {
    if (!(e instanceof DirectoryError && e.code === 'noSuchObject')) throw e;
  }
  const others = found.filter((s) => s.hostname.toLowerCase() !== first.hostname.toLowerCase()).sort((a, b) => a.hostname.localeCompare(b.hostname));
  return [first, ...others];
}

/** The host names of the servers the directory records, none when it records none. */
export async function recordedServerNames(dir: Directory): Promise<string[]> {
  try {
    const r = await dir.search({ base: serversDn(dir.baseDn), scope: 'one', filter: '(objectClass=dirServer)', attrs: ['cn', 'objectClass'] });
    return r.entries.flatMap((e) => {
      const hostname = e.attrs.cn?.[0];
      return hostname && hasObjectClass(e.attrs.objectClass, 'dirServer') ? [hostname] : [];
    });
  } catch (e) {
    if (e instanceof DirectoryError && e.code === 'noSuchObject') return [];
    throw e;
  }
}

/** One server's principal names (kerberos-init.ts serverPrincipalNames). */
export interface ServerNames {
  server: string;
  names: { host: string; http: string; ldap: string[] };
}

/** The principal names of `self` (with the LDAP service's other names, ldapNames), without reading the directory. */
export function ownServerNames(realm: string, self: string): ServerNames {
  return { server: self, names: serverPrincipalNames(self.toLowerCase(), realm, ldapNames(self).map((n) => n.toLowerCase())) };
}

/** The principal names of this server (`self`, recorded or not yet) and of every server the directory records. */
export async function realmServerNames(dir: Directory, realm: string, self: string): Promise<ServerNames[]> {
  const out = [ownServerNames(realm, self)];
  for (const name of await recordedServerNames(dir)) out.push({ server: name, names: serverPrincipalNames(name.toLowerCase(), realm, [name.toLowerCase()]) });
  return out;
}

/**
 * The principals the realm's servers run on, each mapped to the name of
 * the server that needs it: host/ (its host entry and host.keytab), HTTP/
 * (the API's Negotiate) and ldap/ (LDAP SASL GSSAPI) of every recorded
 * server and of this one (`self`, recorded or not yet), with the LDAP
 * service's other names of this server (ldapNames).
 */
export async function serverPrincipals(dir: Directory, realm: string, self: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const { server, names } of await realmServerNames(dir, realm, self)) {
    for (const p of [names.host, names.http, ...names.ldap]) if (!out.has(p)) out.set(p, server);
  }
  return out;
}

function parsePorts(values: readonly string[]): ServerPorts | null {
  const ports: Partial<ServerPorts> = {};
  for (const v of values) {
    const m = /^([a-z]+)=(\d{1,5})$/.exec(v);
    if (m && (SERVICES as readonly string[]).includes(m[1]!)) ports[m[1] as keyof ServerPorts] = Number(m[2]);
  }
  return SERVICES.every((s) => ports[s] !== undefined) ? (ports as ServerPorts) : null;
}

/** The client files that name the realm's servers (`servers`, the preferred first): krb5.conf, sssd.conf and the DNS SRV records. */
export function writeServerFiles(paths: DataPaths, config: ServerConfig, servers: readonly RealmServer[]): void {
  writeKrb5Conf(paths, config, servers.map((s) => ({ hostname: s.hostname, kdc: s.ports.kdc, kpasswd: s.ports.kpasswd })));
  writeSssdConf(paths, config, servers.map((s) => ({ hostname: s.hostname, kdc: s.ports.kdc, kpasswd: s.ports.kpasswd, ldap: s.ports.ldap })));
  writeFileAtomic(paths.dnsZone, srvZoneText(config.realm, config.domain, servers));
}

/**
 * DNS SRV records for the realm's servers (RFC 2782; the names MIT
 * Kerberos, SSSD and the dirid client look up), for an administrator to
 * publish in the zone of `domain`; equal priority and weight, so clients
 * spread over the servers and fall back to any of them.
 */
export function srvZoneText(realm: string, domain: string, servers: readonly RealmServer[]): string {
  const lines = [`; SRV records for realm ${realm}: add them to the DNS zone of ${domain}.`, `$ORIGIN ${domain}.`];
  const record = (name: string, port: number, host: string) => lines.push(`${name.padEnd(22)} 3600 IN SRV 0 100 ${String(port).padStart(5)} ${host}.`);
  for (const s of servers) {
    record('_kerberos._udp', s.ports.kdc, s.hostname);
    record('_kerberos._tcp', s.ports.kdc, s.hostname);
    record('_kpasswd._udp', s.ports.kpasswd, s.hostname);
    record('_kpasswd._tcp', s.ports.kpasswd, s.hostname);
    record('_dirid._tcp', s.ports.https, s.hostname);
    record('_ldap._tcp', s.ports.ldap, s.hostname);
  }
  lines.push(`_kerberos              3600 IN TXT "${realm}"`);
  return lines.join('\n') + '\n';
}
