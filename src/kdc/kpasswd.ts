/**
 * The password-change service (RFC 3244, what MIT's kpasswd and kinit
 * speak; docs/kpasswd.md), on UDP and TCP beside the KDC (listener.ts, port
 * 464 by default). A request (framing in kerberos/kpasswd.ts) carries an
 * AP-REQ for kadmin/changepw, checked by the one AP-REQ verification
 * (kerberos/ap-exchange.ts) with the KDC's replay cache, and a KRB-PRIV
 * sealed with the authenticator's subkey (or the ticket's session key)
 * holding the new password: bare in version 1, in a ChangePasswdData, which
 * may name another principal, in version 0xff80. Changing one's own
 * password takes an initial ticket (from the password, not from a TGT), as
 * MIT's server requires; whether the change is allowed and what the new
 * password must be is the server's password-change rule, handed in as a
 * PasswordChanger (objects/passwd.ts), not decided here.
 *
 * Every answer is a result code and a text (iana.ts KpasswdResult): once
 * the AP-REQ is accepted, in a KRB-PRIV after an AP-REP; before, in the
 * e-data of a KRB-ERROR. A UDP datagram that is not a password-change
 * request at all is dropped; on TCP it is answered MALFORMED. Retransmitted
 * requests get the same reply (lookaside.ts). This module is the one place a
 * failure of the service becomes its wire form. Each request is logged as
 * one line, never with the password.
 */
import { randomInt } from 'node:crypto';
import { acceptApReq, ApError, makeApRep, type AcceptedAp } from '../kerberos/ap-exchange.js';
import { decodeChangePasswdData } from '../kerberos/asn1/change-passwd.js';
import { Asn1Error } from '../kerberos/asn1/der.js';
import { encodeKrbError } from '../kerberos/asn1/krb-error.js';
import { decodeEncKrbPrivPart, decodeKrbPriv, encodeEncKrbPrivPart, encodeKrbPriv } from '../kerberos/asn1/krb-priv.js';
import { principalToString } from '../kerberos/asn1/primitives.js';
import { profile, type EncryptionKey } from '../kerberos/crypto/index.js';
import { AddressType, ErrorCode, hasFlag, KeyUsage, KpasswdResult, KpasswdVersion, NameType, TicketFlag } from '../kerberos/iana.js';
import { decodeKpasswdRequest, encodeKpasswdReply, encodeKpasswdResult, KpasswdFormatError, MAX_KPASSWD_MESSAGE, type KpasswdRequest } from '../kerberos/kpasswd.js';
import { changepwPrincipal } from '../kerberos/principal.js';
import type { ReplayCache } from '../kerberos/replay-cache.js';
import { microseconds, wholeSeconds } from '../kerberos/time.js';
import { UdpTcpListener, type TcpLimits, type Transport } from './listener.js';
import { AnswerOnce } from './lookaside.js';
import { keyFor, type PrincipalDb } from './principals.js';
import { elapsedMs, errorFields, type Logger } from '../log/logger.js';

/**
 * What the password-change rule made of a request: changed; or refused
 * because the new password breaks the rule (the user may try another), the
 * client may not change that password, or anything else went wrong.
 */
export type ChangeOutcome = { outcome: 'changed' } | { outcome: 'rejected' | 'denied' | 'failed'; message: string };

/** The password-change rule: `client` (as the ticket names it) sets `target`'s password. */
export type PasswordChanger = (change: { client: string; target: string; password: string }) => Promise<ChangeOutcome>;

export interface KpasswdOptions {
  db: PrincipalDb;
  realm: string;
  /** the KDC's replay cache */
  replays: ReplayCache;
  change: PasswordChanger;
  now: () => number;
  log: Logger;
  /** the TCP bounds of its listener (listener.ts defaults) */
  tcp?: Partial<TcpLimits>;
}

/** A request answered with this result code and text (and, before an AP-REP, this KRB-ERROR code). */
class Refusal extends Error {
  constructor(
    readonly result: number,
    message: string,
    readonly krbCode: number = ErrorCode.KRB_ERR_GENERIC,
  ) {
    super(message);
    this.name = 'Refusal';
  }
}

const resultOf: Record<Exclude<ChangeOutcome['outcome'], 'changed'>, number> = {
  rejected: KpasswdResult.SOFTERROR,
  denied: KpasswdResult.ACCESSDENIED,
  failed: KpasswdResult.HARDERROR,
};

/** Our KRB-PRIV's sender address: "the acceptor" (RFC 4120 §8.1), since a server bound to every interface cannot tell which address a datagram reached. */
const ACCEPTOR_ADDRESS = { type: AddressType.DIRECTIONAL, address: Buffer.from([0, 0, 0, 1]) };

