/**
 * IdP references through the RPC layer, JSON and XML alike: every
 * transition of specification §3 that needs no Kerberos, the option rules of
 * §4.1–4.5 and the errors of §7 that apply.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

const SECRET = 'idp-test-secret-Zq81';

for (const encoding of ['json', 'xml'] as const) {
  describe(`IdP references over ${encoding.toUpperCase()}-RPC`, () => {
    let realm: TestRealm;
    let admin: RpcSession;

    before(async () => {
      ({ realm, admin } = await startAdminRealm({}, encoding));
    });
    after(async () => realm.stop());

    const rejects = async (p: Promise<unknown>, code: number, message?: string | RegExp) => {
      await assert.rejects(p, (e: Error & { code: number }) => {
        assert.equal(e.code, code, `expected code ${code}, got ${e.code}: ${e.message}`);
        if (typeof message === 'string') assert.equal(e.message, message);
        else if (message) assert.match(e.message, message);
        return true;
      });
    };

    it('adds a keycloak reference from its template and prints it without the secret', async () => {
      const r = await admin.call('idp_add', ['keycloak'], {
        provider: 'keycloak',
        organization: 'main',
        base_url: 'https://kc.example.test:8443/',
        client_id: 'dirid-client',
        secret: SECRET,
      });
      assert.equal(r.summary, 'Added IdP reference "keycloak"');
      assert.equal(r.value, 'keycloak');
      const e = r.result;
      assert.deepEqual(e.cn, ['keycloak']);
      assert.deepEqual(e.diridpprovider, ['keycloak']);
      assert.deepEqual(e.diridpauthendpoint, ['https://kc.example.test:8443/realms/main/protocol/openid-connect/auth']);
      assert.deepEqual(e.diridpdevauthendpoint, ['https://kc.example.test:8443/realms/main/protocol/openid-connect/auth/device']);
      assert.deepEqual(e.diridptokenendpoint, ['https://kc.example.test:8443/realms/main/protocol/openid-connect/token']);
      assert.deepEqual(e.diridpuserinfoendpoint, ['https://kc.example.test:8443/realms/main/protocol/openid-connect/userinfo']);
      assert.deepEqual(e.diridpkeysendpoint, ['https://kc.example.test:8443/realms/main/protocol/openid-connect/certs']);
      assert.deepEqual(e.diridpissuerurl, ['https://kc.example.test:8443/realms/main']);
      assert.deepEqual(e.diridpscope, ['openid email']);
      assert.deepEqual(e.diridpuseridattribute, ['email']);
      assert.deepEqual(e.diridpbaseurl, ['kc.example.test:8443']);
      assert.deepEqual(e.diridporg, ['main']);
      assert.ok(!JSON.stringify(r).includes(SECRET));
      assert.ok(!('diridpclientsecret' in e));
    });

    it('builds every other template with its extra parameters', async () => {
      const gh = (await admin.call('idp_add', ['gh'], { provider: 'github', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(gh.diridpdevauthendpoint, ['https://github.com/login/device/code']);
      assert.deepEqual(gh.diridpuseridattribute, ['login']);
      assert.deepEqual(gh.diridpscope, ['user']);
      assert.equal(gh.diridpkeysendpoint, undefined);
      const g = (await admin.call('idp_add', ['google'], { provider: 'google', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(g.diridptokenendpoint, ['https://oauth2.googleapis.com/token']);
      assert.deepEqual(g.diridpkeysendpoint, ['https://www.googleapis.com/oauth2/v3/certs']);
      const ms = (await admin.call('idp_add', ['entra'], { provider: 'microsoft', organization: 'contoso.example', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(ms.diridpdevauthendpoint, ['https://login.microsoftonline.com/contoso.example/oauth2/v2.0/devicecode']);
      assert.deepEqual(ms.diridpkeysendpoint, ['https://login.microsoftonline.com/contoso.example/discovery/v2.0/keys']);
      assert.equal(ms.diridpissuerurl, undefined, 'a tenant named by domain: its GUID, which iss carries, is not known');
      const byId = (await admin.call('idp_add', ['entra-id'], { provider: 'microsoft', organization: '72f988bf-86f1-41af-91ab-2d7cd011db47', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(byId.diridpissuerurl, ['https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0']);
      const msa = (await admin.call('idp_add', ['msa'], { provider: 'microsoft', organization: 'consumers', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(msa.diridpissuerurl, ['https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0']);
      const okta = (await admin.call('idp_add', ['okta'], { provider: 'okta', organization: 'default', base_url: 'dev-1.okta.example', client_id: 'c', secret: SECRET })).result;
      assert.deepEqual(okta.diridpdevauthendpoint, ['https://dev-1.okta.example/oauth2/default/v1/device/authorize']);
      assert.deepEqual(okta.diridpissuerurl, ['https://dev-1.okta.example/oauth2/default']);
      for (const n of ['gh', 'google', 'entra', 'entra-id', 'msa', 'okta']) await admin.call('idp_del', [n]);
    });

    it('requires the template parameters and rejects unknown templates', async () => {
      await rejects(admin.call('idp_add', ['x'], { provider: 'keycloak', base_url: 'kc.example.test', client_id: 'c', secret: SECRET }), 3007, "'organization' is required");
      await rejects(admin.call('idp_add', ['x'], { provider: 'okta', organization: 'default', client_id: 'c', secret: SECRET }), 3007, "'base_url' is required");
      await rejects(admin.call('idp_add', ['x'], { provider: 'microsoft', client_id: 'c', secret: SECRET }), 3007, "'organization' is required");
      // Entra ID's multi-tenant endpoints: any tenant's users, whose claims the reference could not tell from this tenant's
      for (const org of ['common', 'Organizations']) {
        await rejects(admin.call('idp_add', ['x'], { provider: 'microsoft', organization: org, client_id: 'c', secret: SECRET }), 3009, new RegExp(`^invalid 'organization': "${org}" is Entra ID's multi-tenant endpoint: .* Give your tenant ID \\(a GUID\\) or one of its domain names$`));
      }
      await admin.call('idp_add', ['x'], { provider: 'microsoft', organization: 'contoso.example', client_id: 'c', secret: SECRET });
      await rejects(admin.call('idp_mod', ['x'], { setattr: ['diridporg=common'] }), 3009, /multi-tenant endpoint/);
      await admin.call('idp_del', ['x']);
      await rejects(
        admin.call('idp_add', ['x'], { provider: 'facebook', client_id: 'c', secret: SECRET }),
        3009,
        "invalid 'provider': must be one of 'keycloak', 'github', 'google', 'microsoft', 'okta', 'oidc'",
      );
      await rejects(admin.call('idp_add', ['x'], { provider: 'github', client_id: 'c', secret: SECRET, token_uri: 'https://t.example/' }), 3005);
      await rejects(admin.call('idp_add', ['x'], { provider: 'keycloak', organization: 'r', base_url: 'http://kc.example.test', client_id: 'c', secret: SECRET }), 3009, /base_url/);
    });

    it('needs --auth-uri and --token-uri without a template, and https everywhere', async () => {
      await rejects(admin.call('idp_add', ['x'], { client_id: 'c', secret: SECRET, token_uri: 'https://idp.example/token' }), 3007, "'auth_uri' is required");
      await rejects(admin.call('idp_add', ['x'], { client_id: 'c', secret: SECRET, auth_uri: 'https://idp.example/auth' }), 3007, "'token_uri' is required");
      await rejects(
        admin.call('idp_add', ['x'], { client_id: 'c', secret: SECRET, auth_uri: 'http://idp.example/auth', token_uri: 'https://idp.example/token' }),
        3009,
        "invalid 'auth_uri': must be an https:// URL with a host",
      );
      await rejects(admin.call('idp_add', ['x'], { client_id: 'c', secret: SECRET, auth_uri: 'https://', token_uri: 'https://idp.example/token' }), 3009);
      await rejects(admin.call('idp_add', ['x'], { auth_uri: 'https://idp.example/auth', token_uri: 'https://idp.example/token', secret: SECRET }), 3007, "'client_id' is required");
      await rejects(admin.call('idp_add', ['x'], { auth_uri: 'https://idp.example/auth', token_uri: 'https://idp.example/token', client_id: 'c' }), 3007, "'secret' is required");
      const r = await admin.call('idp_add', ['generic'], {
        client_id: 'gen',
        secret: SECRET,
        auth_uri: 'https://idp.example/auth',
        token_uri: 'https://idp.example/token',
        scope: 'openid email profile',
        idp_user_id: 'preferred_username',
      });
      assert.deepEqual(r.result.diridpauthendpoint, ['https://idp.example/auth']);
      assert.equal(r.result.diridpdevauthendpoint, undefined, 'the device endpoint falls back at use time, it is not invented');
    });

    it('refuses a duplicate name', async () => {
      await rejects(admin.call('idp_add', ['generic'], { client_id: 'c', secret: SECRET, auth_uri: 'https://a.example/', token_uri: 'https://a.example/t' }), 4002, 'IdP reference with name "generic" already exists');
    });

    it('shows an entry, with --all, --raw and --rights', async () => {
      const plain = await admin.call('idp_show', ['generic']);
      assert.equal(plain.summary, null);
      assert.equal(plain.result.dn, undefined);
      assert.equal(plain.result.objectclass, undefined);
      const all = await admin.call('idp_show', ['generic'], { all: true });
      assert.equal(all.result.dn, 'cn=generic,cn=idp,dc=example,dc=test');
      assert.ok((all.result.objectclass as string[]).includes('dirIdp'));
      assert.ok(!JSON.stringify(all).includes(SECRET));
      assert.ok(!('diridpclientsecret' in all.result));
      const raw = await admin.call('idp_show', ['generic'], { all: true, raw: true });
      assert.deepEqual(raw.result.diridpclientid, ['gen']);
      assert.ok(!JSON.stringify(raw).includes(SECRET));
      await rejects(admin.call('idp_show', ['generic'], { rights: true }), 3009, "invalid 'rights': requires --all");
      const rights = await admin.call('idp_show', ['generic'], { rights: true, all: true });
      assert.equal(rights.result.attributelevelrights.diridpclientid, 'rscwo');
      assert.equal(rights.result.attributelevelrights.diridpclientsecret, 'wo');
      await rejects(admin.call('idp_show', ['missing']), 4001, 'missing: IdP reference not found');
    });

    it('finds by criteria, by option, with limits and primary keys only', async () => {
      await admin.call('idp_add', ['second'], { client_id: 'other', secret: SECRET, auth_uri: 'https://b.example/a', token_uri: 'https://b.example/t', scope: 'openid' });
      const all = await admin.call('idp_find');
      assert.equal(all.count, 3);
      assert.equal(all.summary, '3 IdP references matched');
      assert.deepEqual(all.result.map((e: { cn: string[] }) => e.cn[0]), ['generic', 'keycloak', 'second']);
      const one = await admin.call('idp_find', ['b.example']);
      assert.equal(one.summary, '1 IdP reference matched');
      assert.deepEqual(one.result[0].cn, ['second']);
      assert.equal((await admin.call('idp_find', [], { name: 'keycloak' })).count, 1);
      assert.equal((await admin.call('idp_find', [], { scope: 'openid' })).result[0].cn[0], 'second');
      assert.equal((await admin.call('idp_find', [], { token_uri: 'https://idp.example/token' })).result[0].cn[0], 'generic');
      const limited = await admin.call('idp_find', [], { sizelimit: 2 });
      assert.equal(limited.count, 2);
      assert.equal(limited.truncated, true);
      assert.equal((await admin.call('idp_find', [], { sizelimit: 0 })).count, 3);
      assert.equal((await admin.call('idp_find', [], { timelimit: 0 })).truncated, false);
      const pk = await admin.call('idp_find', [], { pkey_only: true });
      assert.deepEqual(pk.result, [{ cn: ['generic'] }, { cn: ['keycloak'] }, { cn: ['second'] }]);
      const none = await admin.call('idp_find', ['no-such-thing']);
      assert.equal(none.count, 0);
      assert.equal(none.summary, '0 IdP references matched');
      await rejects(admin.call('idp_find', [], { sizelimit: -1 }), 3009);
    });

    it('modifies, validates --setattr/--addattr/--delattr and renames', async () => {
      const r = await admin.call('idp_mod', ['second'], { scope: 'openid email', secret: 'rotated-secret-Qw9' });
      assert.equal(r.summary, 'Modified IdP reference "second"');
      assert.deepEqual(r.result.diridpscope, ['openid email']);
      assert.ok(!JSON.stringify(r).includes('rotated-secret-Qw9'));
      await rejects(admin.call('idp_mod', ['second'], { scope: 'openid email' }), 4202, 'no modifications to be performed');
      const s = await admin.call('idp_mod', ['second'], { setattr: ['dirIdpUserInfoEndpoint=https://b.example/ui'] });
      assert.deepEqual(s.result.diridpuserinfoendpoint, ['https://b.example/ui']);
      await rejects(admin.call('idp_mod', ['second'], { setattr: ['dirIdpTokenEndpoint=http://b.example/t'] }), 3009, /token_uri/);
      await rejects(admin.call('idp_mod', ['second'], { setattr: ['noSuchAttr=1'] }), 4205, 'attribute "noSuchAttr" not allowed');
      await rejects(admin.call('idp_mod', ['second'], { setattr: ['dirIdpClientSecret=x'] }), 3009);
      await rejects(admin.call('idp_mod', ['second'], { addattr: ['dirIdpScope=more'] }), 4305, 'dirIdpScope: Only one value allowed.');
      const d = await admin.call('idp_mod', ['second'], { delattr: ['dirIdpUserInfoEndpoint=https://b.example/ui'] });
      assert.equal(d.result.diridpuserinfoendpoint, undefined);
      await rejects(admin.call('idp_mod', ['second'], { delattr: ['dirIdpUserInfoEndpoint=https://b.example/ui'] }), 4022);
      const ren = await admin.call('idp_mod', ['second'], { rename: 'renamed' });
      assert.equal(ren.value, 'renamed');
      assert.deepEqual(ren.result.cn, ['renamed']);
      await rejects(admin.call('idp_show', ['second']), 4001);
      await rejects(admin.call('idp_mod', ['renamed'], { rename: 'generic' }), 4002, 'IdP reference with name "generic" already exists');
      await rejects(admin.call('idp_mod', ['nope'], { scope: 'x' }), 4001, 'nope: IdP reference not found');
      const m = await admin.call('idp_mod', ['renamed'], { rights: true, all: true, client_id: 'new-id' });
      assert.equal(m.result.attributelevelrights.diridpclientid, 'rscwo');
    });

    it('deletes, and with --continue reports what failed', async () => {
      const r = await admin.call('idp_del', ['renamed']);
      assert.equal(r.summary, 'Deleted IdP reference "renamed"');
      await rejects(admin.call('idp_del', ['renamed']), 4001, 'renamed: IdP reference not found');
      await admin.call('idp_add', ['tmp1'], { client_id: 'c', secret: SECRET, auth_uri: 'https://c.example/a', token_uri: 'https://c.example/t' });
      const c = await admin.call('idp_del', ['missing', 'tmp1'], { continue: true });
      assert.deepEqual(c.result.failed, ['missing']);
      assert.equal(c.summary, 'Deleted IdP reference "tmp1"');
    });
  });
}
