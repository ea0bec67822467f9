/**
 * The credentials module (src/account/credentials.ts), in-process: the
 * password rules say which rule a password breaks, and a password they take
 * becomes the hash, the Kerberos keys at the next key version, the change
 * time, and no expiry; init holds the admin password to the same rules.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brokenPasswordRule, credentialMods, DEFAULT_PASSWORD_RULES, passwordChange, type PasswordChange } from '../../src/account/credentials.js';
import { keysFromPassword, parseKeys } from '../../src/account/keys.js';
import { verifyPassword } from '../../src/account/password-hash.js';
import { InitError, validateInitOptions } from '../../src/server/init.js';

const NOW = new Date(Date.UTC(2026, 10, 29, 8, 30, 5));
const change = (o: Partial<PasswordChange>): PasswordChange => ({
  password: 'Bob-pass-123',
  realm: 'EXAMPLE.TEST',
  components: ['bob'],
  current: null,
  by: 'admin',
  now: NOW,
  rules: DEFAULT_PASSWORD_RULES,
  ...o,
});

describe('password rules', () => {
  it('a password under 8 characters breaks the minimum length, named with its figure', () => {
    assert.deepEqual(brokenPasswordRule('abc', DEFAULT_PASSWORD_RULES), { rule: 'minLength', message: 'must be at least 8 characters' });
    assert.deepEqual(brokenPasswordRule('1234567', DEFAULT_PASSWORD_RULES)?.rule, 'minLength');
    assert.equal(brokenPasswordRule('12345678', DEFAULT_PASSWORD_RULES), null);
    assert.deepEqual(brokenPasswordRule('12345678', { minLength: 12 }), { rule: 'minLength', message: 'must be at least 12 characters' });
  });

  it('a broken rule is answered with the rule, and nothing to store', async () => {
    for (const by of ['self', 'admin', 'init'] as const) {
      const r = await passwordChange(change({ password: 'x', by }));
      assert.deepEqual(r, { broken: { rule: 'minLength', message: 'must be at least 8 characters' } });
    }
  });

  it('init refuses a short admin password with the same rule', () => {
    const o = { dataDir: '/nonexistent', realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost' };
    assert.throws(() => validateInitOptions({ ...o, adminPassword: 'abc' }), (e: unknown) => e instanceof InitError && e.message === 'the admin password must be at least 8 characters');
    assert.doesNotThrow(() => validateInitOptions({ ...o, adminPassword: 'Admin-pass-1' }));
  });
});

describe('what a password stores', () => {
  it('a new principal: the hash, keys of every enctype at key version 1 salted with realm and name, the change time, a new security stamp, no expiry', async () => {
    const r = await passwordChange(change({}));
    assert.ok(r.attrs);
    assert.deepEqual(Object.keys(r.attrs).sort(), ['dirSecurityStamp', 'krbLastPwdChange', 'krbPrincipalKey', 'userPassword']);
    assert.equal(r.attrs.userPassword!.length, 1);
    assert.match(r.attrs.userPassword![0]!, /^\{SCRYPT\}/);
    assert.ok(await verifyPassword('Bob-pass-123', r.attrs.userPassword![0]!));
    assert.ok(!(await verifyPassword('Bob-pass-124', r.attrs.userPassword![0]!)));
    assert.deepEqual(parseKeys(r.attrs.krbPrincipalKey!), keysFromPassword('Bob-pass-123', 'EXAMPLE.TEST', ['bob'], 1));
    assert.deepEqual(r.attrs.krbLastPwdChange, ['20261129083005Z']);
  });

  it('a change: the key version after the highest held; an expiry set for the old password goes', async () => {
    const keys = [...keysFromPassword('Old-pass-123', 'EXAMPLE.TEST', ['bob'], 3), ...keysFromPassword('Older-pass-1', 'EXAMPLE.TEST', ['bob'], 2)];
    const expired = await passwordChange(change({ by: 'self', current: { attrs: { uid: ['bob'], krbPasswordExpiration: ['20250101000000Z'] }, keys } }));
    assert.ok(expired.attrs);
    assert.ok(parseKeys(expired.attrs.krbPrincipalKey!).every((k) => k.kvno === 4));
    assert.deepEqual(expired.attrs.krbPasswordExpiration, []);
    const plain = await passwordChange(change({ current: { attrs: { uid: ['bob'] }, keys } }));
    assert.equal(plain.attrs?.krbPasswordExpiration, undefined);
  });

  it('as modifications: each attribute replaced, an empty one removed', async () => {
    const r = await passwordChange(change({ current: { attrs: { krbPasswordExpiration: ['20250101000000Z'] }, keys: [] } }));
    const mods = credentialMods(r.attrs!);
    assert.deepEqual(
      mods.map((m) => [m.op, m.attr, m.op === 'delete' ? undefined : m.values?.length]),
      [['replace', 'userPassword', 1], ['replace', 'krbPrincipalKey', r.attrs!.krbPrincipalKey!.length], ['replace', 'krbLastPwdChange', 1], ['replace', 'dirSecurityStamp', 1], ['replace', 'krbPasswordExpiration', 0]],
    );
  });
});
