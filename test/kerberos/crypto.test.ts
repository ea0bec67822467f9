/**
 * Kerberos crypto against published vectors, all kept as data under
 * test/data/crypto: RFC 3961 A.1 n-fold, RFC 3962 B string-to-key and CTS,
 * derived keys, RFC 8009 A encryptions with the RFC's confounders, MIT's
 * known ciphertexts, checksums and PRF outputs, MIT's KRB-FX-CF2 outputs, and
 * keys that MIT ktutil derived on this machine (mit-keys.json).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createCipheriv, createDecipheriv, randomBytes, type Cipheriv, type Decipheriv } from 'node:crypto';
import { cf2, checksumProfile, profile, supportedEtypes } from '../../src/kerberos/crypto/index.js';
import { nfold } from '../../src/kerberos/crypto/nfold.js';
import { deriveKey } from '../../src/kerberos/crypto/dk.js';
import { kdfHmacSha2 } from '../../src/kerberos/crypto/aes-sha2.js';
import { ctsDecrypt, ctsEncryptChained } from '../../src/kerberos/crypto/cts.js';
import { onceCbcEncrypt, onceEcbDecrypt, onceEcbEncrypt } from '../../src/kerberos/crypto/aes-once.js';

const load = <T>(name: string): T[] =>
  (JSON.parse(readFileSync(new URL(`../data/crypto/${name}.json`, import.meta.url), 'utf8')) as { vectors: T[] }).vectors;
const hex = (s: string): Buffer => Buffer.from(s, 'hex');
const key = (etype: number, value: string) => ({ etype, value: hex(value) });

describe('crypto vectors: primitives', () => {
  it('n-fold (RFC 3961 A.1)', () => {
    const vs = load<{ text: string; input: string; bits: number; output: string }>('nfold');
    assert.equal(vs.length, 11);
    for (const v of vs) assert.equal(nfold(hex(v.input), v.bits / 8).toString('hex'), v.output, `${v.bits}-fold(${v.text})`);
  });

  it('AES-CTS with key "chicken teriyaki" encrypts and decrypts (RFC 3962 B)', () => {
    const vs = load<{ key: string; iv: string; input: string; output: string; nextIv: string }>('cts');
    assert.deepEqual(vs.map((v) => v.input.length / 2), [17, 31, 32, 47, 48, 64]);
    for (const v of vs) {
      const { ciphertext, nextIv } = ctsEncryptChained(hex(v.key), hex(v.input), hex(v.iv));
      assert.equal(ciphertext.toString('hex'), v.output, `encrypt ${v.input.length / 2} bytes`);
      assert.equal(nextIv.toString('hex'), v.nextIv, `next IV after ${v.input.length / 2} bytes`);
      assert.equal(ctsDecrypt(hex(v.key), hex(v.output), hex(v.iv)).toString('hex'), v.input, `decrypt ${v.input.length / 2} bytes`);
      // a one-request key: the same through JavaScript AES (aes-once.ts)
      const once = ctsEncryptChained(hex(v.key), hex(v.input), hex(v.iv), true);
      assert.equal(once.ciphertext.toString('hex'), v.output, `one-request key: encrypt ${v.input.length / 2} bytes`);
      assert.equal(once.nextIv.toString('hex'), v.nextIv, `one-request key: next IV after ${v.input.length / 2} bytes`);
      assert.equal(ctsDecrypt(hex(v.key), hex(v.output), hex(v.iv), true).toString('hex'), v.input, `one-request key: decrypt ${v.input.length / 2} bytes`);
    }
  });

  it("one-request keys' JavaScript AES agrees with OpenSSL: CBC, ECB both ways, 128- and 256-bit keys, 1 to 40 blocks", () => {
    for (let i = 0; i < 400; i++) {
      const k = randomBytes(i % 2 ? 32 : 16);
      const iv = randomBytes(16);
      const data = randomBytes(16 * (1 + (i % 40)));
      const name = `aes-${k.length * 8}`;
      const ssl = (c: Cipheriv | Decipheriv): string => (c.setAutoPadding(false), Buffer.concat([c.update(data), c.final()]).toString('hex'));
      assert.equal(onceCbcEncrypt(k, Buffer.from(data), iv).toString('hex'), ssl(createCipheriv(`${name}-cbc`, k, iv)), `CBC, ${name}, ${data.length} bytes`);
      assert.equal(onceEcbEncrypt(k, data).toString('hex'), ssl(createCipheriv(`${name}-ecb`, k, null)), `ECB encrypt, ${name}`);
      assert.equal(onceEcbDecrypt(k, data).toString('hex'), ssl(createDecipheriv(`${name}-ecb`, k, null)), `ECB decrypt, ${name}`);
      // a key Buffer at an odd offset of a larger one, as keys decoded from a message are
      const odd = Buffer.concat([Buffer.alloc(3), k]).subarray(3);
      assert.equal(onceEcbEncrypt(odd, data).toString('hex'), ssl(createCipheriv(`${name}-ecb`, k, null)), `ECB encrypt, ${name}, unaligned key`);
      assert.equal(odd.toString('hex'), k.toString('hex'), 'the key bytes are left as they were');
    }
    assert.throws(() => onceEcbEncrypt(randomBytes(24), randomBytes(16)), /16 or 32 bytes/);
  });

  it('AES-CTS with a one-request key (JavaScript AES) equals the kept-key path (OpenSSL) at every length up to 1.5 KB', () => {
    for (let n = 16; n <= 1536; n += n < 80 ? 1 : 37) {
      const k = randomBytes(n % 2 ? 32 : 16);
      const iv = randomBytes(16);
      const plain = randomBytes(n);
      const kept = ctsEncryptChained(k, plain, iv);
      const once = ctsEncryptChained(Buffer.from(k), plain, iv, true);
      assert.equal(once.ciphertext.toString('hex'), kept.ciphertext.toString('hex'), `${n} bytes`);
      assert.equal(once.nextIv.toString('hex'), kept.nextIv.toString('hex'), `next IV after ${n} bytes`);
      assert.equal(ctsDecrypt(Buffer.from(k), kept.ciphertext, iv, true).toString('hex'), plain.toString('hex'), `decrypt ${n} bytes`);
    }
  });

  it('derived keys Kc, Ke, Ki: DK for 17/18 (RFC 3961), KDF-HMAC-SHA2 for 19/20 (RFC 8009 A)', () => {
    const vs = load<{ etype: number; key: string; constant: string; derived: string }>('derive');
    assert.equal(vs.length, 12);
    for (const v of vs) {
      if (v.etype <= 18) assert.equal(deriveKey(hex(v.key), hex(v.constant), true).toString('hex'), v.derived, `one-request key, etype ${v.etype} constant ${v.constant}`);
      const out =
        v.etype <= 18
          ? deriveKey(hex(v.key), hex(v.constant))
          : kdfHmacSha2(v.etype === 19 ? 'sha256' : 'sha384', hex(v.key), hex(v.constant), Buffer.alloc(0), v.derived.length * 4);
      assert.equal(out.toString('hex'), v.derived, `etype ${v.etype} constant ${v.constant}`);
    }
  });
});

describe('crypto vectors: enctype profiles', () => {
  it('string-to-key (RFC 3962 B incl. 64/65-byte pass phrases and g-clef; RFC 8009 A)', () => {
    const vs = load<{ etype: number; password: string; salt: string; params: string; key: string }>('string-to-key');
    assert.equal(vs.length, 16);
    for (const v of vs) {
      const k = profile(v.etype).stringToKey(hex(v.password), hex(v.salt), hex(v.params));
      assert.equal(k.etype, v.etype);
      assert.equal(k.value.toString('hex'), v.key, `etype ${v.etype} salt ${hex(v.salt).toString('latin1')} params ${v.params}`);
    }
  });

  it('string-to-key matches keys MIT ktutil derived (default salt and s2kparams)', () => {
    const vs = load<{ principal: string; etype: number; password: string; salt: string; key: string }>('mit-keys');
    assert.deepEqual([...new Set(vs.map((v) => v.etype))].sort(), [17, 18, 19, 20]);
    for (const v of vs) {
      assert.equal(profile(v.etype).stringToKey(v.password, v.salt).value.toString('hex'), v.key, `${v.principal} etype ${v.etype}`);
    }
  });

  it('encryption with the RFC 8009 A confounders, and decryption back', () => {
    const vs = load<{ etype: number; key: string; usage: number; plaintext: string; confounder: string; ciphertext: string }>('encrypt');
    assert.equal(vs.length, 8);
    for (const v of vs) {
      const p = profile(v.etype);
      const k = key(v.etype, v.key);
      assert.equal(p.encrypt(k, v.usage, hex(v.plaintext), hex(v.confounder)).toString('hex'), v.ciphertext, `etype ${v.etype} ${v.plaintext.length / 2} bytes`);
      assert.equal(p.decrypt(k, v.usage, hex(v.ciphertext)).toString('hex'), v.plaintext);
    }
  });

  it('decryption of MIT known ciphertexts, and fresh encryptions of the same plaintexts round-trip', () => {
    const vs = load<{ etype: number; plaintext: string; usage: number; key: string; ciphertext: string }>('decrypt');
    assert.deepEqual([...new Set(vs.map((v) => v.etype))].sort(), [17, 18, 19, 20]);
    for (const v of vs) {
      const p = profile(v.etype);
      const k = key(v.etype, v.key);
      assert.equal(p.decrypt(k, v.usage, hex(v.ciphertext)).toString('hex'), v.plaintext, `etype ${v.etype} usage ${v.usage}`);
      const again = p.encrypt(k, v.usage, hex(v.plaintext));
      assert.equal(again.length, v.ciphertext.length / 2);
      assert.notEqual(again.toString('hex'), v.ciphertext, 'a random confounder changes the ciphertext');
      assert.equal(p.decrypt(k, v.usage, again).toString('hex'), v.plaintext);
      // a key used for one message (kept in no cache, its derived keys made together) gives the same bytes
      const once = { ...key(v.etype, v.key), transient: true };
      assert.equal(p.decrypt(once, v.usage, hex(v.ciphertext)).toString('hex'), v.plaintext, `transient key, etype ${v.etype} usage ${v.usage}`);
      assert.equal(p.decrypt(k, v.usage, p.encrypt({ ...key(v.etype, v.key), transient: true }, v.usage, hex(v.plaintext))).toString('hex'), v.plaintext);
      assert.throws(() => p.decrypt({ ...key(v.etype, v.key), transient: true }, v.usage + 1, hex(v.ciphertext)), 'another usage');
    }
  });

  it('keyed checksums 15, 16, 19, 20 by checksum type', () => {
    const vs = load<{ cksumtype: number; etype: number; usage: number; plaintext: string; key: string; cksum: string }>('checksum');
    assert.deepEqual(vs.map((v) => v.cksumtype), [15, 16, 19, 20]);
    for (const v of vs) {
      const p = checksumProfile(v.cksumtype);
      assert.equal(p.etype, v.etype);
      const k = key(v.etype, v.key);
      assert.equal(p.checksum(k, v.usage, hex(v.plaintext)).toString('hex'), v.cksum);
      assert.equal(p.checksumBytes, v.cksum.length / 2);
      assert.ok(p.verifyChecksum(k, v.usage, hex(v.plaintext), hex(v.cksum)));
      assert.ok(!p.verifyChecksum(k, v.usage + 1, hex(v.plaintext), hex(v.cksum)), 'another usage');
      assert.ok(!p.verifyChecksum(k, v.usage, Buffer.concat([hex(v.plaintext), Buffer.from([0])]), hex(v.cksum)), 'other data');
      assert.ok(!p.verifyChecksum(k, v.usage, hex(v.plaintext), hex(v.cksum).subarray(1)), 'truncated checksum');
      const once = { ...key(v.etype, v.key), transient: true };
      assert.equal(p.checksum(once, v.usage, hex(v.plaintext)).toString('hex'), v.cksum, `transient key, checksum type ${v.cksumtype}`);
      assert.ok(!p.verifyChecksum({ ...key(v.etype, v.key), transient: true }, v.usage + 1, hex(v.plaintext), hex(v.cksum)), 'transient key, another usage');
    }
  });

  it('PRF (MIT t_prf, RFC 8009 A)', () => {
    const vs = load<{ etype: number; key: string; input: string; output: string }>('prf');
    assert.deepEqual([...new Set(vs.map((v) => v.etype))].sort(), [17, 18, 19, 20]);
    for (const v of vs) {
      const p = profile(v.etype);
      const out = p.prf(key(v.etype, v.key), hex(v.input));
      assert.equal(out.length, p.prfBytes);
      assert.equal(out.toString('hex'), v.output, `etype ${v.etype} input ${v.input}`);
    }
  });

  it('KRB-FX-CF2 (RFC 6113 §5.1) matches MIT t_cf2 for all four enctypes', () => {
    const vs = load<{ etype: number; password1: string; password2: string; pepper1: string; pepper2: string; output: string }>('cf2');
    assert.deepEqual(vs.map((v) => v.etype).sort(), [...supportedEtypes].sort());
    for (const v of vs) {
      const p = profile(v.etype);
      const k1 = p.stringToKey(v.password1, v.password1);
      const k2 = p.stringToKey(v.password2, v.password2);
      const viaEtype = cf2(v.etype, k1, v.pepper1, k2, v.pepper2);
      assert.equal(viaEtype.etype, v.etype);
      assert.equal(viaEtype.value.toString('hex'), v.output, `etype ${v.etype}`);
      assert.equal(cf2(k1, v.pepper1, k2, v.pepper2).value.toString('hex'), v.output, 'enctype taken from key1');
    }
  });
});
