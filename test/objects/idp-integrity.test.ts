/**
 * An IdP reference stays usable whatever option changes it (specification
 * §2.1 required fields, §2.2 templates): after any idp-add or idp-mod, by
 * named options or by --setattr/--addattr/--delattr, it keeps a client id, a
 * token endpoint and a device or authorization endpoint; a template-built
 * reference keeps the endpoints its template builds from its
 * --organization and --base-url. `--provider oidc` is the same as no
 * --provider.
 * In process (test/support/in-process.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openAdminRealm, type InProcessCaller, type InProcessRealm } from '../support/in-process.js';
import { rpcError } from '../support/expect.js';

const SECRET = 'integrity-secret-7Hx';

describe('IdP references stay usable', () => {
  let realm: InProcessRealm;
  let admin: InProcessCaller;

  before(async () => {
    ({ realm, admin } = await openAdminRealm());
  });
  after(async () => realm.close());

  const show = async (name: string) => (await admin.call('idp_show', [name], { all: true, raw: true })).result as Record<string, string[] | undefined>;
  const refused = async (p: Promise<unknown>, code: number, message: string | RegExp) => {
    const e = await rpcError(p);
    assert.equal(e.code, code, e.message);
    if (typeof message === 'string') assert.equal(e.message, message);
    else assert.match(e.message, message);
  };

  it('refuses to remove the client id, by --delattr (with or without a value) or an empty --setattr', async () => {
    await admin.call('idp_add', ['gen'], { client_id: 'gen-client', secret: SECRET, auth_uri: 'https://idp.example.test/auth', token_uri: 'https://idp.example.test/token' });
    const before = await show('gen');
    await refused(admin.call('idp_mod', ['gen'], { delattr: ['dirIdpClientId=gen-client'] }), 3007, "'client_id' is required");
    await refused(admin.call('idp_mod', ['gen'], { delattr: ['dirIdpClientId'] }), 3007, "'client_id' is required");
    await refused(admin.call('idp_mod', ['gen'], { setattr: ['dirIdpClientId='] }), 3007, "'client_id' is required");
    assert.deepEqual(await show('gen'), before);
  });

  it('refuses to remove the token endpoint or the last of the device and authorization endpoints', async () => {
    const before = await show('gen');
    await refused(admin.call('idp_mod', ['gen'], { delattr: ['dirIdpTokenEndpoint=https://idp.example.test/token'] }), 3007, "'token_uri' is required");
    await refused(admin.call('idp_mod', ['gen'], { setattr: ['dirIdpTokenEndpoint='] }), 3007, "'token_uri' is required");
    await refused(admin.call('idp_mod', ['gen'], { delattr: ['dirIdpAuthEndpoint'] }), 3007, "'auth_uri' is required");
    assert.deepEqual(await show('gen'), before);
    // a device endpoint is enough for a login
    await admin.call('idp_mod', ['gen'], { dev_auth_uri: 'https://idp.example.test/device' });
    const r = await admin.call('idp_mod', ['gen'], { delattr: ['dirIdpAuthEndpoint'] });
    assert.equal(r.result.diridpauthendpoint, undefined);
    await refused(admin.call('idp_mod', ['gen'], { delattr: ['dirIdpDevAuthEndpoint'] }), 3007, "'auth_uri' is required");
    assert.deepEqual((await show('gen')).diridpdevauthendpoint, ['https://idp.example.test/device']);
  });

  it('accepts a reference with a device endpoint and no authorization endpoint', async () => {
    const r = await admin.call('idp_add', ['devonly'], { client_id: 'c', secret: SECRET, dev_auth_uri: 'https://idp.example.test/device', token_uri: 'https://idp.example.test/token' });
    assert.deepEqual(r.result.diridpdevauthendpoint, ['https://idp.example.test/device']);
  });

  it('rebuilds the endpoints of a template-built reference when its organization or base URL changes', async () => {
    await admin.call('idp_add', ['kc'], { provider: 'keycloak', organization: 'main', base_url: 'kc.example.test', client_id: 'c', secret: SECRET });
    const p = (base: string, realmName: string) => `https://${base}/realms/${realmName}/protocol/openid-connect/`;
    const org = await admin.call('idp_mod', ['kc'], { setattr: ['dirIdpOrg=staff'] });
    assert.deepEqual(org.result.diridporg, ['staff']);
    assert.deepEqual(org.result.diridpauthendpoint, [`${p('kc.example.test', 'staff')}auth`]);
    assert.deepEqual(org.result.diridpdevauthendpoint, [`${p('kc.example.test', 'staff')}auth/device`]);
    assert.deepEqual(org.result.diridptokenendpoint, [`${p('kc.example.test', 'staff')}token`]);
    assert.deepEqual(org.result.diridpuserinfoendpoint, [`${p('kc.example.test', 'staff')}userinfo`]);
    assert.deepEqual(org.result.diridpkeysendpoint, [`${p('kc.example.test', 'staff')}certs`]);
    assert.deepEqual(org.result.diridpissuerurl, ['https://kc.example.test/realms/staff']);
    const base = await admin.call('idp_mod', ['kc'], { setattr: ['dirIdpBaseUrl=https://sso.example.test:8443/'] });
    assert.deepEqual(base.result.diridpbaseurl, ['sso.example.test:8443']);
    assert.deepEqual(base.result.diridptokenendpoint, [`${p('sso.example.test:8443', 'staff')}token`]);
    assert.deepEqual(base.result.diridpissuerurl, ['https://sso.example.test:8443/realms/staff']);
    assert.deepEqual(base.result.diridpscope, ['openid email'], 'the scope is not an endpoint: it stays');
  });

  it('refuses endpoints that contradict the template, and a template without its parameters', async () => {
    const before = await show('kc');
    await refused(admin.call('idp_mod', ['kc'], { token_uri: 'https://elsewhere.example.test/token' }), 3005, /--token-uri/);
    await refused(admin.call('idp_mod', ['kc'], { setattr: ['dirIdpAuthEndpoint=https://elsewhere.example.test/auth'] }), 3005, /--auth-uri/);
    await refused(admin.call('idp_mod', ['kc'], { delattr: ['dirIdpKeysEndpoint'] }), 3005, /--keys-uri/);
    await refused(admin.call('idp_mod', ['kc'], { delattr: ['dirIdpOrg'] }), 3007, "'organization' is required");
    await refused(admin.call('idp_mod', ['kc'], { setattr: ['dirIdpBaseUrl=http://kc.example.test'] }), 3009, /base_url/);
    assert.deepEqual(await show('kc'), before);
    await admin.call('idp_add', ['entra'], { provider: 'microsoft', organization: 'contoso.example', client_id: 'c', secret: SECRET });
    await refused(admin.call('idp_mod', ['entra'], { setattr: ['dirIdpBaseUrl=kc.example.test'] }), 3009, "invalid 'base_url': is not used by the microsoft template");
  });

  it('a template-built reference turned generic keeps its endpoints and drops the template parameters', async () => {
    await refused(admin.call('idp_mod', ['kc'], { setattr: ['dirIdpProvider=oidc'] }), 3009, /organization/);
    const r = await admin.call('idp_mod', ['kc'], { setattr: ['dirIdpProvider=oidc'], delattr: ['dirIdpOrg', 'dirIdpBaseUrl'] });
    assert.equal(r.result.diridpprovider, undefined);
    const e = await admin.call('idp_mod', ['kc'], { token_uri: 'https://elsewhere.example.test/token' });
    assert.deepEqual(e.result.diridptokenendpoint, ['https://elsewhere.example.test/token']);
  });

  it('--provider oidc and no --provider have the same effect and show the same', async () => {
    const given = { client_id: 'c', secret: SECRET, auth_uri: 'https://idp.example.test/auth', token_uri: 'https://idp.example.test/token' };
    const a = await admin.call('idp_add', ['with-oidc'], { ...given, provider: 'oidc' });
    const b = await admin.call('idp_add', ['without'], given);
    const same = (x: Record<string, unknown>) => Object.fromEntries(Object.entries(x).filter(([k]) => !['cn', 'dn', 'entryuuid', 'createtimestamp', 'modifytimestamp'].includes(k)));
    assert.deepEqual(same(a.result), same(b.result));
    for (const opts of [{}, { all: true }, { all: true, raw: true }] as Array<Record<string, boolean>>) {
      assert.deepEqual(same((await admin.call('idp_show', ['with-oidc'], opts)).result), same((await admin.call('idp_show', ['without'], opts)).result));
    }
    await refused(admin.call('idp_add', ['x'], { ...given, provider: 'oidc', organization: 'o' }), 3009, /organization/);
  });
});
