/**
 * The incoming side of a SASL security layer on a byte stream (RFC 4422
 * §3.7, docs/kerberos.md "SASL GSSAPI"): once a layer other than "none" is
 * in force, every buffer the client sends is a 4-octet big-endian length and
 * that many octets (one Wrap token). This reader cuts the stream into those
 * tokens and refuses a length over the negotiated maximum as soon as the
 * four octets are in, before keeping its body.
 */

const HEADER = 4;

export class SaslFrameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SaslFrameError';
  }
}

export class SaslFrameReader {
  private pending: Buffer = Buffer.alloc(0);

  /** `limit`: the largest token accepted (the maximum we announced in the negotiation) */
  constructor(private readonly limit: number) {}

  push(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
  }

  /** The next whole token, or undefined until more arrives; throws SaslFrameError for an oversized or empty frame. */
  next(): Buffer | undefined {
    if (this.pending.length < HEADER) return undefined;
    const size = this.pending.readUInt32BE(0);
    if (size === 0) throw new SaslFrameError('an empty SASL frame');
    if (size > this.limit) throw new SaslFrameError(`a SASL frame of ${size} octets, over the ${this.limit} agreed`);
    if (this.pending.length < HEADER + size) return undefined;
    const token = this.pending.subarray(HEADER, HEADER + size);
    this.pending = this.pending.subarray(HEADER + size);
    return token;
  }
}
