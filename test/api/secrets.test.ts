/**
 * Secret non-disclosure: the IdP client secret and user passwords never
 * appear in responses (any option), in the server log, or in the bytes of
 * the database files.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';

const IDP_SECRET = 'Sup3r-Secret-Client-Value-4711';
const USER_PASSWORD = 'User-Password-Value-0815';

describe('secrets are never disclosed', () => {
  let realm: TestRealm;
  const bodies: string[] = [];
  before(async () => {
    realm = await startTestRealm();
  });
  after(async () => realm.stop());

  it('in responses, logs and database files', async () => {
    for (const enc of ['json', 'xml'] as const) {
      const s = new RpcSession(realm.url, realm.ca, enc);
      await s.login('admin', realm.adminPassword);
      const name = `idp-${enc}`;
      const calls: Array<[string, unknown[], Record<string, unknown>]> = [
        ['idp_add', [name], { client_id: 'c', secret: IDP_SECRET, auth_uri: 'https://s.example/a', token_uri: 'https://s.example/t', all: true, raw: true }],
        ['idp_show', [name], { all: true, raw: true, rights: true }],
        ['idp_find', [IDP_SECRET], { all: true, raw: true }],
        ['idp_find', [], { all: true }],
        ['idp_mod', [name], { secret: IDP_SECRET + '2', all: true, raw: true }],
        ['user_add', [`u${enc}`], { first: 'U', last: 'V', password: USER_PASSWORD, all: true, raw: true }],
        ['user_show', [`u${enc}`], { all: true, raw: true, rights: true }],
        ['user_find', [], { all: true, raw: true }],
        ['idp_mod', [name], { setattr: [`dirIdpClientSecret=${IDP_SECRET}`] }],
        ['idp_find', [], { client_id: IDP_SECRET }],
      ];
      for (const [m, a, o] of calls) {
        const { http } = await s.raw(m, a as never, o as never);
        bodies.push(http.body);
      }
    }
    for (const b of bodies) {
      assert.ok(!b.includes(IDP_SECRET), b);
      assert.ok(!b.includes(USER_PASSWORD), b);
    }
    for (const l of realm.log) {
      assert.ok(!l.includes(IDP_SECRET) && !l.includes(USER_PASSWORD), l);
    }
    // the secret can be read back by the server (the KDC needs it) ...
    const [stored] = await realm.server.dir.readSecret('cn=idp-json,cn=idp,dc=example,dc=test', 'dirIdpClientSecret');
    assert.equal(stored, IDP_SECRET + '2');
    // ... but its plaintext is in none of the store's files
    const dir = join(realm.dataDir, 'realm');
    for (const f of readdirSync(dir)) {
      const bytes = readFileSync(join(dir, f));
      for (const secret of [IDP_SECRET, IDP_SECRET + '2', USER_PASSWORD, realm.adminPassword]) {
        assert.equal(bytes.indexOf(Buffer.from(secret)), -1, `${secret} found in ${f}`);
        assert.equal(bytes.indexOf(Buffer.from(secret, 'utf16le')), -1, `${secret} (UTF-16) found in ${f}`);
      }
    }
  });
});
