/**
 * Authentication indicators in tickets (RFC 7751 §4), carried as MIT's KDC
 * carries them and MIT's GSS-API acceptor reads them (docs/kerberos.md,
 * "Authentication indicators"): the ticket's authorization-data holds one
 * AD-IF-RELEVANT whose one element is an AD-CAMMAC, whose elements are one
 * AD-AUTHENTICATION-INDICATOR. The CAMMAC's KDC verifier is a checksum
 * (key usage 64) under a krbtgt key over the DER EncTicketPart with its
 * authorization-data replaced by the CAMMAC's elements, so it binds the
 * indicators to that very ticket; its service verifier is a checksum under
 * the ticket's own server key over the DER elements. The KDC believes
 * indicators only under its own verifier, a service only under its own;
 * a CAMMAC that does not verify (or does not decode) counts as absent.
 * Checksums are the keyed checksum of the key's own enctype.
 */
import { decodeAdIfRelevant, encodeAdIfRelevant } from './asn1/ad.js';
import { decodeAdCammac, decodeAuthIndicators, encodeAdCammac, encodeAuthIndicators, type AdCammac, type VerifierMac } from './asn1/cammac.js';
import { Asn1Error, der } from './asn1/der.js';
import { encodeAuthData, type AuthData } from './asn1/primitives.js';
import { encodeEncTicketPart, type EncTicketPart } from './asn1/ticket.js';
import { checksumProfile, profile, type EncryptionKey } from './crypto/index.js';
import { AdType, KeyUsage } from './iana.js';

/** A krbtgt key and its version, for the KDC verifier. */
export interface KdcVerifierKey {
  key: EncryptionKey;
  kvno: number;
}

/** The DER EncTicketPart the KDC verifier covers: the ticket with `elements` as its authorization-data. */
const kdcVerifiedBytes = (etp: EncTicketPart, elements: AuthData[]): Buffer => encodeEncTicketPart({ ...etp, authorizationData: elements });

function mac(key: EncryptionKey, data: Buffer): VerifierMac['mac'] {
  const p = profile(key.etype);
  return { type: p.checksumType, value: p.checksum(key, KeyUsage.CAMMAC, data) };
}

/** The enctype whose keyed checksum a verifier is, if we do that checksum and it agrees with the enctype the verifier names. */
function verifierEtype(v: VerifierMac): number | undefined {
  let etype;
  try {
    etype = checksumProfile(v.mac.type).etype;
  } catch {
    return undefined;
  }
  return v.enctype === undefined || v.enctype === 0 || v.enctype === etype ? etype : undefined;
}

/** Whether `v` is the checksum of `data` under `key`, of the checksum type of the key's own enctype. */
function verifies(key: EncryptionKey, v: VerifierMac, data: Buffer): boolean {
  return verifierEtype(v) === key.etype && checksumProfile(v.mac.type).verifyChecksum(key, KeyUsage.CAMMAC, data, v.mac.value);
}

/**
 * The authorization-data of a ticket carrying `indicators` (empty: none):
 * `etp` is the ticket as it will be issued, whatever its authorization-data
 * now; `service` is the key the ticket is sealed with.
 */
export function indicatorAuthData(etp: EncTicketPart, indicators: readonly string[], kdc: KdcVerifierKey, service: EncryptionKey): AuthData[] {
  if (indicators.length === 0) return [];
  const elements: AuthData[] = [{ type: AdType.AUTHENTICATION_INDICATOR, data: encodeAuthIndicators(indicators) }];
  const cammac: AdCammac = {
    elements,
    kdcVerifier: { kvno: kdc.kvno, mac: mac(kdc.key, kdcVerifiedBytes(etp, elements)) },
    svcVerifier: { mac: mac(service, der(encodeAuthData(elements))) },
  };
  return [{ type: AdType.IF_RELEVANT, data: encodeAdIfRelevant([{ type: AdType.CAMMAC, data: encodeAdCammac(cammac) }]) }];
}

/** The CAMMACs in authorization-data, at its top level or inside AD-IF-RELEVANT containers; null for one that does not decode. */
function cammacsIn(ad: readonly AuthData[] | undefined, out: Array<AdCammac | null> = []): Array<AdCammac | null> {
  for (const a of ad ?? []) {
    try {
      if (a.type === AdType.CAMMAC) out.push(decodeAdCammac(a.data));
      else if (a.type === AdType.IF_RELEVANT) cammacsIn(decodeAdIfRelevant(a.data), out);
    } catch (e) {
      if (!(e instanceof Asn1Error)) throw e;
      out.push(null);
    }
  }
  return out;
}

/** The indicators in a CAMMAC's elements (at their top level or inside AD-IF-RELEVANT), each once, in order. */
function indicatorsIn(elements: readonly AuthData[], out: string[] = []): string[] {
  for (const a of elements) {
    if (a.type === AdType.AUTHENTICATION_INDICATOR) {
      for (const i of decodeAuthIndicators(a.data)) if (!out.includes(i)) out.push(i);
    } else if (a.type === AdType.IF_RELEVANT) indicatorsIn(decodeAdIfRelevant(a.data), out);
  }
  return out;
}

/** Indicators found in a ticket, and how many CAMMACs were dropped for not verifying. */
export interface FoundIndicators {
  indicators: string[];
  dropped: number;
}

function collect(etp: EncTicketPart, trusted: (c: AdCammac) => boolean): FoundIndicators {
  const found: FoundIndicators = { indicators: [], dropped: 0 };
  for (const c of cammacsIn(etp.authorizationData)) {
    let ok = false;
    try {
      ok = c !== null && trusted(c);
      if (ok) indicatorsIn(c!.elements, found.indicators);
    } catch (e) {
      if (!(e instanceof Asn1Error)) throw e;
      ok = false;
    }
    if (!ok) found.dropped++;
  }
  return found;
}

/**
 * The KDC's reading of a ticket it issued (a TGT): the indicators of the
 * CAMMACs whose KDC verifier checks out under the krbtgt key `keyFor`
 * gives for the verifier's kvno (undefined: the current one) and the
 * enctype of its checksum.
 */
export function kdcVerifiedIndicators(etp: EncTicketPart, keyFor: (kvno: number | undefined, etype: number) => EncryptionKey | undefined): FoundIndicators {
  return collect(etp, (c) => {
    const v = c.kdcVerifier;
    const etype = v && verifierEtype(v);
    const key = etype === undefined ? undefined : keyFor(v!.kvno, etype);
    return key !== undefined && verifies(key, v!, kdcVerifiedBytes(etp, c.elements));
  });
}

/** A service's reading of a ticket sealed with its key: the indicators of the CAMMACs whose service verifier checks out under that key. */
export function serviceVerifiedIndicators(etp: EncTicketPart, serviceKey: EncryptionKey): FoundIndicators {
  return collect(etp, (c) => c.svcVerifier !== undefined && verifies(serviceKey, c.svcVerifier, der(encodeAuthData(c.elements))));
}
