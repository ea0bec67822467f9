/**
 * `dirid join`'s way in as an administrator, against a real server: with
 * the Kerberos ticket of KRB5CCNAME (Negotiate, the server's answer
 * authenticated) or with a password, the host entry is added once and
 * found the second time, and the host's new keys come as a keytab; a wrong
 * password or no ticket is refused with the server's words.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { adminEnrolment } from '../../src/cli/join-enrol.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { CliError } from '../../src/cli/errors.js';

describe('dirid join: the host entry and keys through the API', () => {
  let realm: TestRealm;
  const saved = { KRB5_CONFIG: process.env.KRB5_CONFIG, KRB5CCNAME: process.env.KRB5CCNAME };
  before(async () => {
    realm = await startTestRealm();
    process.env.KRB5_CONFIG = join(realm.dataDir, 'realm', 'krb5.conf');
    process.env.KRB5CCNAME = `FILE:${join(realm.dataDir, 'admin.cc')}`;
  });
  after(async () => {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    await realm?.stop();
  });

  const api = () => `${realm.url}/dirid/json`;

  it("with the administrator's Kerberos ticket: the host added, then found, and its keys", async () => {
    const k = await runTool('kinit', ['admin'], { KRB5_CONFIG: process.env.KRB5_CONFIG!, KRB5CCNAME: process.env.KRB5CCNAME! }, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
    const enrol = await adminEnrolment(api(), realm.ca, 'EXAMPLE.TEST', { kind: 'kerberos' });
    assert.equal(await enrol.ensureHost('web.example.test'), 'added');
    assert.equal(await enrol.ensureHost('web.example.test'), 'existing');
    const keys = readKeytab(await enrol.hostKeytab('web.example.test'));
    assert.ok(keys.length > 0);
    assert.deepEqual([...new Set(keys.map((e) => `${e.components.join('/')}@${e.realm}`))], ['host/web.example.test@EXAMPLE.TEST']);
  });

  it('with a password: the same; a wrong password is refused', async () => {
    const enrol = await adminEnrolment(api(), realm.ca, 'EXAMPLE.TEST', { kind: 'password', principal: 'admin', password: realm.adminPassword });
    assert.equal(await enrol.ensureHost('db.example.test'), 'added');
    assert.ok(readKeytab(await enrol.hostKeytab('db.example.test')).length > 0);
    await assert.rejects(adminEnrolment(api(), realm.ca, 'EXAMPLE.TEST', { kind: 'password', principal: 'admin', password: 'not-the-password' }), (e: unknown) => e instanceof CliError && /password|credentials/i.test(e.message));
  });

  it('without a ticket: "not authenticated"', async () => {
    process.env.KRB5CCNAME = `FILE:${join(realm.dataDir, 'none.cc')}`;
    const enrol = await adminEnrolment(api(), realm.ca, 'EXAMPLE.TEST', { kind: 'kerberos' });
    await assert.rejects(enrol.ensureHost('other.example.test'), (e: unknown) => e instanceof CliError && /not authenticated|kinit/i.test(e.message));
  });
});
