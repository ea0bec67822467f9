/**
 * Kerberos crypto behaviour beyond the published vectors: round trips for
 * every enctype, many usages and sizes 0..100; every flipped bit, truncation
 * and extension of a ciphertext is rejected with a typed error; bad keys,
 * parameters and lengths fail cleanly; the derived-key cache stays bounded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cf2, checksumProfile, EncType, KrbCryptoError, prfPlus, profile, supportedEtypes } from '../../src/kerberos/crypto/index.js';
import { ctsDecrypt, ctsEncrypt } from '../../src/kerberos/crypto/cts.js';
import { DerivedKeyCache } from '../../src/kerberos/crypto/dk.js';
import { nfold } from '../../src/kerberos/crypto/nfold.js';

const isCode = (code: string) => (e: unknown) => e instanceof KrbCryptoError && e.code === code;

describe('crypto profiles', () => {
  it('are listed in preference order with their RFC parameters', () => {
    assert.deepEqual(supportedEtypes, [18, 17, 20, 19]);
    const expected = [
      { etype: EncType.AES128_CTS_HMAC_SHA1_96, name: 'aes128-cts-hmac-sha1-96', keyBytes: 16, checksumType: 15, checksumBytes: 12, prfBytes: 16, iterations: 4096 },
      { etype: EncType.AES256_CTS_HMAC_SHA1_96, name: 'aes256-cts-hmac-sha1-96', keyBytes: 32, checksumType: 16, checksumBytes: 12, prfBytes: 16, iterations: 4096 },
      { etype: EncType.AES128_CTS_HMAC_SHA256_128, name: 'aes128-cts-hmac-sha256-128', keyBytes: 16, checksumType: 19, checksumBytes: 16, prfBytes: 32, iterations: 32768 },
      { etype: EncType.AES256_CTS_HMAC_SHA384_192, name: 'aes256-cts-hmac-sha384-192', keyBytes: 32, checksumType: 20, checksumBytes: 24, prfBytes: 48, iterations: 32768 },
    ];
    for (const e of expected) {
      const p = profile(e.etype);
      assert.deepEqual(
        { etype: p.etype, name: p.name, keyBytes: p.keyBytes, checksumType: p.checksumType, checksumBytes: p.checksumBytes, prfBytes: p.prfBytes, iterations: p.defaultS2kParams.readUInt32BE(0) },
        e,
      );
      assert.equal(checksumProfile(e.checksumType), p);
      assert.equal(p.randomKey().value.length, e.keyBytes);
    }
    assert.throws(() => profile(23), isCode('UNSUPPORTED_ETYPE'));
    assert.throws(() => checksumProfile(1), isCode('UNSUPPORTED_CHECKSUM'));
  });

  it('default s2kparams give the same key as none; bad s2kparams are rejected', () => {
    for (const etype of supportedEtypes) {
      const p = profile(etype);
      assert.deepEqual(p.stringToKey('pw', 'EXAMPLE.TESTalice').value, p.stringToKey('pw', 'EXAMPLE.TESTalice', p.defaultS2kParams).value);
      assert.notDeepEqual(p.stringToKey('pw', 'EXAMPLE.TESTalice', Buffer.from([0, 0, 0, 2])).value, p.stringToKey('pw', 'EXAMPLE.TESTalice').value);
      for (const bad of [Buffer.from([0, 0, 1]), Buffer.from([0, 0, 0, 0]), Buffer.from([1, 0, 0, 0]), Buffer.from([0xff, 0xff, 0xff, 0xff]), Buffer.alloc(5)]) {
        assert.throws(() => p.stringToKey('pw', 'salt', bad), isCode('BAD_S2K_PARAMS'), bad.toString('hex'));
      }
    }
  });

  it('round-trip every enctype for sizes 0..100 and usages 0..70 plus the largest', () => {
    for (const etype of supportedEtypes) {
      const p = profile(etype);
      const k = p.randomKey();
      for (let size = 0; size <= 100; size++) {
        const msg = randomBytes(size);
        const usage = size % 71;
        const ct = p.encrypt(k, usage, msg);
        assert.equal(ct.length, 16 + size + p.checksumBytes);
        assert.deepEqual(p.decrypt(k, usage, ct), msg, `etype ${etype} size ${size}`);
      }
      for (const usage of [...Array.from({ length: 71 }, (_, i) => i), 1024, 0xffffffff]) {
        const msg = randomBytes(37);
        assert.deepEqual(p.decrypt(k, usage, p.encrypt(k, usage, msg)), msg, `etype ${etype} usage ${usage}`);
        const sum = p.checksum(k, usage, msg);
        assert.equal(sum.length, p.checksumBytes);
        assert.ok(p.verifyChecksum(k, usage, msg, sum));
        // a prefix of the right checksum, an extended one or none is no checksum: the MAC compare takes any length up to the digest's
        for (const other of [sum.subarray(0, 1), sum.subarray(0, sum.length - 1), Buffer.concat([sum, Buffer.from([0])]), Buffer.alloc(0)]) {
          assert.equal(p.verifyChecksum(k, usage, msg, other), false, `etype ${etype} checksum of ${other.length} bytes`);
        }
      }
    }
  });

  it('rejects every flipped bit, every truncation and an extension with a KrbCryptoError', () => {
    for (const etype of supportedEtypes) {
      const p = profile(etype);
      const k = p.randomKey();
      const ct = p.encrypt(k, 3, Buffer.from('seventeen bytes!!'));
      for (let i = 0; i < ct.length; i++) {
        for (let bit = 0; bit < 8; bit++) {
          const bad = Buffer.from(ct);
          bad[i]! ^= 1 << bit;
          assert.throws(() => p.decrypt(k, 3, bad), isCode('INTEGRITY'), `etype ${etype} byte ${i} bit ${bit}`);
        }
      }
      for (let len = 0; len < ct.length; len++) {
        assert.throws(() => p.decrypt(k, 3, ct.subarray(0, len)), (e: unknown) => e instanceof KrbCryptoError && (e.code === 'BAD_LENGTH' || e.code === 'INTEGRITY'), `length ${len}`);
      }
      assert.throws(() => p.decrypt(k, 3, ct.subarray(0, 16 + p.checksumBytes - 1)), isCode('BAD_LENGTH'));
      assert.throws(() => p.decrypt(k, 3, Buffer.concat([ct, Buffer.from([0])])), isCode('INTEGRITY'));
      assert.throws(() => p.decrypt(k, 4, ct), isCode('INTEGRITY'), 'another usage');
      assert.throws(() => p.decrypt(p.randomKey(), 3, ct), isCode('INTEGRITY'), 'another key');
    }
  });

  it('rejects keys of the wrong length without echoing them', () => {
    for (const etype of supportedEtypes) {
      const p = profile(etype);
      const wrong = { etype, value: Buffer.from('00112233445566778899aabbccddeeff0011', 'hex') };
      for (const op of [() => p.encrypt(wrong, 1, Buffer.alloc(3)), () => p.decrypt(wrong, 1, Buffer.alloc(64)), () => p.checksum(wrong, 1, Buffer.alloc(3)), () => p.prf(wrong, Buffer.alloc(3))]) {
        assert.throws(op, (e: unknown) => e instanceof KrbCryptoError && e.code === 'BAD_KEY' && !e.message.includes('0011223344'));
      }
      assert.throws(() => p.randomToKey(Buffer.alloc(p.keyBytes + 1)), isCode('BAD_KEY'));
      assert.throws(() => p.encrypt(p.randomKey(), 1, Buffer.alloc(3), Buffer.alloc(8)), KrbCryptoError, 'short confounder');
    }
  });

  it('CTS round-trips 16..100 bytes under any IV and rejects less than a block', () => {
    for (const aesKey of [randomBytes(16), randomBytes(32)]) {
      for (let n = 16; n <= 100; n++) {
        const iv = randomBytes(16);
        const pt = randomBytes(n);
        const ct = ctsEncrypt(aesKey, pt, iv);
        assert.equal(ct.length, n);
        assert.deepEqual(ctsDecrypt(aesKey, ct, iv), pt, `${n} bytes`);
      }
      assert.throws(() => ctsEncrypt(aesKey, Buffer.alloc(15)), isCode('BAD_LENGTH'));
      assert.throws(() => ctsDecrypt(aesKey, Buffer.alloc(15)), isCode('BAD_LENGTH'));
    }
    assert.throws(() => ctsEncrypt(Buffer.alloc(24), Buffer.alloc(16)), isCode('BAD_KEY'));
  });

  it('n-fold, PRF+ and CF2 refuse out-of-range sizes', () => {
    assert.throws(() => nfold(Buffer.alloc(0), 16), KrbCryptoError);
    assert.throws(() => nfold(Buffer.from('x'), 0), KrbCryptoError);
    const k = profile(18).randomKey();
    assert.equal(prfPlus(k, Buffer.from('pepper'), 100).length, 100);
    assert.throws(() => prfPlus(k, Buffer.from('pepper'), 255 * 16 + 1), KrbCryptoError);
    const mixed = cf2(17, profile(18).randomKey(), 'a', profile(20).randomKey(), 'b');
    assert.equal(mixed.etype, 17);
    assert.equal(mixed.value.length, 16);
  });

  it('keeps the derived-key cache bounded', () => {
    const cache = new DerivedKeyCache(16);
    let derivations = 0;
    for (let i = 0; i < 100; i++) cache.get({ etype: 17, value: randomBytes(16) }, i, 0xaa, () => (derivations++, Buffer.alloc(16)));
    assert.equal(cache.size, 16);
    assert.equal(derivations, 100);
    const base = randomBytes(16);
    cache.get({ etype: 17, value: base }, 1, 0xaa, () => (derivations++, Buffer.alloc(16)));
    cache.get({ etype: 17, value: Buffer.from(base) }, 1, 0xaa, () => (derivations++, Buffer.alloc(16)));
    assert.equal(derivations, 101, 'the same key bytes in another Buffer hit the cache');
  });

  it('derives keys of a transient key afresh, without caching them', () => {
    const cache = new DerivedKeyCache(16);
    let derivations = 0;
    const subkey = { etype: 17, value: randomBytes(16), transient: true };
    for (let i = 0; i < 3; i++) cache.get(subkey, 9, 0xaa, () => (derivations++, Buffer.alloc(16)));
    assert.equal(derivations, 3);
    assert.equal(cache.size, 0);
    // and a transient key encrypts and decrypts like any other
    for (const etype of [17, 18, 19, 20]) {
      const p = profile(etype);
      const k = { ...p.randomKey(), transient: true };
      const c = p.encrypt(k, 9, Buffer.from('reply'));
      assert.deepEqual(p.decrypt({ etype, value: k.value }, 9, c), Buffer.from('reply'));
    }
  });
});
