/**
 * AES for keys used in one request only (a TGS request's subkey, the session
 * key of a TGT seen once, FAST's armor, strengthen and reply keys, and the
 * keys derived from them), in JavaScript through @noble/ciphers' block
 * functions instead of OpenSSL.
 *
 * Why: each OpenSSL cipher object made for such a key (two or more per key,
 * four or so per TGS request) is a native object that V8 frees through a
 * weak callback during a scavenge, and each `update()` returns a native
 * Buffer for the collector to sweep: that freeing is most of the KDC's
 * young-generation pauses, hence its p99 latency (docs/kerberos.md). A
 * JavaScript key schedule is a small typed array and nothing else.
 *
 * The library's AES uses look-up tables (as OpenSSL's portable C code
 * does), whose memory accesses depend on key and data; these keys are each
 * used for a few dozen blocks at most and most of them are known to the
 * client that sent them anyway. Long-lived keys (krbtgt, services, derived
 * keys that are cached) stay on OpenSSL, which uses the processor's AES
 * instructions.
 *
 * Only whole blocks: cts.ts does the ciphertext stealing around these.
 * The block functions are the library's low-level ones (`unsafe`): the
 * version is pinned in package.json and test/kerberos/crypto.test.ts
 * checks them against OpenSSL.
 */
import { createRequire } from 'node:module';
import type * as NobleAes from '@noble/ciphers/aes.js';
import { KrbCryptoError } from './types.js';

/**
 * The library, loaded on first use (require of an ES module, Node 22.12
 * and later): loading it costs about 9 ms, which every `dirid` command
 * would pay at start-up for keys only a KDC marks as one-request ones.
 * The KDC loads it when it starts (loadOnceAes).
 */
let noble: typeof NobleAes.unsafe | undefined;
export function loadOnceAes(): typeof NobleAes.unsafe {
  return (noble ??= (createRequire(import.meta.url)('@noble/ciphers/aes.js') as typeof NobleAes).unsafe);
}

const BLOCK = 16;

/** The library's block encryption or decryption: a block as four words in, four words out. */
type NobleBlockCipher = typeof NobleAes.unsafe.encrypt;

/** A key's schedules, each made on first use: a key that only decrypts (an authenticator's Ke) needs no encryption schedule. */
interface Schedule {
  enc: Uint32Array | undefined;
  dec: Uint32Array | undefined;
}

/** A ring of the last few keys' schedules, found by the key Buffer object: one request uses each such key for a few messages or derivations. */
const SLOTS = 16;
const ringKeys: (Buffer | undefined)[] = new Array<Buffer | undefined>(SLOTS).fill(undefined);
const ringSchedules: (Schedule | undefined)[] = new Array<Schedule | undefined>(SLOTS).fill(undefined);
let ringNext = 0;

function scheduleOf(key: Buffer): Schedule {
  for (let i = 0; i < SLOTS; i++) if (ringKeys[i] === key) return ringSchedules[i]!;
  if (key.length !== 16 && key.length !== 32) throw new KrbCryptoError('AES keys have 16 or 32 bytes', 'BAD_KEY');
  const s: Schedule = { enc: undefined, dec: undefined };
  ringKeys[ringNext] = key;
  ringSchedules[ringNext] = s;
  ringNext = (ringNext + 1) % SLOTS;
  return s;
}

// The library's schedules take each block as four little-endian 32-bit words.
function word(b: Uint8Array, o: number): number {
  return b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16) | (b[o + 3]! << 24);
}
function putWord(b: Uint8Array, o: number, w: number): void {
  b[o] = w & 0xff;
  b[o + 1] = (w >>> 8) & 0xff;
  b[o + 2] = (w >>> 16) & 0xff;
  b[o + 3] = (w >>> 24) & 0xff;
}

/**
 * The key bytes as the library's key expansion reads them best: a key
 * decoded from a message (a TGS subkey, a TGT's session key) is a view at
 * any offset of the message's Buffer, and the library copies a key that
 * does not start on a 4-byte boundary with a slower copy of its own (about
 * half the cost of the expansion). Node's pool hands out 8-byte aligned
 * Buffers: a copy there costs a few dozen nanoseconds, and is wiped once
 * the schedule is made.
 */
function expandWith(expand: (key: Uint8Array) => Uint32Array, key: Buffer): Uint32Array {
  if ((key.byteOffset & 3) === 0) return expand(key);
  const copy = Buffer.allocUnsafe(key.length);
  key.copy(copy);
  const xk = expand(copy);
  copy.fill(0);
  return xk;
}

/** The key's encryption schedule, made on its first use. */
function encryptionSchedule(key: Buffer): Uint32Array {
  const s = scheduleOf(key);
  return (s.enc ??= expandWith(loadOnceAes().expandKeyLE, key));
}

/** CBC encryption of whole blocks in place, starting from `iv`; returns `blocks`. */
export function onceCbcEncrypt(key: Buffer, blocks: Buffer, iv: Uint8Array): Buffer {
  const xk = encryptionSchedule(key);
  const encrypt = loadOnceAes().encrypt;
  let c0 = word(iv, 0);
  let c1 = word(iv, 4);
  let c2 = word(iv, 8);
  let c3 = word(iv, 12);
  for (let o = 0; o + BLOCK <= blocks.length; o += BLOCK) {
    const r = encrypt(xk, word(blocks, o) ^ c0, word(blocks, o + 4) ^ c1, word(blocks, o + 8) ^ c2, word(blocks, o + 12) ^ c3);
    c0 = r.s0;
    c1 = r.s1;
    c2 = r.s2;
    c3 = r.s3;
    putWord(blocks, o, c0);
    putWord(blocks, o + 4, c1);
    putWord(blocks, o + 8, c2);
    putWord(blocks, o + 12, c3);
  }
  return blocks;
}

/** Each whole block of `input` through the library's block `cipher` under the schedule `xk`, into a new Buffer (ECB). */
function ecb(xk: Uint32Array, cipher: NobleBlockCipher, input: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(input.length - (input.length % BLOCK));
  for (let o = 0; o + BLOCK <= input.length; o += BLOCK) {
    const r = cipher(xk, word(input, o), word(input, o + 4), word(input, o + 8), word(input, o + 12));
    putWord(out, o, r.s0);
    putWord(out, o + 4, r.s1);
    putWord(out, o + 8, r.s2);
    putWord(out, o + 12, r.s3);
  }
  return out;
}

/** ECB encryption of whole blocks into a new Buffer. */
export function onceEcbEncrypt(key: Buffer, input: Uint8Array): Buffer {
  return ecb(encryptionSchedule(key), loadOnceAes().encrypt, input);
}

/** ECB decryption of whole blocks into a new Buffer. */
export function onceEcbDecrypt(key: Buffer, input: Uint8Array): Buffer {
  const s = scheduleOf(key);
  return ecb((s.dec ??= expandWith(loadOnceAes().expandKeyDecLE, key)), loadOnceAes().decrypt, input);
}
