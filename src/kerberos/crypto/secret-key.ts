/**
 * Node KeyObjects for raw key Buffers, one per Buffer object. Node 24's
 * createHmac and createCipheriv, handed a Buffer, first try it as a
 * KeyObject and as a CryptoKey, and those failed checks cost several times
 * the HMAC or cipher itself (about 15 µs of the 18 µs an HMAC of a short
 * message takes); handed a KeyObject, they are quick. Making a KeyObject
 * costs about 1 µs, so even a key used once gains. Keyed by the Buffer
 * object, as cts.ts keeps its cipher objects: a dropped key Buffer takes its
 * KeyObject with it, and key Buffers are never modified in place in this
 * code base (the KeyObject holds a copy of the bytes).
 */
import { createSecretKey, type KeyObject } from 'node:crypto';

const objects = new WeakMap<Buffer, KeyObject>();

/** The KeyObject of `key`'s bytes, made on first use of this Buffer. */
export function secretKey(key: Buffer): KeyObject {
  let k = objects.get(key);
  if (k === undefined) {
    k = createSecretKey(key);
    objects.set(key, k);
  }
  return k;
}
