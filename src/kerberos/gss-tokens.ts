/**
 * Per-message tokens of the Kerberos GSS-API mechanism (RFC 4121 §4.2): MIC
 * tokens (TOK_ID 04 04) and Wrap tokens (TOK_ID 05 04), with and without
 * confidentiality, built and checked without state. Which key protects a
 * token (the acceptor's subkey once it sent one, else the initiator's subkey,
 * else the ticket's session key), which key usage (22 to 25) and which flags
 * follow from the sender's role; the caller keeps the sequence numbers
 * (gss-context.ts does for a context). Every malformed, reflected or forged
 * token is refused with a {@link GssError}. docs/kerberos.md describes the
 * formats.
 */
import { KrbCryptoError, profile, type EncryptionKey, type EnctypeProfile } from './crypto/index.js';
import { KeyUsage } from './iana.js';

/** Why a GSS operation failed; named after the GSS-API major status it stands for. */
export type GssErrorCode =
  /** not a token of the expected kind, or one whose fields are inconsistent */
  | 'DEFECTIVE_TOKEN'
  /** the checksum or the encryption does not verify: forged, altered, or under another key */
  | 'BAD_SIG'
  /** a token that claims to come from our own side (a reflected token) */
  | 'BAD_DIRECTION'
  /** a sequence number other than the next one expected (replay, loss or reordering) */
  | 'SEQUENCE'
  /** a GSS token of a mechanism other than Kerberos */
  | 'BAD_MECH'
  /** the AP-REQ was refused (see krbCode: bad ticket, skew, replay, not our service) */
  | 'REJECTED'
  /** something the token asks for that this implementation does not do */
  | 'UNAVAILABLE'
  /** the context's ticket has expired */
  | 'CONTEXT_EXPIRED'
  /** a caller's mistake (a sequence number out of range) */
  | 'BAD_ARGUMENT';

export class GssError extends Error {
  constructor(
    message: string,
    readonly code: GssErrorCode,
    /** the KRB_AP_ERR code when an AP-REQ was refused */
    readonly krbCode?: number,
  ) {
    super(message);
    this.name = 'GssError';
  }
}

/** Token ids of the per-message tokens. */
export const PerMessageTokId = { MIC: 0x0404, WRAP: 0x0504 } as const;

/** Bits of the Flags octet (RFC 4121 §4.2.2); the others are ignored on receipt. */
export const TokenFlag = { SENT_BY_ACCEPTOR: 0x01, SEALED: 0x02, ACCEPTOR_SUBKEY: 0x04 } as const;

export type GssRole = 'initiator' | 'acceptor';

/** The keys of an established context, seen from one side. */
export interface TokenKeys {
  /** our side: decides the usages and the SentByAcceptor flag we send and expect */
  role: GssRole;
  /** the initiator's subkey from the authenticator, or the ticket's session key when it sent none */
  initiatorKey: EncryptionKey;
  /** the subkey the acceptor sent in its AP-REP; once there, it protects every token in both directions */
  acceptorSubkey?: EncryptionKey;
}

const HEADER = 16;
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

const sealUsage = (sender: GssRole) => (sender === 'acceptor' ? KeyUsage.GSS_ACCEPTOR_SEAL : KeyUsage.GSS_INITIATOR_SEAL);
const signUsage = (sender: GssRole) => (sender === 'acceptor' ? KeyUsage.GSS_ACCEPTOR_SIGN : KeyUsage.GSS_INITIATOR_SIGN);
const peerOf = (role: GssRole): GssRole => (role === 'acceptor' ? 'initiator' : 'acceptor');

/** The key and flags of what we send. */
function sending(keys: TokenKeys, sealed: boolean): { key: EncryptionKey; p: EnctypeProfile; flags: number } {
  const key = keys.acceptorSubkey ?? keys.initiatorKey;
  const flags = (keys.role === 'acceptor' ? TokenFlag.SENT_BY_ACCEPTOR : 0) | (sealed ? TokenFlag.SEALED : 0) | (keys.acceptorSubkey ? TokenFlag.ACCEPTOR_SUBKEY : 0);
  return { key, p: profile(key.etype), flags };
}

