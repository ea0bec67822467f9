/**
 * The one place where anything thrown on an LDAP operation becomes its wire
 * form, an LDAPResult code and diagnostic message (docs/ldap.md, "Result
 * codes of the service"): our public errors (framework/errors.ts) by name,
 * directory failures by their code, the wire layer's decode errors with the
 * code they carry, and the service's own refusals (LdapRefusal). Anything
 * else is `other` with the public InternalError message; the original goes to
 * the log only. The tables are total over their key types, so a new public
 * error or directory code does not compile until it has an LDAP answer.
 */
import { LdapDecodeError } from '../ldap/ber.js';
import { ResultCode, type ResultCodeName } from '../ldap/codes.js';
import { DirectoryError, type DirectoryErrorCode } from '../directory/types.js';
import { PublicError, toPublicError, type ErrorName } from '../framework/errors.js';
import { AuthRefusal } from '../objects/login.js';
import { errorFields, type Logger } from '../log/logger.js';

/** A refusal the service itself decides, with the result code and the message the client sees. */
export class LdapRefusal extends Error {
  constructor(
    readonly resultCode: ResultCode,
    message: string,
    /** the matchedDN of the result, when there is one to tell */
    readonly matchedDN = '',
  ) {
    super(message);
    this.name = 'LdapRefusal';
  }
}

/** Shorthand: `throw refuse('unwillingToPerform', '...')`. */
export function refuse(code: ResultCodeName, message: string): LdapRefusal {
  return new LdapRefusal(ResultCode[code], message);
}

/**
 * The LDAP code of each public error. Authentication failures are
 * invalidCredentials (unknown name or wrong password alike, RFC 4513 §6.3.1);
 * an account that may not authenticate now is unwillingToPerform, as 389 DS
 * answers for an inactivated account and SSSD reads as "locked"; an expired
 * password is invalidCredentials, as OpenLDAP's password policy answers it.
 */
const publicCodes: Record<ErrorName, ResultCodeName> = {
  InternalError: 'other',
  CommandError: 'unwillingToPerform',
  ProtocolError: 'protocolError',
  NotAuthenticated: 'insufficientAccessRights',
  InvalidCredentials: 'invalidCredentials',
  AccountDisabled: 'unwillingToPerform',
  EnrolmentRefused: 'invalidCredentials',
  AccountLocked: 'unwillingToPerform',
  AccountExpired: 'unwillingToPerform',
  PasswordExpired: 'invalidCredentials',
  ACIError: 'insufficientAccessRights',
  ArgumentCountError: 'protocolError',
  OptionError: 'protocolError',
  MutuallyExclusiveError: 'unwillingToPerform',
  RequirementError: 'protocolError',
  ValidationError: 'constraintViolation',
  NotFound: 'noSuchObject',
  DuplicateEntry: 'entryAlreadyExists',
  AlreadyActive: 'unwillingToPerform',
  AlreadyInactive: 'unwillingToPerform',
  AttrValueNotFound: 'noSuchAttribute',
  EmptyModlist: 'unwillingToPerform',
  DatabaseError: 'other',
  ObjectclassViolation: 'objectClassViolation',
  NotAllowedOnNonLeaf: 'notAllowedOnNonLeaf',
  ReferencedEntry: 'unwillingToPerform',
  OnlyOneValueAllowed: 'constraintViolation',
  LastMemberError: 'unwillingToPerform',
  ProtectedEntryError: 'unwillingToPerform',
  DiscoveryError: 'other',
};

/**
 * The LDAP code and public message of each directory failure. Its own
 * message is for the log (it may name entries the caller cannot see), so
 * the client gets these fixed words.
 */
const directoryCodes: Record<DirectoryErrorCode, [ResultCodeName, string]> = {
  noSuchObject: ['noSuchObject', 'no such entry'],
  entryAlreadyExists: ['entryAlreadyExists', 'the entry already exists'],
  objectClassViolation: ['objectClassViolation', 'object class violation'],
  constraintViolation: ['constraintViolation', 'constraint violation'],
  undefinedAttributeType: ['undefinedAttributeType', 'undefined attribute type'],
  invalidAttributeSyntax: ['invalidAttributeSyntax', 'invalid attribute syntax'],
  attributeOrValueExists: ['attributeOrValueExists', 'the value already exists'],
  noSuchAttribute: ['noSuchAttribute', 'no such attribute'],
  notAllowedOnNonLeaf: ['notAllowedOnNonLeaf', 'not allowed on a non-leaf entry'],
  invalidDNSyntax: ['invalidDNSyntax', 'invalid DN'],
  filterError: ['protocolError', 'the filter cannot be evaluated'],
  unwillingToPerform: ['unwillingToPerform', 'the directory is unwilling to perform this'],
  referenced: ['unwillingToPerform', 'the entry is referenced by other entries'],
  referenceTargetMissing: ['constraintViolation', 'a referenced entry does not exist'],
  unavailable: ['unavailable', 'the directory database cannot be reached: try again shortly'],
};

export interface LdapOutcome {
  resultCode: ResultCode;
  diagnosticMessage: string;
  matchedDN: string;
  /** the public name of what happened, for the log line */
  name: string;
}

/** The LDAP code of a public error. */
export function ldapCodeOf(e: PublicError): ResultCode {
  return ResultCode[publicCodes[e.errorName]];
}

/** Any thrown value as the LDAPResult a client may see; an unexpected one is logged through `log`. */
export function toLdapResult(err: unknown, log: Logger): LdapOutcome {
  if (err instanceof LdapRefusal) return { resultCode: err.resultCode, diagnosticMessage: err.message, matchedDN: err.matchedDN, name: 'refused' };
  if (err instanceof LdapDecodeError) return { resultCode: err.resultCode, diagnosticMessage: err.message, matchedDN: '', name: 'decode' };
  if (err instanceof AuthRefusal) err = err.publicError;
  if (err instanceof DirectoryError) {
    const [code, message] = directoryCodes[err.code];
    // the directory's own refusal is a fault worth a look (a secret that does not decrypt...)
    if (err.code === 'unwillingToPerform') log.error('directory_error', { error: err.message });
    return { resultCode: ResultCode[code], diagnosticMessage: message, matchedDN: '', name: `directory:${err.code}` };
  }
  const pub = toPublicError(err);
  if (pub !== err) log.error('internal_error', errorFields(err));
  return { resultCode: ldapCodeOf(pub), diagnosticMessage: pub.message, matchedDN: '', name: `${pub.errorName}(${pub.code})` };
}
