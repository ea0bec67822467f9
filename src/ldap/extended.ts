/**
 * The extended operations and the unsolicited notice we speak
 * (docs/ldap.md): the Password Modify operation of RFC 3062 (request value
 * userIdentity / oldPasswd / newPasswd, each optional; response value the
 * generated password when the server made one), Who am I? of RFC 4532 (no
 * request value; the response value is the authorization identity, bare,
 * not BER), and the Notice of Disconnection of RFC 4511 §4.4.1 (an
 * ExtendedResponse with messageID 0 sent just before the server closes).
 */
import { BerReader, LdapDecodeError, Tag, context, encodeBer, octetString, octets, sequence, utf8 } from './ber.js';
import { ExtendedOid, type ResultCode } from './codes.js';
import { encodeMessage } from './protocol.js';
import type { ExtendedRequest } from './protocol-requests.js';
import type { ExtendedResponse } from './protocol-responses.js';

/** PasswdModifyRequestValue / PasswdModifyResponseValue field tags (RFC 3062 §2). */
const PasswdModifyTag = { userIdentity: 0, oldPasswd: 1, newPasswd: 2, genPasswd: 0 } as const;
const USER_IDENTITY_ID = context(PasswdModifyTag.userIdentity, false);
const OLD_PASSWD_ID = context(PasswdModifyTag.oldPasswd, false);
const NEW_PASSWD_ID = context(PasswdModifyTag.newPasswd, false);
const GEN_PASSWD_ID = context(PasswdModifyTag.genPasswd, false);

export interface PasswordModifyRequest {
  /** whose password; absent = the bound user's (a DN or another identity form, as the client wrote it) */
  userIdentity?: string;
  oldPasswd?: Buffer;
  /** absent = the server is asked to generate one */
  newPasswd?: Buffer;
}

/** The request value (absent value = every field absent). Throws LdapDecodeError. */
export function decodePasswordModifyRequest(value: Buffer | undefined): PasswordModifyRequest {
  const out: PasswordModifyRequest = {};
  if (value === undefined) return out;
  const top = BerReader.of(value);
  const s = top.sequence(Tag.sequence, 'PasswdModifyRequestValue');
  top.finish('PasswdModifyRequestValue');
  if (s.peek() === USER_IDENTITY_ID) {
    const raw = s.octets(USER_IDENTITY_ID, 'userIdentity');
    out.userIdentity = utf8(raw, 0, raw.length, 'userIdentity');
  }
  if (s.peek() === OLD_PASSWD_ID) out.oldPasswd = s.octets(OLD_PASSWD_ID, 'oldPasswd');
  if (s.peek() === NEW_PASSWD_ID) out.newPasswd = s.octets(NEW_PASSWD_ID, 'newPasswd');
  s.finish('PasswdModifyRequestValue');
  return out;
}

export function encodePasswordModifyRequest(r: PasswordModifyRequest): Buffer {
  return encodeBer(
    sequence(
      r.userIdentity === undefined ? undefined : octetString(r.userIdentity, USER_IDENTITY_ID),
      r.oldPasswd === undefined ? undefined : octets(OLD_PASSWD_ID, r.oldPasswd),
      r.newPasswd === undefined ? undefined : octets(NEW_PASSWD_ID, r.newPasswd),
    ),
  );
}

/** The response value: a SEQUENCE holding genPasswd, or no value at all when the server generated nothing. */
export function encodePasswordModifyResponse(genPasswd: Buffer | undefined): Buffer | undefined {
  return genPasswd === undefined ? undefined : encodeBer(sequence(octets(GEN_PASSWD_ID, genPasswd)));
}

export function decodePasswordModifyResponse(value: Buffer | undefined): { genPasswd?: Buffer } {
  if (value === undefined) return {};
  const top = BerReader.of(value);
  const s = top.sequence(Tag.sequence, 'PasswdModifyResponseValue');
  top.finish('PasswdModifyResponseValue');
  const out: { genPasswd?: Buffer } = {};
  if (!s.atEnd) out.genPasswd = s.octets(GEN_PASSWD_ID, 'genPasswd');
  s.finish('PasswdModifyResponseValue');
  return out;
}

/** Checks a Who am I? request: it carries no value (RFC 4532 §2). Throws LdapDecodeError. */
export function checkWhoAmIRequest(req: ExtendedRequest): void {
  if (req.requestName !== ExtendedOid.whoAmI) throw new LdapDecodeError(`not a Who am I? request: ${req.requestName}`);
  if (req.requestValue !== undefined) throw new LdapDecodeError('Who am I? request with a value');
}

/**
 * The Who am I? response: `authzId` is `dn:<DN>`, `u:<name>`, or empty for
 * anonymous; the response has no responseName.
 */
export function whoAmIResponse(authzId: string, resultCode: ResultCode, diagnosticMessage = ''): ExtendedResponse {
  return { op: 'extendedResp', resultCode, matchedDN: '', diagnosticMessage, responseValue: Buffer.from(authzId, 'utf8') };
}

/** The bytes of a Notice of Disconnection: sent unsolicited (messageID 0), then the server closes. */
export function noticeOfDisconnection(resultCode: ResultCode, diagnosticMessage: string): Buffer {
  return encodeMessage({
    messageId: 0,
    protocolOp: { op: 'extendedResp', resultCode, matchedDN: '', diagnosticMessage, responseName: ExtendedOid.noticeOfDisconnection },
  });
}
