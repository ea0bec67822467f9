/**
 * The realm's krb5.conf for clients (MIT tools and SSSD through
 * KRB5_CONFIG): its text, written by `init` and again by `start` with the
 * ports the KDC and the password service listen on, naming every server of
 * the realm (servers.ts), this one first, SSSD's idp plugin when it is
 * installed and the realm CA as the anchor of anonymous PKINIT.
 */
import { existsSync } from 'node:fs';
import { hostPort, writeFileAtomic, type DataPaths, type ServerConfig } from './config.js';
import type { InitStep } from './init-step.js';

/** Where clients reach one server's KDC and password service. */
export interface KerberosAddress {
  hostname: string;
  kdc: number;
  kpasswd: number;
}

/**
 * The text; `pkinitAnchors` names the realm CA's PEM, which MIT's client
 * trusts for the KDC's certificate in anonymous PKINIT (`kinit -n`).
 */
export function krb5ConfText(config: ServerConfig, servers: readonly KerberosAddress[], extra = '', pkinitAnchors?: string): string {
  const kdc = servers.map((s) => `  kdc = ${hostPort(s.hostname, s.kdc, 88)}\n`).join('');
  const kpasswd = servers.map((s) => `  kpasswd_server = ${hostPort(s.hostname, s.kpasswd, 464)}\n`).join('');
  const hosts = [...new Set(servers.map((s) => s.hostname))].map((h) => ` ${h} = ${config.realm}\n`).join('');
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
${kdc}${kpasswd}${pkinitAnchors ? `  pkinit_anchors = FILE:${pkinitAnchors}\n` : ''} }

[domain_realm]
 .${config.domain} = ${config.realm}
 ${config.domain} = ${config.realm}
${hosts}${extra}`;
}

/** SSSD's idp client plugin as Debian installs it (docs/kerberos.md). */
export const SSSD_IDP_PLUGIN = '/usr/lib/x86_64-linux-gnu/sssd/modules/sssd_krb5_idp_plugin.so';

export function writeKrb5Conf(paths: DataPaths, config: ServerConfig, servers: readonly KerberosAddress[]): void {
  // kinit needs the plugin to answer the idp pre-authentication; name it when it is installed
  const plugins = existsSync(SSSD_IDP_PLUGIN) ? `\n[plugins]\n clpreauth = {\n  module = idp:${SSSD_IDP_PLUGIN}\n }\n` : '';
  writeFileAtomic(paths.krb5Conf, krb5ConfText(config, servers, plugins, paths.caCert));
}

/** The init step that writes krb5.conf with the configured ports. */
export const krb5ConfStep: InitStep = {
  name: 'krb5.conf for clients',
  async run({ paths, config }) {
    writeKrb5Conf(paths, config, [{ hostname: config.hostname, kdc: config.kdcPort, kpasswd: config.kpasswdPort }]);
  },
};
