/**
 * The server side of the GSSAPI SASL mechanism (RFC 4752) as a state
 * machine fed one client response at a time: first the Kerberos context
 * (gss-context.ts: AP-REQ in, AP-REP out when the client wants mutual
 * authentication, then the client's empty response), then the security-layer
 * negotiation: we send a Wrap token (integrity only) of four octets, the
 * layers we offer and the largest token we take; the client answers with a
 * Wrap token of its chosen layer, its own largest token and an optional
 * authorization identity, which must be empty or the authenticated
 * principal. Then `encode`/`decode` protect the application's bytes with the
 * chosen layer: each frame is a 4-octet length and a Wrap token.
 * docs/kerberos.md describes the exchange.
 */
import { acceptSecContext, type AcceptSecContextOptions, type GssContext } from './gss-context.js';
import { GssError, type GssErrorCode } from './gss-tokens.js';

/** Security-layer bits (RFC 4752 §3.3). */
export const SaslLayer = { NONE: 1, INTEGRITY: 2, CONFIDENTIALITY: 4 } as const;

/** The most a 3-octet size can say. */
export const MAX_SASL_BUFFER = 0xffffff;

export type SaslGssapiErrorCode =
  /** a GSS token refused (see gssCode and krbCode) */
  | 'BAD_TOKEN'
  /** data where the exchange expects an empty response */
  | 'UNEXPECTED_DATA'
  /** a layer not offered, more than one layer, or a malformed layer message */
  | 'BAD_LAYER'
  /** an authorization identity other than the authenticated principal */
  | 'AUTHZID'
  /** a step after the exchange ended or failed, or encode/decode without a layer */
  | 'STATE'
  /** a frame larger than the negotiated size */
  | 'TOO_LARGE';

export class SaslGssapiError extends Error {
  constructor(
    message: string,
    readonly code: SaslGssapiErrorCode,
    /** for BAD_TOKEN: the GSS reason */
    readonly gssCode?: GssErrorCode,
    /** for BAD_TOKEN of a refused AP-REQ: the KRB_AP_ERR code */
    readonly krbCode?: number,
  ) {
    super(message);
    this.name = 'SaslGssapiError';
  }
}

export interface SaslGssapiOptions extends AcceptSecContextOptions {
  /** the layers to offer, SaslLayer bits OR-ed: NONE alone over TLS, all three in clear */
  layers: number;
  /** the largest Wrap token we take from the client (default 65536; at most 0xFFFFFF); 0 is sent when only NONE is offered */
  maxBuffer?: number;
}

export type SaslStep =
  | { done: false; serverToken: Buffer }
  | {
      done: true;
      /** the authenticated principal, name@REALM */
      client: string;
      /** the authorization identity the client sent, when not empty (then equal to client) */
      authzid?: string;
      /** the layer in force from now on */
      layer: number;
    };

type State = 'start' | 'await-empty' | 'await-choice' | 'done' | 'failed' | 'busy';

const FRAME_HEADER = 4;

/** One SASL GSSAPI authentication, server side. */
export class SaslGssapiServer {
  private state: State = 'start';
  private emptyStart = false;
  private ctx: GssContext | undefined;
  private principal: string | undefined;
  private ticketEnd: Date | undefined;
  private chosen = 0;
  private clientMax = 0;
  private readonly offered: number;
  private readonly maxBuffer: number;

  constructor(private readonly o: SaslGssapiOptions) {
    const layers = o.layers;
    if (!Number.isInteger(layers) || layers <= 0 || layers > 7) throw new RangeError('layers must be a non-empty set of SaslLayer bits');
    this.offered = layers;
    const max = o.maxBuffer ?? 65536;
    if (!Number.isInteger(max) || max < 1 || max > MAX_SASL_BUFFER) throw new RangeError('maxBuffer must be between 1 and 0xFFFFFF');
    this.maxBuffer = layers === SaslLayer.NONE ? 0 : max;
  }

  /** the client principal, once the Kerberos context is established */
  get client(): string | undefined {
    return this.principal;
  }

  /** the end of the client's ticket, once the context is established: the layer's tokens stop working a clock skew later */
  get expires(): Date | undefined {
    return this.ticketEnd;
  }

  /** the negotiated layer (0 until done) */
  get layer(): number {
    return this.state === 'done' ? this.chosen : 0;
  }

  /** the largest frame body (Wrap token) `decode` takes; a frame reader refuses longer lengths before buffering them */
  get receiveLimit(): number {
    return this.maxBuffer;
  }

  /** the most application bytes one frame carries towards the client */
  get sendLimit(): number {
    if (!this.ctx || this.layer <= SaslLayer.NONE) return 0;
    return Math.max(0, this.clientMax - this.ctx.wrapOverhead(this.layer === SaslLayer.CONFIDENTIALITY));
  }

  /** Feeds one client response; returns the next challenge, or the outcome when done. */
  async step(clientToken: Uint8Array): Promise<SaslStep> {
    const token = Buffer.from(clientToken.buffer, clientToken.byteOffset, clientToken.byteLength);
    const state = this.state;
    if (state === 'done' || state === 'failed' || state === 'busy') {
      throw new SaslGssapiError(state === 'busy' ? 'a step is already under way' : `the exchange has ${state === 'done' ? 'ended' : 'failed'}`, 'STATE');
    }
    this.state = 'busy';
    try {
      const out = await this.advance(state, token);
      return out;
    } catch (e) {
      this.state = 'failed';
      if (e instanceof SaslGssapiError) throw e;
      if (e instanceof GssError) throw new SaslGssapiError(e.message, 'BAD_TOKEN', e.code, e.krbCode);
      throw e;
    }
  }

