/**
 * `dirid`: the command-line client. Kerberos commands (`kinit`, `klist`)
 * are local; the API commands reach the server over HTTPS with the user's
 * Kerberos ticket (see the issue on the Kerberos-authenticated client).
 */
import { CliError, kinitCommand, klistCommand } from './kinit.js';

const USAGE = `usage: dirid [-c FILE] [-v] COMMAND [ARGS] [OPTIONS]

Kerberos:
  kinit [-c CCACHE] PRINCIPAL   get a ticket-granting ticket with a password
  klist [-c CCACHE]             list the tickets in a credential cache
`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case 'kinit':
      return kinitCommand(rest);
    case 'klist':
      return klistCommand(rest);
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      throw new CliError(`unknown command '${cmd}'; the API commands need the Kerberos-authenticated client, which is not built yet`, 2);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`dirid: ERROR: ${msg}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
  },
);
