/**
 * The committed API contract and the error registry stay true to the code.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { apiContract, contractText } from '../../src/framework/api.js';
import { errorRegistry } from '../../src/framework/errors.js';
import { buildRegistry } from '../../src/objects/index.js';

describe('API contract', () => {
  it('api.json matches the declarations (run `npm run api` and bump API_VERSION when adding)', () => {
    const committed = readFileSync(new URL('../../api.json', import.meta.url), 'utf8');
    assert.equal(contractText(apiContract(buildRegistry())), committed);
  });

  it('every command the specification names exists with its options', () => {
    const c = apiContract(buildRegistry());
    const opts = (name: string) => c.commands.find((x) => x.name === name)?.options.map((o) => o.name) ?? assert.fail(`${name} missing`);
    const want: Record<string, string[]> = {
      idp_add: ['auth_uri', 'dev_auth_uri', 'token_uri', 'userinfo_uri', 'keys_uri', 'issuer_url', 'client_id', 'secret', 'scope', 'idp_user_id', 'setattr', 'addattr', 'provider', 'organization', 'base_url', 'all', 'raw'],
      idp_del: ['continue'],
      idp_find: ['name', 'auth_uri', 'dev_auth_uri', 'token_uri', 'userinfo_uri', 'keys_uri', 'issuer_url', 'scope', 'idp_user_id', 'timelimit', 'sizelimit', 'all', 'raw', 'pkey_only'],
      idp_mod: ['auth_uri', 'dev_auth_uri', 'token_uri', 'userinfo_uri', 'keys_uri', 'issuer_url', 'client_id', 'secret', 'scope', 'idp_user_id', 'setattr', 'addattr', 'delattr', 'rights', 'all', 'raw', 'rename'],
      idp_show: ['rights', 'all', 'raw'],
      user_mod: ['user_auth_type', 'idp', 'idp_user_id', 'delattr'],
      ping: [],
    };
    for (const [cmd, options] of Object.entries(want)) {
      const have = opts(cmd);
      for (const o of options) assert.ok(have.includes(o), `${cmd} lacks --${o}`);
    }
    const secret = c.commands.find((x) => x.name === 'idp_add')!.options.find((o) => o.name === 'secret')!;
    assert.equal(secret.prompt, true);
  });

  it('every registered error is documented in docs/errors.md with its number', () => {
    const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    for (const [name, e] of Object.entries(errorRegistry)) {
      assert.match(doc, new RegExp(`\\| ${e.code} \\| ${name} \\|`), `${name} (${e.code}) is not documented`);
    }
    const codes = Object.values(errorRegistry).map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length, 'error codes are unique');
  });
});