/** Checks the direction flag of a received token and picks the key its AcceptorSubkey flag names. */
function receiving(keys: TokenKeys, flags: number): { key: EncryptionKey; p: EnctypeProfile } {
  const fromAcceptor = (flags & TokenFlag.SENT_BY_ACCEPTOR) !== 0;
  if (fromAcceptor !== (keys.role === 'initiator')) throw new GssError(`a token sent by the ${keys.role}, as we are: reflected`, 'BAD_DIRECTION');
  let key = keys.initiatorKey;
  if (flags & TokenFlag.ACCEPTOR_SUBKEY) {
    if (!keys.acceptorSubkey) throw new GssError('a token under an acceptor subkey, but the acceptor sent none', 'DEFECTIVE_TOKEN');
    key = keys.acceptorSubkey;
  }
  return { key, p: profile(key.etype) };
}

function checkSeq(seq: number): void {
  if (!Number.isSafeInteger(seq) || seq < 0) throw new GssError('sequence number out of range', 'BAD_ARGUMENT');
}

function readSeq(token: Buffer): number {
  const seq = token.readBigUInt64BE(8);
  if (seq > BigInt(MAX_SEQ)) throw new GssError('sequence number beyond 2^53', 'SEQUENCE');
  return Number(seq);
}

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

/** The last `n` bytes moved to the front (what a sender does with a right rotation count). */
function rotateRight(data: Buffer, n: number): Buffer {
  if (data.length === 0) return data;
  const k = n % data.length;
  return k === 0 ? data : Buffer.concat([data.subarray(data.length - k), data.subarray(0, data.length - k)]);
}

function rotateLeft(data: Buffer, n: number): Buffer {
  if (data.length === 0) return data;
  const k = n % data.length;
  return k === 0 ? data : Buffer.concat([data.subarray(k), data.subarray(0, k)]);
}

function header(tokId: number, flags: number, seq: number, ec: number, rrc: number): Buffer {
  const h = Buffer.alloc(HEADER);
  h.writeUInt16BE(tokId, 0);
  h[2] = flags;
  if (tokId === PerMessageTokId.MIC) h.fill(0xff, 3, 8);
  else {
    h[3] = 0xff;
    h.writeUInt16BE(ec, 4);
    h.writeUInt16BE(rrc, 6);
  }
  h.writeBigUInt64BE(BigInt(seq), 8);
  return h;
}

/** A MIC token for `message` (GSS_GetMIC). */
export function getMic(keys: TokenKeys, seq: number, message: Uint8Array): Buffer {
  checkSeq(seq);
  const { key, p, flags } = sending(keys, false);
  const h = header(PerMessageTokId.MIC, flags, seq, 0, 0);
  return Buffer.concat([h, p.checksum(key, signUsage(keys.role), Buffer.concat([asBuffer(message), h]))]);
}

/** Verifies a MIC token over `message` (GSS_VerifyMIC) and returns its sequence number. */
export function verifyMic(keys: TokenKeys, message: Uint8Array, tokenBytes: Uint8Array): { seq: number } {
  const token = asBuffer(tokenBytes);
  if (token.length < HEADER) throw new GssError('MIC token shorter than its header', 'DEFECTIVE_TOKEN');
  if (token.readUInt16BE(0) !== PerMessageTokId.MIC) throw new GssError('not a MIC token', 'DEFECTIVE_TOKEN');
  for (let i = 3; i < 8; i++) if (token[i] !== 0xff) throw new GssError('MIC token filler is not FF', 'DEFECTIVE_TOKEN');
  const { key, p } = receiving(keys, token[2]!);
  const cksum = token.subarray(HEADER);
  if (cksum.length !== p.checksumBytes) throw new GssError('MIC token checksum of the wrong length', 'DEFECTIVE_TOKEN');
  if (!p.verifyChecksum(key, signUsage(peerOf(keys.role)), Buffer.concat([asBuffer(message), token.subarray(0, HEADER)]), cksum)) {
    throw new GssError('MIC does not verify', 'BAD_SIG');
  }
  return { seq: readSeq(token) };
}

export interface WrapOptions {
  /** encrypt (confidentiality) or only checksum (integrity) */
  conf: boolean;
  /** right rotation count to send (RFC 4121 §4.2.5); 0 as MIT sends, Windows sends 28 */
  rrc?: number;
  /** filler octets before the encrypted header copy (conf only); 0 as MIT sends for AES */
  ec?: number;
}

