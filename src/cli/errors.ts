/**
 * Errors the CLI reports as `dirid: ERROR: <message>` with an exit code
 * (0 success, 1 error, 2 not found: contract/errors.ts). A server's error
 * becomes one in one place, serverError, whose exit code comes from the
 * error registry's numbers; every path that reports a server's answer
 * (a command, the schema, a refused login) goes through it. And the one
 * wording of node:util parseArgs' refusals for the local commands of both
 * programs (`dirid kinit`/`klist`, `dirid-server`).
 */
import { ExitCode, exitCodeOf } from '../contract/errors.js';
import type { RpcError } from '../rpc/codec/types.js';

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.error,
  ) {
    super(message);
  }
}

/** A server's error as the CLI reports it: the server's message, the exit code of its number. */
export function serverError(e: RpcError): CliError {
  return new CliError(e.message, exitCodeOf(e.code));
}

/** What node:util's parseArgs refused, in its own words: for an unknown option only the first sentence (the rest goes on about positionals after `--`). */
export function parseArgsProblem(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return (e as NodeJS.ErrnoException).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION' ? e.message.replace(/\. .*$/s, '') : e.message;
}