  private async advance(state: State, token: Buffer): Promise<SaslStep> {
    switch (state) {
      case 'start': {
        // a client that sent no initial response gets an empty challenge (once), then sends its token
        if (token.length === 0) {
          if (this.emptyStart) throw new SaslGssapiError('a second empty response instead of the AP-REQ', 'UNEXPECTED_DATA');
          this.emptyStart = true;
          this.state = 'start';
          return { done: false, serverToken: Buffer.alloc(0) };
        }
        const a = await acceptSecContext(token, this.o);
        this.ctx = a.context;
        this.principal = a.client;
        this.ticketEnd = a.expires;
        if (a.outputToken) {
          this.state = 'await-empty';
          return { done: false, serverToken: a.outputToken };
        }
        return this.offer();
      }
      case 'await-empty':
        if (token.length !== 0) throw new SaslGssapiError('the client sent data where an empty response was due', 'UNEXPECTED_DATA');
        return this.offer();
      case 'await-choice':
        return this.choose(token);
      default:
        throw new SaslGssapiError('no step expected', 'STATE');
    }
  }

  /** The four octets: offered layers and our largest token, wrapped for integrity. */
  private offer(): SaslStep {
    const msg = Buffer.alloc(4);
    msg.writeUInt32BE(this.maxBuffer);
    msg[0] = this.offered;
    this.state = 'await-choice';
    return { done: false, serverToken: this.ctx!.wrap(msg, { conf: false }) };
  }

  private choose(token: Buffer): SaslStep {
    const { message } = this.ctx!.unwrap(token);
    if (message.length < 4) throw new SaslGssapiError('the layer message is shorter than 4 octets', 'BAD_LAYER');
    const layer = message[0]!;
    if (layer !== SaslLayer.NONE && layer !== SaslLayer.INTEGRITY && layer !== SaslLayer.CONFIDENTIALITY) throw new SaslGssapiError(`the client chose layers ${layer}, not one layer`, 'BAD_LAYER');
    if (!(layer & this.offered)) throw new SaslGssapiError(`the client chose layer ${layer}, which was not offered`, 'BAD_LAYER');
    const max = message.readUInt32BE(0) & MAX_SASL_BUFFER;
    // with no layer the size is moot (old Cyrus clients send one anyway); with one, the client must take something
    if (layer !== SaslLayer.NONE && max === 0) throw new SaslGssapiError('the client chose a layer but takes no data', 'BAD_LAYER');
    let authzid: string;
    try {
      authzid = new TextDecoder('utf-8', { fatal: true }).decode(message.subarray(4));
    } catch {
      throw new SaslGssapiError('the authorization identity is not UTF-8', 'AUTHZID');
    }
    if (authzid !== '' && authzid !== this.principal) throw new SaslGssapiError(`${this.principal} may not act as ${JSON.stringify(authzid)}`, 'AUTHZID');
    this.chosen = layer;
    this.clientMax = max;
    this.state = 'done';
    return { done: true, client: this.principal!, layer, ...(authzid ? { authzid } : {}) };
  }

  /**
   * Protects application bytes with the negotiated layer: as many frames
   * (4-octet length, Wrap token) as the client's size requires; nothing for
   * no bytes.
   */
  encode(data: Uint8Array): Buffer {
    const layer = this.layer;
    if (layer <= SaslLayer.NONE) throw new SaslGssapiError('no security layer in force', 'STATE');
    const conf = layer === SaslLayer.CONFIDENTIALITY;
    const room = this.sendLimit;
    if (room <= 0) throw new SaslGssapiError('the client takes frames too small for any data', 'TOO_LARGE');
    const frames: Buffer[] = [];
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    for (let off = 0; off < bytes.length; off += room) {
      const token = this.ctx!.wrap(bytes.subarray(off, off + room), { conf });
      const len = Buffer.alloc(FRAME_HEADER);
      len.writeUInt32BE(token.length);
      frames.push(len, token);
    }
    return Buffer.concat(frames);
  }

  /**
   * Opens one frame's Wrap token (without its length); refuses a weaker
   * protection than negotiated. After a refusal the caller drops the
   * connection: the stream can no longer be trusted.
   */
  decode(token: Uint8Array): Buffer {
    const layer = this.layer;
    if (layer <= SaslLayer.NONE) throw new SaslGssapiError('no security layer in force', 'STATE');
    if (token.byteLength > this.maxBuffer) throw new SaslGssapiError(`a frame of ${token.byteLength} bytes, over ${this.maxBuffer}`, 'TOO_LARGE');
    let u;
    try {
      u = this.ctx!.unwrap(token);
    } catch (e) {
      if (e instanceof GssError) throw new SaslGssapiError(e.message, 'BAD_TOKEN', e.code);
      throw e;
    }
    if (layer === SaslLayer.CONFIDENTIALITY && !u.conf) throw new SaslGssapiError('an unencrypted frame under the confidentiality layer', 'BAD_LAYER');
    return u.message;
  }
}
