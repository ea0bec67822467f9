/**
 * A password-change client for tests (RFC 3244), for what MIT's tools do not
 * send: version 0xff80 requests (ChangePasswdData, a target other than
 * oneself), requests with a ticket of our making, and replies checked field
 * by field. The AS exchange for kadmin/changepw uses the library's client.
 */
import { makeApReq, verifyApRep } from '../../src/kerberos/ap-exchange.js';
import { encodeChangePasswdData } from '../../src/kerberos/asn1/change-passwd.js';
import { decodeKrbError } from '../../src/kerberos/asn1/krb-error.js';
import { decodeEncKrbPrivPart, decodeKrbPriv, encodeEncKrbPrivPart, encodeKrbPriv } from '../../src/kerberos/asn1/krb-priv.js';
import type { PrincipalName } from '../../src/kerberos/asn1/primitives.js';
import type { Ticket } from '../../src/kerberos/asn1/ticket.js';
import { asWithPassword } from '../../src/kerberos/client.js';
import { profile, type EncryptionKey } from '../../src/kerberos/crypto/index.js';
import { AddressType, KeyUsage, KpasswdVersion, NameType } from '../../src/kerberos/iana.js';
import { decodeKpasswdReply, decodeKpasswdResult, encodeKpasswdRequest } from '../../src/kerberos/kpasswd.js';
import { sendUdp } from '../../src/kerberos/transport.js';

export const CHANGEPW: PrincipalName = { nameType: NameType.PRINCIPAL, nameString: ['kadmin', 'changepw'] };

/** A ticket for kadmin/changepw and its session key. */
export interface ChangepwTicket {
  ticket: Ticket;
  sessionKey: EncryptionKey;
  client: PrincipalName;
  crealm: string;
}

/** An initial ticket for kadmin/changepw, from an AS exchange with the password (what kpasswd does first). */
export async function changepwTicket(kdcPort: number, realm: string, user: string, password: string): Promise<ChangepwTicket> {
  const client = { nameType: NameType.PRINCIPAL, nameString: [user] };
  const creds = await asWithPassword((m) => sendUdp({ host: '127.0.0.1', port: kdcPort }, m), client, realm, password, { sname: CHANGEPW, lifetimeSec: 300, forwardable: false });
  return { ticket: creds.ticket, sessionKey: creds.sessionKey, client, crealm: realm };
}

/** A request and what checking its reply needs. */
export interface KpasswdCall {
  msg: Buffer;
  /** the key both KRB-PRIVs are sealed with (the authenticator's subkey) */
  subkey: EncryptionKey;
  sessionKey: EncryptionKey;
  ctime: Date;
  cusec: number;
}

/** A request: version 1 carries the password bare, 0xff80 a ChangePasswdData (naming `target` when given). */
export function kpasswdRequest(t: ChangepwTicket, password: string, o: { version?: number; target?: { name: string; realm: string } } = {}): KpasswdCall {
  const version = o.version ?? KpasswdVersion.CHANGE_PASSWORD;
  const subkey = profile(t.sessionKey.etype).randomKey();
  const { apReq, ctime, cusec, seqNumber } = makeApReq({ ticket: t.ticket, sessionKey: t.sessionKey, client: t.client, crealm: t.crealm, subkey });
  const userData =
    version === KpasswdVersion.SET_PASSWORD
      ? encodeChangePasswdData({ newPassword: Buffer.from(password, 'utf8'), ...(o.target ? { targetName: { nameType: NameType.PRINCIPAL, nameString: [o.target.name] }, targetRealm: o.target.realm } : {}) })
      : Buffer.from(password, 'utf8');
  const part = encodeEncKrbPrivPart({ userData, seqNumber, sAddress: { type: AddressType.DIRECTIONAL, address: Buffer.from([0, 0, 0, 0]) } });
  const krbPriv = encodeKrbPriv({ etype: subkey.etype, cipher: profile(subkey.etype).encrypt(subkey, KeyUsage.KRB_PRIV_ENC_PART, part) });
  return { msg: encodeKpasswdRequest({ version, apReq, krbPriv }), subkey, sessionKey: t.sessionKey, ctime, cusec };
}

/** What a reply said: the result, and whether it came in a KRB-PRIV (after an AP-REP) or in a KRB-ERROR (and its code). */
export interface KpasswdAnswer {
  code: number;
  text: string;
  errorCode?: number;
}

/** Reads a reply; with `call`, checks the AP-REP and opens the KRB-PRIV as MIT's client does (sequence numbers included). */
export function readKpasswdReply(raw: Buffer, call?: Pick<KpasswdCall, 'subkey' | 'sessionKey' | 'ctime' | 'cusec'>): KpasswdAnswer {
  const reply = decodeKpasswdReply(raw);
  if (reply.version !== KpasswdVersion.CHANGE_PASSWORD) throw new Error(`reply version ${reply.version}`);
  if (reply.apRep.length === 0) {
    const e = decodeKrbError(reply.body);
    if (!e.eData) throw new Error('KRB-ERROR without a result');
    return { ...decodeKpasswdResult(e.eData), errorCode: e.errorCode };
  }
  if (!call) throw new Error('an AP-REP came, but nothing to check it with');
  const rep = verifyApRep(reply.apRep, call.sessionKey, call.ctime, call.cusec);
  const enc = decodeKrbPriv(reply.body);
  const part = decodeEncKrbPrivPart(profile(call.subkey.etype).decrypt(call.subkey, KeyUsage.KRB_PRIV_ENC_PART, enc.cipher));
  if ((part.seqNumber ?? 0) !== (rep.seqNumber ?? 0)) throw new Error('the KRB-PRIV is not numbered from the AP-REP');
  return decodeKpasswdResult(part.userData);
}
