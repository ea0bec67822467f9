/**
 * AES in CBC mode with ciphertext stealing as RFC 3962 §5 uses it (CBC-CS3):
 * zero IV unless given, and the last two ciphertext blocks always swapped,
 * also when the input is a whole number of blocks. Exactly one block is plain
 * CBC. Node has no CTS mode, so it is built on AES-CBC/ECB without padding.
 *
 * Creating an OpenSSL cipher costs about as much as encrypting a short
 * message, and a KDC uses the same few keys (krbtgt, services, cached
 * derived keys) for every request. So each key Buffer gets, once, a CBC
 * encryptor and an ECB decryptor that are only ever fed whole blocks through
 * update() and never finalised. ECB keeps no state between calls. CBC keeps
 * the last ciphertext block as its chaining value: XORing that into the
 * first plaintext block (with the wanted IV) starts a fresh message, because
 * E(P1 xor last xor last xor IV) = E(P1 xor IV). The objects are made from
 * the key's KeyObject, kept in the key's state: Node 24 makes a cipher from a
 * KeyObject much quicker than from key bytes (docs/kerberos.md).
 *
 * A key used for one request only (`once`: a TGS request's subkey, the
 * session key of a TGT seen once, FAST's armor subkey and armor key, and
 * the keys derived from them) makes no OpenSSL object at all: its blocks go
 * through aes-once.ts (JavaScript AES from @stablelib/aes), because the
 * native objects of short-lived keys were what the garbage collector's
 * pauses spent their time freeing (docs/kerberos.md).
 */
import { createCipheriv, createDecipheriv, createSecretKey, type Cipheriv, type Decipheriv, type KeyObject } from 'node:crypto';
import { onceCbcEncrypt, onceEcbDecrypt, onceEcbEncrypt } from './aes-once.js';
import { KrbCryptoError } from './types.js';

const BLOCK = 16;
const ZERO_IV = Buffer.alloc(BLOCK);

function checkKey(key: Buffer): void {
  if (key.length !== 16 && key.length !== 32) throw new KrbCryptoError('AES keys have 16 or 32 bytes', 'BAD_KEY');
}

function checkLength(n: number): void {
  if (n < BLOCK) throw new KrbCryptoError('AES-CTS needs at least one block', 'BAD_LENGTH');
}

interface AesState {
  /** the key as OpenSSL objects want it */
  secret: KeyObject;
  cbc: Cipheriv | undefined;
  /** the CBC object's chaining value: the last ciphertext block it produced */
  chain: Buffer;
  ecbDecrypt: Decipheriv | undefined;
  ecbEncrypt: Cipheriv | undefined;
}

/**
 * Keyed by the Buffer object: cached derived keys are the same object on
 * every use; a key Buffer that is dropped takes its ciphers with it. Key
 * bytes are copied in by OpenSSL when the objects are made, so a caller
 * changing the Buffer later would not be seen: keys are never modified in
 * place in this code base.
 */
const states = new WeakMap<Buffer, AesState>();

function stateOf(key: Buffer): AesState {
  let st = states.get(key);
  if (!st) {
    checkKey(key);
    st = { secret: createSecretKey(key), cbc: undefined, chain: Buffer.alloc(BLOCK), ecbDecrypt: undefined, ecbEncrypt: undefined };
    states.set(key, st);
  }
  return st;
}

function ecbDecryptor(st: AesState, key: Buffer): Decipheriv {
  if (!st.ecbDecrypt) {
    st.ecbDecrypt = createDecipheriv(`aes-${key.length * 8}-ecb`, st.secret, null);
    st.ecbDecrypt.setAutoPadding(false);
  }
  return st.ecbDecrypt;
}

/** CBC over whole blocks with the given IV; `blocks` is overwritten. */
function cbcEncrypt(key: Buffer, blocks: Buffer, iv: Buffer, once = false): Buffer {
  if (once) return onceCbcEncrypt(key, blocks, iv);
  const st = stateOf(key);
  if (!st.cbc) {
    st.cbc = createCipheriv(`aes-${key.length * 8}-cbc`, st.secret, ZERO_IV);
    st.cbc.setAutoPadding(false);
  }
  const chain = st.chain;
  for (let i = 0; i < BLOCK; i++) blocks[i] = blocks[i]! ^ chain[i]! ^ iv[i]!;
  const out = st.cbc.update(blocks);
  if (out.length !== blocks.length) throw new KrbCryptoError('AES-CBC returned a short block', 'BAD_LENGTH');
  out.copy(chain, 0, out.length - BLOCK);
  return out;
}

/** Encrypts and returns the cipher state for a following message (the last full CBC block). */
export function ctsEncryptChained(key: Buffer, plaintext: Buffer, iv: Buffer = ZERO_IV, once = false): { ciphertext: Buffer; nextIv: Buffer } {
  const n = plaintext.length;
  const blocks = Math.ceil(n / BLOCK);
  const padded = Buffer.allocUnsafe(blocks * BLOCK);
  plaintext.copy(padded);
  padded.fill(0, n);
  const out = Buffer.allocUnsafe(n);
  ctsEncryptPaddedInto(key, padded, n, out, 0, iv, once);
  // the last full CBC block went to position m-1 (or is the only block)
  const last = Math.max(0, blocks - 2) * BLOCK;
  return { ciphertext: out, nextIv: Buffer.from(out.subarray(last, last + BLOCK)) };
}

