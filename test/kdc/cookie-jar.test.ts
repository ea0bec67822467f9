/**
 * The KDC's cookie jar (kdc/cookie-jar.ts): a jar bound from one that has
 * just opened a request's cookie hands back what that open read, without
 * opening the box again (fast.ts's armor check opens it, the idp step reads
 * it), and still checks its age against each reader's limit; other cookies,
 * equal bytes in another Buffer included, are opened as before.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CookieJar } from '../../src/kdc/cookie-jar.js';
import { PaType } from '../../src/kerberos/iana.js';

describe('cookie jar', () => {
  const key = randomBytes(32);

  it('a jar bound after an open hands back the state that open read', () => {
    const root = new CookieJar(key);
    const cookie = root.binding({ armor: 'a1' }).seal({ kind: 'idp', n: 1 });
    const padata = [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie];
    const first = root.open<{ kind: string; n: number; armor: string }>(padata, 3600_000);
    assert.equal(first?.kind, 'idp');
    assert.equal(first?.armor, 'a1');
    const bound = root.binding({ armor: 'a1' });
    // the very object the first open made: the box was not opened again
    assert.equal(bound.open(padata, 3600_000), first);
  });

  it('checks the age anew for each reader', () => {
    const root = new CookieJar(key);
    const padata = [root.seal({ kind: 'fast' })];
    assert.ok(root.open(padata, 3600_000));
    assert.equal(root.open(padata, -1), null);
    assert.equal(root.binding({ armor: 'x' }).open(padata, -1), null);
  });

  it('opens equal bytes in another Buffer, and refuses a changed cookie', () => {
    const root = new CookieJar(key);
    const cookie = root.seal({ kind: 'idp', n: 2 });
    const first = root.open<{ n: number }>([cookie], 3600_000);
    const copy = { type: cookie.type, value: Buffer.from(cookie.value) };
    const again = root.open<{ n: number }>([copy], 3600_000);
    assert.notEqual(again, first);
    assert.deepEqual(again, first);
    const bad = Buffer.from(cookie.value);
    bad[bad.length - 1]! ^= 1;
    assert.equal(root.open([{ type: cookie.type, value: bad }], 3600_000), null);
    assert.equal(new CookieJar(randomBytes(32)).open([cookie], 3600_000), null);
  });
});
