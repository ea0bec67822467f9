/**
 * The lookaside cache's own structures: the digest index (open addressing
 * with backward-shift deletion of the oldest entry) checked against a Map
 * over long random runs, and the reply ring checked against a model of
 * which replies must still be there, across many wraps of the ring.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DigestIndex } from '../../src/kerberos/digest-index.js';
import { Lookaside } from '../../src/kdc/lookaside.js';
import { prng } from '../support/prng.js';

const digest = (s: string) => createHash('sha256').update(s).digest();

describe('digest index', () => {
  for (const words of [2, 4] as const) {
    it(`agrees with a Map over 200,000 random operations (${words * 32}-bit keys)`, () => {
      const cap = 500;
      const ix = new DigestIndex(cap, words);
      const model = new Map<string, number>(); // key -> expires, insertion order = age
      const rnd = prng(words);
      let now = 0;
      let next = 0;
      const keyOf = (d: Buffer) => d.toString('hex', 0, words * 4);
      for (let op = 0; op < 200_000; op++) {
        now += rnd(10) === 0 ? 1 : 0;
        const roll = rnd(100);
        if (roll < 50) {
          // a digest seen before (perhaps gone) or a new one
          const d = digest(`k${rnd(next + 1)}`);
          const want = model.get(keyOf(d));
          assert.equal(ix.find(d, 0, now) >= 0, want !== undefined && want > now, `find at op ${op}`);
        } else if (roll < 95) {
          const d = digest(`k${next++}`);
          if (ix.find(d, 0, now) >= 0) continue;
          ix.push(d, 0, now + 20);
          model.delete(keyOf(d));
          if (model.size === cap) model.delete(model.keys().next().value!);
          model.set(keyOf(d), now + 20);
        } else {
          ix.expire(now);
          for (const [k, exp] of model) {
            if (exp > now) break;
            model.delete(k);
          }
        }
        assert.ok(ix.size <= cap);
      }
      ix.expire(now);
      for (const [k, exp] of model) if (exp <= now) model.delete(k);
      assert.equal(ix.size, model.size);
    });
  }

  it('finds a live record behind an expired one with the same key (expiries out of order, as after a clock step back)', () => {
    const ix = new DigestIndex(8, 2);
    ix.push(digest('x'), 0, 1000);
    ix.push(digest('a'), 0, 50);
    ix.expire(60); // stops at x, the oldest, which has not expired
    assert.equal(ix.find(digest('a'), 0, 60), -1, 'the old record of a has expired');
    ix.push(digest('a'), 0, 660);
    assert.ok(ix.find(digest('a'), 0, 100) >= 0, 'the new record of a is found');
  });

  it('keys on the bytes at the given offset', () => {
    const ix = new DigestIndex(4, 2);
    const a = Buffer.concat([Buffer.from('prefix--'), digest('a')]);
    ix.push(a, 8, 100);
    assert.ok(ix.find(digest('a'), 0, 0) >= 0);
    assert.equal(ix.find(a, 0, 0), -1);
    assert.equal(ix.find(digest('a'), 0, 100), -1, 'expired at its time');
  });
});

describe('lookaside ring', () => {
  it('returns exactly the reply kept for a request, and keeps the newest replies within its bytes, across many wraps', () => {
    const RING = 64 * 1024;
    const la = new Lookaside(RING, 1_000_000);
    const rnd = prng(7);
    const replies: Array<{ d: Buffer; body: Buffer }> = [];
    for (let i = 0; i < 20_000; i++) {
      const n = 1 + rnd(4000);
      const body = Buffer.alloc(n, i & 0xff);
      if (n >= 4) body.writeUInt32BE(i, 0);
      const d = digest(`req${i}`);
      la.add(d, body, i);
      replies.push({ d, body });
      const { bytes } = la.stats();
      assert.ok(bytes <= RING, `${bytes} bytes kept`);
      // the newest is always there, and whatever is found is byte-exact
      assert.deepEqual(la.get(d, i), body);
      if (i % 97 === 0) {
        let kept = 0;
        let keptBytes = 0;
        for (let j = i; j >= 0 && j > i - 200; j--) {
          const got = la.get(replies[j]!.d, i);
          if (got) {
            assert.deepEqual(got, replies[j]!.body, `reply ${j} intact`);
            kept++;
            keptBytes += got.length;
          } else break; // evicted oldest first: nothing older than a missing reply is kept
        }
        assert.ok(kept >= 1);
        // the ring holds at least half its size of the newest replies (one reply's room at most is wasted at a wrap)
        if (i > 100) assert.ok(keptBytes + 4000 >= RING / 2 || kept === 200, `${keptBytes} bytes in the newest ${kept} replies`);
      }
    }
  });

  it('forgets replies after their time, and refuses to keep huge ones', () => {
    const la = new Lookaside(64 * 1024, 30_000);
    la.add(digest('a'), Buffer.from('reply a'), 0);
    assert.deepEqual(la.get(digest('a'), 29_999), Buffer.from('reply a'));
    assert.equal(la.get(digest('a'), 30_000), undefined);
    la.add(digest('b'), Buffer.alloc(20_000), 40_000);
    assert.equal(la.get(digest('b'), 40_000), undefined, 'more than a quarter of the ring is not kept');
    assert.deepEqual(la.stats(), { entries: 0, bytes: 0 }, 'the expired reply went when the next was offered');
  });
});
