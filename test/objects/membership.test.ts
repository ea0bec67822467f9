/**
 * The reverse-membership index (objects/membership.ts) that memberOf and
 * the access rules read users' groups from: nested holders each once, a
 * loop ends, and an index built with an earlier one's member lists lent to
 * it still sees every change of a list (a member added, removed or
 * replaced by another of the same count).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MembershipIndex } from '../../src/objects/membership.js';
import type { Entry } from '../../src/directory/types.js';

const G = (cn: string) => `cn=${cn},cn=groups,cn=accounts,dc=example,dc=test`;
const U = (uid: string) => `uid=${uid},cn=users,cn=accounts,dc=example,dc=test`;
const holder = (cn: string, members: string[]): Entry => ({ dn: G(cn), attrs: members.length > 0 ? { member: members } : {} });
const sorted = (xs: readonly string[]) => [...xs].sort();

describe('the reverse-membership index', () => {
  it('lists every holder of an entry once, nested ones included, and ends a loop', () => {
    const index = new MembershipIndex([holder('a', [U('alice'), G('b')]), holder('b', [G('c')]), holder('c', [G('a'), U('Alice')]), holder('d', [])]);
    assert.deepEqual(sorted(index.memberOf(U('alice'))), sorted([G('a'), G('b'), G('c')]));
    assert.deepEqual(sorted(index.holdersOf(U('alice').toLowerCase())), sorted([G('a'), G('b'), G('c')].map((d) => d.toLowerCase())));
    assert.deepEqual(index.memberOf(U('nobody')), []);
    // members each once by their normal form: Alice and alice are one user
    assert.deepEqual(index.membersOf(G('b')), [G('c'), G('a'), U('Alice')]);
  });

  it('one holder held by nothing: the direct holder alone', () => {
    const index = new MembershipIndex([holder('a', [U('alice')]), holder('b', [U('bob'), U('alice')])]);
    assert.deepEqual(index.memberOf(U('bob')), [G('b')]);
    assert.deepEqual(sorted(index.memberOf(U('alice'))), sorted([G('a'), G('b')]));
  });

  it('built after an earlier index, sees each changed list and keeps the unchanged ones', () => {
    const first = new MembershipIndex([holder('a', [U('alice'), U('bob')]), holder('b', [U('carol')]), holder('c', [U('dave')])]);
    assert.deepEqual(first.memberOf(U('bob')), [G('a')]);
    // a: bob replaced by erin (same count); b unchanged; c emptied; d new
    const second = new MembershipIndex([holder('a', [U('alice'), U('erin')]), holder('b', [U('carol')]), holder('c', []), holder('d', [U('bob')])], first);
    assert.deepEqual(second.memberOf(U('bob')), [G('d')]);
    assert.deepEqual(second.memberOf(U('erin')), [G('a')]);
    assert.deepEqual(second.memberOf(U('carol')), [G('b')]);
    assert.deepEqual(second.memberOf(U('dave')), []);
    // the earlier index is not changed by the later one
    assert.deepEqual(first.memberOf(U('bob')), [G('a')]);
    assert.deepEqual(first.memberOf(U('dave')), [G('c')]);
  });
});
