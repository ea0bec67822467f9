/**
 * Kerberos parts of a realm: the realm container with its ticket policy,
 * krbtgt/REALM, host/<hostname> and HTTP/<hostname> with random keys, the
 * admin's keys, and the files clients use: krb5.conf (MIT tools via
 * KRB5_CONFIG) and host.keytab. Registered as init steps.
 */
import { existsSync } from 'node:fs';
import { generalizedTime } from '../directory/schema.js';
import type { Directory } from '../directory/types.js';
import { containers, hostDn, krbtgtDn, realmContainerDn, serviceDn } from '../directory/layout.js';
import { DEFAULT_MAX_LIFE, DEFAULT_MAX_RENEW } from '../account/realm-policy.js';
import { keysFromPassword, keytabFor, randomKeys, serializeKeys } from '../account/keys.js';
import { writeFileAtomic, type DataPaths, type ServerConfig } from './config.js';
import type { InitStep } from './init-step.js';

export function krb5ConfText(config: ServerConfig, kdcPort: number, extra = ''): string {
  const kdc = kdcPort === 88 ? config.hostname : `${config.hostname}:${kdcPort}`;
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

async function addPrincipals(dir: Directory, config: ServerConfig, paths: DataPaths, adminPassword: string): Promise<void> {
  const { realm, hostname } = config;
  const c = containers(dir.baseDn);
  const tgtKeys = randomKeys(1);
  const hostKeys = randomKeys(1);
  const httpKeys = randomKeys(1);
  const now = generalizedTime();
  await dir.batch([
    {
      kind: 'add',
      dn: realmContainerDn(dir.baseDn, realm),
      attrs: { objectClass: ['top', 'krbRealmContainer'], krbMaxTicketLife: [String(DEFAULT_MAX_LIFE)], krbMaxRenewableAge: [String(DEFAULT_MAX_RENEW)] },
    },
    {
      kind: 'add',
      dn: krbtgtDn(dir.baseDn, realm),
      attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: serializeKeys(tgtKeys), krbLastPwdChange: [now] },
    },
    {
      kind: 'add',
      dn: hostDn(dir.baseDn, hostname),
      attrs: { objectClass: ['top', 'dirHost', 'krbPrincipalAux'], cn: [hostname], krbPrincipalName: [`host/${hostname}@${realm}`], krbPrincipalKey: serializeKeys(hostKeys) },
    },
    {
      kind: 'add',
      dn: serviceDn(dir.baseDn, `HTTP/${hostname}@${realm}`),
      attrs: { objectClass: ['top', 'krbPrincipal', 'krbPrincipalAux'], krbPrincipalKey: serializeKeys(httpKeys) },
    },
    {
      kind: 'modify',
      dn: `uid=admin,${c.users}`,
      mods: [
        { op: 'add', attr: 'objectClass', values: ['krbPrincipalAux'] },
        { op: 'add', attr: 'krbPrincipalName', values: [`admin@${realm}`] },
        { op: 'add', attr: 'krbPrincipalKey', values: serializeKeys(keysFromPassword(adminPassword, realm, ['admin'], 1)) },
        { op: 'add', attr: 'krbLastPwdChange', values: [now] },
      ],
    },
  ]);
  writeFileAtomic(paths.hostKeytab, keytabFor(realm, ['host', hostname], hostKeys), 0o600);
}

export const kerberosInitSteps: InitStep[] = [
  {
    name: 'Kerberos realm, krbtgt, host and HTTP principals, host.keytab',
    run: ({ dir, config, paths, options }) => addPrincipals(dir, config, paths, options.adminPassword),
  },
  {
    name: 'krb5.conf for clients',
    async run({ paths, config }) {
      writeKrb5Conf(paths, config, config.kdcPort);
    },
  },
];
