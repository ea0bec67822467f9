/**
 * AES for keys used in one request only (a TGS request's subkey, the session
 * key of a TGT seen once, FAST's armor, strengthen and reply keys, and the
 * keys derived from them), in JavaScript through StableLib's AES block
 * cipher (`@stablelib/aes`) instead of OpenSSL.
 *
 * Why not OpenSSL: each OpenSSL cipher object made for such a key (two or
 * more per key, four or so per TGS request) is a native object that V8
 * frees through a weak callback during a scavenge, and each `update()`
 * returns a native Buffer for the collector to sweep: that freeing was
 * most of the KDC's young-generation pauses, hence its p99 latency
 * (docs/kerberos.md). A JavaScript key schedule is a small typed array.
 *
 * Why this library: its tables are the classic 4 × 256 words each way
 * (8 KB), which stay in the processor's first-level cache beside the
 * KDC's other work. @noble/ciphers, used before, reads 16-bit tables of
 * some 1.3 MB: fast in a loop of its own, but in the KDC its blocks cost
 * 300–400 ns, and it pushed the rest of the KDC's work out of the cache
 * (docs/kerberos.md, "StableLib's AES for one-request keys": 12% less CPU
 * per TGS request).
 *
 * Either library's AES uses look-up tables (as OpenSSL's portable C code
 * does), whose memory accesses depend on key and data; these keys are each
 * used for a few dozen blocks at most and most of them are known to the
 * client that sent them anyway. Long-lived keys (krbtgt, services, derived
 * keys that are cached) stay on OpenSSL, which uses the processor's AES
 * instructions.
 *
 * Only whole blocks: cts.ts does the ciphertext stealing around these. The
 * version is pinned in package.json and test/kerberos/crypto.test.ts checks
 * these functions against OpenSSL.
 */
import { createRequire } from 'node:module';
import type * as Stablelib from '@stablelib/aes';
import { KrbCryptoError } from './types.js';

type Aes = Stablelib.AES;

/**
 * The library, loaded on first use (require of an ES module, Node 22.12
 * and later): loading it and making its tables costs some 7 ms, which
 * every `dirid` command would pay at start-up for keys only a KDC marks as
 * one-request ones. The KDC loads it when it starts (loadOnceAes).
 */
let AesClass: typeof Stablelib.AES | undefined;
export function loadOnceAes(): typeof Stablelib.AES {
  if (AesClass) return AesClass;
  const loaded = (createRequire(import.meta.url)('@stablelib/aes') as typeof Stablelib).AES;
  // the tables are made with the first key: now, not in the first request
  new loaded(new Uint8Array(16), true).clean();
  return (AesClass = loaded);
}

const BLOCK = 16;

/** A key's cipher, made on its first use: with a decryption schedule only once a message is decrypted (an authenticator's Ke needs no other). */
interface Schedule {
  aes: Aes | undefined;
  decrypts: boolean;
}

/** A ring of the last few keys' ciphers, found by the key Buffer object: one request uses each such key for a few messages or derivations. */
const SLOTS = 16;
const ringKeys: (Buffer | undefined)[] = new Array<Buffer | undefined>(SLOTS).fill(undefined);
const ringSchedules: (Schedule | undefined)[] = new Array<Schedule | undefined>(SLOTS).fill(undefined);
let ringNext = 0;

function scheduleOf(key: Buffer): Schedule {
  for (let i = 0; i < SLOTS; i++) if (ringKeys[i] === key) return ringSchedules[i]!;
  if (key.length !== 16 && key.length !== 32) throw new KrbCryptoError('AES keys have 16 or 32 bytes', 'BAD_KEY');
  // the schedules of the key that leaves the ring are wiped
  ringSchedules[ringNext]?.aes?.clean();
  const s: Schedule = { aes: undefined, decrypts: false };
  ringKeys[ringNext] = key;
  ringSchedules[ringNext] = s;
  ringNext = (ringNext + 1) % SLOTS;
  return s;
}

function cipherOf(key: Buffer, decrypt: boolean): Aes {
  const s = scheduleOf(key);
  if (s.aes && (s.decrypts || !decrypt)) return s.aes;
  s.aes?.clean();
  s.aes = new (loadOnceAes())(key, !decrypt);
  s.decrypts = decrypt;
  return s.aes;
}

/** One block of scratch for the library's block functions, which take whole arrays: no view made per block. */
const scratch = new Uint8Array(BLOCK);

/** CBC encryption of whole blocks in place, starting from `iv`; returns `blocks`. */
export function onceCbcEncrypt(key: Buffer, blocks: Buffer, iv: Uint8Array): Buffer {
  const aes = cipherOf(key, false);
  for (let i = 0; i < BLOCK; i++) scratch[i] = iv[i]!;
  for (let o = 0; o + BLOCK <= blocks.length; o += BLOCK) {
    // scratch holds the previous ciphertext block (or the IV): xor the next plaintext block into it
    for (let i = 0; i < BLOCK; i++) scratch[i]! ^= blocks[o + i]!;
    aes.encryptBlock(scratch, scratch);
    for (let i = 0; i < BLOCK; i++) blocks[o + i] = scratch[i]!;
  }
  return blocks;
}

/** Each whole block of `input` through `aes`, encrypting or decrypting, into a new Buffer (ECB). */
function ecb(aes: Aes, decrypt: boolean, input: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(input.length - (input.length % BLOCK));
  for (let o = 0; o + BLOCK <= input.length; o += BLOCK) {
    for (let i = 0; i < BLOCK; i++) scratch[i] = input[o + i]!;
    if (decrypt) aes.decryptBlock(scratch, scratch);
    else aes.encryptBlock(scratch, scratch);
    for (let i = 0; i < BLOCK; i++) out[o + i] = scratch[i]!;
  }
  return out;
}

/** ECB encryption of whole blocks into a new Buffer. */
export function onceEcbEncrypt(key: Buffer, input: Uint8Array): Buffer {
  return ecb(cipherOf(key, false), false, input);
}

/** ECB decryption of whole blocks into a new Buffer. */
export function onceEcbDecrypt(key: Buffer, input: Uint8Array): Buffer {
  return ecb(cipherOf(key, true), true, input);
}
