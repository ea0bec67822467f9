/**
 * How often the KDC polls the IdP for a pending device flow (issue 16 item
 * 4): at the device code's interval, whatever cookie or how many answers
 * ask. The KDC's hold of an answer (src/kdc/idp-preauth.ts
 * pollUntilAnswered) runs against oidc-provider with a one-second polling
 * interval and a short hold; the provider counts and times the token
 * requests it gets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { IdpClient } from '../../src/oauth/client.js';
import { startDeviceAuthorization } from '../../src/oauth/device-flow.js';
import { httpsFetch } from '../../src/oauth/http.js';
import type { IdpConfig } from '../../src/oauth/types.js';
import { HELD_NOT_DUE, NOT_DUE, pollUntilAnswered, type IdpFlowState } from '../../src/kdc/idp-preauth.js';
import type { ExchangeContext } from '../../src/kdc/exchange-context.js';

describe('device-flow polls: once per interval of the device code', () => {
  let idp: TestIdp;
  let cfg: IdpConfig;
  /** when each token request reached the IdP (ms) */
  let tokenTimes: number[] = [];

  before(async () => {
    idp = await startTestIdp({ accounts: ['poll-sub'], pollInterval: 1 });
    cfg = { name: 'polls', clientId: idp.clientId, clientSecret: idp.clientSecret, issuerUrl: idp.issuer, devAuthUri: idp.endpoints.devAuth, tokenUri: idp.endpoints.token, keysUri: idp.endpoints.keys, scope: 'openid' };
  });
  after(async () => {
    idp?.rewriteTokenAnswers();
    await idp?.stop();
  });

  /** A KDC's view for pollUntilAnswered: its IdP client, a hold of `holdMs`, at most `limit` answers held. */
  const kdc = (holdMs: number, limit = 1000) => ({ caches: { idpWaits: { holdMs, limit, active: 0 } }, now: () => Date.now(), idp: new IdpClient(httpsFetch(idp.caPem)) }) as unknown as ExchangeContext;

  /** A new pending flow at the IdP, as its first cookie carries it; token requests are timed from here on. */
  async function flow(ctx: ExchangeContext): Promise<IdpFlowState> {
    const da = await startDeviceAuthorization(cfg, ctx.idp);
    tokenTimes = [];
    idp.rewriteTokenAnswers((a) => {
      tokenTimes.push(performance.now());
      return a;
    });
    return { kind: 'idp', user: 'u', link: 'l', ...da, lastPoll: Date.now() };
  }

  /** One answer with `state` (its cookie): what the KDC decided and the state its fresh cookie would carry. */
  async function answer(ctx: ExchangeContext, state: IdpFlowState) {
    let s = state;
    const r = await pollUntilAnswered(ctx, cfg, state, (next) => (s = next));
    return { r: typeof r === 'string' ? r : r.status, s };
  }

  it('two answers for one flow at the same time make the token requests of one', async () => {
    const ctx = kdc(1500);
    const s0 = await flow(ctx);
    await sleep(1100);
    const alone = await answer(ctx, s0);
    assert.equal(alone.r, 'pending');
    const one = tokenTimes.length;
    assert.ok(one >= 1, 'one answer asked the IdP');

    const s1 = await flow(ctx);
    await sleep(1100);
    const both = await Promise.all([answer(ctx, s1), answer(ctx, s1)]);
    assert.deepEqual(both.map((b) => b.r), ['pending', 'pending']);
    assert.equal(tokenTimes.length, one, `two answers made ${tokenTimes.length} token requests, one answer ${one}`);
    for (let i = 1; i < tokenTimes.length; i++) assert.ok(tokenTimes[i]! - tokenTimes[i - 1]! >= 900, `token requests ${Math.round(tokenTimes[i]! - tokenTimes[i - 1]!)} ms apart`);
  });

  it('an answer with an older cookie keeps the interval a slow_down set', async () => {
    const ctx = kdc(3000);
    const s0 = await flow(ctx);
    let first = true;
    idp.rewriteTokenAnswers((a) => {
      tokenTimes.push(performance.now());
      if (!first) return a;
      first = false;
      return { status: 400, body: { error: 'slow_down', error_description: 'poll less often' } };
    });
    await sleep(1100);
    const slowed = await answer(ctx, s0);
    assert.equal(slowed.r, 'slow_down');
    assert.equal(slowed.s.interval, 6, 'slow_down adds 5 s to the interval');
    assert.equal(tokenTimes.length, 1);
    // the client answers again with the cookie from before the slow_down: the code is due 6 s after that poll, past this hold
    const t = performance.now();
    const stale = await answer(ctx, s0);
    assert.equal(stale.r, HELD_NOT_DUE);
    assert.ok(performance.now() - t >= 2900, `the older cookie's answer was answered ${Math.round(performance.now() - t)} ms after it came, before its hold ended`);
    assert.equal(tokenTimes.length, 1, 'the code was polled before the interval slow_down set had passed');
    assert.equal(stale.s.interval, 6, 'its fresh cookie carries the longer interval');
    // the next answer (the old cookie again) comes due within its hold and polls then
    const next = await answer(ctx, s0);
    assert.equal(next.r, 'pending');
    assert.equal(tokenTimes.length, 2);
    assert.ok(tokenTimes[1]! - tokenTimes[0]! >= 5900, `polls ${Math.round(tokenTimes[1]! - tokenTimes[0]!)} ms apart after a slow_down set the interval to 6 s`);
  });

  it('past the limit of held answers, an answer before the code is due is answered pending without a token request', async () => {
    const ctx = kdc(3000, 0);
    const s0 = await flow(ctx);
    assert.equal((await answer(ctx, s0)).r, NOT_DUE);
    assert.equal(tokenTimes.length, 0, 'the code was polled before its interval');
    await sleep(1100);
    const due = await answer(ctx, s0);
    assert.equal(due.r, 'pending');
    assert.equal(tokenTimes.length, 1);
    // the same old cookie again, right away: the code was polled just now
    assert.equal((await answer(ctx, s0)).r, NOT_DUE);
    assert.equal(tokenTimes.length, 1);
  });
});
