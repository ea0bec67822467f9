/** An error the CLI reports as `dirid: ERROR: <message>` with an exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}
