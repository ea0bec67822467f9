/**
 * The public error registry: every error a client can see, with a stable
 * number, a name and a message template, listed in docs/errors.md. Names,
 * numbers and CLI exit codes are the wire contract and live in
 * contract/errors.ts (the client reads them there); this module adds the
 * message templates and raises them (PublicError). Anything not registered
 * reaches the wire as InternalError without detail; the detail goes to the
 * server log.
 *
 * Each transport maps a PublicError to its wire form in exactly one place
 * (rpc/errors.ts for JSON-RPC and XML-RPC, kdc/kdc-error.ts for KRB-ERROR,
 * ldap-server/errors.ts for LDAP result codes,
 * cli/errors.ts for messages and exit codes); directory failures become
 * public errors in one place too (crud.ts, mapDirectoryError).
 */
import { errorCodes, type ErrorName } from '../contract/errors.js';
import { DirectoryError } from '../directory/types.js';

export type { ErrorName };

/** The message template of each public error; `{param}` is filled from the error's params. */
const templates = {
  // 900s: protocol
  InternalError: 'an internal error has occurred',
  CommandError: "unknown command '{name}'",
  ProtocolError: 'invalid request: {reason}',
  // 1000s: authentication
  NotAuthenticated: 'Insufficient access: not authenticated',
  InvalidCredentials: 'Insufficient access: invalid user name or password',
  // an account that may not authenticate now (account/state.ts), on every way in
  AccountDisabled: 'Insufficient access: account disabled',
  AccountLocked: 'Insufficient access: account locked after too many failed logins',
  AccountExpired: 'Insufficient access: account expired',
  PasswordExpired: 'Insufficient access: password expired',
  // a host's enrolment (host-enroll) with a one-time password: one answer whatever was wrong
  EnrolmentRefused: 'Insufficient access: no such host, or its one-time password is wrong, used already or not set',
  // 2000s: authorization
  ACIError: 'Insufficient access: {info}',
  // 3000s: invocation
  ArgumentCountError: '{command} takes {expected} argument(s), {given} given',
  OptionError: "unknown option '{option}'",
  MutuallyExclusiveError: '{reason}',
  RequirementError: "'{name}' is required",
  ValidationError: "invalid '{name}': {error}",
  // 4000s: execution
  NotFound: '{reason}',
  DuplicateEntry: '{reason}',
  // user-enable of an enabled account, user-disable of a disabled one (FreeIPA's words)
  AlreadyActive: 'This entry is already enabled',
  AlreadyInactive: 'This entry is already disabled',
  AttrValueNotFound: "{attr} does not contain '{value}'",
  EmptyModlist: 'no modifications to be performed',
  DatabaseError: '{desc}',
  ObjectclassViolation: 'attribute "{attr}" not allowed',
  NotAllowedOnNonLeaf: 'Not allowed on non-leaf entry',
  ReferencedEntry: '{reason}',
  OnlyOneValueAllowed: '{attr}: Only one value allowed.',
  // the realm keeps an administrator (objects/last-admin.ts; FreeIPA's words)
  LastMemberError: '{key} cannot be deleted or disabled because it is the last member of {label} {container}',
  ProtectedEntryError: '{label} {key} cannot be deleted/modified: {reason}',
  DiscoveryError: 'OIDC discovery at {url} failed: {reason}',
} as const satisfies Record<ErrorName, string>;

export interface RegistryEntry {
  /** the stable number */
  readonly code: number;
  readonly template: string;
  /** what `dirid` exits with on this error */
  readonly exit: number;
}

/** Every public error by name: number and exit code from the contract, template from here. */
export const errorRegistry: { readonly [K in ErrorName]: RegistryEntry } = Object.fromEntries(
  (Object.keys(errorCodes) as ErrorName[]).map((name) => [name, { ...errorCodes[name], template: templates[name] }]),
) as { readonly [K in ErrorName]: RegistryEntry };

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
  if (err instanceof DirectoryError && err.code === 'unavailable') return new PublicError('DatabaseError', { desc: 'the directory database cannot be reached: try again shortly' });
  return new PublicError('InternalError');
}
