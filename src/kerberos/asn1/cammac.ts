/**
 * RFC 7751: the container authenticated by MACs (AD-CAMMAC, §3: elements,
 * a KDC verifier, a service verifier, other verifiers) and the
 * authentication indicator element (AD-AUTHENTICATION-INDICATOR, §4: a
 * SEQUENCE OF UTF8String). A Verifier is a CHOICE whose one alternative is
 * Verifier-MAC, so it is encoded as that SEQUENCE; other verifiers are kept
 * as received, since we neither make nor check them.
 */
import { Asn1Error, asNode, ctx, der, fields, int, readUInt32, readInt, seq, seqOf, seqOfItems, tlv, type DerNode } from './der.js';
import { decodeAuthData, decodeChecksum, decodePrincipalName, encodeAuthData, encodeChecksum, encodePrincipalName, type AuthData, type Checksum, type PrincipalName } from './primitives.js';

/** Verifier-MAC (RFC 7751 §3): a keyed checksum, with what names the key. */
export interface VerifierMac {
  identifier?: PrincipalName;
  kvno?: number;
  enctype?: number;
  mac: Checksum;
}

export interface AdCammac {
  elements: AuthData[];
  kdcVerifier?: VerifierMac;
  svcVerifier?: VerifierMac;
  /** the [3] field's SEQUENCE OF Verifier, undecoded */
  otherVerifiers?: Buffer;
}

function decodeVerifierMac(n: DerNode): VerifierMac {
  const f = fields(n, 'Verifier-MAC');
  const mac = f.get(3);
  if (!mac) throw new Asn1Error('Verifier-MAC: missing field [3]');
  const v: VerifierMac = { mac: decodeChecksum(mac) };
  const id = f.get(0);
  if (id) v.identifier = decodePrincipalName(id);
  const kvno = f.get(1);
  if (kvno) v.kvno = readUInt32(kvno, 'Verifier-MAC kvno');
  const enctype = f.get(2);
  if (enctype) v.enctype = readInt(enctype, 'Verifier-MAC enctype');
  return v;
}

const encodeVerifierMac = (v: VerifierMac) =>
  seq(
    v.identifier ? ctx(0, encodePrincipalName(v.identifier)) : undefined,
    v.kvno !== undefined ? ctx(1, int(v.kvno)) : undefined,
    v.enctype !== undefined ? ctx(2, int(v.enctype)) : undefined,
    ctx(3, encodeChecksum(v.mac)),
  );

export function decodeAdCammac(input: Uint8Array | DerNode): AdCammac {
  const f = fields(asNode(input), 'AD-CAMMAC');
  const elements = f.get(0);
  if (!elements) throw new Asn1Error('AD-CAMMAC: missing field [0]');
  const out: AdCammac = { elements: decodeAuthData(elements) };
  const kdc = f.get(1);
  if (kdc) out.kdcVerifier = decodeVerifierMac(kdc);
  const svc = f.get(2);
  if (svc) out.svcVerifier = decodeVerifierMac(svc);
  const other = f.get(3);
  if (other) {
    if (seqOf(other, 'other-verifiers').length === 0) throw new Asn1Error('AD-CAMMAC: other-verifiers may not be empty');
    out.otherVerifiers = other.raw;
  }
  return out;
}

export const encodeAdCammac = (c: AdCammac): Buffer =>
  der(
    seq(
      ctx(0, encodeAuthData(c.elements)),
      c.kdcVerifier ? ctx(1, encodeVerifierMac(c.kdcVerifier)) : undefined,
      c.svcVerifier ? ctx(2, encodeVerifierMac(c.svcVerifier)) : undefined,
      c.otherVerifiers ? ctx(3, c.otherVerifiers) : undefined,
    ),
  );

/** AD-AUTHENTICATION-INDICATOR (RFC 7751 §4): the indicators as a SEQUENCE OF UTF8String. */
export const encodeAuthIndicators = (indicators: readonly string[]): Buffer => der(seqOfItems(indicators.map((s) => tlv('universal', false, 12, Buffer.from(s, 'utf8')))));

const utf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeAuthIndicators(input: Uint8Array | DerNode): string[] {
  return seqOf(asNode(input), 'AD-AUTHENTICATION-INDICATOR').map((n) => {
    if (n.cls !== 'universal' || n.tag !== 12 || n.constructed) throw new Asn1Error('AD-AUTHENTICATION-INDICATOR: expected a UTF8String');
    try {
      return utf8.decode(n.content);
    } catch {
      throw new Asn1Error('AD-AUTHENTICATION-INDICATOR: not valid UTF-8');
    }
  });
}
