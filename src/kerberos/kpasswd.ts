/**
 * The password-change protocol's framing (RFC 3244 §2, the same on UDP and,
 * after the 4-byte length every Kerberos TCP message has, on TCP), for both
 * sides. A request is: its whole length (2 bytes, big-endian), the protocol
 * version (1: the KRB-PRIV holds the new password itself, as MIT's kpasswd
 * and kinit send it; 0xff80: it holds a ChangePasswdData, which may name
 * another principal), the AP-REQ's length and the AP-REQ, then the
 * KRB-PRIV. A reply has the same header with version 1 and carries an
 * AP-REP and a KRB-PRIV whose data is the result: a 2-byte result code
 * (iana.ts KpasswdResult) and a UTF-8 text; or, with an AP-REP length of
 * 0, a KRB-ERROR whose e-data is that result.
 */

/** A message that is not a password-change request or reply at all. */
export class KpasswdFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KpasswdFormatError';
  }
}

const HEADER = 6;
/** the length field is 16 bits */
export const MAX_KPASSWD_MESSAGE = 0xffff;

export interface KpasswdRequest {
  version: number;
  apReq: Buffer;
  krbPriv: Buffer;
}

export interface KpasswdReply {
  version: number;
  /** empty when `body` is a KRB-ERROR */
  apRep: Buffer;
  /** KRB-PRIV after an AP-REP, else KRB-ERROR */
  body: Buffer;
}

function frame(version: number, first: Buffer, rest: Buffer): Buffer {
  const length = HEADER + first.length + rest.length;
  if (length > MAX_KPASSWD_MESSAGE || first.length > 0xffff) throw new KpasswdFormatError('message too long for its 16-bit length');
  const head = Buffer.alloc(HEADER);
  head.writeUInt16BE(length, 0);
  head.writeUInt16BE(version, 2);
  head.writeUInt16BE(first.length, 4);
  return Buffer.concat([head, first, rest]);
}

/** The header's three fields, checked against the message's size; the AP message and what follows it. */
function unframe(raw: Buffer, what: string): { version: number; first: Buffer; rest: Buffer } {
  if (raw.length < HEADER) throw new KpasswdFormatError(`${what} is truncated`);
  if (raw.readUInt16BE(0) !== raw.length) throw new KpasswdFormatError(`${what} length field does not match its size`);
  const firstLength = raw.readUInt16BE(4);
  if (HEADER + firstLength > raw.length) throw new KpasswdFormatError(`${what} is truncated in its AP message`);
  return { version: raw.readUInt16BE(2), first: raw.subarray(HEADER, HEADER + firstLength), rest: raw.subarray(HEADER + firstLength) };
}

export function encodeKpasswdRequest(r: KpasswdRequest): Buffer {
  return frame(r.version, r.apReq, r.krbPriv);
}

/** The parts of a request; the version is not judged here (the service answers an unknown one). */
export function decodeKpasswdRequest(raw: Buffer): KpasswdRequest {
  const { version, first, rest } = unframe(raw, 'request');
  if (first.length === 0) throw new KpasswdFormatError('request has no AP-REQ');
  if (rest.length === 0) throw new KpasswdFormatError('request has no KRB-PRIV');
  return { version, apReq: first, krbPriv: rest };
}

export function encodeKpasswdReply(r: KpasswdReply): Buffer {
  return frame(r.version, r.apRep, r.body);
}

export function decodeKpasswdReply(raw: Buffer): KpasswdReply {
  const { version, first, rest } = unframe(raw, 'reply');
  if (rest.length === 0) throw new KpasswdFormatError('reply has no KRB-PRIV or KRB-ERROR');
  return { version, apRep: first, body: rest };
}

/** The result as a reply carries it: the code, then the text in UTF-8. */
export function encodeKpasswdResult(code: number, text: string): Buffer {
  const head = Buffer.alloc(2);
  head.writeUInt16BE(code);
  return Buffer.concat([head, Buffer.from(text, 'utf8')]);
}

export function decodeKpasswdResult(data: Buffer): { code: number; text: string } {
  if (data.length < 2) throw new KpasswdFormatError('result is truncated');
  return { code: data.readUInt16BE(0), text: data.subarray(2).toString('utf8') };
}
