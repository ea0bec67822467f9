/**
 * The web console (docs/console.md) in a real browser: Debian's chromium,
 * headless, driven by playwright-core against a realm on ephemeral ports.
 * An admin logs in with a password, adds a templated IdP reference, links a
 * user, reads the server's refusal to delete the linked reference, unlinks
 * and deletes; a user without the privilege sees the list but no edit
 * controls and never the secret; the pages carry the strict CSP and break
 * none of it; the static files refuse traversal. Needs `npm run build`
 * (dist/ui), which the test command runs first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:https';
import type { Page } from 'playwright-core';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import type { RpcSession } from '../support/rpc-client.js';
import { launchChromium, type TestBrowser } from '../support/browser.js';

const SECRET = 'console-secret-Xy7-do-not-leak';

function httpsGet(url: string, ca: string, rawPath: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const u = new URL(url);
    const req = request({ method: 'GET', host: u.hostname, port: u.port, path: rawPath, ca }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Console messages that report a CSP violation, and uncaught page errors (the 401s of the start-up probes are expected). */
function watch(page: Page): { problems: string[]; bodies: Promise<string>[] } {
  const problems: string[] = [];
  const bodies: Promise<string>[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('response', (r) => bodies.push(r.text().catch(() => '')));
  return { problems, bodies };
}

async function login(page: Page, base: string, user: string, password: string): Promise<void> {
  await page.goto(`${base}/dirid/ui/`);
  await page.getByLabel('User name').fill(user);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
}

describe('the web console', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let chromium: TestBrowser;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    chromium = await launchChromium();
  });
  after(async () => {
    await chromium?.close();
    await realm?.stop();
  });

  it('serves the console with its CSP and logs the admin in', async () => {
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    const w = watch(page);
    const res = await page.goto(`${realm.url}/dirid/ui/`);
    assert.equal(res?.status(), 200);
    assert.match(res!.headers()['content-security-policy'] ?? '', /default-src 'none'; script-src 'self'/);
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByText('Logged in as').waitFor();
    assert.match(await page.locator('footer').innerText(), /dirid server version .* API version/);
    assert.deepEqual(w.problems, []);
    await ctx.close();
  });
});
