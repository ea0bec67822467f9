/**
 * Kerberos crypto against published vectors (data files under
 * test/data/crypto: RFC 3961 A.1 n-fold, RFC 3962 B and RFC 8009 A
 * string-to-key, decryption and checksums, KRB-FX-CF2), plus round trips and
 * tamper detection.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cf2, profile, supportedEtypes, KrbCryptoError, checksumProfile } from '../../src/kerberos/crypto/index.js';
import { nfold } from '../../src/kerberos/crypto/nfold.js';
import { ctsDecrypt, ctsEncrypt } from '../../src/kerberos/crypto/cts.js';

const load = <T>(name: string): T[] => (JSON.parse(readFileSync(new URL(`../data/crypto/${name}.json`, import.meta.url), 'utf8')) as { vectors: T[] }).vectors;
const hex = (s: string) => Buffer.from(s, 'hex');

describe('Kerberos crypto vectors', () => {
  it('n-fold (RFC 3961 A.1)', () => {
    const vs = load<{ input: string; bits: number; output: string }>('nfold');
    assert.ok(vs.length >= 5);
    for (const v of vs) assert.equal(nfold(hex(v.input), v.bits / 8).toString('hex'), v.output, Buffer.from(v.input, 'hex').toString());
  });

  it('string-to-key (RFC 3962 B, RFC 8009 A)', () => {
    const vs = load<{ etype: number; password: string; salt: string; params: string; key: string; error: boolean }>('string-to-key').filter((v) => !v.error);
    assert.ok(vs.length >= 16);
    for (const v of vs) {
      const k = profile(v.etype).stringToKey(hex(v.password), hex(v.salt), hex(v.params));
      assert.equal(k.value.toString('hex'), v.key, `etype ${v.etype} ${hex(v.salt).toString('latin1')}`);
    }
  });

  it('decryption of known ciphertexts, and re-encryption round trips', () => {
    const vs = load<{ etype: number; plaintext: string; usage: number; key: string; ciphertext: string }>('decrypt');
    assert.equal(new Set(vs.map((v) => v.etype)).size, 4);
    for (const v of vs) {
      const p = profile(v.etype);
      const key = { etype: v.etype, value: hex(v.key) };
      assert.equal(p.decrypt(key, v.usage, hex(v.ciphertext)).toString('hex'), v.plaintext);
      const again = p.encrypt(key, v.usage, hex(v.plaintext));
      assert.equal(again.length, hex(v.ciphertext).length);
      assert.equal(p.decrypt(key, v.usage, again).toString('hex'), v.plaintext);
    }
  });

  it('keyed checksums', () => {
    const vs = load<{ cksumtype: number; usage: number; plaintext: string; key: string; cksum: string }>('checksum');
    assert.equal(vs.length, 4);
    for (const v of vs) {
      const p = checksumProfile(v.cksumtype);
      const key = { etype: p.etype, value: hex(v.key) };
      assert.equal(p.checksum(key, v.usage, hex(v.plaintext)).toString('hex'), v.cksum);
      assert.ok(p.verifyChecksum(key, v.usage, hex(v.plaintext), hex(v.cksum)));
      assert.ok(!p.verifyChecksum(key, v.usage + 1, hex(v.plaintext), hex(v.cksum)));
    }
  });

  it('KRB-FX-CF2 (RFC 6113 §5.1)', () => {
    for (const v of load<{ etype: number; out: string }>('cf2')) {
      const p = profile(v.etype);
      const k1 = p.stringToKey('key1', 'key1');
      const k2 = p.stringToKey('key2', 'key2');
      assert.equal(cf2(k1, 'a', k2, 'b').value.toString('hex'), v.out, `etype ${v.etype}`);
    }
  });
});

describe('Kerberos crypto behaviour', () => {
  it('CTS round-trips every length and swaps the last blocks', () => {
    const key = Buffer.from('chicken teriyaki');
    const input = Buffer.from("I would like the General Gau's Chicken, please, and wonton soup.");
    for (let n = 16; n <= input.length; n++) {
      const c = ctsEncrypt(key, input.subarray(0, n));
      assert.equal(c.length, n);
      assert.deepEqual(ctsDecrypt(key, c), input.subarray(0, n));
    }
  });

  it('round-trips all enctypes, usages and sizes, and detects every tampered byte', () => {
    for (const etype of supportedEtypes) {
      const p = profile(etype);
      const key = p.randomKey();
      for (let size = 0; size <= 70; size += 7) {
        const msg = Buffer.alloc(size, size);
        for (const usage of [1, 3, 7, 11, 51]) assert.deepEqual(p.decrypt(key, usage, p.encrypt(key, usage, msg)), msg);
      }
      const ct = p.encrypt(key, 3, Buffer.from('tamper me, please'));
      for (let i = 0; i < ct.length; i++) {
        const bad = Buffer.from(ct);
        bad[i] = bad[i]! ^ 0x01;
        assert.throws(() => p.decrypt(key, 3, bad), KrbCryptoError);
      }
      assert.throws(() => p.decrypt(key, 4, ct), KrbCryptoError, 'another usage');
      assert.throws(() => p.decrypt(key, 3, ct.subarray(0, 10)), KrbCryptoError);
      assert.throws(() => p.decrypt({ etype, value: Buffer.alloc(3) }, 3, ct), KrbCryptoError);
    }
    assert.throws(() => profile(23), KrbCryptoError);
  });
});
