/**
 * Client configuration (docs/architecture.md "Contracts"): `/etc/dirid/default.conf`,
 * then `~/.dirid/default.conf` (later files win key by key), or only
 * `dirid -c FILE`. Section [global]: xmlrpc_uri (https, required), realm
 * (required), domain (default: the realm in lower case), server, ca_file
 * (default: `ca.crt` next to the file that set the other keys; relative
 * paths are relative to that file), dns_server (`ip[:port]` for SRV
 * look-ups; the environment variable DIRID_DNS_SERVER overrides it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
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
  /** the last file read */
  source: string;
}

export function defaultConfigFiles(): string[] {
  return ['/etc/dirid/default.conf', join(homedir(), '.dirid', 'default.conf')];
}

export function loadClientConfig(explicit?: string, env: NodeJS.ProcessEnv = process.env): ClientConfig {
  const files = explicit !== undefined ? [explicit] : defaultConfigFiles().filter((f) => existsSync(f));
  if (files.length === 0) throw new CliError(`no client configuration: create ${defaultConfigFiles().join(' or ')}, or use -c FILE`);
  const g: Record<string, string> = {};
  const from: Record<string, string> = {};
  for (const f of files) {
    let text: string;
    try {
      text = readFileSync(f, 'utf8');
    } catch (e) {
      const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied' : 'not readable';
      throw new CliError(`cannot read the configuration file ${f}: ${why}`);
    }
    let global: Record<string, string>;
    try {
      global = parseIni(text, f).global ?? {};
    } catch (e) {
      throw new CliError(e instanceof Error ? e.message : String(e));
    }
    for (const [k, v] of Object.entries(global)) {
      g[k] = v;
      from[k] = f;
    }
  }
  const last = files[files.length - 1]!;
  for (const k of ['xmlrpc_uri', 'realm']) if (!g[k]) throw new CliError(`${last}: missing "${k}" in [global]`);
  let url: URL;
  try {
    url = new URL(g.xmlrpc_uri!);
  } catch {
    throw new CliError(`${from.xmlrpc_uri}: xmlrpc_uri is not a URL`);
  }
  if (url.protocol !== 'https:' || !url.hostname) throw new CliError(`${from.xmlrpc_uri}: xmlrpc_uri must be an https:// URL with a host`);
  const caFile = g.ca_file ? resolve(dirname(from.ca_file!), g.ca_file) : join(dirname(from.xmlrpc_uri!), 'ca.crt');
  const dnsServer = env.DIRID_DNS_SERVER || g.dns_server;
  return {
    xmlrpcUri: url.toString(),
    realm: g.realm!,
    domain: g.domain || g.realm!.toLowerCase(),
    ...(g.server ? { server: g.server } : {}),
    caFile,
    ...(dnsServer ? { dnsServer } : {}),
    source: last,
  };
}

/** Per-user cache directory: `$XDG_CACHE_HOME/dirid` (an absolute path, per the XDG spec), else `~/.cache/dirid`. */
export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'dirid');
}
