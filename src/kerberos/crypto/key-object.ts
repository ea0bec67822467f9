/**
 * Key bytes as the KeyObject Node's ciphers and HMACs take them, made once
 * per key Buffer. Since Node 24 a raw Buffer passed as a key costs about
 * 7 µs more per createHmac/createCipheriv than a KeyObject (the check that
 * the argument is not a KeyObject or CryptoKey goes through a thrown
 * exception), which doubled the KDC's CPU per request; with KeyObjects the
 * cost is Node 22's again (docs/kerberos.md, "Performance"). Keys are never
 * modified in place in this code base, so the object made from a Buffer
 * stays right for it; a Buffer that is dropped takes its KeyObject along.
 */
import { createSecretKey, type KeyObject } from 'node:crypto';

const objects = new WeakMap<Buffer, KeyObject>();

export function keyObject(key: Buffer): KeyObject {
  let o = objects.get(key);
  if (o === undefined) {
    o = createSecretKey(key);
    objects.set(key, o);
  }
  return o;
}
