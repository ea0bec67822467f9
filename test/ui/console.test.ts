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
import { addActiveUser, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { launchChromium, launchChromiumWithKerberos, type TestBrowser } from '../support/browser.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runTool } from '../support/mit-tools.js';

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
    const csp = res!.headers()['content-security-policy'] ?? '';
    assert.match(csp, /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(res!.headers()['x-content-type-options'], 'nosniff');
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByText('Logged in as').waitFor();
    assert.match(await page.locator('footer').innerText(), /dirid server version .* API version/);
    assert.deepEqual(w.problems, []);
    await ctx.close();
  });

  /**
   * Opens the console in a Chromium holding admin's ticket from MIT kinit and
   * waits until it is logged in with no password typed; returns the status
   * login_kerberos answered each request of the page with (the browser's own
   * Negotiate round inside one request is not seen here: a request it
   * answered ends in 200).
   */
  async function kerberosLogin(metNegotiate: boolean): Promise<string[]> {
    const dir = mkdtempSync(join(tmpdir(), 'dirid-console-krb-'));
    const env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(dir, 'cc')}` };
    try {
      const k = await runTool('kinit', ['admin'], { ...process.env, ...env }, `${realm.adminPassword}\n`);
      assert.equal(k.code, 0, k.stderr);
      const since = realm.log.length;
      const krb = await launchChromiumWithKerberos('localhost', env, { metNegotiate });
      try {
        const page = await krb.context.newPage();
        const w = watch(page);
        const answers: string[] = [];
        page.on('response', (r) => {
          if (!r.url().endsWith('/dirid/session/login_kerberos')) return;
          answers.push(String(r.status()));
        });
        await page.goto(`${realm.url}/dirid/ui/`);
        await page.getByText('Logged in as').waitFor({ timeout: 15_000 }).catch((e: unknown) => {
          const logged = realm.log.slice(since).filter((l) => /login|negotiate|HTTP\//i.test(l));
          throw new Error(`no Kerberos login: login_kerberos answered [${answers.join('; ')}]; server: ${logged.join(' | ')}; Chromium: ${krb.authEvents().join(' | ')}`, { cause: e });
        });
        assert.match(await page.locator('header').innerText(), /admin@EXAMPLE\.TEST/);
        assert.equal(await page.getByLabel('Password').count(), 0, 'no password form');
        assert.ok(realm.log.slice(since).some((l) => /login method=negotiate principal=admin@EXAMPLE\.TEST outcome=ok/.test(l)), 'the server saw a Negotiate login');
        assert.deepEqual(w.problems, []);
        return answers;
      } finally {
        await krb.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('logs a browser that holds a Kerberos ticket in through Negotiate at its first request, with no password asked', async () => {
    assert.deepEqual(await kerberosLogin(true), ['200']);
  });

  it('logs in a browser meeting Negotiate for the first time, which leaves the first challenge unanswered, by asking again while the form waits', async () => {
    const answers = await kerberosLogin(false);
    assert.equal(answers[0], '401', 'Chromium answers no first challenge of a new profile: a later request is what logged it in');
    assert.equal(answers.at(-1), '200');
  });

  it('shows the server\'s own words for a wrong password', async () => {
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    await login(page, realm.url, 'admin', 'not-the-password');
    const alert = page.getByRole('alert');
    await alert.waitFor();
    // the text the login endpoint answers with, as the CLI shows it
    const direct = await new RpcSession(realm.url, realm.ca).login('admin', 'not-the-password');
    assert.equal(direct.status, 401);
    assert.equal((await alert.innerText()).trim(), direct.body.trim());
    await ctx.close();
  });

  it('adds a templated reference, links a user, is refused the delete, unlinks and deletes', async () => {
    await admin.call('user_add', ['carol'], { first: 'Carol', last: 'Console' });
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    const w = watch(page);
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByRole('button', { name: 'Add IdP reference' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('IdP reference name').fill('corp-kc');
    await form.getByLabel('Provider').selectOption('keycloak');
    // the template's own fields appear once it is chosen
    await form.getByLabel('Organization').fill('main');
    await form.getByLabel('Base URL').fill('sso.example.test');
    await form.getByLabel('Client identifier').fill('dirid-console');
    await form.getByLabel('Secret').fill(SECRET);
    await form.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByText('Added IdP reference "corp-kc"').waitFor();
    const shown = await admin.call('idp_show', ['corp-kc']);
    assert.equal(shown.result.diridpissuerurl[0], 'https://sso.example.test/realms/main');
    assert.equal(shown.result.diridpclientid[0], 'dirid-console');

    // the edit form never carries the secret back
    await page.getByRole('button', { name: 'Edit corp-kc' }).click();
    const edit = page.getByRole('dialog');
    assert.equal(await edit.getByLabel(/Secret/).inputValue(), '');
    assert.equal(await edit.getByLabel('Client identifier').inputValue(), 'dirid-console');
    await edit.getByLabel('Scope').fill('openid email profile');
    await edit.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Modified IdP reference "corp-kc"').waitFor();
    assert.equal((await admin.call('idp_show', ['corp-kc'])).result.diridpscope[0], 'openid email profile');

    // link carol from the console
    await page.getByRole('button', { name: 'Users linked to corp-kc' }).click();
    const links = page.getByRole('dialog');
    await links.getByText('No user is linked').waitFor();
    await links.getByLabel('User login').fill('carol');
    await links.getByLabel('IdP user ID').fill('carol@example.test');
    await links.getByRole('button', { name: 'Link', exact: true }).click();
    await links.getByRole('cell', { name: 'carol@example.test' }).waitFor();
    const linked = await admin.call('user_show', ['carol']);
    assert.deepEqual(linked.result.diridpconfiglink, ['corp-kc']);
    await page.keyboard.press('Escape');
    await links.waitFor({ state: 'detached' });

    // the delete is refused, in the server's words, with the users that keep it
    await page.getByRole('button', { name: 'Delete corp-kc' }).click();
    const del = page.getByRole('dialog');
    await del.getByRole('button', { name: 'Delete', exact: true }).click();
    const refusal = del.getByRole('alert');
    await refusal.waitFor();
    const direct = await admin.raw('idp_del', ['corp-kc']);
    assert.equal(direct.response.error?.name, 'ReferencedEntry');
    assert.equal((await refusal.innerText()).trim(), direct.response.error?.message);
    await del.getByText('Linked users: carol').waitFor();
    await del.getByRole('button', { name: 'Cancel' }).click();

    // unlink, then the delete goes through
    await page.getByRole('button', { name: 'Users linked to corp-kc' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Unlink carol' }).click();
    await page.getByRole('dialog').getByText('No user is linked').waitFor();
    const unlinked = await admin.call('user_show', ['carol']);
    assert.equal(unlinked.result.diridpconfiglink, undefined);
    assert.deepEqual(unlinked.result.diruserauthtype, ['password']);
    await page.getByRole('dialog').getByRole('button', { name: 'Close' }).click();
    await page.getByRole('button', { name: 'Delete corp-kc' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('Deleted IdP reference "corp-kc"').waitFor();
    assert.equal((await admin.raw('idp_show', ['corp-kc'])).response.error?.name, 'NotFound');

    const bodies = await Promise.all(w.bodies);
    assert.ok(!bodies.some((b) => b.includes(SECRET)), 'the secret came back in a response');
    assert.deepEqual(w.problems, []);
    await ctx.close();
  });

  it('runs idp-check and shows its lines', async () => {
    await admin.call('idp_add', ['to-check'], { provider: 'github', client_id: 'gh', secret: SECRET });
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByRole('button', { name: 'Check to-check' }).click();
    const dlg = page.getByRole('dialog');
    await dlg.getByText(/\d+ passed, \d+ failed, \d+ skipped/).waitFor({ timeout: 20_000 });
    assert.ok((await dlg.locator('.checks li').count()) > 0);
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
    // the focus is back on the button that opened the dialog
    await page.waitForFunction(`document.activeElement?.getAttribute('aria-label') === 'Check to-check'`, undefined, { timeout: 5000 });

    // rename through the edit form
    await page.getByRole('button', { name: 'Edit to-check' }).click();
    await page.getByRole('dialog').getByLabel('Name (change it to rename)').fill('checked');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.getByText('Modified IdP reference "checked"').waitFor();
    await page.locator('tr[data-idp="checked"]').waitFor();
    assert.equal((await admin.call('idp_show', ['checked'])).result.diridpclientid[0], 'gh');
    await ctx.close();
    await admin.call('idp_del', ['checked']);
  });

  it('shows a user without the privilege the references, but no edit controls and no secret', async () => {
    await admin.call('idp_add', ['visible'], { provider: 'keycloak', organization: 'r', base_url: 'kc.example.test', client_id: 'vis', secret: SECRET });
    await addActiveUser(admin, 'ursula', 'Ursula-pass-1', { first: 'Ursula', last: 'User' });
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    const w = watch(page);
    await login(page, realm.url, 'ursula', 'Ursula-pass-1');
    await page.getByText('(read only)').waitFor();
    await page.locator('tr[data-idp="visible"]').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Add IdP reference' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^(Edit|Delete|Check) / }).count(), 0);
    // search narrows the list to what the server finds
    await admin.call('idp_add', ['other-one'], { provider: 'github', client_id: 'zzz-other', secret: SECRET });
    await page.getByRole('searchbox', { name: 'Search' }).fill('zzz-other');
    await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    // the list before the search may also say "1 IdP reference matched" (only "visible"): wait for the search's own row
    await page.locator('tr[data-idp="other-one"]').waitFor();
    await page.getByText('1 IdP reference matched').waitFor();
    assert.equal(await page.locator('tr[data-idp]').count(), 1);
    await page.getByRole('searchbox', { name: 'Search' }).fill('');
    await page.getByRole('searchbox', { name: 'Search' }).press('Enter');
    await page.locator('tr[data-idp="visible"]').waitFor();
    await page.getByRole('button', { name: 'Users linked to visible' }).click();
    await page.getByRole('dialog').getByText('No user is linked').waitFor();
    assert.equal(await page.getByRole('dialog').getByLabel('User login').count(), 0);
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'visible', exact: true }).click();
    await page.getByRole('region', { name: 'Details of visible' }).waitFor();
    assert.ok(!(await page.content()).includes(SECRET));
    const bodies = await Promise.all(w.bodies);
    assert.ok(!bodies.some((b) => b.includes(SECRET)));
    assert.deepEqual(w.problems, []);
    await ctx.close();
  });

  it('goes back to the login form when the server no longer takes the session', async () => {
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByText('Logged in as').waitFor();
    // the list's first load done: a request still in flight when the cookie goes would end the session before the click
    await page.getByText(/IdP references? matched/).waitFor();
    await ctx.clearCookies();
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByText('The session has ended: log in again.').waitFor();
    await page.getByLabel('User name').waitFor();
    await ctx.close();
  });

  it('logs out: the cookie is gone, a reload shows the login form and the server logged it', async () => {
    const ctx = await chromium.context();
    const page = await ctx.newPage();
    await login(page, realm.url, 'admin', realm.adminPassword);
    await page.getByText('Logged in as').waitFor();
    assert.equal((await ctx.cookies()).filter((c) => c.name === 'dirid_session').length, 1);
    const since = realm.log.length;
    await page.getByRole('button', { name: 'Log out', exact: true }).click();
    await page.getByLabel('User name').waitFor();
    assert.deepEqual((await ctx.cookies()).filter((c) => c.name === 'dirid_session'), []);
    assert.ok(realm.log.slice(since).some((l) => /logout principal=admin@EXAMPLE\.TEST/.test(l)), 'the server logged the logout');
    await page.reload();
    await page.getByLabel('User name').waitFor();
    assert.equal(await page.getByText('Logged in as').count(), 0);
    await ctx.close();
  });

  it('refuses path traversal on the static files', async () => {
    const index = await httpsGet(realm.url, realm.ca, '/dirid/ui/');
    assert.equal(index.status, 200);
    assert.equal(index.headers['cache-control'], 'no-cache');
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    // a page of the console without a file of its own gets the same document; a hashed asset is cached for good
    assert.equal((await httpsGet(realm.url, realm.ca, '/dirid/ui/idp/corp')).body, index.body);
    const script = /src="(\/dirid\/ui\/assets\/[^"]+\.js)"/.exec(index.body)?.[1];
    assert.ok(script, 'index.html names its script');
    const asset = await httpsGet(realm.url, realm.ca, script);
    assert.equal(asset.status, 200);
    assert.equal(asset.headers['content-type'], 'text/javascript; charset=utf-8');
    assert.match(String(asset.headers['cache-control']), /max-age=31536000, immutable/);
    assert.match(String(asset.headers['content-security-policy']), /script-src 'self'/);
    // nothing inline: the CSP allows no inline script or style, so the document must not need one
    assert.doesNotMatch(index.body, /<script(?![^>]*\bsrc=)[^>]*>|<style|style=/);
    for (const path of ['/dirid/ui/../../server.conf', '/dirid/ui/../server.conf', '/dirid/ui/%2e%2e/%2e%2e/server.conf', '/dirid/ui/..%2f..%2fserver.conf', '/dirid/ui/assets/..%5c..%5cserver.conf', '/dirid/ui/%00', '/dirid/ui/assets/nothing.js']) {
      const r = await httpsGet(realm.url, realm.ca, path);
      assert.ok(r.status === 400 || r.status === 404, `${path}: HTTP ${r.status}`);
      assert.doesNotMatch(r.body, /\[|realm|master|BEGIN/i, path);
    }
    const post = await new Promise<number>((resolve, reject) => {
      const u = new URL(realm.url);
      const req = request({ method: 'POST', host: u.hostname, port: u.port, path: '/dirid/ui/', ca: realm.ca }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(post, 405);
  });
});
