/**
 * Runs OpenLDAP's command-line clients (ldapsearch, ldapwhoami,
 * ldapcompare, ldappasswd, ldapmodify) against a test realm's LDAP service.
 *
 * - The realm's CA is given through LDAPTLS_CACERT with LDAPTLS_REQCERT
 *   demand, so every TLS connection is verified. LDAPNOINIT=1 cannot be
 *   used to keep the machine's settings out: it also turns off the
 *   LDAPTLS_* variables. Instead HOME is an empty directory in the realm's
 *   temporary directory (no ~/.ldaprc), and the variables override /etc/ldap/ldap.conf.
 * - The test realm's host name is `localhost`. libldap replaces a host
 *   named `localhost` by the machine's own name (gethostname) when it
 *   checks the server's certificate and when it names the SASL service;
 *   `init` puts the machine's name in the certificate and, for a realm on
 *   localhost, creates ldap/<machine name> too, so the tools run as a user
 *   would run them, with nothing changed around them.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runTool, type ToolResult } from './mit-tools.js';
import type { TestRealm } from './realm.js';

export interface LdapTools {
  /** runs `tool args...` with the realm's TLS settings; `env` adds to them (KRB5CCNAME...) */
  run(tool: string, args: string[], options?: { env?: NodeJS.ProcessEnv; stdin?: string }): Promise<ToolResult>;
  /** the environment the tools run with */
  env: NodeJS.ProcessEnv;
}

export function ldapTools(realm: TestRealm): LdapTools {
  const home = join(realm.dataDir, 'ldap-home');
  mkdirSync(home, { recursive: true });
  const data = join(realm.dataDir, 'realm');
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    LDAPTLS_CACERT: join(data, 'ca.crt'),
    LDAPTLS_REQCERT: 'demand',
    KRB5_CONFIG: join(data, 'krb5.conf'),
  };
  return {
    env,
    run: (tool, args, options = {}) => runTool(tool, args, { ...env, ...options.env }, options.stdin),
  };
}
