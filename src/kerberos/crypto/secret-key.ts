/**
 * Node KeyObjects for raw key Buffers, one per Buffer object, for the
 * cipher objects cts.ts keeps. Node 24's createCipheriv (and createHmac),
 * handed a Buffer, first try it as a KeyObject and as a CryptoKey, and
 * those failed checks cost several times the cipher itself (about 15 µs a
 * call); handed a KeyObject, they are quick. Keyed by the Buffer object: a
 * dropped key Buffer takes its KeyObject with it, and key Buffers are never
 * modified in place in this code base (the KeyObject holds a copy of the
 * bytes).
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
