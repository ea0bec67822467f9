/**
 * The device flow with the "other device" step done by a person in a real
 * browser: headless Chromium (test/support/browser.ts) opens the
 * verification URL the client printed, the user code is typed into the test
 * IdP's page (oidc-provider's own device and interaction pages), the user
 * signs in on its login form and approves (or cancels) its consent page.
 * Then the client must hold a TGT: MIT kinit with SSSD's idp plugin
 * (armored with a host ticket, on a pseudo-terminal) and `dirid kinit`; or,
 * after a cancelled consent, say so and hold nothing.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { idpReference, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { pty } from '../support/pty.js';
import { launchChromium, type TestBrowser } from '../support/browser.js';
import { RpcSession } from '../support/rpc-client.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

/** What the person does at the IdP once the code is accepted. */
type Choice = { account: string; consent: 'approve' | 'cancel' };

describe('device flow: the other device is a browser', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let chromium: TestBrowser;
  let env: NodeJS.ProcessEnv;
  let armor: string;
  /** the text of each consent page the user saw */
  const consentPages: string[] = [];

  before(async () => {
    chromium = await launchChromium();
    // a one-second polling interval keeps the KDC's and dirid kinit's waits short
    idp = await startTestIdp({ accounts: ['alice-sub', 'dora-sub'], pollInterval: 1 });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `idp-ca-browser-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf'), DIRID_KINIT_POLL_MS: '1000' };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['testidp'], idpReference(idp, 'openid email'));
    for (const [user, sub] of [['alice', 'alice-sub'], ['dora', 'dora-sub']] as const) {
      await admin.call('user_add', [user], { first: user, last: 'T' });
      await admin.call('user_mod', [user], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: sub });
    }
    armor = await hostArmor(realm, env);
  });
  after(async () => {
    await chromium?.close();
    await realm?.stop();
    await idp?.stop();
  });

  /** A fresh browser context that reaches the IdP only (its pages name a web font on the Internet). */
  async function openPage(): Promise<Page> {
    const context = await chromium.context();
    await context.route('**/*', (route) => (route.request().url().startsWith(`${idp.issuer}/`) ? route.continue() : route.abort()));
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    return page;
  }

  /** Signs in at the IdP's login form, then approves or cancels its consent page; returns the text of the last page. */
  async function signInAndConsent(page: Page, c: Choice): Promise<string> {
    await page.locator('input[name="login"]').waitFor();
    await page.fill('input[name="login"]', c.account);
    await page.fill('input[name="password"]', 'a password');
    await page.click('button:has-text("Sign-in")');
    await page.locator('input[name="prompt"][value="consent"]').waitFor({ state: 'attached' });
    consentPages.push(await page.innerText('body'));
    if (c.consent === 'cancel') await page.click('a:has-text("Cancel")');
    else await page.click('button:has-text("Continue")');
    // the IdP leaves its interaction pages for the device flow's closing page
    await page.waitForURL((u) => !u.pathname.startsWith('/interaction/'));
    return page.innerText('body');
  }

  /**
   * Opens the URL as printed; when it carries the user code, the IdP shows it
   * for confirmation (the user checks it is the one the device shows).
   */
  async function approveFromCompleteUrl(url: string, userCode: string, c: Choice): Promise<string> {
    const page = await openPage();
    try {
      await page.goto(url);
      await page.locator('button[form="op.deviceConfirmForm"]:has-text("Continue")').waitFor();
      assert.equal((await page.innerText('code')).trim(), userCode, 'the IdP shows the code the device printed');
      await page.click('button[form="op.deviceConfirmForm"]:has-text("Continue")');
      return await signInAndConsent(page, c);
    } finally {
      await page.context().close();
    }
  }

  /** Opens the bare verification URL and types the code (first `typos`, each refused, then the right one). */
  async function approveByTypingCode(url: string, userCode: string, c: Choice, typos: string[] = []): Promise<{ refusals: string[]; last: string }> {
    const page = await openPage();
    const refusals: string[] = [];
    try {
      await page.goto(url);
      for (const code of [...typos, userCode]) {
        await page.fill('input[name="user_code"]', code);
        await page.click('button[form="op.deviceInputForm"]');
        if (code !== userCode) {
          // the input page again, now with a complaint
          await page.locator('p.red').waitFor();
          refusals.push(await page.innerText('body'));
        }
      }
      await page.locator('button[form="op.deviceConfirmForm"]:has-text("Continue")').waitFor();
      assert.equal((await page.innerText('code')).trim(), userCode);
      await page.click('button[form="op.deviceConfirmForm"]:has-text("Continue")');
      return { refusals, last: await signInAndConsent(page, c) };
    } finally {
      await page.context().close();
    }
  }

  /** `dirid kinit ARGS`; `atIdp` runs once it printed where to authenticate (URL, code). */
  function diridKinit(args: string[], atIdp: (url: string, code: string) => Promise<unknown>): Promise<{ code: number | null; stdout: string; stderr: string; browser: Promise<unknown> }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [DIRID, 'kinit', ...args], { env: { ...process.env, ...env } });
      let stdout = '';
      let stderr = '';
      let browser: Promise<unknown> = Promise.resolve();
      let started = false;
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        const m = /\(or open (\S+) and enter the code (\S+)\)/.exec(stdout);
        if (m && !started) {
          started = true;
          browser = atIdp(m[1]!, m[2]!);
          browser.catch(() => {});
        }
      });
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.stdin.end();
      child.on('exit', (code) => resolve({ code, stdout, stderr, browser }));
    });
  }

  /**
   * MIT `kinit -T` on a pseudo-terminal: at its device-flow prompt the user
   * goes to the browser, then presses ENTER. SSSD's plugin prints the URL
   * with the code in it, or the code beside the bare URL: either is followed.
   */
  async function mitKinit(cc: string, principal: string, c: Choice): Promise<{ code: number | null; out: string; last: string }> {
    let browser: Promise<string> | undefined;
    const r = await pty(`kinit -T ${armor} -c ${cc} ${principal}`, env, (out, write) => {
      const m = /Authenticate (?:at (\S+)|with PIN (\S+) at (\S+)) and press ENTER\.?:/.exec(out);
      if (!m || browser) return;
      browser = m[1] ? approveFromCompleteUrl(m[1], new URL(m[1]).searchParams.get('user_code')!, c) : approveByTypingCode(m[3]!, m[2]!, c).then((x) => x.last);
      // ENTER once the browser is done; Ctrl-C if it failed, so that kinit does not wait for ever
      browser.then(
        () => write('\r'),
        () => write('\x03'),
      );
    });
    assert.ok(browser, `kinit printed no device-flow prompt: ${r.out}`);
    return { ...r, last: await browser };
  }

  const issued = (user: string) => realm.log.filter((x) => new RegExp(`client=${user}@EXAMPLE\\.TEST .*outcome=ISSUE`).test(x)).length;

  it('MIT kinit -T: the user approves in the browser at the URL kinit printed, then presses ENTER; klist shows the TGT', async () => {
    const cc = `FILE:${join(realm.dataDir, 'alice.cc')}`;
    const r = await mitKinit(cc, 'alice', { account: 'alice-sub', consent: 'approve' });
    assert.match(r.last, /Sign-in Success/);
    assert.equal(r.code, 0, r.out);
    assert.match(consentPages.at(-1)!, /scopes:\s+email/);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.match(l.stdout, /Default principal: alice@EXAMPLE\.TEST/);
    assert.match(l.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\n/);
    assert.match(l.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
    assert.ok(realm.log.some((x) => /client=alice@EXAMPLE.TEST .*outcome=ISSUE .*preauth="idp: testidp identified \\"alice-sub\\""/.test(x)));
  });

  it('dirid kinit: the user types the code at the bare URL, signs in, approves; dirid kinit reports success and the ccache holds the TGT', async () => {
    const cc = `FILE:${join(realm.dataDir, 'dora.cc')}`;
    const before = issued('dora');
    const r = await diridKinit(['-T', armor, '-c', cc, 'dora'], (url, code) => approveByTypingCode(url, code, { account: 'dora-sub', consent: 'approve' }));
    const b = (await r.browser) as { refusals: string[]; last: string };
    assert.deepEqual(b.refusals, []);
    assert.match(b.last, /Sign-in Success/);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.equal(r.stderr, '');
    assert.equal(issued('dora'), before + 1, 'one ticket issued to dora');
    assert.match(r.stdout, /^Authenticate at https:\/\/localhost:\d+\/device\?user_code=/m);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.match(l.stdout, /Default principal: dora@EXAMPLE\.TEST/);
    assert.match(l.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\n/);
    assert.match(l.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
  });

  it('dirid kinit: a mistyped code is refused at the IdP and corrected; the user then cancels consent: the refusal is reported, nothing issued', async () => {
    const cc = `FILE:${join(realm.dataDir, 'dora-denied.cc')}`;
    const before = issued('dora');
    const r = await diridKinit(['-T', armor, '-c', cc, 'dora'], (url, code) => approveByTypingCode(url, code, { account: 'dora-sub', consent: 'cancel' }, ['BCDF-GHJK']));
    const b = (await r.browser) as { refusals: string[]; last: string };
    assert.equal(b.refusals.length, 1);
    assert.match(b.refusals[0]!, /The code you entered is incorrect/);
    assert.match(b.last, /The Sign-in request was interrupted/);
    assert.equal(r.code, 1, r.stdout);
    assert.equal(r.stderr, 'dirid: ERROR: token request: the sign-in was refused or cancelled at the IdP (access_denied: End-User aborted interaction) while getting initial credentials\n');
    assert.equal((await runTool('klist', ['-c', cc], env)).code, 1, 'no TGT');
    assert.equal(issued('dora'), before, 'no ticket issued to dora');
    assert.ok(realm.log.some((x) => /client=dora@EXAMPLE.TEST .*preauth="idp: token request: the sign-in was refused or cancelled at the IdP \(access_denied/.test(x)));
  });

  it('MIT kinit: the user cancels consent in the browser: kinit fails, nothing issued', async () => {
    const cc = `FILE:${join(realm.dataDir, 'alice-denied.cc')}`;
    const before = issued('alice');
    const r = await mitKinit(cc, 'alice', { account: 'alice-sub', consent: 'cancel' });
    assert.match(r.last, /The Sign-in request was interrupted/);
    assert.notEqual(r.code, 0);
    // MIT kinit words the KDC's refusal itself; the server log keeps the IdP's answer
    assert.match(r.out, /kinit: Preauthentication failed while getting initial credentials/);
    assert.equal((await runTool('klist', ['-c', cc], env)).code, 1, 'no TGT');
    assert.equal(issued('alice'), before, 'no ticket issued to alice');
    assert.ok(realm.log.some((x) => /client=alice@EXAMPLE.TEST .*preauth="idp: token request: the sign-in was refused or cancelled at the IdP \(access_denied/.test(x)));
  });
});