/**
 * CTS over the first `n` bytes of `padded` (zero-filled to whole blocks;
 * overwritten), written to `out` at `off`. Lets a caller build confounder,
 * plaintext and MAC in buffers of its own.
 */
export function ctsEncryptPaddedInto(key: Buffer, padded: Buffer, n: number, out: Buffer, off: number, iv: Buffer = ZERO_IV, once = false): void {
  checkKey(key);
  checkLength(n);
  const blocks = padded.length / BLOCK;
  const cbc = cbcEncrypt(key, padded, iv, once);
  if (blocks === 1) {
    cbc.copy(out, off);
    return;
  }
  const lastLen = n - (blocks - 1) * BLOCK;
  const head = (blocks - 2) * BLOCK;
  cbc.copy(out, off, 0, head);
  cbc.copy(out, off + head, head + BLOCK, head + 2 * BLOCK);
  cbc.copy(out, off + head + BLOCK, head, head + lastLen);
}

export function ctsEncrypt(key: Buffer, plaintext: Buffer, iv: Buffer = ZERO_IV, once = false): Buffer {
  return ctsEncryptChained(key, plaintext, iv, once).ciphertext;
}

/** ECB decryption of whole blocks: the key's OpenSSL object, or JavaScript AES for a one-request key (`d` undefined). */
function ecbDecrypt(d: Decipheriv | undefined, key: Buffer, blocks: Buffer): Buffer {
  return d ? d.update(blocks) : onceEcbDecrypt(key, blocks);
}

/** Decrypts with the key's ECB decipher object and chains CBC here. */
export function ctsDecrypt(key: Buffer, ciphertext: Buffer, iv: Buffer = ZERO_IV, once = false): Buffer {
  checkKey(key);
  const n = ciphertext.length;
  checkLength(n);
  const d = once ? undefined : ecbDecryptor(stateOf(key), key);
  if (n === BLOCK) {
    const p = ecbDecrypt(d, key, ciphertext);
    for (let i = 0; i < BLOCK; i++) p[i]! ^= iv[i]!;
    return p;
  }
  const blocks = Math.ceil(n / BLOCK);
  const lastLen = n - (blocks - 1) * BLOCK;
  const headLen = (blocks - 2) * BLOCK;
  // Decrypt C_1..C_{m-2} and the full block sent in position m-1 (CBC's C_m).
  const decrypted = ecbDecrypt(d, key, ciphertext.subarray(0, headLen + BLOCK));
  const dLast = decrypted.subarray(headLen, headLen + BLOCK);
  const partial = ciphertext.subarray(headLen + BLOCK);
  // CBC's C_{m-1} = the stolen partial block completed with the tail of D(C_m).
  const cPenultimate = Buffer.allocUnsafe(BLOCK);
  partial.copy(cPenultimate, 0);
  dLast.copy(cPenultimate, lastLen, lastLen);
  const dPenultimate = ecbDecrypt(d, key, cPenultimate);
  const out = Buffer.allocUnsafe(n);
  for (let i = 0; i < headLen; i++) out[i] = decrypted[i]! ^ (i < BLOCK ? iv[i]! : ciphertext[i - BLOCK]!);
  for (let j = 0; j < BLOCK; j++) out[headLen + j] = dPenultimate[j]! ^ (headLen > 0 ? ciphertext[headLen - BLOCK + j]! : iv[j]!);
  for (let j = 0; j < lastLen; j++) out[headLen + BLOCK + j] = dLast[j]! ^ partial[j]!;
  return out;
}

/**
 * E(c), E(E(c)), ... for `blocks` blocks (the chain of DR in RFC 3961 §5.1),
 * in one CBC pass over c | 0 | 0 ... with a zero IV: each ciphertext block
 * is the encryption of the one before, XORed with zero.
 */
export function aesChain(key: Buffer, first: Buffer, blocks: number, once = false): Buffer {
  checkKey(key);
  // from Node's pool, not Buffer.alloc: a small Buffer.alloc lives in the JavaScript heap until something takes a view
  // of it (the caller's subarray), which moves it to native memory of its own for the scavenger to sweep
  const input = Buffer.allocUnsafe(blocks * BLOCK).fill(0, BLOCK);
  first.copy(input, 0, 0, BLOCK);
  return cbcEncrypt(key, input, ZERO_IV, once);
}

/** AES-ECB over whole blocks: the E of the PRF in RFC 3962 §4. */
export function aesBlock(key: Buffer, block: Buffer, once = false): Buffer {
  if (once) return onceEcbEncrypt(key, block);
  const st = stateOf(key);
  if (!st.ecbEncrypt) {
    st.ecbEncrypt = createCipheriv(`aes-${key.length * 8}-ecb`, st.secret, null);
    st.ecbEncrypt.setAutoPadding(false);
  }
  return st.ecbEncrypt.update(block);
}
