/**
 * The commands `dirid` runs itself instead of asking the server (main.ts
 * dispatches them), each with the options it takes as node:util parseArgs
 * reads them: LOCAL_COMMANDS those with a value (a single letter is `-x`,
 * a longer name `--name`), LOCAL_FLAGS those without, besides -h/--help.
 * kinit.ts and join.ts parse with them; the test of the documentation's
 * examples checks every `dirid` command line it shows against them and the
 * API schema.
 */
export const LOCAL_COMMANDS = {
  kinit: ['c', 'T', 'k'],
  klist: ['c'],
  join: ['server', 'domain', 'realm', 'hostname', 'ca-file', 'ca-fingerprint', 'principal'],
  leave: [],
  help: [],
} as const satisfies Record<string, readonly string[]>;

export const LOCAL_FLAGS = {
  join: ['otp', 'mkhomedir', 'install-packages', 'dry-run'],
  leave: ['dry-run'],
} as const satisfies Partial<Record<keyof typeof LOCAL_COMMANDS, readonly string[]>>;
