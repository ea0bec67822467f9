/**
 * The specification's unlink command as written (§3 link rows, §4.6):
 * `user-mod alice --user-auth-type=password --delattr=dirIdpConfigLink
 * --delattr=dirIdpSub`, an attribute name without `=value` removing all its
 * values, through the `dirid` client with a ticket from MIT kinit and over
 * RPC. Afterwards `user-show --all` shows no link and no dirIdpUser class,
 * and the user can be linked again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';
import { rpcError } from '../support/expect.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('unlinking a user from an IdP reference', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[]): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env);

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    admin = new RpcSession(realm.url, realm.ca);
    assert.equal((await admin.login('admin', realm.adminPassword)).status, 200);
    for (const name of ['keycloak', 'other']) {
      await admin.call('idp_add', [name], { provider: 'keycloak', organization: 'main', base_url: `${name}.example.test`, client_id: 'c', secret: 's3cret-value' });
    }
    await admin.call('user_add', ['alice'], { first: 'Alice', last: 'Liddell' });
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'Builder' });
  });
  after(async () => realm.stop());

  it('dirid user-mod --delattr=ATTR without a value unlinks, user-show --all shows no link, and the user links again', async () => {
    const link = await dirid(['user-mod', 'alice', '--user-auth-type=idp', '--idp=keycloak', '--idp-user-id=alice@example.test']);
    assert.equal(link.code, 0, link.stderr);
    const unlink = await dirid(['user-mod', 'alice', '--user-auth-type=password', '--delattr=dirIdpConfigLink', '--delattr=dirIdpSub']);
    assert.equal(unlink.code, 0, unlink.stderr);
    assert.match(unlink.stdout, /Modified user "alice"/);
    assert.doesNotMatch(unlink.stdout, /External IdP/);
    const all = await dirid(['user-show', 'alice', '--all']);
    assert.equal(all.code, 0, all.stderr);
    assert.doesNotMatch(all.stdout, /External IdP|diridp/i);
    assert.match(all.stdout, /User authentication types: password/);
    const relink = await dirid(['user-mod', 'alice', '--user-auth-type=idp', '--idp=other', '--idp-user-id=A-1']);
    assert.equal(relink.code, 0, relink.stderr);
    assert.match(relink.stdout, /External IdP configuration: other/);
    assert.match((await dirid(['user-show', 'alice', '--all'])).stdout, /objectclass: .*dirIdpUser/);
  });

  it('over RPC: the name-only form, the dirIdpUser class leaves with the link and comes back with the next one', async () => {
    await admin.call('user_mod', ['bob'], { user_auth_type: ['idp'], idp: 'keycloak', idp_user_id: 'bob-sub' });
    const r = await admin.call('user_mod', ['bob'], { user_auth_type: ['password'], delattr: ['dirIdpConfigLink', 'dirIdpSub'] });
    assert.equal(r.result.diridpconfiglink, undefined);
    assert.equal(r.result.diridpsub, undefined);
    const raw = (await admin.call('user_show', ['bob'], { all: true, raw: true })).result;
    assert.equal(raw.diridpconfiglink, undefined);
    assert.equal(raw.diridpsub, undefined);
    assert.ok(!(raw.objectclass as string[]).some((c) => c.toLowerCase() === 'diridpuser'), String(raw.objectclass));
    // nobody links to the reference any more (alice moved to "other" above)
    assert.equal((await admin.call('idp_del', ['keycloak'])).summary, 'Deleted IdP reference "keycloak"');
    const again = await admin.call('user_mod', ['bob'], { user_auth_type: ['idp'], idp: 'other', idp_user_id: 'bob-sub' });
    assert.deepEqual(again.result.diridpconfiglink, ['other']);
    assert.ok(((await admin.call('user_show', ['bob'], { all: true })).result.objectclass as string[]).includes('dirIdpUser'));
  });

  it('unlinks with an empty --setattr too', async () => {
    await admin.call('user_add', ['carol'], { first: 'Carol', last: 'C' });
    await admin.call('user_mod', ['carol'], { idp: 'other', idp_user_id: 'carol-sub' });
    const r = await admin.call('user_mod', ['carol'], { setattr: ['dirIdpConfigLink=', 'dirIdpSub='] });
    assert.equal(r.result.diridpconfiglink, undefined);
    assert.equal(r.result.diridpsub, undefined);
    assert.ok(!((await admin.call('user_show', ['carol'], { all: true })).result.objectclass as string[]).includes('dirIdpUser'));
  });

  it('still refuses half a link, and deleting what is not there changes nothing', async () => {
    assert.equal((await rpcError(admin.call('user_mod', ['bob'], { delattr: ['dirIdpSub'] }))).message, "'idp_user_id' is required");
    await admin.call('user_mod', ['bob'], { delattr: ['dirIdpSub', 'dirIdpConfigLink'] });
    const e = await rpcError(admin.call('user_mod', ['bob'], { delattr: ['dirIdpSub'] }));
    assert.equal(e.code, 4202);
    assert.equal(e.message, 'no modifications to be performed');
    assert.equal((await rpcError(admin.call('user_mod', ['bob'], { delattr: ['noSuchAttr'] }))).code, 4205);
  });
});