/** A Wrap token carrying `message` (GSS_Wrap). */
export function wrap(keys: TokenKeys, seq: number, message: Uint8Array, o: WrapOptions): Buffer {
  checkSeq(seq);
  const rrc = o.rrc ?? 0;
  const ec = o.conf ? (o.ec ?? 0) : 0;
  if (!Number.isInteger(rrc) || rrc < 0 || rrc > 0xffff || !Number.isInteger(ec) || ec < 0 || ec > 0xffff) throw new GssError('EC or RRC out of range', 'BAD_ARGUMENT');
  const { key, p, flags } = sending(keys, o.conf);
  const msg = asBuffer(message);
  let data: Buffer;
  let h: Buffer;
  if (o.conf) {
    // the header copy inside the ciphertext has the real EC and an RRC of 0
    const inner = header(PerMessageTokId.WRAP, flags, seq, ec, 0);
    data = p.encrypt(key, sealUsage(keys.role), Buffer.concat([msg, Buffer.alloc(ec, 0xff), inner]));
    h = header(PerMessageTokId.WRAP, flags, seq, ec, rrc);
  } else {
    // the checksum covers the message and the header with EC and RRC zero; EC then tells the checksum's length
    const cksum = p.checksum(key, sealUsage(keys.role), Buffer.concat([msg, header(PerMessageTokId.WRAP, flags, seq, 0, 0)]));
    data = Buffer.concat([msg, cksum]);
    h = header(PerMessageTokId.WRAP, flags, seq, cksum.length, rrc);
  }
  return Buffer.concat([h, rotateRight(data, rrc)]);
}

export interface Unwrapped {
  message: Buffer;
  /** whether the token was encrypted */
  conf: boolean;
  seq: number;
}

/** Opens a Wrap token (GSS_Unwrap): any RRC, any EC filler; checks direction, integrity and the header copy. */
export function unwrap(keys: TokenKeys, tokenBytes: Uint8Array): Unwrapped {
  const token = asBuffer(tokenBytes);
  if (token.length < HEADER) throw new GssError('Wrap token shorter than its header', 'DEFECTIVE_TOKEN');
  if (token.readUInt16BE(0) !== PerMessageTokId.WRAP) throw new GssError('not a Wrap token', 'DEFECTIVE_TOKEN');
  if (token[3] !== 0xff) throw new GssError('Wrap token filler is not FF', 'DEFECTIVE_TOKEN');
  const flags = token[2]!;
  const { key, p } = receiving(keys, flags);
  const ec = token.readUInt16BE(4);
  const rrc = token.readUInt16BE(6);
  const data = rotateLeft(token.subarray(HEADER), rrc);
  const usage = sealUsage(peerOf(keys.role));
  if (flags & TokenFlag.SEALED) {
    let plain: Buffer;
    try {
      plain = p.decrypt(key, usage, data);
    } catch (e) {
      if (e instanceof KrbCryptoError) throw new GssError(e.code === 'INTEGRITY' ? 'Wrap token does not decrypt' : `Wrap token: ${e.message}`, e.code === 'INTEGRITY' ? 'BAD_SIG' : 'DEFECTIVE_TOKEN');
      throw e;
    }
    if (plain.length < HEADER + ec) throw new GssError('Wrap token: EC larger than its contents', 'DEFECTIVE_TOKEN');
    const inner = plain.subarray(plain.length - HEADER);
    // the encrypted copy must match what the header says (all but RRC), or the outer header was altered
    if (!inner.subarray(0, 6).equals(token.subarray(0, 6)) || !inner.subarray(8).equals(token.subarray(8, HEADER))) {
      throw new GssError('Wrap token header differs from its encrypted copy', 'BAD_SIG');
    }
    return { message: Buffer.from(plain.subarray(0, plain.length - HEADER - ec)), conf: true, seq: readSeq(token) };
  }
  if (ec !== p.checksumBytes) throw new GssError('Wrap token: EC is not the checksum length', 'DEFECTIVE_TOKEN');
  if (data.length < ec) throw new GssError('Wrap token shorter than its checksum', 'DEFECTIVE_TOKEN');
  const message = data.subarray(0, data.length - ec);
  const signedHeader = Buffer.from(token.subarray(0, HEADER));
  signedHeader.fill(0, 4, 8);
  if (!p.verifyChecksum(key, usage, Buffer.concat([message, signedHeader]), data.subarray(data.length - ec))) {
    throw new GssError('Wrap token checksum does not verify', 'BAD_SIG');
  }
  return { message: Buffer.from(message), conf: false, seq: readSeq(token) };
}

/** Bytes a Wrap token adds to its message with our sending key (no filler, as we send). */
export function wrapOverhead(keys: TokenKeys, conf: boolean): number {
  const { p } = sending(keys, conf);
  // conf: header, confounder (one block), encrypted header copy, MAC; integrity: header and checksum
  return conf ? HEADER + 16 + HEADER + p.checksumBytes : HEADER + p.checksumBytes;
}
