/**
 * What `dirid-server` takes, in one place: its usage text and each
 * command's options as node:util parseArgs reads them. main.ts parses with
 * them; the test of the documentation's examples checks every
 * `dirid-server` command line it shows against them.
 */

export const USAGE = `usage:
  dirid-server init --data-dir DIR --realm REALM --domain DOMAIN [--hostname H] --admin-password-file FILE
                    [--listen ADDR] [--https-port N] [--http-port N] [--kdc-port N] [--kpasswd-port N]
                    [--ldap-port N] [--ldaps-port N] [--idstart N] [--idmax N] [--database postgresql://…] [--san NAME]...
  dirid-server replica-prepare --data-dir DIR --hostname H2 --out DIR2 [--san NAME]...
  dirid-server start --data-dir DIR [--listen ADDR] [--https-port N] [--http-port N] [--kdc-port N] [--kpasswd-port N]
                     [--ldap-port N] [--ldaps-port N] [--idp-ca-file PEM]... [--allow-admin-password-file]
                     [--exit-with-parent] [--exit-with-pid PID]
  dirid-server backup --data-dir DIR --out FILE [--passphrase-file FILE] [--pg-dump]
  dirid-server restore --in FILE --data-dir DIR [--passphrase-file FILE] [--force]
  dirid-server check --data-dir DIR
  --listen ADDR      the address to listen on (init writes it to server.conf; default 0.0.0.0, every interface)
  --san NAME         (init, replica-prepare) another name or IP address hosts reach the server by, for its certificate; repeatable
  --idp-ca-file PEM  CA certificates (PEM) trusted for the IdPs' HTTPS endpoints besides the system's;
                     give it once per file, every file is trusted (replaces server.conf's idp_ca_file)
  --allow-admin-password-file
                     listen beyond loopback although the data directory holds admin.password
  backup             one file (mode 0600) with the store, copied online while the server runs, and the
                     realm's keys and settings; --passphrase-file encrypts it (age, scrypt); a realm on
                     PostgreSQL: --pg-dump runs pg_dump into it
  restore            a data directory from a backup; a directory holding a realm only with --force
  check              the store's integrity, and that every sealed secret opens with master.key
SIGHUP makes a running server read server.conf again (docs/operations.md)
`;

type OptionSpec = { type: 'string' | 'boolean'; multiple?: boolean };

const PORTS = {
  'https-port': { type: 'string' },
  'http-port': { type: 'string' },
  'kdc-port': { type: 'string' },
  'kpasswd-port': { type: 'string' },
  'ldap-port': { type: 'string' },
  'ldaps-port': { type: 'string' },
} as const satisfies Record<string, OptionSpec>;

/** Each command's options (besides -h/--help, which every command takes). */
export const COMMAND_OPTIONS = {
  init: {
    'data-dir': { type: 'string' },
    realm: { type: 'string' },
    domain: { type: 'string' },
    hostname: { type: 'string' },
    'admin-password-file': { type: 'string' },
    listen: { type: 'string' },
    ...PORTS,
    idstart: { type: 'string' },
    idmax: { type: 'string' },
    database: { type: 'string' },
    san: { type: 'string', multiple: true },
  },
  'replica-prepare': { 'data-dir': { type: 'string' }, hostname: { type: 'string' }, out: { type: 'string' }, san: { type: 'string', multiple: true } },
  start: {
    'data-dir': { type: 'string' },
    listen: { type: 'string' },
    ...PORTS,
    'idp-ca-file': { type: 'string', multiple: true },
    'allow-admin-password-file': { type: 'boolean' },
    'exit-with-parent': { type: 'boolean' },
    'exit-with-pid': { type: 'string', multiple: true },
  },
  backup: { 'data-dir': { type: 'string' }, out: { type: 'string' }, 'passphrase-file': { type: 'string' }, 'pg-dump': { type: 'boolean' } },
  restore: { in: { type: 'string' }, 'data-dir': { type: 'string' }, 'passphrase-file': { type: 'string' }, force: { type: 'boolean' } },
  check: { 'data-dir': { type: 'string' } },
} as const satisfies Record<string, Record<string, OptionSpec>>;

export type ServerCommand = keyof typeof COMMAND_OPTIONS;
