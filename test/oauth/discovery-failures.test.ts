/**
 * A login's failed discovery is remembered for a short while (oauth/discovery.ts):
 * the answers of pending flows whose reference has an issuer but leaves an
 * endpoint to discovery, at an IdP without a discovery document, made two
 * discovery requests each. A fetch stand-in counts what the IdP is asked.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { IdpClient } from '../../src/oauth/client.js';
import { devicePolling, pollToken } from '../../src/oauth/device-flow.js';
import { checkIdp } from '../../src/oauth/check.js';
import { discover, DISCOVERY_FAILURE_TTL_MS, DISCOVERY_FAILURES_MAX } from '../../src/oauth/discovery.js';
import type { FetchLike } from '../../src/oauth/http.js';
import { OAuthError, type IdpConfig } from '../../src/oauth/types.js';

const ISSUER = 'https://idp.example';
const DOC = '/.well-known/openid-configuration';

/** An IdP with no discovery document (404) unless `withDocument`, answering every token request authorization_pending; `asked` counts requests by issuer and path. */
function fakeIdp(withDocument = () => false) {
  const asked = new Map<string, number>();
  const fetch: FetchLike = async (input) => {
    const url = new URL(String(input));
    const key = `${url.origin}${url.pathname}`;
    asked.set(key, (asked.get(key) ?? 0) + 1);
    await new Promise((r) => setImmediate(r));
    if (url.pathname === DOC) {
      if (!withDocument()) return new Response('not found', { status: 404 });
      return Response.json({ issuer: url.origin, device_authorization_endpoint: `${url.origin}/device`, token_endpoint: `${url.origin}/token`, jwks_uri: `${url.origin}/jwks` });
    }
    return Response.json({ error: 'authorization_pending' }, { status: 400 });
  };
  return { idp: new IdpClient(fetch), discoveries: (issuer = ISSUER) => asked.get(`${issuer}${DOC}`) ?? 0, tokens: () => asked.get(`${ISSUER}/token`) ?? 0 };
}

/** a reference with an issuer, its device and token endpoints, and neither UserInfo nor JWKS (left to discovery) */
const cfg: IdpConfig = { name: 'nodoc', clientId: 'c', clientSecret: 'client-secret-1', issuerUrl: ISSUER, devAuthUri: `${ISSUER}/device`, tokenUri: `${ISSUER}/token` };

/** One answer of a pending flow as the KDC makes it (kdc/idp-preauth.ts): when the code was polled, then a poll. */
async function answer(idp: IdpClient, code: string) {
  await devicePolling(cfg, code, idp);
  return pollToken(cfg, code, idp, { interval: 5, expiresAt: Date.now() + 600_000 });
}

describe('discovery failures of logins', () => {
  it('answers of pending flows at an IdP without a discovery document ask for it once, until the failure is forgotten', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const f = fakeIdp();
    for (let i = 0; i < 5; i++) assert.deepEqual(await answer(f.idp, `code-${i}`), { status: 'pending' });
    assert.equal(f.tokens(), 5);
    assert.equal(f.discoveries(), 1, `5 answers made ${f.discoveries()} discovery requests`);
    t.mock.timers.tick(DISCOVERY_FAILURE_TTL_MS - 1);
    await answer(f.idp, 'code-5');
    assert.equal(f.discoveries(), 1);
    t.mock.timers.tick(2);
    await answer(f.idp, 'code-6');
    assert.equal(f.discoveries(), 2, 'once the failure is forgotten, the next answer asks again');
  });

  it('answers discovering at the same time share one request', async () => {
    const f = fakeIdp();
    const all = await Promise.all(Array.from({ length: 8 }, (_, i) => answer(f.idp, `together-${i}`)));
    assert.ok(all.every((r) => r.status === 'pending'));
    assert.equal(f.discoveries(), 1);
  });

  it('a login that needs a discovered endpoint is refused the same way from memory as by the IdP', async () => {
    const f = fakeIdp();
    const { tokenUri: _, ...noToken } = cfg;
    const first = await pollToken(noToken, 'c1', f.idp).then(
      () => assert.fail('polled without a token endpoint'),
      (e: unknown) => e,
    );
    assert.ok(first instanceof OAuthError);
    assert.equal(first.code, 'discovery_failed');
    assert.match(first.message, /^IdP reference nodoc has no token endpoint \(OIDC discovery at https:\/\/idp\.example/);
    await assert.rejects(pollToken(noToken, 'c2', f.idp), (e: unknown) => e instanceof OAuthError && e !== first && e.code === first.code && e.message === first.message);
    assert.equal(f.discoveries(), 1);
    assert.equal(f.tokens(), 0);
  });

  it("idp-add's discovery always asks, and its success ends a remembered failure", async () => {
    let published = false;
    const f = fakeIdp(() => published);
    await answer(f.idp, 'before');
    assert.equal(f.discoveries(), 1);
    await assert.rejects(discover(ISSUER, f.idp), (e: unknown) => e instanceof OAuthError && e.code === 'discovery_failed');
    assert.equal(f.discoveries(), 2);
    published = true;
    const as = await discover(ISSUER, f.idp);
    assert.equal(as.jwks_uri, `${ISSUER}/jwks`);
    assert.equal(f.discoveries(), 3);
    await answer(f.idp, 'after');
    assert.equal(f.discoveries(), 3, 'the document idp-add found serves the logins');
  });

  it("idp-check's discovery always asks, and its success ends a remembered failure", async () => {
    // the administrator fixes the IdP and checks it: logins need not wait out the remembered failure
    let published = false;
    const f = fakeIdp(() => published);
    await answer(f.idp, 'before');
    assert.equal(f.discoveries(), 1);
    published = true;
    const lines = await checkIdp(cfg, f.idp);
    assert.equal(lines.find((l) => l.check === 'Discovery')?.status, 'PASS');
    assert.equal(f.discoveries(), 2);
    const { tokenUri: _, ...noToken } = cfg;
    assert.deepEqual(await pollToken(noToken, 'after', f.idp, { interval: 5, expiresAt: Date.now() + 600_000 }), { status: 'pending' });
    assert.equal(f.discoveries(), 2, 'the document idp-check read serves the logins');
  });

  it('remembers a bounded number of issuers', async () => {
    const f = fakeIdp();
    const issuers = Array.from({ length: DISCOVERY_FAILURES_MAX + 10 }, (_, i) => `https://idp${i}.example`);
    for (const issuer of issuers) {
      const c: IdpConfig = { ...cfg, issuerUrl: issuer };
      await devicePolling(c, 'code', f.idp);
    }
    assert.equal(f.idp.discoveryFailures.size, DISCOVERY_FAILURES_MAX);
    // the earliest were forgotten first: asking for the first issuer goes to its IdP again, the last is answered from memory
    await devicePolling({ ...cfg, issuerUrl: issuers[0]! }, 'code', f.idp);
    await devicePolling({ ...cfg, issuerUrl: issuers.at(-1)! }, 'code', f.idp);
    assert.equal(f.discoveries(issuers[0]), 2);
    assert.equal(f.discoveries(issuers.at(-1)), 1);
  });
});
