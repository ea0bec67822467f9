/**
 * Public errors as they travel: the stable number of every named error
 * (docs/errors.md) and the exit code the `dirid` client ends with when a
 * server answers with it. The server's registry (framework/errors.ts) gives
 * these names their message templates and may not add a name of its own;
 * the client (cli/errors.ts) turns a server's error into its exit code
 * through exitCodeOf. A further transport (LDAP result codes) keys its one
 * mapping by the same names.
 */

/** Exit codes of `dirid`: 0 success, 1 any error, 2 what was named does not exist. */
export const ExitCode = { ok: 0, error: 1, notFound: 2 } as const;

/**
 * Every public error: its number (900s protocol, 1000s authentication, 2000s
 * authorization, 3000s invocation, 4000s execution) and the client's exit code.
 */
export const errorCodes = {
  // 900s: protocol
  InternalError: { code: 903, exit: ExitCode.error },
  CommandError: { code: 905, exit: ExitCode.error },
  ProtocolError: { code: 909, exit: ExitCode.error },
  // 1000s: authentication
  NotAuthenticated: { code: 1001, exit: ExitCode.error },
  InvalidCredentials: { code: 1002, exit: ExitCode.error },
  AccountDisabled: { code: 1004, exit: ExitCode.error },
  AccountLocked: { code: 1005, exit: ExitCode.error },
  AccountExpired: { code: 1006, exit: ExitCode.error },
  PasswordExpired: { code: 1007, exit: ExitCode.error },
  EnrolmentRefused: { code: 1010, exit: ExitCode.error },
  // 2000s: authorization
  ACIError: { code: 2100, exit: ExitCode.error },
  // 3000s: invocation
  ArgumentCountError: { code: 3002, exit: ExitCode.error },
  OptionError: { code: 3004, exit: ExitCode.error },
  MutuallyExclusiveError: { code: 3005, exit: ExitCode.error },
  RequirementError: { code: 3007, exit: ExitCode.error },
  ValidationError: { code: 3009, exit: ExitCode.error },
  // 4000s: execution
  NotFound: { code: 4001, exit: ExitCode.notFound },
  DuplicateEntry: { code: 4002, exit: ExitCode.error },
  AlreadyActive: { code: 4009, exit: ExitCode.error },
  AlreadyInactive: { code: 4010, exit: ExitCode.error },
  AttrValueNotFound: { code: 4022, exit: ExitCode.error },
  EmptyModlist: { code: 4202, exit: ExitCode.error },
  DatabaseError: { code: 4203, exit: ExitCode.error },
  ObjectclassViolation: { code: 4205, exit: ExitCode.error },
  NotAllowedOnNonLeaf: { code: 4207, exit: ExitCode.error },
  ReferencedEntry: { code: 4210, exit: ExitCode.error },
  OnlyOneValueAllowed: { code: 4305, exit: ExitCode.error },
  LastMemberError: { code: 4308, exit: ExitCode.error },
  ProtectedEntryError: { code: 4309, exit: ExitCode.error },
  DiscoveryError: { code: 4330, exit: ExitCode.error },
} as const satisfies Record<string, { code: number; exit: number }>;

export type ErrorName = keyof typeof errorCodes;

const exitByCode = new Map<number, number>(Object.values(errorCodes).map((e) => [e.code, e.exit]));

/** The exit code for an error number a server sent; 1 for a number this client does not know. */
export function exitCodeOf(code: number): number {
  return exitByCode.get(code) ?? ExitCode.error;
}
