/**
 * One identity at an IdP links one user (docs/device-flow.md): user-mod and
 * user-add refuse a link (IdP reference, IdP user id) that another user
 * holds, naming that user, with DuplicateEntry; the user holding it may set
 * it again, and the same IdP user id at another reference is another
 * identity.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

describe('an IdP identity links one user', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;
  const link = (idp: string, sub: string) => ({ user_auth_type: ['idp'], idp, idp_user_id: sub });
  const linkOf = async (login: string) => {
    const r = (await admin.call('user_show', [login])).result;
    return [r.diridpconfiglink, r.diridpsub];
  };

  before(async () => {
    ({ realm, admin } = await openAdminRealm({}));
    for (const name of ['corp', 'partner']) {
      await admin.call('idp_add', [name], { provider: 'keycloak', organization: 'main', base_url: `${name}.example.test`, client_id: 'c', secret: 's3cret' });
    }
    for (const [login, first] of [['carol', 'Carol'], ['gus', 'Gus']] as const) await admin.call('user_add', [login], { first, last: 'Smith' });
    await admin.call('user_mod', ['carol'], link('corp', 'carol.smith'));
  });
  after(async () => realm?.close());

  it('user-mod refuses a link another user holds, naming that user, and changes nothing', async () => {
    const e = await rpcError(admin.call('user_mod', ['gus'], link('corp', 'carol.smith')));
    assert.equal(e.code, 4002);
    assert.equal(e.message, 'IdP user ID "carol.smith" of IdP reference "corp" is already linked to user "carol"');
    assert.deepEqual(await linkOf('gus'), [undefined, undefined]);
    assert.deepEqual(await linkOf('carol'), [['corp'], ['carol.smith']]);
  });

  it('refuses it however the link is written: --setattr, or the user id alone next to a link already there', async () => {
    const bySetattr = await rpcError(admin.call('user_mod', ['gus'], { setattr: ['dirIdpConfigLink=corp', 'dirIdpSub=carol.smith'] }));
    assert.equal(bySetattr.code, 4002);
    await admin.call('user_mod', ['gus'], link('corp', 'gus.smith'));
    const subAlone = await rpcError(admin.call('user_mod', ['gus'], { idp_user_id: 'carol.smith' }));
    assert.equal(subAlone.code, 4002);
    assert.match(subAlone.message, /already linked to user "carol"$/);
    assert.deepEqual(await linkOf('gus'), [['corp'], ['gus.smith']]);
  });

  it('user-add refuses a new user with a link another user holds', async () => {
    const e = await rpcError(admin.call('user_add', ['mallory'], { first: 'Mal', last: 'Lory', ...link('corp', 'carol.smith') }));
    assert.equal(e.code, 4002);
    assert.equal(e.message, 'IdP user ID "carol.smith" of IdP reference "corp" is already linked to user "carol"');
    assert.equal((await rpcError(admin.call('user_show', ['mallory']))).code, 4001);
  });

  it('the user holding a link may set it again, and keeps it through a rename', async () => {
    // the same link alone changes nothing (EmptyModlist); with another change it is set again
    const r = await admin.call('user_mod', ['carol'], { ...link('corp', 'carol.smith'), user_auth_type: ['idp', 'password'] });
    assert.deepEqual(r.result.diridpsub, ['carol.smith']);
    assert.deepEqual(r.result.diruserauthtype, ['idp', 'password']);
    await admin.call('user_mod', ['carol'], { setattr: ['dirIdpSub=carol.smith'], first: 'Caroline' });
    await admin.call('user_mod', ['carol'], { rename: 'caroline', ...link('corp', 'carol.smith') });
    assert.deepEqual(await linkOf('caroline'), [['corp'], ['carol.smith']]);
    await admin.call('user_mod', ['caroline'], { rename: 'carol' });
  });

  it('the same IdP user id at another reference, or another id at the same one, is another identity', async () => {
    await admin.call('user_add', ['pete'], { first: 'Pete', last: 'Smith', ...link('partner', 'carol.smith') });
    assert.deepEqual(await linkOf('pete'), [['partner'], ['carol.smith']]);
    await admin.call('user_add', ['dora'], { first: 'Dora', last: 'Smith', ...link('corp', 'Carol.Smith') });
    assert.deepEqual(await linkOf('dora'), [['corp'], ['Carol.Smith']], 'IdP user ids are compared exactly, as logins compare them');
  });

  it('a link given up is free for another user', async () => {
    await admin.call('user_mod', ['pete'], { user_auth_type: ['password'], delattr: ['dirIdpConfigLink=partner', 'dirIdpSub=carol.smith'] });
    await admin.call('user_mod', ['gus'], { delattr: ['dirIdpConfigLink=corp', 'dirIdpSub=gus.smith'] });
    await admin.call('user_mod', ['gus'], link('partner', 'carol.smith'));
    assert.deepEqual(await linkOf('gus'), [['partner'], ['carol.smith']]);
  });
});
