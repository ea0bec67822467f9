/**
 * The IdP client's memory of exchanged device codes (src/oauth/client.ts):
 * a code is remembered per token endpoint until it expires (at least an
 * hour), and past the size limit the oldest is forgotten first. Its memory
 * of how it polls pending codes follows the same rules, the code polled
 * longest ago forgotten first.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { codeKey, DeviceCodePolls, SpentDeviceCodes } from '../../src/oauth/client.js';

const T = 'https://idp.example/token';

describe('exchanged device codes', () => {
  it('remembers a code for its token endpoint until it expires, and at least an hour', () => {
    const s = new SpentDeviceCodes();
    const now = 1_000_000_000_000;
    s.add(codeKey('code-1', T), now + 7200_000, now);
    assert.ok(s.has(codeKey('code-1', T), now));
    assert.ok(!s.has(codeKey('code-1', 'https://other.example/token'), now), 'another endpoint, another code');
    assert.ok(!s.has(codeKey('code-2', T), now));
    assert.ok(s.has(codeKey('code-1', T), now + 7199_000));
    assert.ok(!s.has(codeKey('code-1', T), now + 7200_000));
    s.add(codeKey('code-3', T), now + 60_000, now);
    assert.ok(s.has(codeKey('code-3', T), now + 3599_000), 'an hour at least');
    assert.ok(!s.has(codeKey('code-3', T), now + 3600_000));
  });

  it('forgets the oldest code past its size limit', () => {
    const s = new SpentDeviceCodes(3);
    const now = 1_000_000_000_000;
    for (const c of ['a', 'b', 'c', 'd']) s.add(codeKey(c, T), undefined, now);
    assert.deepEqual(['a', 'b', 'c', 'd'].map((c) => s.has(codeKey(c, T), now)), [false, true, true, true]);
  });
});

describe('polls of pending device codes', () => {
  const now = 1_000_000_000_000;
  const at = (lastPoll: number, until = now + 600_000) => ({ lastPoll, interval: 5, until });

  it('remembers a code per token endpoint until it expires', () => {
    const p = new DeviceCodePolls();
    p.set(codeKey('code-1', T), at(now), now);
    assert.equal(p.get(codeKey('code-1', T), now)?.lastPoll, now);
    assert.equal(p.get(codeKey('code-1', 'https://other.example/token'), now), undefined, 'another endpoint, another code');
    assert.equal(p.get(codeKey('code-1', T), now + 600_000), undefined, 'expired');
    p.delete(codeKey('code-1', T));
    assert.equal(p.get(codeKey('code-1', T), now), undefined);
  });

  it('past its size limit forgets the code written longest ago', () => {
    const p = new DeviceCodePolls(3);
    for (const c of ['a', 'b', 'c']) p.set(codeKey(c, T), at(now), now);
    p.set(codeKey('a', T), at(now + 5000), now + 5000); // polled again: now the latest
    p.set(codeKey('d', T), at(now + 6000), now + 6000);
    assert.deepEqual(['a', 'b', 'c', 'd'].map((c) => p.get(codeKey(c, T), now + 6000) !== undefined), [true, false, true, true]);
    assert.equal(p.size, 3);
  });
});
