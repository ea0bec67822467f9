/**
 * The credentials module (src/account/credentials.ts), in-process: the
 * password rules of a policy say which rule a password breaks (its length,
 * its character classes, the history, the minimum lifetime, which binds
 * only the user), and a password they take becomes the hash, the Kerberos
 * keys at the next key version, the change time, the history, and an
 * expiry that depends on who set it: an administrator's has expired at
 * once, the user's lives the policy's maximum lifetime, init's never
 * expires. init holds the admin password to the same rules.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { brokenPasswordRule, credentialMods, DEFAULT_PASSWORD_RULES, passwordChange, type PasswordChange, type PasswordRules } from '../../src/account/credentials.js';
import { characterClasses } from '../../src/account/password-policy.js';
import { keysFromPassword, parseKeys } from '../../src/account/keys.js';
import { hashPassword, verifyPassword } from '../../src/account/password-hash.js';
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
const rules = (o: Partial<PasswordRules>): PasswordRules => ({ ...DEFAULT_PASSWORD_RULES, ...o });

describe('password rules', () => {
  it('a password under 8 characters breaks the minimum length, named with its figure', () => {
    assert.deepEqual(brokenPasswordRule('abc', DEFAULT_PASSWORD_RULES), { rule: 'minLength', message: 'must be at least 8 characters' });
    assert.deepEqual(brokenPasswordRule('1234567', DEFAULT_PASSWORD_RULES)?.rule, 'minLength');
    assert.equal(brokenPasswordRule('12345678', DEFAULT_PASSWORD_RULES), null);
    assert.deepEqual(brokenPasswordRule('12345678', rules({ minLength: 12 })), { rule: 'minLength', message: 'must be at least 12 characters' });
    // characters, not UTF-16 units: four emoji are four characters
    assert.equal(brokenPasswordRule('😀😀😀😀', rules({ minLength: 5 }))?.rule, 'minLength');
  });

  it('character classes: upper-case, lower-case, digits, special and other characters, as FreeIPA counts them', () => {
    assert.equal(characterClasses('abcdefgh'), 1);
    assert.equal(characterClasses('abcdEFGH'), 2);
    assert.equal(characterClasses('abcD1234'), 3);
    assert.equal(characterClasses('abD12-!'), 4);
    assert.equal(characterClasses('aB1-€'), 5);
    assert.equal(characterClasses('éÉ'), 2, 'accented letters are letters of their case');
    assert.deepEqual(brokenPasswordRule('abcdefgh1', rules({ minClasses: 3 })), {
      rule: 'minClasses',
      message: 'must mix at least 3 character classes of upper-case letters, lower-case letters, digits, special characters, other characters (it has 2)',
    });
    assert.equal(brokenPasswordRule('abcdefgH1', rules({ minClasses: 3 })), null);
  });

  it('a broken rule is answered with the rule, and nothing to store, whoever sets it', async () => {
    for (const by of ['self', 'admin', 'init'] as const) {
      const r = await passwordChange(change({ password: 'x', by }));
      assert.deepEqual(r, { broken: { rule: 'minLength', message: 'must be at least 8 characters' } });
    }
  });

  it('history: the last N passwords, the current one included, are refused; older ones are taken', async () => {
    const current = await hashPassword('Pass-now-123');
    const history = [`20261101000000Z${await hashPassword('Pass-old-222')}`, `20261001000000Z${await hashPassword('Pass-old-333')}`];
    const c = (password: string, n: number) => passwordChange(change({ password, by: 'self', rules: rules({ history: n }), current: { attrs: {}, keys: [], passwords: { current, history } } }));
    for (const [pw, n, refused] of [
      ['Pass-now-123', 1, true],
      ['Pass-old-222', 1, false],
      ['Pass-old-222', 2, true],
      ['Pass-old-333', 2, false],
      ['Pass-old-333', 3, true],
      ['Pass-now-123', 0, false],
    ] as const) {
      const r = await c(pw, n);
      assert.equal(r.broken?.rule === 'history', refused, `${pw} with history ${n}`);
    }
    assert.equal((await c('Pass-now-123', 3)).broken?.message, 'must not be one of the last 3 passwords of this user');
    // admins are held to it too
    assert.equal((await passwordChange(change({ password: 'Pass-now-123', by: 'admin', rules: rules({ history: 1 }), current: { attrs: {}, keys: [], passwords: { current, history: [] } } }))).broken?.rule, 'history');
  });

  it('history: the replaced password joins it as a hash with the time, the newest history − 1 kept; never the password itself', async () => {
    const current = await hashPassword('Pass-now-123');
    const history = [`20261101000000Z{SCRYPT}older`, `20261001000000Z{SCRYPT}oldest`];
    const r = await passwordChange(change({ password: 'Pass-new-444', by: 'self', rules: rules({ history: 3 }), current: { attrs: {}, keys: [], passwords: { current, history } } }));
    assert.deepEqual(r.attrs?.passwordHistory, [`20261129083005Z${current}`, '20261101000000Z{SCRYPT}older']);
    assert.ok(!JSON.stringify(r.attrs).includes('Pass-now-123'));
    const none = await passwordChange(change({ password: 'Pass-new-444', by: 'self', rules: rules({ history: 0 }), current: { attrs: {}, keys: [], passwords: { current, history } } }));
    assert.deepEqual(none.attrs?.passwordHistory, [], 'a policy without history forgets it');
  });

  it('the minimum lifetime binds the user, not an administrator, and not a password that has expired', async () => {
    const attrs = { krbLastPwdChange: ['20261129080005Z'] };
    const young = await passwordChange(change({ by: 'self', rules: rules({ minLifeSec: 3600 }), current: { attrs, keys: [] } }));
    assert.deepEqual(young.broken, { rule: 'minLife', message: "may not change again before 2026-11-29T09:00:05.000Z: the password policy's minimum lifetime is 1 hour" });
    assert.ok((await passwordChange(change({ by: 'admin', rules: rules({ minLifeSec: 3600 }), current: { attrs, keys: [] } }))).attrs);
    const expired = { ...attrs, krbPasswordExpiration: ['20261129080005Z'] };
    assert.ok((await passwordChange(change({ by: 'self', rules: rules({ minLifeSec: 3600 }), current: { attrs: expired, keys: [] } }))).attrs, 'an expired password may change at once');
    assert.ok((await passwordChange(change({ by: 'self', rules: rules({ minLifeSec: 1800 }), current: { attrs, keys: [] } }))).attrs, 'old enough');
  });

  it('init refuses a short admin password with the same rule', () => {
    const o = { dataDir: '/nonexistent', realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost' };
    assert.throws(() => validateInitOptions({ ...o, adminPassword: 'abc' }), (e: unknown) => e instanceof InitError && e.message === 'the admin password must be at least 8 characters');
    assert.doesNotThrow(() => validateInitOptions({ ...o, adminPassword: 'Admin-pass-1' }));
  });
});

describe('what a password stores', () => {
  it('a new principal: the hash, keys of every enctype at key version 1 salted with realm and name, the change time, a new security stamp', async () => {
    const r = await passwordChange(change({ by: 'init' }));
    assert.ok(r.attrs);
    assert.deepEqual(Object.keys(r.attrs).sort(), ['dirSecurityStamp', 'krbLastPwdChange', 'krbPrincipalKey', 'userPassword']);
    assert.equal(r.attrs.userPassword!.length, 1);
    assert.match(r.attrs.userPassword![0]!, /^\{SCRYPT\}/);
    assert.ok(await verifyPassword('Bob-pass-123', r.attrs.userPassword![0]!));
    assert.ok(!(await verifyPassword('Bob-pass-124', r.attrs.userPassword![0]!)));
    assert.deepEqual(parseKeys(r.attrs.krbPrincipalKey!), keysFromPassword('Bob-pass-123', 'EXAMPLE.TEST', ['bob'], 1));
    assert.deepEqual(r.attrs.krbLastPwdChange, ['20261129083005Z']);
  });

  it("the expiry by who sets it: an administrator's has expired at once, the user's lives the maximum lifetime or for ever, init's for ever", async () => {
    assert.deepEqual((await passwordChange(change({ by: 'admin' }))).attrs?.krbPasswordExpiration, ['20261129083005Z']);
    assert.deepEqual((await passwordChange(change({ by: 'admin', rules: rules({ maxLifeSec: 86400 }) }))).attrs?.krbPasswordExpiration, ['20261129083005Z']);
    assert.deepEqual((await passwordChange(change({ by: 'self', rules: rules({ maxLifeSec: 90 * 86400 }) }))).attrs?.krbPasswordExpiration, ['20270227083005Z']);
    assert.equal((await passwordChange(change({ by: 'self' }))).attrs?.krbPasswordExpiration, undefined);
    assert.equal((await passwordChange(change({ by: 'init', rules: rules({ maxLifeSec: 86400 }) }))).attrs?.krbPasswordExpiration, undefined);
  });

  it('a change: the key version after the highest held; an expiry set for the old password goes when the new one has none', async () => {
    const keys = [...keysFromPassword('Old-pass-123', 'EXAMPLE.TEST', ['bob'], 3), ...keysFromPassword('Older-pass-1', 'EXAMPLE.TEST', ['bob'], 2)];
    const expired = await passwordChange(change({ by: 'self', current: { attrs: { uid: ['bob'], krbPasswordExpiration: ['20250101000000Z'] }, keys } }));
    assert.ok(expired.attrs);
    assert.ok(parseKeys(expired.attrs.krbPrincipalKey!).every((k) => k.kvno === 4));
    assert.deepEqual(expired.attrs.krbPasswordExpiration, []);
    const plain = await passwordChange(change({ by: 'self', current: { attrs: { uid: ['bob'] }, keys } }));
    assert.equal(plain.attrs?.krbPasswordExpiration, undefined);
  });

  it('as modifications: each attribute replaced, an empty one removed', async () => {
    const r = await passwordChange(change({ by: 'self', current: { attrs: { krbPasswordExpiration: ['20250101000000Z'] }, keys: [] } }));
    const mods = credentialMods(r.attrs!);
    assert.deepEqual(
      mods.map((m) => [m.op, m.attr, m.op === 'delete' ? undefined : m.values?.length]),
      [['replace', 'userPassword', 1], ['replace', 'krbPrincipalKey', r.attrs!.krbPrincipalKey!.length], ['replace', 'krbLastPwdChange', 1], ['replace', 'dirSecurityStamp', 1], ['replace', 'krbPasswordExpiration', 0]],
    );
  });
});
