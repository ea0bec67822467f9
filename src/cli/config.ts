/**
 * Client configuration (ARCHITECTURE.md): `/etc/dirid/default.conf`, then
 * `~/.dirid/default.conf` (later files win), or only `dirid -c FILE`.
 * Section [global]: xmlrpc_uri, realm, domain, server, ca_file, dns_server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseIni } from './ini.js';
import { CliError } from './errors.js';

export interface ClientConfig {
  xmlrpcUri: string;
  realm: string;
  domain: string;
  server?: string;
  caFile: string;
  /** ip[:port] of the DNS server for SRV look-ups (default: the system's) */
  dnsServer?: string;
  source: string;
}

export function loadClientConfig(explicit?: string): ClientConfig {
  const files = explicit ? [explicit] : ['/etc/dirid/default.conf', join(homedir(), '.dirid', 'default.conf')].filter((f) => existsSync(f));
  if (files.length === 0) throw new CliError('no client configuration: create ~/.dirid/default.conf or use -c FILE');
  const g: Record<string, string> = {};
  let last = files[0]!;
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch {
      throw new CliError(`cannot read ${f}`);
    }
    let ini;
    try {
      ini = parseIni(text, f);
    } catch (e) {
      throw new CliError(e instanceof Error ? e.message : String(e));
    }
    Object.assign(g, ini.global ?? {});
    last = f;
  }
  for (const k of ['xmlrpc_uri', 'realm']) if (!g[k]) throw new CliError(`${last}: missing ${k} in [global]`);
  let url: URL;
  try {
    url = new URL(g.xmlrpc_uri!);
  } catch {
    throw new CliError(`${last}: xmlrpc_uri is not a URL`);
  }
  if (url.protocol !== 'https:') throw new CliError(`${last}: xmlrpc_uri must be https://`);
  const caFile = g.ca_file ? resolve(dirname(last), g.ca_file) : join(dirname(last), 'ca.crt');
  return {
    xmlrpcUri: g.xmlrpc_uri!,
    realm: g.realm!,
    domain: g.domain ?? url.hostname.split('.').slice(1).join('.'),
    ...(g.server ? { server: g.server } : {}),
    caFile,
    ...(g.dns_server || process.env.DIRID_DNS_SERVER ? { dnsServer: process.env.DIRID_DNS_SERVER ?? g.dns_server } : {}),
    source: last,
  };
}

export function cacheDir(): string {
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'dirid');
}
