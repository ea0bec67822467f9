/**
 * `dirid`: the command-line client. Global options: `-c FILE` (client
 * configuration), `-v` (progress lines), `--help`, `--version`. Kerberos commands
 * (`kinit`, `klist`) and a host's `join` and `leave` are local; every other command comes from the
 * server's API schema and is sent over HTTPS with the user's Kerberos
 * ticket (or the session cookie it earned).
 */
import { readFileSync } from 'node:fs';
import { listCommands, runApiCommand, type GlobalOptions } from './api-command.js';
import { ExitCode } from '../contract/errors.js';
import { CliError } from './errors.js';

const USAGE = `usage: dirid [-c FILE] [-v] COMMAND [ARGS] [OPTIONS]

  dirid kinit [-c CCACHE] PRINCIPAL                    get a ticket-granting ticket with a password
  dirid kinit [-c CCACHE] -k KEYTAB PRINCIPAL          ... armored with a ticket from a host keytab
  dirid kinit [-c CCACHE] -T ARMOR_CCACHE PRINCIPAL    ... armored with the TGT in ARMOR_CCACHE
  dirid klist [-c CCACHE]                              list a credential cache
  dirid join [--server HOST] --ca-file FILE [...]      join this host to the realm (as root; dirid join --help)
  dirid leave                                          undo dirid join
  dirid help                                           list the server's commands
  dirid help COMMAND                                   help for one command (also: dirid COMMAND --help)

Global options:
  -c FILE      client configuration (default: /etc/dirid/default.conf, ~/.dirid/default.conf)
  -v           print progress lines on standard error
  -h, --help   this text
  --version    the client's version
`;

/** The client's version: package.json's, two levels above both dist/cli/main.js and dist/cli-bundle/main.js. */
function version(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** The usage and the server's commands (from the cached schema or the server); the usage alone when they cannot be had. */
async function help(g: GlobalOptions): Promise<number> {
  let commands: string;
  try {
    commands = await listCommands(g);
  } catch (e) {
    process.stdout.write(USAGE);
    process.stderr.write(`dirid: WARNING: cannot list the server's commands: ${e instanceof Error ? e.message : String(e)}\n`);
    return 0;
  }
  process.stdout.write(USAGE + '\nCommands:\n' + commands);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const g: GlobalOptions = { verbose: false };
  let i = 0;
  for (; i < argv.length; i++) {
    const t = argv[i]!;
    if (t === '-v' || t === '--verbose') g.verbose = true;
    else if (t === '-c') {
      g.config = argv[++i];
      if (g.config === undefined) throw new CliError('-c needs a FILE');
    } else if (t.startsWith('--config=')) g.config = t.slice(9);
    else if (t === '-h' || t === '--help') return help(g);
    else if (t === '--version') {
      process.stdout.write(`dirid ${version()}\n`);
      return 0;
    } else if (t.startsWith('-')) throw new CliError(`unknown option '${t}' (dirid --help lists the options that go before the command)`);
    else break;
  }
  const [cmd, ...rest] = argv.slice(i);
  // the local commands (local-commands.ts), then the server's
  switch (cmd) {
    case 'kinit':
      return (await import('./kinit.js')).kinitCommand(rest);
    case 'klist':
      return (await import('./kinit.js')).klistCommand(rest);
    case 'join':
      return (await import('./join.js')).joinCommand(rest);
    case 'leave':
      return (await import('./join.js')).leaveCommand(rest);
    case undefined:
      // no command: a usage error
      process.stderr.write(USAGE);
      return 1;
    case 'help':
      if (rest[0] !== undefined) return runApiCommand(g, rest[0], ['--help']);
      return help(g);
    default:
      return runApiCommand(g, cmd, rest);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const msg = err instanceof Error ? err.message : String(err);
    process.stderr.write(`dirid: ERROR: ${msg}\n`);
    process.exit(err instanceof CliError ? err.exitCode : ExitCode.error);
  },
);
