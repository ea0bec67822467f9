/**
 * The public error registry: every error a client can see, with a stable
 * number, a name and a message template, listed in docs/errors.md. Numbers
 * are grouped: 900s protocol, 1000s authentication, 2000s authorization,
 * 3000s invocation, 4000s execution. Anything not registered reaches the wire
 * as InternalError without detail; the detail goes to the server log.
 *
 * Each transport maps a PublicError to its wire form in exactly one place
 * (rpc/errors.ts for JSON-RPC and XML-RPC, kdc for KRB-ERROR, cli for exit codes).
 */

export const errorRegistry = {
  // 900s: protocol
  InternalError: { code: 903, template: 'an internal error has occurred' },
  CommandError: { code: 905, template: "unknown command '{name}'" },
  ProtocolError: { code: 909, template: 'invalid request: {reason}' },
  VersionError: { code: 911, template: "API version '{client}' is newer than the server's '{server}'" },
  // 1000s: authentication
  NotAuthenticated: { code: 1001, template: 'Insufficient access: not authenticated' },
  InvalidCredentials: { code: 1002, template: 'Insufficient access: invalid user name or password' },
  SessionExpired: { code: 1003, template: 'Insufficient access: session expired' },
  // an account that may not authenticate now (account/state.ts), on every way in
  AccountDisabled: { code: 1004, template: 'Insufficient access: account disabled' },
  AccountLocked: { code: 1005, template: 'Insufficient access: account locked after too many failed logins' },
  AccountExpired: { code: 1006, template: 'Insufficient access: account expired' },
  PasswordExpired: { code: 1007, template: 'Insufficient access: password expired' },
  // 2000s: authorization
  ACIError: { code: 2100, template: 'Insufficient access: {info}' },
  // 3000s: invocation
  ArgumentCountError: { code: 3002, template: '{command} takes {expected} argument(s), {given} given' },
  OptionError: { code: 3004, template: "unknown option '{option}'" },
  MutuallyExclusiveError: { code: 3005, template: '{reason}' },
  RequirementError: { code: 3007, template: "'{name}' is required" },
  ValidationError: { code: 3009, template: "invalid '{name}': {error}" },
  // 4000s: execution
  NotFound: { code: 4001, template: '{reason}' },
  DuplicateEntry: { code: 4002, template: '{reason}' },
  AttrValueNotFound: { code: 4022, template: '{attr} does not contain \'{value}\'' },
  EmptyModlist: { code: 4202, template: 'no modifications to be performed' },
  DatabaseError: { code: 4203, template: '{desc}' },
  ObjectclassViolation: { code: 4205, template: 'attribute "{attr}" not allowed' },
  NotAllowedOnNonLeaf: { code: 4207, template: 'Not allowed on non-leaf entry' },
  ReferencedEntry: { code: 4210, template: 'This entry is being referenced by other entries' },
  OnlyOneValueAllowed: { code: 4305, template: '{attr}: Only one value allowed.' },
  AlreadyMember: { code: 4306, template: '{reason}' },
  SchemaUpToDate: { code: 4308, template: 'Schema is up to date (fingerprint \'{fingerprint}\', TTL {ttl} s)' },
  LimitsExceeded: { code: 4310, template: 'limits exceeded for this query' },
  DiscoveryError: { code: 4330, template: 'OIDC discovery at {url} failed: {reason}' },
} as const satisfies Record<string, { code: number; template: string }>;

export type ErrorName = keyof typeof errorRegistry;

/** Values substituted into a template; also sent as the error's data. */
export type ErrorParams = Record<string, string | number>;

export class PublicError extends Error {
  readonly code: number;
  readonly errorName: ErrorName;
  readonly params: ErrorParams;
  constructor(name: ErrorName, params: ErrorParams = {}) {
    const entry = errorRegistry[name];
    super(formatTemplate(entry.template, params));
    this.name = 'PublicError';
    this.errorName = name;
    this.code = entry.code;
    this.params = params;
  }
}

/** Shorthand: `throw publicError('NotFound', { reason: '...' })`. */
export function publicError(name: ErrorName, params: ErrorParams = {}): PublicError {
  return new PublicError(name, params);
}

function formatTemplate(template: string, params: ErrorParams): string {
  return template.replace(/\{(\w+)\}/g, (_m, key: string) => {
    const v = params[key];
    return v === undefined ? `{${key}}` : String(v);
  });
}

/**
 * What a transport may show for any thrown value: registered errors as they
 * are, everything else as InternalError (the caller logs the original).
 */
export function toPublicError(err: unknown): PublicError {
  if (err instanceof PublicError) return err;
  return new PublicError('InternalError');
}
