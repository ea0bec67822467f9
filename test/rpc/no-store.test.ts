/**
 * API answers are never stored by a browser or a proxy: every answer of
 * /dirid/json, /dirid/xml and /dirid/session/* (results, errors, refusals,
 * login outcomes) carries `Cache-Control: no-store`, seen by curl over
 * HTTPS on a real server; the console's files keep their own caching
 * (index.html revalidated).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import type { RpcSession } from '../support/rpc-client.js';

const JSON_CALL = '{"method":"user_show","params":[["admin"],{}],"id":1}';
const XML_CALL = '<?xml version="1.0"?><methodCall><methodName>user_show</methodName><params><param><value><array><data><value><string>admin</string></value></data></array></value></param><param><value><struct></struct></value></param></params></methodCall>';

describe('API answers carry Cache-Control: no-store', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'cc')}` };
    const k = await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
  });
  after(async () => realm.stop());

  /** The status line and headers curl received for `path` (a POST of `body` unless `get`). */
  async function headersOf(path: string, o: { body?: string; type?: string; negotiate?: boolean; cookie?: string; referer?: boolean; get?: boolean } = {}): Promise<{ status: number; cacheControl: string[] }> {
    const args = ['-s', '-S', '-D', '-', '-o', '/dev/null', '--cacert', join(realm.dataDir, 'realm', 'ca.crt')];
    if (o.referer !== false) args.push('-H', `Referer: ${realm.url}/dirid/`);
    if (o.negotiate) args.push('--negotiate', '-u', ':');
    if (o.cookie) args.push('-b', o.cookie);
    if (!o.get) args.push('-H', `Content-Type: ${o.type ?? 'application/json'}`, '--data-binary', o.body ?? JSON_CALL);
    const r = await runTool('curl', [...args, `${realm.url}${path}`], env);
    assert.equal(r.code, 0, r.stderr);
    // with Negotiate, curl prints the 401 that asked for it first: the last answer counts
    const last = r.stdout.slice(r.stdout.lastIndexOf('HTTP/1.1 '));
    return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(last)![1]), cacheControl: [...last.matchAll(/^cache-control: *(.*?)\r?$/gim)].map((m) => m[1]!) };
  }

  const expectNoStore = async (what: string, path: string, status: number, o: Parameters<typeof headersOf>[1] = {}) => {
    const h = await headersOf(path, o);
    assert.equal(h.status, status, what);
    assert.deepEqual(h.cacheControl, ['no-store'], what);
  };

  it('the session endpoints: logins, calls, refusals and logout', async () => {
    const login = 'user=admin&password=' + encodeURIComponent(realm.adminPassword);
    const form = 'application/x-www-form-urlencoded';
    await expectNoStore('login_password', '/dirid/session/login_password', 200, { body: login, type: form });
    await expectNoStore('login_password refused', '/dirid/session/login_password', 401, { body: 'user=admin&password=wrong', type: form });
    await expectNoStore('login_kerberos', '/dirid/session/login_kerberos', 200, { negotiate: true });
    await expectNoStore('login_kerberos refused', '/dirid/session/login_kerberos', 401);
    await expectNoStore('session/json', '/dirid/session/json', 200, { cookie: admin.cookie! });
    await expectNoStore('session/xml', '/dirid/session/xml', 200, { cookie: admin.cookie!, body: XML_CALL, type: 'text/xml' });
    await expectNoStore('session/json without a session', '/dirid/session/json', 401);
    await expectNoStore('logout', '/dirid/session/logout', 200, { cookie: admin.cookie! });
  });

  it('the Negotiate endpoints, and answers outside any endpoint', async () => {
    await expectNoStore('json with Negotiate', '/dirid/json', 200, { negotiate: true });
    await expectNoStore('xml with Negotiate', '/dirid/xml', 200, { negotiate: true, body: XML_CALL, type: 'text/xml' });
    await expectNoStore('json without a ticket', '/dirid/json', 401);
    await expectNoStore('without a Referer', '/dirid/json', 400, { negotiate: true, referer: false });
    await expectNoStore('an unknown path', '/dirid/nothing', 404);
    await expectNoStore('GET of an endpoint', '/dirid/json', 405, { get: true });
  });

  it('the console\'s document is revalidated on each load, as before', async () => {
    const h = await headersOf('/dirid/ui/', { get: true });
    assert.deepEqual(h.cacheControl, ['no-cache']);
  });
});
