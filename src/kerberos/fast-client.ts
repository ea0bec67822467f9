/**
 * FAST on the client side (RFC 6113): armoring AS requests with a TGT (the
 * armor AP-REQ carries a fresh subkey; armor key = KRB-FX-CF2(subkey,
 * "subkeyarmor", armor ticket session key, "ticketarmor")), opening armored
 * errors and replies, the encrypted challenge for passwords, and the `idp`
 * mechanism's challenge. Used by `dirid kinit -T`.
 */
import { makeApReq } from './ap-exchange.js';
import { der, parseDer } from './asn1/der.js';
import { ArmorType, decodeFastArmoredRep, decodeFastResponse, encodeFastArmoredReq, encodeFastReq, type KrbFastResponse } from './asn1/fast.js';
import { decodeEncKdcRepPart, decodeKdcRepNode } from './asn1/kdc-rep.js';
import { encodeKdcReq, encodeKdcReqBody, type KdcReqBody } from './asn1/kdc-req.js';
import { decodeKrbError, type KrbError } from './asn1/krb-error.js';
import { encodePaEncTsEnc } from './asn1/padata.js';
import { decodePaDataList, encodeEncryptedData, type PaData } from './asn1/primitives.js';
import { KrbClientError, type Credentials } from './client.js';
import { cf2, profile, type EncryptionKey } from './crypto/index.js';
import { KeyUsage, MsgType, PaType } from './iana.js';
import { microseconds, wholeSeconds } from './time.js';

export interface ArmoredRequest {
  msg: Buffer;
  armorKey: EncryptionKey;
}

/** `innerPadata` may depend on the armor key of this very request (encrypted challenge). */
export function armoredAsReq(armor: Credentials, body: KdcReqBody, innerPadata: PaData[] | ((armorKey: EncryptionKey) => PaData[])): ArmoredRequest {
  const subkey = profile(armor.sessionKey.etype).randomKey();
  const armorKey = cf2(subkey, 'subkeyarmor', armor.sessionKey, 'ticketarmor');
  const padata = typeof innerPadata === 'function' ? innerPadata(armorKey) : innerPadata;
  const { apReq } = makeApReq({ ticket: armor.ticket, sessionKey: armor.sessionKey, client: armor.client, crealm: armor.crealm, subkey });
  const bodyRaw = encodeKdcReqBody(body);
  const p = profile(armorKey.etype);
  const fast = encodeFastArmoredReq({
    armor: { type: ArmorType.AP_REQUEST, value: apReq },
    reqChecksum: { type: p.checksumType, value: p.checksum(armorKey, KeyUsage.FAST_REQ_CHKSUM, bodyRaw) },
    encFastReq: { etype: armorKey.etype, cipher: p.encrypt(armorKey, KeyUsage.FAST_ENC, encodeFastReq({ fastOptions: 0, padata, bodyRaw })) },
  });
  return { msg: encodeKdcReq({ msgType: MsgType.AS_REQ, padata: [{ type: PaType.FX_FAST, value: fast }], body, bodyRaw }), armorKey };
}

function openFastResponse(padata: PaData[], armorKey: EncryptionKey): KrbFastResponse {
  const pa = padata.find((x) => x.type === PaType.FX_FAST);
  if (!pa) throw new KrbClientError('the KDC did not answer with FAST');
  const enc = decodeFastArmoredRep(pa.value);
  try {
    return decodeFastResponse(profile(armorKey.etype).decrypt(armorKey, KeyUsage.FAST_REP, enc.cipher));
  } catch {
    throw new KrbClientError('the armored reply does not decrypt');
  }
}

export type ArmoredReply = { kind: 'error'; error: KrbError; padata: PaData[] } | { kind: 'rep'; creds: Credentials };

/**
 * Opens the KDC's answer to an armored AS-REQ. For an AS-REP, `baseKey`
 * gives the reply key with the strengthen key (the client's long-term key,
 * or the armor key for the idp mechanism).
 */
export function processArmored(raw: Buffer, req: ArmoredRequest, body: KdcReqBody, baseKey: EncryptionKey): ArmoredReply {
  const node = parseDer(raw);
  if (node.cls === 'application' && node.tag === 30) {
    const outer = decodeKrbError(raw);
    if (!outer.eData) return { kind: 'error', error: outer, padata: [] };
    const fr = openFastResponse(decodePaDataList(parseDer(outer.eData)), req.armorKey);
    const inner = fr.padata.find((x) => x.type === PaType.FX_ERROR);
    return { kind: 'error', error: inner ? decodeKrbError(inner.value) : outer, padata: fr.padata };
  }
  const rep = decodeKdcRepNode(node);
  const fr = openFastResponse(rep.padata, req.armorKey);
  if (fr.nonce !== body.nonce) throw new KrbClientError('the FAST reply nonce does not match');
  if (!fr.finished) throw new KrbClientError('the FAST reply is not finished');
  const a = req.armorKey;
  if (!profile(a.etype).verifyChecksum(a, KeyUsage.FAST_FINISHED, rep.ticket.raw, fr.finished.ticketChecksum.value)) throw new KrbClientError('the ticket checksum in the FAST reply is wrong');
  const replyKey = fr.strengthenKey ? cf2({ etype: fr.strengthenKey.etype, value: fr.strengthenKey.value }, 'strengthenkey', baseKey, 'replykey') : baseKey;
  let part;
  try {
    part = decodeEncKdcRepPart(profile(replyKey.etype).decrypt(replyKey, KeyUsage.AS_REP_ENC_PART, rep.encPart.cipher));
  } catch {
    throw new KrbClientError('the reply does not decrypt with the reply key');
  }
  if (part.nonce !== body.nonce) throw new KrbClientError('the reply nonce does not match');
  return { kind: 'rep', creds: { client: rep.cname, crealm: rep.crealm, server: part.sname, srealm: part.srealm, sessionKey: { etype: part.key.etype, value: part.key.value }, ticket: rep.ticket, part } };
}

/** PA-ENCRYPTED-CHALLENGE for a password under FAST (RFC 6113 §5.4.6). */
export function encryptedChallenge(armorKey: EncryptionKey, longTerm: EncryptionKey): PaData {
  const ck = cf2(armorKey, 'clientchallengearmor', longTerm, 'challengelongterm');
  const now = Date.now();
  const ts = encodePaEncTsEnc({ patimestamp: wholeSeconds(now), pausec: microseconds(now) });
  return { type: PaType.ENCRYPTED_CHALLENGE, value: der(encodeEncryptedData({ etype: ck.etype, cipher: profile(ck.etype).encrypt(ck, KeyUsage.ENC_CHALLENGE_CLIENT, ts) })) };
}

export interface IdpChallenge {
  verification_uri: string;
  user_code: string;
  verification_uri_complete?: string;
}

/** The `oauth2 {json}\0` challenge of PA 152. */
export function parseIdpChallenge(value: Buffer): IdpChallenge {
  const text = value.toString('utf8').replace(/\0$/, '');
  if (!text.startsWith('oauth2 ')) throw new KrbClientError('unknown idp challenge');
  const v = JSON.parse(text.slice(7)) as IdpChallenge;
  if (typeof v.verification_uri !== 'string' || typeof v.user_code !== 'string') throw new KrbClientError('malformed idp challenge');
  return v;
}