/** What the log line says about a request. */
interface Note {
  kind?: string;
  client?: string;
  target?: string;
  /** why a request was not carried out: the text its answer carries */
  reason?: string;
}

export class KpasswdService {
  private readonly answers = new AnswerOnce(1024 * 1024);
  private readonly listener: UdpTcpListener;
  private readonly changepw: string;

  constructor(private readonly o: KpasswdOptions) {
    this.changepw = changepwPrincipal(o.realm);
    this.listener = new UdpTcpListener({
      name: 'kpasswd',
      maxTcpMessage: MAX_KPASSWD_MESSAGE,
      handle: (raw, transport) => this.handle(raw, transport),
      oversize: () => this.errorReply(new Refusal(KpasswdResult.MALFORMED, 'request too long', ErrorCode.KRB_ERR_FIELD_TOOLONG)),
      log: o.log,
    }, o.tcp);
  }

  /** Answers one request; null means "send nothing". */
  handle(raw: Buffer, transport: Transport): Promise<Buffer | null> {
    return this.answers.answer(raw, this.o.now, () => this.process(raw, transport));
  }

  listen(port: number, host: string): Promise<number> {
    return this.listener.listen(port, host);
  }

  close(): Promise<void> {
    return this.listener.close();
  }

  private async process(raw: Buffer, transport: Transport): Promise<Buffer | null> {
    const started = performance.now();
    const note: Note = {};
    let outcome: number;
    let reply: Buffer | null;
    let accepted: { ap: AcceptedAp; key: EncryptionKey } | undefined;
    try {
      const req = decodeKpasswdRequest(raw);
      note.kind = req.version === KpasswdVersion.SET_PASSWORD ? 'SETPW' : req.version === KpasswdVersion.CHANGE_PASSWORD ? 'CHPW' : 'UNKNOWN';
      if (note.kind === 'UNKNOWN') throw new Refusal(KpasswdResult.BAD_VERSION, `protocol version ${req.version} is not supported (1 and 0xff80 are)`, ErrorCode.KDC_ERR_BAD_PVNO);
      accepted = await this.acceptTicket(req.apReq);
      note.client = accepted.ap.client;
      const { password, target } = this.openRequest(req, accepted.ap, accepted.key);
      note.target = target;
      if (target === accepted.ap.client && !hasFlag(accepted.ap.ticket.flags, TicketFlag.INITIAL)) {
        throw new Refusal(KpasswdResult.INITIAL_FLAG_NEEDED, 'changing your own password needs a ticket obtained with that password, not one obtained with a TGT');
      }
      const done = await this.o.change({ client: accepted.ap.client, target, password });
      outcome = done.outcome === 'changed' ? KpasswdResult.SUCCESS : resultOf[done.outcome];
      if (done.outcome !== 'changed') note.reason = done.message;
      reply = this.resultReply(accepted, outcome, done.outcome === 'changed' ? 'Password changed' : done.message);
    } catch (e) {
      const refusal = this.refusalOf(e);
      outcome = refusal.result;
      note.reason = refusal.message;
      if (accepted) reply = this.resultReply(accepted, refusal.result, refusal.message);
      else reply = e instanceof KpasswdFormatError && transport === 'udp' ? null : this.errorReply(refusal);
    }
    this.o.log.info(note.kind?.toLowerCase() ?? 'malformed', {
      transport,
      client: note.client ?? null,
      target: note.target ?? null,
      outcome: resultName(outcome),
      dropped: reply ? undefined : true,
      reason: note.reason,
      duration_ms: elapsedMs(started),
    });
    return reply;
  }

  /** The AP-REQ, for kadmin/changepw of this realm: the accepted exchange and the key the KRB-PRIVs are sealed with. */
  private async acceptTicket(apReq: Buffer): Promise<{ ap: AcceptedAp; key: EncryptionKey }> {
    let ap: AcceptedAp;
    try {
      ap = await acceptApReq(apReq, (server, etype, kvno) => this.serviceKey(server, etype, kvno), this.o.replays, this.o.now());
    } catch (e) {
      if (e instanceof ApError) throw new Refusal(KpasswdResult.AUTHERROR, e.message, e.code);
      if (e instanceof Asn1Error) throw new Refusal(KpasswdResult.MALFORMED, `malformed AP-REQ: ${e.message}`);
      throw e;
    }
    const sub = ap.authenticator.subkey;
    return { ap, key: sub ? { etype: sub.etype, value: sub.value } : ap.sessionKey };
  }

