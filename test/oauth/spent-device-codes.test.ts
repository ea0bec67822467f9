/**
 * The IdP client's memory of exchanged device codes (src/oauth/client.ts):
 * a code is remembered per token endpoint until it expires (at least an
 * hour), and past the size limit the oldest is forgotten first.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SpentDeviceCodes } from '../../src/oauth/client.js';

const T = 'https://idp.example/token';

describe('exchanged device codes', () => {
  it('remembers a code for its token endpoint until it expires, and at least an hour', () => {
    const s = new SpentDeviceCodes();
    const now = 1_000_000_000_000;
    s.add('code-1', T, now + 7200_000, now);
    assert.ok(s.has('code-1', T, now));
    assert.ok(!s.has('code-1', 'https://other.example/token', now), 'another endpoint, another code');
    assert.ok(!s.has('code-2', T, now));
    assert.ok(s.has('code-1', T, now + 7199_000));
    assert.ok(!s.has('code-1', T, now + 7200_000));
    s.add('code-3', T, now + 60_000, now);
    assert.ok(s.has('code-3', T, now + 3599_000), 'an hour at least');
    assert.ok(!s.has('code-3', T, now + 3600_000));
  });

  it('forgets the oldest code past its size limit', () => {
    const s = new SpentDeviceCodes(3);
    const now = 1_000_000_000_000;
    for (const c of ['a', 'b', 'c', 'd']) s.add(c, T, undefined, now);
    assert.deepEqual(['a', 'b', 'c', 'd'].map((c) => s.has(c, T, now)), [false, true, true, true]);
  });
});
