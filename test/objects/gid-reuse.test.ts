/**
 * A number that is some user's primary group (its gidNumber) is never given
 * to a group, nor as a UID (objects/posix.ts): on every host the group, or
 * the new user's private group, would own that user's files. It stays taken
 * when the group that had it is deleted or renumbered, or when an
 * administrator gave the user a number no group had; for every caller, and
 * the range's allocation passes it by.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const BASE = 700_000;

/** Refused with DuplicateEntry (4002), the message matching `what`. */
async function taken(p: Promise<unknown>, what: RegExp): Promise<void> {
  const e = await rpcError(p);
  assert.equal(e.code, 4002, e.message);
  assert.match(e.message, what);
}

describe("a user's primary group number is not given again", () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  let users: InProcessCaller;
  let groups: InProcessCaller;
  const gidOf = async (cmd: string, name: string): Promise<number> => ((await admin.call(cmd, [name])).result.gidnumber as number[])[0]!;

  before(async () => {
    ({ realm, admin } = await openAdminRealm({ idStart: BASE }));
    users = await realm.delegate('uadm', 'Uadm-pass-123', 'helpdesk', 'User Administrators');
    groups = await realm.delegate('gadm', 'Gadm-pass-123', 'groupdesk', 'Group Administrators');
  });
  after(async () => realm.close());

  it("a Group Administrator who deleted a group may not make a new one with its GID while it is a user's primary group; nor may an administrator", async () => {
    await groups.call('group_add', ['finance']);
    const gid = await gidOf('group_show', 'finance');
    await users.call('user_add', ['fred'], { first: 'F', last: 'F', gidnumber: gid });
    await groups.call('group_del', ['finance']);
    const fred = new RegExp(`GID ${gid} is already used by the primary group of user "fred" \\(its GID, which no group has now\\)`);
    await taken(groups.call('group_add', ['newfin'], { gid }), fred);
    await taken(admin.call('group_add', ['newfin'], { gid }), fred);
    await groups.call('group_add', ['other']);
    await taken(groups.call('group_mod', ['other'], { gid }), fred);
    await taken(admin.call('group_mod', ['other'], { gid }), fred);
    // nor as a user's UID, whose private group would be that GID
    await taken(admin.call('user_add', ['frieda'], { first: 'F', last: 'F', uid: gid }), new RegExp(`UID ${gid} is already used by the primary group of user "fred"`));
    // once no user has it as its primary group, it may be given again
    await admin.call('user_mod', ['fred'], { gidnumber: ((await admin.call('user_show', ['fred'])).result.uidnumber as number[])[0]! });
    await groups.call('group_add', ['newfin'], { gid });
  });

  it('the same after a group was renumbered', async () => {
    await groups.call('group_add', ['ops']);
    const old = await gidOf('group_show', 'ops');
    await users.call('user_add', ['olga'], { first: 'O', last: 'O', gidnumber: old });
    await groups.call('group_mod', ['ops'], { gid: BASE + 5000 });
    await taken(groups.call('group_add', ['ops2'], { gid: old }), new RegExp(`GID ${old} is already used by the primary group of user "olga"`));
  });

  it('a number an administrator gave as a primary group, which no group had, is not given to a group, and the range passes it by', async () => {
    await admin.call('group_add', ['probe']);
    const next = (await gidOf('group_show', 'probe')) + 1;
    await admin.call('user_add', ['gina'], { first: 'G', last: 'G', uid: BASE + 9000, gidnumber: next });
    await taken(groups.call('group_add', ['gina-files'], { gid: next }), new RegExp(`GID ${next} is already used by the primary group of user "gina"`));
    await groups.call('group_add', ['after']);
    assert.equal(await gidOf('group_show', 'after'), next + 1, 'the allocation passed it by');
  });

  it("a user's own primary group is no conflict: its UID may be set to it", async () => {
    await admin.call('user_add', ['hugo'], { first: 'H', last: 'U', uid: BASE + 9100, gidnumber: BASE + 9101 });
    await admin.call('user_mod', ['hugo'], { uid: BASE + 9101 });
    const h = (await admin.call('user_show', ['hugo'])).result;
    assert.deepEqual([h.uidnumber, h.gidnumber], [[BASE + 9101], [BASE + 9101]]);
  });
});
