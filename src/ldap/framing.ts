/**
 * LDAP message framing over a byte stream (docs/ldap.md): every PDU is one
 * BER SEQUENCE with a definite length, so its size is known from the first
 * few octets. The framer collects socket chunks and hands out whole PDUs in
 * order, however the stream was cut; a PDU whose announced size is over the
 * configured maximum is refused as soon as its length octets have arrived,
 * before any of its body is kept. A PDU trickling in as many tiny chunks is
 * gathered into one buffer of its announced size (bounded by the maximum),
 * so a slow client cannot make us hold thousands of chunk objects.
 */
import { LdapDecodeError } from './ber.js';
import { ResultCode } from './codes.js';

/** The default largest PDU accepted, identifier and length octets included. */
export const DEFAULT_MAX_MESSAGE_SIZE = 256 * 1024;

/** A PDU announced larger than the framer's maximum. */
export class LdapMessageTooLargeError extends LdapDecodeError {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`message of ${size} octets is over the limit of ${limit}`, { resultCode: ResultCode.protocolError });
    this.name = 'LdapMessageTooLargeError';
  }
}

const SEQUENCE = 0x30;
/** identifier, first length octet and up to eight more: liblber reads lengths of up to eight octets */
const MAX_HEADER = 10;
/** pieces of one incomplete PDU kept as a list before they are copied together */
const MAX_PENDING_CHUNKS = 16;

/**
 * Use: `framer.push(chunk)`, then `framer.next()` until it returns
 * undefined. next() throws LdapDecodeError when the stream cannot be an
 * LDAP message stream (then the connection must close; the framer stays
 * failed). Not calling next() leaves PDUs buffered: a server that stops
 * pulling should also pause the socket.
 */
export class LdapFramer {
  readonly maxMessageSize: number;
  private chunks: Buffer[] = [];
  private bufferedBytes = 0;
  /** size of the PDU at the head of the buffer, once its header is read */
  private need = -1;
  /**
   * A PDU arriving in many small pieces is copied into one buffer of its
   * announced size as they come, instead of keeping a list of thousands of
   * tiny chunks; `filled` octets of it are in.
   */
  private partial: Buffer | undefined;
  private filled = 0;
  private failed: LdapDecodeError | undefined;

  constructor(options: { maxMessageSize?: number } = {}) {
    const max = options.maxMessageSize ?? DEFAULT_MAX_MESSAGE_SIZE;
    if (!Number.isSafeInteger(max) || max < 2) throw new RangeError(`maxMessageSize must be an integer of at least 2, not ${max}`);
    this.maxMessageSize = max;
  }

  /** Octets received and not yet handed out. */
  get buffered(): number {
    return this.bufferedBytes;
  }

  /** Appends a chunk as received from the socket. */
  push(chunk: Buffer): void {
    if (this.failed || chunk.length === 0) return;
    this.bufferedBytes += chunk.length;
    if (this.partial) {
      const k = Math.min(chunk.length, this.partial.length - this.filled);
      chunk.copy(this.partial, this.filled, 0, k);
      this.filled += k;
      if (k === chunk.length) return;
      chunk = chunk.subarray(k);
    }
    this.chunks.push(chunk);
  }

  /** The next whole PDU (one LDAPMessage's bytes), or undefined until more data arrives. */
  next(): Buffer | undefined {
    if (this.failed) throw this.failed;
    const partial = this.partial;
    if (partial) {
      if (this.filled < partial.length) return undefined;
      this.partial = undefined;
      this.bufferedBytes -= partial.length;
      this.need = -1;
      return partial;
    }
    try {
      if (this.need < 0) {
        const size = this.header();
        if (size < 0) return undefined;
        this.need = size;
      }
      if (this.bufferedBytes < this.need) {
        if (this.chunks.length > MAX_PENDING_CHUNKS) this.assemble();
        return undefined;
      }
      const pdu = this.take(this.need);
      this.need = -1;
      return pdu;
    } catch (e) {
      if (e instanceof LdapDecodeError) {
        this.failed = e;
        this.chunks = [];
        this.partial = undefined;
        this.bufferedBytes = 0;
      }
      throw e;
    }
  }

  /** Moves the pieces of the incomplete PDU at the head into one buffer of its size. */
  private assemble(): void {
    const partial = Buffer.allocUnsafe(this.need);
    let filled = 0;
    for (const c of this.chunks) filled += c.copy(partial, filled);
    this.chunks = [];
    this.partial = partial;
    this.filled = filled;
  }

  /** The whole size of the PDU at the head, -1 while its header is incomplete; throws when it is not acceptable. */
  private header(): number {
    if (this.bufferedBytes === 0) return -1;
    const head = this.peekHeader();
    if (head[0] !== SEQUENCE) throw new LdapDecodeError(`a message must start with a SEQUENCE (0x30), not 0x${head[0]!.toString(16).padStart(2, '0')}`);
    if (head.length < 2) return -1;
    let len = head[1]!;
    let headerSize = 2;
    if (len & 0x80) {
      const n = len & 0x7f;
      if (n === 0) throw new LdapDecodeError('indefinite length (not allowed in LDAP)');
      if (n > MAX_HEADER - 2) throw new LdapDecodeError(`length of ${n} octets`);
      if (head.length < 2 + n) return -1;
      len = 0;
      for (let i = 0; i < n; i++) len = len * 256 + head[2 + i]!;
      headerSize += n;
    }
    const size = headerSize + len;
    if (size > this.maxMessageSize) throw new LdapMessageTooLargeError(size, this.maxMessageSize);
    return size;
  }

  /** The first octets buffered, up to MAX_HEADER of them (copied only when they straddle chunks). */
  private peekHeader(): Buffer {
    const first = this.chunks[0]!;
    if (first.length >= MAX_HEADER || this.chunks.length === 1) return first;
    const out = Buffer.allocUnsafe(Math.min(this.bufferedBytes, MAX_HEADER));
    let off = 0;
    for (const c of this.chunks) {
      off += c.copy(out, off, 0, Math.min(c.length, out.length - off));
      if (off === out.length) break;
    }
    return out;
  }

  /** Removes and returns the first `n` buffered octets (a view when they lie in one chunk). */
  private take(n: number): Buffer {
    const first = this.chunks[0]!;
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let off = 0;
      while (off < n) {
        const c = this.chunks[0]!;
        const k = Math.min(c.length, n - off);
        c.copy(out, off, 0, k);
        off += k;
        if (k === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(k);
      }
    }
    this.bufferedBytes -= n;
    return out;
  }
}