  /** The key of kadmin/changepw of the ticket's enctype and key version; null for any other server. */
  private async serviceKey(server: string, etype: number, kvno: number | undefined): Promise<EncryptionKey | null> {
    if (server !== this.changepw) return null;
    const p = await this.o.db.find(server);
    const k = p ? keyFor(p, etype) : undefined;
    if (!k) throw new ApError(`${server} has no key of enctype ${etype}`, ErrorCode.KRB_AP_ERR_NOKEY);
    if (kvno !== undefined && kvno !== k.kvno) throw new ApError('the ticket was sealed with a key version that is not current', ErrorCode.KRB_AP_ERR_BADKEYVER);
    return { etype, value: k.key };
  }

  /** The KRB-PRIV opened: the new password and whose it is. */
  private openRequest(req: KpasswdRequest, ap: AcceptedAp, key: EncryptionKey): { password: string; target: string } {
    let data: Buffer;
    try {
      const enc = decodeKrbPriv(req.krbPriv);
      if (enc.etype !== key.etype) throw new Refusal(KpasswdResult.HARDERROR, "the KRB-PRIV is not sealed with the authenticator's key");
      let plain: Buffer;
      try {
        plain = profile(key.etype).decrypt(key, KeyUsage.KRB_PRIV_ENC_PART, enc.cipher);
      } catch {
        throw new Refusal(KpasswdResult.HARDERROR, "the KRB-PRIV does not decrypt with the authenticator's key");
      }
      const part = decodeEncKrbPrivPart(plain);
      // the client numbers its KRB-PRIV from the sequence number in its authenticator
      if ((part.seqNumber ?? 0) !== (ap.authenticator.seqNumber ?? 0)) throw new Refusal(KpasswdResult.HARDERROR, "the KRB-PRIV's sequence number is not the authenticator's");
      data = part.userData;
    } catch (e) {
      if (e instanceof Asn1Error) throw new Refusal(KpasswdResult.MALFORMED, `malformed KRB-PRIV: ${e.message}`);
      throw e;
    }
    let target = ap.client;
    if (req.version === KpasswdVersion.SET_PASSWORD) {
      let c;
      try {
        c = decodeChangePasswdData(data);
      } catch (e) {
        if (e instanceof Asn1Error) throw new Refusal(KpasswdResult.MALFORMED, `malformed ChangePasswdData: ${e.message}`);
        throw e;
      }
      data = c.newPassword;
      if (c.targetName) target = principalToString(c.targetName, c.targetRealm ?? this.o.realm);
    }
    let password: string;
    try {
      password = new TextDecoder('utf-8', { fatal: true }).decode(data);
    } catch {
      throw new Refusal(KpasswdResult.SOFTERROR, 'the new password is not UTF-8 text');
    }
    return { password, target };
  }

  /** What a thrown value is answered with; anything unexpected is an internal error, its stack logged. */
  private refusalOf(e: unknown): Refusal {
    if (e instanceof Refusal) return e;
    if (e instanceof KpasswdFormatError) return new Refusal(KpasswdResult.MALFORMED, e.message);
    this.o.log.error('internal_error', errorFields(e));
    return new Refusal(KpasswdResult.HARDERROR, 'internal error');
  }

  /** AP-REP and the result in a KRB-PRIV, numbered from the AP-REP's sequence number. */
  private resultReply(accepted: { ap: AcceptedAp; key: EncryptionKey }, result: number, text: string): Buffer {
    const seqNumber = randomInt(1, 0x40000000);
    const now = this.o.now();
    const part = encodeEncKrbPrivPart({ userData: encodeKpasswdResult(result, text), timestamp: wholeSeconds(now), usec: microseconds(now), seqNumber, sAddress: ACCEPTOR_ADDRESS });
    const key = accepted.key;
    const priv = encodeKrbPriv({ etype: key.etype, cipher: profile(key.etype).encrypt(key, KeyUsage.KRB_PRIV_ENC_PART, part) });
    return encodeKpasswdReply({ version: KpasswdVersion.CHANGE_PASSWORD, apRep: makeApRep(accepted.ap, seqNumber), body: priv });
  }

  /** No AP-REP: a KRB-ERROR whose e-data is the result. */
  private errorReply(r: Refusal): Buffer {
    const now = this.o.now();
    const error = encodeKrbError({
      stime: wholeSeconds(now),
      susec: microseconds(now),
      errorCode: r.krbCode,
      realm: this.o.realm,
      sname: { nameType: NameType.PRINCIPAL, nameString: ['kadmin', 'changepw'] },
      eText: r.message,
      eData: encodeKpasswdResult(r.result, r.message),
    });
    return encodeKpasswdReply({ version: KpasswdVersion.CHANGE_PASSWORD, apRep: Buffer.alloc(0), body: error });
  }
}

function resultName(code: number): string {
  for (const [k, v] of Object.entries(KpasswdResult)) if (v === code) return k;
  return `RESULT_${code}`;
}
