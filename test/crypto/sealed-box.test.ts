/**
 * Sealed boxes: what one use seals only that use opens; any change to the
 * box, its additional data or its key makes it refuse, without throwing.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { BOX_OVERHEAD, deriveKey, open, seal } from '../../src/crypto/sealed-box.js';

describe('sealed boxes', () => {
  const master = randomBytes(32);
  const key = deriveKey(master, 'test use v1');

  it('opens what it sealed, with and without additional data', () => {
    assert.equal(open(key, seal(key, 'hello'))?.toString(), 'hello');
    const aad = Buffer.from('entry\0attr');
    assert.equal(open(key, seal(key, Buffer.from('secret'), aad), aad)?.toString(), 'secret');
    assert.equal(seal(key, 'x').length, 1 + BOX_OVERHEAD);
  });

  it('two seals of one plaintext differ (a fresh nonce each)', () => {
    assert.notDeepEqual(seal(key, 'same'), seal(key, 'same'));
  });

  it('gives every box a nonce of its own, across refills of the nonce pool', () => {
    const nonces = new Set<string>();
    const n = 1500;
    for (let i = 0; i < n; i++) {
      const box = seal(key, 'same');
      assert.equal(open(key, box)?.toString(), 'same');
      nonces.add(box.subarray(0, 12).toString('hex'));
    }
    assert.equal(nonces.size, n);
    assert.ok(!nonces.has('00'.repeat(12)));
  });

  it('refuses a changed byte anywhere, other additional data, another use, and short input', () => {
    const aad = Buffer.from('a');
    const box = seal(key, 'payload', aad);
    for (let i = 0; i < box.length; i++) {
      const bad = Buffer.from(box);
      bad[i]! ^= 1;
      assert.equal(open(key, bad, aad), null, `byte ${i}`);
    }
    assert.equal(open(key, box, Buffer.from('b')), null);
    assert.equal(open(key, box), null);
    assert.equal(open(deriveKey(master, 'other use v1'), box, aad), null);
    assert.equal(open(key, box.subarray(0, BOX_OVERHEAD - 1), aad), null);
    assert.equal(open(key, Buffer.alloc(0)), null);
  });

  it('derives one key per use, the same each time', () => {
    assert.deepEqual(deriveKey(master, 'u'), deriveKey(master, 'u'));
    assert.notDeepEqual(deriveKey(master, 'u'), deriveKey(master, 'v'));
    assert.equal(deriveKey(master, 'u').length, 32);
  });
});
