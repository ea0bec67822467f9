/**
 * The commands `dirid` runs itself instead of asking the server (main.ts
 * dispatches them), each with the options it takes as node:util parseArgs
 * reads them: single letters, each with a value, besides -h/--help. kinit.ts
 * parses with them; the test of the documentation's examples checks every
 * `dirid` command line it shows against them and the API schema.
 */
export const LOCAL_COMMANDS = {
  kinit: ['c', 'T', 'k'],
  klist: ['c'],
  help: [],
} as const satisfies Record<string, readonly string[]>;

