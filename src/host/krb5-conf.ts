/**
 * krb5.conf for the realm's clients: the text `dirid-server` writes into its
 * data directory (usable as KRB5_CONFIG) and `dirid join` writes as a host's
 * /etc/krb5.conf. It names every server's KDC and password service (the
 * preferred one first), maps the domain to the realm, turns off DNS
 * look-ups of KDCs and realms, names the realm CA as the anchor of
 * anonymous PKINIT (`kinit -n`), and, when given, SSSD's idp client plugin
 * (Debian's sssd-idp ships a snippet naming the wrong directory and its
 * krb5.conf has no includedir).
 */
import { hostPort, USUAL_PORTS } from './realm-facts.js';

export interface Krb5ConfInput {
  realm: string;
  domain: string;
  servers: ReadonlyArray<{ hostname: string; kdc: number; kpasswd: number }>;
  /** the realm CA's PEM file */
  pkinitAnchors?: string;
  /** the idp client plugin's module path */
  idpPlugin?: string;
  /** the first line's comment */
  writtenBy: string;
}

export function krb5ConfText(o: Krb5ConfInput): string {
  const kdc = o.servers.map((s) => `  kdc = ${hostPort(s.hostname, s.kdc, USUAL_PORTS.kdc)}\n`).join('');
  const kpasswd = o.servers.map((s) => `  kpasswd_server = ${hostPort(s.hostname, s.kpasswd, USUAL_PORTS.kpasswd)}\n`).join('');
  const hosts = [...new Set(o.servers.map((s) => s.hostname))].map((h) => ` ${h} = ${o.realm}\n`).join('');
  const plugins = o.idpPlugin ? `\n[plugins]\n clpreauth = {\n  module = idp:${o.idpPlugin}\n }\n` : '';
  return `# ${o.writtenBy}
[libdefaults]
 default_realm = ${o.realm}
 dns_lookup_kdc = false
 dns_lookup_realm = false
 rdns = false
 dns_canonicalize_hostname = false
 ticket_lifetime = 24h
 forwardable = true

[realms]
 ${o.realm} = {
${kdc}${kpasswd}${o.pkinitAnchors ? `  pkinit_anchors = FILE:${o.pkinitAnchors}\n` : ''} }

[domain_realm]
 .${o.domain} = ${o.realm}
 ${o.domain} = ${o.realm}
${hosts}${plugins}`;
}
