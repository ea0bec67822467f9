/**
 * The realm's krb5.conf for clients (MIT tools and SSSD through
 * KRB5_CONFIG): its text, written by `init` and again by `start` with the
 * KDC port it listens on, naming SSSD's idp plugin when it is installed.
 */
import { existsSync } from 'node:fs';
import { hostPort, writeFileAtomic, type DataPaths, type ServerConfig } from './config.js';
import type { InitStep } from './init-step.js';

export function krb5ConfText(config: ServerConfig, kdcPort: number, extra = ''): string {
  const kdc = hostPort(config.hostname, kdcPort, 88);
  return `# Written by dirid-server for realm ${config.realm}; usable as KRB5_CONFIG.
[libdefaults]
 default_realm = ${config.realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
 ticket_lifetime = 24h
 forwardable = true

[realms]
 ${config.realm} = {
  kdc = ${kdc}
 }

[domain_realm]
 .${config.domain} = ${config.realm}
 ${config.domain} = ${config.realm}
 ${config.hostname} = ${config.realm}
${extra}`;
}

/** SSSD's idp client plugin as Debian installs it (docs/kerberos.md). */
export const SSSD_IDP_PLUGIN = '/usr/lib/x86_64-linux-gnu/sssd/modules/sssd_krb5_idp_plugin.so';

export function writeKrb5Conf(paths: DataPaths, config: ServerConfig, kdcPort: number): void {
  // kinit needs the plugin to answer the idp pre-authentication; name it when it is installed
  const plugins = existsSync(SSSD_IDP_PLUGIN) ? `\n[plugins]\n clpreauth = {\n  module = idp:${SSSD_IDP_PLUGIN}\n }\n` : '';
  writeFileAtomic(paths.krb5Conf, krb5ConfText(config, kdcPort, plugins));
}

/** The init step that writes krb5.conf with the configured KDC port. */
export const krb5ConfStep: InitStep = {
  name: 'krb5.conf for clients',
  async run({ paths, config }) {
    writeKrb5Conf(paths, config, config.kdcPort);
  },
};
