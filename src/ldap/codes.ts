/**
 * The numbers of the LDAP wire (docs/ldap.md): result codes with their
 * IANA / RFC 4511 §4.1.9 names, the APPLICATION tags of the protocol
 * operations (RFC 4511 §4.2 to §4.14), the search enumerations (§4.5.1) and
 * the object identifiers of the extended operations, notices and controls
 * we speak. Every other file names these through the tables, never as bare
 * numbers.
 */

/** resultCode values (RFC 4511 §4.1.9 and Appendix A), by their registered names. */
export const ResultCode = {
  success: 0,
  operationsError: 1,
  protocolError: 2,
  timeLimitExceeded: 3,
  sizeLimitExceeded: 4,
  compareFalse: 5,
  compareTrue: 6,
  authMethodNotSupported: 7,
  strongerAuthRequired: 8,
  referral: 10,
  adminLimitExceeded: 11,
  unavailableCriticalExtension: 12,
  confidentialityRequired: 13,
  saslBindInProgress: 14,
  noSuchAttribute: 16,
  undefinedAttributeType: 17,
  inappropriateMatching: 18,
  constraintViolation: 19,
  attributeOrValueExists: 20,
  invalidAttributeSyntax: 21,
  noSuchObject: 32,
  aliasProblem: 33,
  invalidDNSyntax: 34,
  aliasDereferencingProblem: 36,
  inappropriateAuthentication: 48,
  invalidCredentials: 49,
  insufficientAccessRights: 50,
  busy: 51,
  unavailable: 52,
  unwillingToPerform: 53,
  loopDetect: 54,
  namingViolation: 64,
  objectClassViolation: 65,
  notAllowedOnNonLeaf: 66,
  notAllowedOnRDN: 67,
  entryAlreadyExists: 68,
  objectClassModsProhibited: 69,
  affectsMultipleDSAs: 71,
  other: 80,
} as const;

export type ResultCodeName = keyof typeof ResultCode;
export type ResultCode = (typeof ResultCode)[ResultCodeName];

const RESULT_NAMES = new Map<number, ResultCodeName>(Object.entries(ResultCode).map(([k, v]) => [v, k as ResultCodeName]));

/** The registered name of a result code, or its number as text when we do not know it (for logs). */
export function resultCodeName(code: number): string {
  return RESULT_NAMES.get(code) ?? String(code);
}

/** APPLICATION tag numbers of the protocolOp CHOICE (RFC 4511 §4.2). */
export const ProtocolOp = {
  bindRequest: 0,
  bindResponse: 1,
  unbindRequest: 2,
  searchRequest: 3,
  searchResEntry: 4,
  searchResDone: 5,
  modifyRequest: 6,
  modifyResponse: 7,
  addRequest: 8,
  addResponse: 9,
  delRequest: 10,
  delResponse: 11,
  modDNRequest: 12,
  modDNResponse: 13,
  compareRequest: 14,
  compareResponse: 15,
  abandonRequest: 16,
  searchResRef: 19,
  extendedReq: 23,
  extendedResp: 24,
  intermediateResponse: 25,
} as const;

export type ProtocolOpName = keyof typeof ProtocolOp;

/** Requests a client may send, and the response type that answers each (none for unbind and abandon). */
export const RESPONSE_TO = {
  bindRequest: 'bindResponse',
  unbindRequest: null,
  searchRequest: 'searchResDone',
  modifyRequest: 'modifyResponse',
  addRequest: 'addResponse',
  delRequest: 'delResponse',
  modDNRequest: 'modDNResponse',
  compareRequest: 'compareResponse',
  abandonRequest: null,
  extendedReq: 'extendedResp',
} as const satisfies Record<string, ProtocolOpName | null>;

export type RequestOpName = keyof typeof RESPONSE_TO;

/** SearchRequest.scope (RFC 4511 §4.5.1.2). */
export const SearchScope = { baseObject: 0, singleLevel: 1, wholeSubtree: 2 } as const;
export type SearchScopeName = keyof typeof SearchScope;

/** SearchRequest.derefAliases (RFC 4511 §4.5.1.3). */
export const DerefAliases = { neverDerefAliases: 0, derefInSearching: 1, derefFindingBaseObj: 2, derefAlways: 3 } as const;
export type DerefAliasesName = keyof typeof DerefAliases;

/** Object identifiers of the extended operations and unsolicited notices we know. */
export const ExtendedOid = {
  /** RFC 3062 */
  passwordModify: '1.3.6.1.4.1.4203.1.11.1',
  /** RFC 4532 */
  whoAmI: '1.3.6.1.4.1.4203.1.11.3',
  /** RFC 4511 §4.14 */
  startTls: '1.3.6.1.4.1.1466.20037',
  /** RFC 4511 §4.4.1, sent unsolicited with messageID 0 */
  noticeOfDisconnection: '1.3.6.1.4.1.1466.20036',
} as const;

/** Object identifiers of the controls we know. */
export const ControlOid = {
  /** RFC 2696 */
  pagedResults: '1.2.840.113556.1.4.319',
  /** draft-behera-ldap-password-policy §6.1 and §6.2: the request and response controls share it */
  passwordPolicy: '1.3.6.1.4.1.42.2.27.8.5.1',
} as const;

/** The largest messageID, size and time limit: maxInt of RFC 4511 §4.1.1. */
export const MAX_INT = 2147483647;

/** The protocol version this library speaks (BindRequest.version). */
export const LDAP_VERSION = 3;
