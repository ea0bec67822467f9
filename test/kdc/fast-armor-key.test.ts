/**
 * The KDC's FAST armor key (kdc/fast.ts) is KRB-FX-CF2(subkey, "subkeyarmor",
 * ticket session key, "ticketarmor") computed by the crypto library's cf2,
 * whether the ticket's half is computed afresh (a transient session key) or
 * kept with a kept ticket's session key, and whatever the two enctypes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { armorKeyOf } from '../../src/kdc/fast.js';
import { cf2, type EncryptionKey } from '../../src/kerberos/crypto/index.js';

const key = (etype: 17 | 18, transient = false): EncryptionKey => ({ etype, value: randomBytes(etype === 17 ? 16 : 32), ...(transient ? { transient: true } : {}) });
const expected = (subkey: EncryptionKey, session: EncryptionKey) => cf2(subkey, 'subkeyarmor', session, 'ticketarmor');

describe('FAST armor key', () => {
  it('equals KRB-FX-CF2 with a kept session key, on first and later uses', () => {
    const session = key(18);
    for (let i = 0; i < 3; i++) {
      const subkey = key(18, true);
      const got = armorKeyOf(subkey, session);
      assert.deepEqual(got, expected(subkey, session));
      assert.equal(got.transient, true);
    }
  });

  it('equals KRB-FX-CF2 with a transient session key', () => {
    const session = key(18, true);
    const subkey = key(18, true);
    assert.deepEqual(armorKeyOf(subkey, session), expected(subkey, session));
  });

  it('equals KRB-FX-CF2 when the subkey and the ticket differ in enctype, one session key serving both lengths', () => {
    const session = key(18);
    const sub128 = key(17, true);
    const sub256 = key(18, true);
    assert.deepEqual(armorKeyOf(sub128, session), expected(sub128, session));
    assert.deepEqual(armorKeyOf(sub256, session), expected(sub256, session));
    assert.deepEqual(armorKeyOf(sub128, session), expected(sub128, session));
    const session128 = key(17);
    assert.deepEqual(armorKeyOf(sub256, session128), expected(sub256, session128));
  });

  it('is not transient when neither key is', () => {
    const session = key(18);
    const subkey = key(18);
    const got = armorKeyOf(subkey, session);
    assert.deepEqual(got, expected(subkey, session));
    assert.equal(got.transient, undefined);
  });
});
