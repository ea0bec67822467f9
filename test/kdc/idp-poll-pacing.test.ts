/**
 * The pace and the network failures of a device-flow login's token polls,
 * driven through the KDC's idp step in process (src/kdc/idp-preauth.ts
 * idpStep): a directory holding the IdP reference, a cookie jar, a short
 * hold, and a client that answers every challenge again at once, as SSSD's
 * krb5_child does. Against oidc-provider:
 * - a poll interval longer than the hold: no token request goes before the
 *   device code is due (RFC 8628 §3.5), each answer held the whole hold is
 *   answered "pending" without one, and the login completes once approved.
 *   Before the fix an answer polled when its hold ended, due or not.
 * - a token endpoint that drops one poll's connection: that answer is
 *   "pending" (the log says the IdP could not be reached), the next one
 *   polls and the login completes. Before the fix the login failed at once.
 * - an error the IdP answers (access_denied) still fails the login.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { IdpClient } from '../../src/oauth/client.js';
import { httpsFetch } from '../../src/oauth/http.js';
import { realmSchema } from '../../src/server/store.js';
import { openSqliteDirectory } from '../../src/directory/sqlite.js';
import type { Directory } from '../../src/directory/types.js';
import { ErrorCode, PaType } from '../../src/kerberos/iana.js';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';
import type { KdcReq } from '../../src/kerberos/asn1/kdc-req.js';
import { CookieJar } from '../../src/kdc/cookie-jar.js';
import { KdcError } from '../../src/kdc/errors.js';
import { idpStep } from '../../src/kdc/idp-preauth.js';
import { IdpStarts } from '../../src/kdc/idp-starts.js';
import type { ExchangeContext } from '../../src/kdc/exchange-context.js';
import type { KdcPrincipal } from '../../src/kdc/principals.js';

/** A TCP forwarder to the IdP's port whose next `refuse` connections are closed as soon as they come. */
async function startForwarder(port: number) {
  const open = new Set<Socket>();
  let refuse = 0;
  const server: Server = createServer((down) => {
    if (refuse > 0) {
      refuse--;
      down.destroy();
      return;
    }
    const up = createConnection({ host: '127.0.0.1', port });
    open.add(down).add(up);
    const drop = () => {
      down.destroy();
      up.destroy();
      open.delete(down);
      open.delete(up);
    };
    down.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
    down.pipe(up).pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    /** drops the connections open now and refuses the next `n` */
    refuseNext(n: number) {
      refuse = n;
      for (const s of open) s.destroy();
      open.clear();
    },
    async stop() {
      for (const s of open) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('device-flow token polls through the KDC: their pace, and an IdP not reached', () => {
  const base = 'dc=example,dc=test';
  let tmp: string;
  let dir: Directory;
  let idp: TestIdp;
  let forwarder: Awaited<ReturnType<typeof startForwarder>>;
  /** when each token request reached the IdP (ms) */
  let tokenTimes: number[] = [];

  before(async () => {
    idp = await startTestIdp({ accounts: ['pace-sub'] });
    forwarder = await startForwarder(Number(new URL(idp.issuer).port));
    tmp = mkdtempSync(join(tmpdir(), 'idp-pacing-'));
    dir = await openSqliteDirectory({ path: join(tmp, 'db'), baseDn: base, schema: realmSchema, masterKey: randomBytes(32), create: true });
    await dir.add(`cn=idps,${base}`, { objectClass: ['top', 'dirContainer'], cn: ['idps'] });
    const common = { objectClass: ['top', 'dirIdp'], dirIdpClientId: [idp.clientId], dirIdpClientSecret: [idp.clientSecret], dirIdpIssuerUrl: [idp.issuer], dirIdpDevAuthEndpoint: [idp.endpoints.devAuth], dirIdpKeysEndpoint: [idp.endpoints.keys], dirIdpScope: ['openid'] };
    await dir.add(`cn=direct,cn=idps,${base}`, { ...common, cn: ['direct'], dirIdpTokenEndpoint: [idp.endpoints.token] });
    // the token endpoint reached through the forwarder, which can drop a poll's connection
    const forwarded = new URL(idp.endpoints.token);
    forwarded.port = String(forwarder.port);
    await dir.add(`cn=forwarded,cn=idps,${base}`, { ...common, cn: ['forwarded'], dirIdpTokenEndpoint: [forwarded.href] });
  });
  after(async () => {
    idp?.rewriteTokenAnswers();
    idp?.rewriteDeviceAnswers();
    await forwarder?.stop();
    await idp?.stop();
    await dir?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** A KDC's view for idpStep: the directory, a cookie key, its IdP client, a hold of `holdMs`. */
  const kdc = (holdMs: number) => {
    const ctx = { db: { dir }, caches: { idpWaits: { holdMs, limit: 1000, active: 0 }, idpStarts: new IdpStarts() }, now: () => Date.now(), idp: new IdpClient(httpsFetch(idp.caPem)), cookies: new CookieJar(randomBytes(32)), note: {} };
    return ctx as unknown as ExchangeContext;
  };
  const user = (link: string): KdcPrincipal => ({ dn: `uid=pace,${base}`, name: 'pace', keys: [], account: {} as KdcPrincipal['account'], lockout: { maxFailures: 0, failureIntervalSec: 0, lockoutSec: 0 }, authTypes: ['idp'], idpLink: `cn=${link},cn=idps,${base}`, idpSub: 'pace-sub', isUser: true, kind: 'user' });

  /** The IdP's device answers give `interval`; token requests are timed from here on. */
  function watch(interval: number): void {
    idp.rewriteDeviceAnswers((a) => (a.status === 200 ? { status: 200, body: { ...a.body, interval } } : a));
    tokenTimes = [];
    idp.rewriteTokenAnswers((a) => {
      tokenTimes.push(performance.now());
      return a;
    });
  }

  /** One AS exchange's idp step: the KDC error it answered (undefined once the user is authenticated), and the log note. */
  async function step(ctx: ExchangeContext, client: KdcPrincipal, padata: PaData[]): Promise<{ error?: KdcError; note: string }> {
    ctx.note.preauth = undefined;
    try {
      await idpStep(ctx, { padata } as unknown as KdcReq, client, []);
      return { note: ctx.note.preauth ?? '' };
    } catch (e) {
      if (!(e instanceof KdcError)) throw e;
      return { error: e, note: ctx.note.preauth ?? '' };
    }
  }
  const cookieOf = (e: KdcError) => e.hints!.find((p) => p.type === PaType.FX_COOKIE)!;
  const userCodeOf = (e: KdcError) => {
    const challenge = e.hints!.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2)!.value;
    return (JSON.parse(challenge.subarray('oauth2 '.length, challenge.length - 1).toString('utf8')) as { user_code: string }).user_code;
  };
  /** The client's answer to a challenge: PA 152 empty, the cookie echoed. */
  const answerTo = (e: KdcError): PaData[] => [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookieOf(e)];

  it('never polls before the interval when it is longer than the hold, and logs in once approved', async () => {
    watch(3);
    const ctx = kdc(1000);
    const client = user('direct');
    const begun = await step(ctx, client, []);
    const started = performance.now();
    assert.equal(begun.error?.code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED, begun.note);
    // the user approves a while after the first poll is due, so the flow is polled pending once
    const approved = (async () => {
      await new Promise((r) => setTimeout(r, 3800));
      await idp.approveDevice(userCodeOf(begun.error!), 'pace-sub');
    })();
    let last = begun.error!;
    const notes: string[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await step(ctx, client, answerTo(last));
      notes.push(r.note);
      if (!r.error) break;
      assert.equal(r.error.code, ErrorCode.KDC_ERR_MORE_PREAUTH_DATA_REQUIRED, r.note);
      last = r.error;
    }
    await approved;
    assert.match(notes.at(-1)!, /identified "pace-sub"/, `the login did not complete: ${notes.join(' | ')}`);
    assert.ok(tokenTimes.length >= 2, `${tokenTimes.length} token request(s)`);
    assert.ok(tokenTimes[0]! - started >= 2900, `the first token request went ${Math.round(tokenTimes[0]! - started)} ms after the flow started, with an interval of 3 s`);
    for (let i = 1; i < tokenTimes.length; i++) assert.ok(tokenTimes[i]! - tokenTimes[i - 1]! >= 2900, `token requests ${Math.round(tokenTimes[i]! - tokenTimes[i - 1]!)} ms apart, with an interval of 3 s`);
    // an answer that found the code not due within its hold was held the hold and answered without a token request
    assert.ok(notes.some((n) => /not polled: the next poll is due in \d+ ms, after the hold/.test(n)), notes.join(' | '));
    assert.ok(!notes.some((n) => /slow down/.test(n)), `the IdP said slow_down: ${notes.join(' | ')}`);
  });

  it('answers "pending" when a poll does not reach the IdP, and logs in at a later poll', async () => {
    watch(1);
    const ctx = kdc(1500);
    const client = user('forwarded');
    const begun = await step(ctx, client, []);
    assert.equal(begun.error?.code, ErrorCode.KDC_ERR_PREAUTH_REQUIRED, begun.note);
    await idp.approveDevice(userCodeOf(begun.error!), 'pace-sub');
    // the poll of the first answer finds its connection closed at once
    forwarder.refuseNext(1);
    const first = await step(ctx, client, answerTo(begun.error!));
    assert.equal(first.error?.code, ErrorCode.KDC_ERR_MORE_PREAUTH_DATA_REQUIRED, `an IdP not reached once failed the login: ${first.note}`);
    assert.match(first.note, /could not be reached.*polled again at the next interval/);
    assert.equal(tokenTimes.length, 0, 'the refused poll reached the IdP');
    const second = await step(ctx, client, answerTo(first.error!));
    assert.equal(second.error, undefined, second.note);
    assert.match(second.note, /identified "pace-sub"/);
    assert.equal(tokenTimes.length, 1);
  });

  it('still fails the login on an error the IdP answers', async () => {
    watch(1);
    idp.rewriteTokenAnswers(() => ({ status: 400, body: { error: 'access_denied', error_description: 'the user said no' } }));
    const ctx = kdc(1500);
    const client = user('forwarded');
    const begun = await step(ctx, client, []);
    const r = await step(ctx, client, answerTo(begun.error!));
    assert.equal(r.error?.code, ErrorCode.KDC_ERR_PREAUTH_FAILED, r.note);
    assert.match(r.note, /access_denied/);
  });
});
