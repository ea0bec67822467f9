/**
 * The LDAPMessage envelope (RFC 4511 §4.1.1, docs/ldap.md): messageID,
 * one protocolOp, optional controls. Decoding a request reads the messageID
 * and the operation's tag first, so that a later problem in the same
 * message raises an LdapDecodeError that names both and the server can
 * answer that operation with its own response type; a problem before that
 * (the envelope, the messageID, an unknown or non-request operation) leaves
 * them unset, and RFC 4511 then asks for a Notice of Disconnection.
 * The request and response operations themselves are in
 * protocol-requests.ts and protocol-responses.ts.
 */
import { BerReader, LdapDecodeError, LdapEncodeError, Tag, describeTag, encodeBer, integer, sequence } from './ber.js';
import { MAX_INT, ProtocolOp, type ProtocolOpName } from './codes.js';
import { CONTROLS_ID, decodeControls, encodeControls, type Control } from './controls.js';
import { REQUEST_ID, decodeRequestOp, encodeRequestOp, type LdapRequest, type RequestDecodeOptions } from './protocol-requests.js';
import { RESPONSE_ID, decodeResponseOp, encodeCommonResponse, encodeResponseOp, type LdapResponse } from './protocol-responses.js';

export interface LdapMessage<Op> {
  /** 1..maxInt for requests and their responses; 0 only for unsolicited notifications */
  messageId: number;
  protocolOp: Op;
  /** decoders always fill it, empty when the message had none */
  controls: Control[];
}

/** What encodeMessage takes: controls may be left out. */
export type OutgoingMessage = Omit<LdapMessage<LdapRequest | LdapResponse>, 'controls'> & { controls?: readonly Control[] };

export type DecodeOptions = RequestDecodeOptions;

const OP_NAMES = new Map<number, ProtocolOpName>(Object.entries(ProtocolOp).map(([name, tag]) => [tag, name as ProtocolOpName]));
const REQUEST_IDS = new Set<number>(Object.values(REQUEST_ID));
const RESPONSE_IDS = new Set<number>(Object.values(RESPONSE_ID));

/** Reads the envelope, then `body` for the protocolOp and the controls, attaching messageID and op to any error. */
function decodeEnvelope<Op>(pdu: Uint8Array, minId: number, ops: ReadonlySet<number>, kind: string, body: (r: BerReader, id: number) => Op): LdapMessage<Op> {
  const top = BerReader.of(pdu);
  const m = top.sequence(Tag.sequence, 'LDAPMessage');
  const messageId = m.integer(Tag.integer, 'messageID', minId, MAX_INT);
  let op: ProtocolOpName | undefined;
  try {
    top.finish('LDAPMessage');
    const id = m.peek();
    if (!ops.has(id)) throw new LdapDecodeError(id < 0 ? 'LDAPMessage without a protocolOp' : `protocolOp ${describeTag(id)} is not a ${kind}`);
    op = OP_NAMES.get(id & 0x1f);
    const protocolOp = body(m, id);
    let controls: Control[] = [];
    if (!m.atEnd) controls = decodeControls(m.sequence(CONTROLS_ID, 'controls'));
    m.finish('LDAPMessage');
    return { messageId, protocolOp, controls };
  } catch (e) {
    if (e instanceof LdapDecodeError) throw new LdapDecodeError(e.message, { messageId, op, resultCode: e.resultCode });
    throw e;
  }
}

/** Decodes one PDU sent by a client (as the framer hands it out). Throws LdapDecodeError. */
export function decodeRequest(pdu: Uint8Array, options: DecodeOptions = {}): LdapMessage<LdapRequest> {
  return decodeEnvelope(pdu, 1, REQUEST_IDS, 'request', (r, id) => decodeRequestOp(r, id, options));
}

/** Decodes one PDU sent by a server (tests and clients). Throws LdapDecodeError. */
export function decodeResponse(pdu: Uint8Array): LdapMessage<LdapResponse<number>> {
  return decodeEnvelope(pdu, 0, RESPONSE_IDS, 'response', decodeResponseOp);
}

/** The bytes of one LDAPMessage, request or response. */
export function encodeMessage(m: OutgoingMessage): Buffer {
  if (!Number.isSafeInteger(m.messageId) || m.messageId < 0 || m.messageId > MAX_INT) throw new LdapEncodeError(`messageID ${m.messageId} out of range`);
  if (!m.controls || m.controls.length === 0) {
    const direct = m.protocolOp.op in RESPONSE_ID ? encodeCommonResponse(m.messageId, m.protocolOp as LdapResponse) : undefined;
    if (direct) return direct;
  }
  const op = m.protocolOp.op in REQUEST_ID ? encodeRequestOp(m.protocolOp as LdapRequest) : encodeResponseOp(m.protocolOp as LdapResponse);
  return encodeBer(sequence(integer(Tag.integer, m.messageId), op, encodeControls(m.controls)));
}
