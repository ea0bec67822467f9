/**
 * The count of pending device flows behind the limits of starts
 * (src/kdc/idp-starts.ts), in process with its own clock: what a flow is
 * counted under (the user, anonymous armor apart; the armor ticket; the
 * address, an IPv6 one by its /64), when it stops counting (its end, its
 * code's expiry, the window), the bound on what it keeps, and the refusals
 * it answers again for a moment. test/kdc/idp-start-limits.test.ts drives
 * the same limits through a running KDC.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { addressKey, IdpStarts, REFUSAL_MEMORY_MS, type Over, type Requester, type Reservation } from '../../src/kdc/idp-starts.js';
import { KdcError } from '../../src/kdc/errors.js';

const started = (r: Reservation | Over): Reservation => {
  assert.ok('confirm' in r, `refused: ${JSON.stringify(r)}`);
  return r;
};
const refused = (r: Reservation | Over): Over => {
  assert.ok(!('confirm' in r), 'started');
  return r;
};
const MIN = 60_000;

describe('the count of pending device flows', () => {
  it('keys an address: IPv4 as it is, IPv6 by its /64, an IPv4-mapped address as IPv4', () => {
    assert.equal(addressKey('192.0.2.7'), '192.0.2.7');
    assert.equal(addressKey('::ffff:192.0.2.7'), '192.0.2.7');
    assert.equal(addressKey('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:db8:1:2::9'), '2001:db8:1:2::/64');
    assert.equal(addressKey('2001:DB8::1'), '2001:db8:0:0::/64');
    assert.equal(addressKey('fe80::1%eth0'), 'fe80:0:0:0::/64');
    assert.equal(addressKey('::1'), '0:0:0:0::/64');
  });

  it('counts per user (anonymous armor apart), per armor ticket and per address', () => {
    const s = new IdpStarts({ perUser: 2, perTicket: 3, perAddress: 4, windowMs: 10 * MIN, maxFlows: 100 });
    const at = (user: string, ticket: string, address: string, anonymous = false): Requester => ({ user, ticket, address, anonymous });
    started(s.reserve(at('alice', 't1', '2001:db8:1:2::1', true), 0));
    started(s.reserve(at('alice', 't2', '2001:db8:1:2::2', true), 0));
    assert.deepEqual(refused(s.reserve(at('alice', 't3', '192.0.2.1', true), 0)).limit, 'user');
    // the user's count under armor of a realm principal is another
    started(s.reserve(at('alice', 't3', '192.0.2.1'), 0));
    started(s.reserve(at('bob', 't3', '192.0.2.2'), 0));
    started(s.reserve(at('carol', 't3', '192.0.2.3'), 0));
    assert.equal(refused(s.reserve(at('dave', 't3', '192.0.2.4'), 0)).limit, 'ticket');
    // two addresses of one /64 are one address
    started(s.reserve(at('erin', 't4', '2001:db8:1:2::3'), 0));
    started(s.reserve(at('fay', 't5', '2001:db8:1:2:ffff::4'), 0));
    const over = refused(s.reserve(at('gus', 't6', '2001:db8:1:2::5'), 0));
    assert.deepEqual(over, { limit: 'address', max: 4, freeInMs: 10 * MIN });
    started(s.reserve(at('gus', 't6', '2001:db8:1:3::5'), 0));
    assert.equal(s.size, 8);
  });

  it('a flow stops counting when it ends, when its start is cancelled, at its code expiry, and after the window', () => {
    const s = new IdpStarts({ perUser: 1, perTicket: 100, perAddress: 100, windowMs: 10 * MIN, maxFlows: 100 });
    const who = (user: string): Requester => ({ user, anonymous: false, address: '192.0.2.1' });
    started(s.reserve(who('a'), 0)).confirm('flow-a', 1000);
    refused(s.reserve(who('a'), 999));
    started(s.reserve(who('a'), 1000)).confirm('flow-a2', 10 * MIN + 1000);
    s.ended('flow-a2');
    started(s.reserve(who('a'), 1001)).cancel();
    const r = started(s.reserve(who('a'), 1002));
    r.confirm('flow-a3', 60 * MIN); // a code that outlives the window
    assert.equal(refused(s.reserve(who('a'), 1003)).freeInMs, 10 * MIN - 1);
    started(s.reserve(who('a'), 10 * MIN + 1002));
    s.ended('not-started-here');
    assert.equal(s.size, 1);
  });

  it('refuses every start past the flows it may count, and keeps no more than twice as many queued', () => {
    const s = new IdpStarts({ perUser: 10, perTicket: 10, perAddress: 10, windowMs: 10 * MIN, maxFlows: 50 });
    let most = 0;
    for (let i = 0; i < 50; i++) started(s.reserve({ user: `u${i}`, anonymous: false, address: `10.0.${i >> 8}.${i & 255}` }, 0)).confirm(`f${i}`, 10 * MIN);
    assert.equal(refused(s.reserve({ user: 'late', anonymous: false }, 1)).limit, 'kdc');
    // flows that end at once behind one that stays: the queue is compacted, never longer than twice the bound
    for (let i = 0; i < 49; i++) s.ended(`f${i + 1}`);
    for (let i = 0; i < 100_000; i++) {
      const id = `g${i}`;
      started(s.reserve({ user: `v${i}`, anonymous: false, address: `10.1.${(i >> 8) & 255}.${i & 255}` }, 2)).confirm(id, 10 * MIN);
      s.ended(id);
      most = Math.max(most, s.queued);
    }
    assert.equal(s.size, 1);
    assert.ok(most <= 101, `queued: ${most}`);
  });

  it('answers a refused start again for a moment, to the same armor ticket, user and address only', () => {
    const s = new IdpStarts();
    const who: Requester = { user: 'alice', ticket: 't1', anonymous: false, address: '192.0.2.1' };
    const refusal = { error: new KdcError('KDC_ERR_PREAUTH_FAILED', 'device authorization: the IdP answered invalid_client'), note: 'idp: invalid_client', at: 0 };
    s.refused(who, refusal, 0);
    assert.equal(s.recentRefusal(who, REFUSAL_MEMORY_MS - 1), refusal);
    assert.equal(s.recentRefusal({ ...who, user: 'bob' }, 1), undefined);
    assert.equal(s.recentRefusal({ ...who, ticket: 't2' }, 1), undefined);
    assert.equal(s.recentRefusal({ ...who, address: '192.0.2.2' }, 1), undefined);
    assert.equal(s.recentRefusal(who, REFUSAL_MEMORY_MS), undefined);
    // without an armor ticket nothing tells the repeat from another request: nothing is kept
    s.refused({ user: 'carol', anonymous: false }, refusal, 0);
    assert.equal(s.recentRefusal({ user: 'carol', anonymous: false }, 1), undefined);
  });
});
