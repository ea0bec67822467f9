/**
 * The one place a failure of the KDC becomes a KRB-ERROR (RFC 4120 §5.9.1),
 * whoever answers it (the exchanges through kdc-server.ts, the TCP framing):
 * a KdcError answers with its code, e-text and pre-authentication hints (or
 * its own e-data, PKINIT's TYPED-DATA); an
 * account refused by account/state.ts with the code for its state and role;
 * an AP-REQ check (kerberos/ap-exchange.ts) with its own code; a malformed
 * part of a request with KRB_ERR_GENERIC; anything else with
 * KRB_ERR_GENERIC and no detail, its stack going to the log. An error to an
 * armored request travels inside the FAST reply (RFC 6113 §5.4.3).
 */
import type { Refusal } from '../account/state.js';
import { ApError } from '../kerberos/ap-exchange.js';
import { DirectoryError } from '../directory/types.js';
import { Asn1Error, der } from '../kerberos/asn1/der.js';
import type { KdcReq } from '../kerberos/asn1/kdc-req.js';
import { encodeKrbError, type KrbError } from '../kerberos/asn1/krb-error.js';
import { encodePaDataList, type PaData } from '../kerberos/asn1/primitives.js';
import { ErrorCode, PaType } from '../kerberos/iana.js';
import { tgsPrincipalName } from '../kerberos/principal.js';
import { microseconds, wholeSeconds } from '../kerberos/time.js';
import type { CookieJar } from './cookie-jar.js';
import { AccountRefused, KdcError } from './errors.js';
import { armoredReply, type FastState } from './fast.js';
import { errorFields, type Logger } from '../log/logger.js';

/** Where the error is answered: what the KRB-ERROR names and how it travels. */
export interface ErrorScene {
  realm: string;
  now: number;
  /** the request, when it could be decoded */
  req?: KdcReq | undefined;
  /** the armor of an armored request */
  fast?: FastState | undefined;
  /** the exchange's cookie jar (in an armored conversation, bound to its armor) */
  cookies: CookieJar;
  log: Logger;
}

/** The KRB-ERROR for `thrown`, and its code (for the log line). */
export function krbErrorReply(thrown: unknown, at: ErrorScene): { code: number; reply: Buffer } {
  const { code, eText, hints, eData } = answerOf(thrown, at.log);
  const req = at.req;
  const e: KrbError = {
    stime: wholeSeconds(at.now),
    susec: microseconds(at.now),
    errorCode: code,
    realm: req?.body.realm ?? at.realm,
    sname: req?.body.sname ?? tgsPrincipalName(at.realm),
    eText,
  };
  if (req?.body.cname) {
    e.cname = req.body.cname;
    e.crealm = req.body.realm;
  }
  if (at.fast) e.eData = armoredErrorData(at.fast, eData ? { ...e, eData } : e, hints ?? [], at.cookies);
  else if (eData) e.eData = eData;
  else if (hints) e.eData = der(encodePaDataList(hints));
  return { code, reply: encodeKrbError(e) };
}

/** The code, e-text and hints a thrown value is answered with. */
function answerOf(thrown: unknown, log: Logger): { code: number; eText: string; hints?: PaData[] | undefined; eData?: Buffer | undefined } {
  if (thrown instanceof KdcError) return { code: thrown.code, eText: thrown.message, hints: thrown.hints, eData: thrown.eData };
  if (thrown instanceof AccountRefused) return { code: refusalCode(thrown.refusal, thrown.role), eText: thrown.message };
  if (thrown instanceof ApError) return { code: thrown.code, eText: thrown.message };
  if (thrown instanceof DirectoryError && thrown.code === 'unavailable') {
    log.error('directory_unavailable', { error: thrown.message });
    return { code: ErrorCode.KDC_ERR_SVC_UNAVAILABLE, eText: 'the directory database cannot be reached' };
  }
  // a malformed part of a request is the client's doing: no stack in the log
  if (!(thrown instanceof Asn1Error)) log.error('internal_error', errorFields(thrown));
  return { code: ErrorCode.KRB_ERR_GENERIC, eText: 'internal error' };
}

/**
 * An account's refusal as the KDC answers it: disabled or locked, revoked;
 * expired, NAME_EXP for a client and SERVICE_EXP for a service; password
 * expired, KEY_EXPIRED.
 */
function refusalCode(v: Refusal, role: 'client' | 'server'): number {
  switch (v.state) {
    case 'disabled':
    case 'locked':
      return role === 'client' ? ErrorCode.KDC_ERR_CLIENT_REVOKED : ErrorCode.KDC_ERR_SERVICE_REVOKED;
    case 'expired':
      return role === 'client' ? ErrorCode.KDC_ERR_NAME_EXP : ErrorCode.KDC_ERR_SERVICE_EXP;
    case 'password-expired':
      return ErrorCode.KDC_ERR_KEY_EXPIRED;
  }
}

/** RFC 6113 §5.4.3: the e-data of an armored error, the error itself and its hints sealed in the FAST reply. */
function armoredErrorData(fast: FastState, outer: KrbError, hints: PaData[], cookies: CookieJar): Buffer {
  // a mechanism's own cookie (the idp flow state) wins over the generic one, which is then not sealed at all
  const ownCookie = hints.find((h) => h.type === PaType.FX_COOKIE);
  const padata: PaData[] = [
    { type: PaType.FX_FAST, value: Buffer.alloc(0) },
    ...hints.filter((h) => h.type !== PaType.FX_FAST && h.type !== PaType.FX_COOKIE),
    ownCookie ?? cookies.seal({ kind: 'fast' }),
    { type: PaType.FX_ERROR, value: encodeKrbError(outer) },
  ];
  return der(encodePaDataList([armoredReply(fast, { padata, nonce: fast.nonce })]));
}
