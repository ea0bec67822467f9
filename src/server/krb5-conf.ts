/**
 * The realm's krb5.conf for clients (MIT tools and SSSD through
 * KRB5_CONFIG), written by `init` and again by `start` with the
 * ports the KDC and the password service listen on, naming every server of
 * the realm (servers.ts), this one first, SSSD's idp plugin when it is
 * installed and the realm CA as the anchor of anonymous PKINIT; the text is
 * the one a joined host gets (host/krb5-conf.ts).
 */
import { existsSync } from 'node:fs';
import type { ServerConfig } from './config.js';
import { writeFileAtomic, type DataPaths } from './data-paths.js';
import { krb5ConfText } from '../host/krb5-conf.js';
import { SSSD_IDP_PLUGIN } from '../host/realm-facts.js';
import type { InitStep } from './init-step.js';

/** Where clients reach one server's KDC and password service. */
export interface KerberosAddress {
  hostname: string;
  kdc: number;
  kpasswd: number;
}

export function writeKrb5Conf(paths: DataPaths, config: ServerConfig, servers: readonly KerberosAddress[]): void {
  writeFileAtomic(
    paths.krb5Conf,
    krb5ConfText({
      realm: config.realm,
      domain: config.domain,
      servers,
      pkinitAnchors: paths.caCert,
      // kinit needs the plugin to answer the idp pre-authentication; name it when it is installed
      ...(existsSync(SSSD_IDP_PLUGIN) ? { idpPlugin: SSSD_IDP_PLUGIN } : {}),
      writtenBy: `Written by dirid-server for realm ${config.realm}; usable as KRB5_CONFIG.`,
    }),
  );
}

/** The init step that writes krb5.conf with the configured ports. */
export const krb5ConfStep: InitStep = {
  name: 'krb5.conf for clients',
  async run({ paths, config }) {
    writeKrb5Conf(paths, config, [{ hostname: config.hostname, kdc: config.kdcPort, kpasswd: config.kpasswdPort }]);
  },
};
