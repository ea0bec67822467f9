/**
 * The client keys of an IdP reference using private_key_jwt
 * (docs/client-auth.md): making a key pair (ES256 or RS256), the stored
 * form of a reference's keys (the value of the sealed dirIdpClientKey: a
 * JSON `{"keys":[...]}` of private JWKs, the signing key first, the same
 * form oauth/types.ts parseClientKeys reads), and the public key set that is
 * published for the IdP: public members only, never `d` or any other
 * private part.
 */
import { calculateJwkThumbprint, exportJWK, generateKeyPair, type JWK } from 'jose';

export const clientAuthMethods = ['client_secret_post', 'client_secret_basic', 'private_key_jwt'] as const;
export const clientKeyAlgorithms = ['ES256', 'RS256'] as const;
export type ClientKeyAlgorithm = (typeof clientKeyAlgorithms)[number];

/** At most this many keys are kept: the signing key and the older ones still published during rollovers. */
export const CLIENT_KEYS_MAX = 3;

/** The public members of each key type, besides kty. */
const PUBLIC_MEMBERS: Record<string, readonly string[]> = { EC: ['crv', 'x', 'y'], RSA: ['n', 'e'] };

export type StoredKey = JWK & { kid: string; alg: string };

/** A new private key for `alg`, as a JWK named by its RFC 7638 thumbprint. */
export async function newClientKey(alg: ClientKeyAlgorithm): Promise<StoredKey> {
  const { privateKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(publicJwk(jwk), 'sha256');
  return { ...jwk, kid, alg, use: 'sig' };
}

/** The stored keys (malformed text reads as none). */
export function readClientKeys(stored: string | undefined): StoredKey[] {
  if (!stored) return [];
  try {
    const v = JSON.parse(stored) as { keys?: unknown };
    if (!Array.isArray(v.keys)) return [];
    return v.keys.filter((k): k is StoredKey => !!k && typeof k === 'object' && typeof (k as JWK).kid === 'string' && typeof (k as JWK).alg === 'string');
  } catch {
    return [];
  }
}

export function writeClientKeys(keys: readonly StoredKey[]): string {
  return JSON.stringify({ keys });
}

/** A key's public part: kty, its type's public members, kid, alg and use. */
export function publicJwk(k: JWK): JWK {
  const out: JWK = { kty: k.kty };
  for (const m of PUBLIC_MEMBERS[k.kty ?? ''] ?? []) if (typeof (k as Record<string, unknown>)[m] === 'string') (out as Record<string, unknown>)[m] = (k as Record<string, unknown>)[m];
  if (k.kid) out.kid = k.kid;
  if (k.alg) out.alg = k.alg;
  out.use = 'sig';
  return out;
}

/** The JWK set the IdP verifies client assertions with: every stored key's public part, the signing key first. */
export function publicKeySet(stored: string | undefined): { keys: JWK[] } {
  return { keys: readClientKeys(stored).map(publicJwk) };
}

/** Where a server publishes a reference's public key set (docs/client-auth.md). */
export function clientJwksPath(name: string): string {
  return `/dirid/idp/${encodeURIComponent(name)}/jwks.json`;
}
