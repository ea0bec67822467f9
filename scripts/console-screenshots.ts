/**
 * Screenshots of the web console for docs/console.md and the README:
 * a throw-away realm on ephemeral ports, a test OpenID provider
 * (test/support/oidc-idp.ts) for a check that passes, a few IdP references
 * and linked users, then headless chromium (test/support/browser.ts) saves
 * docs/img/console-{list,add,edit,links,check}.png at 1200x800.
 * Run after `npm run build`: node --import tsx scripts/console-screenshots.ts
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAdminRealm } from '../test/support/realm.js';
import { launchChromium } from '../test/support/browser.js';
import { startTestIdp } from '../test/support/oidc-idp.js';

const out = new URL('../docs/img/', import.meta.url).pathname;
const idp = await startTestIdp();
const caDir = mkdtempSync(join(tmpdir(), 'dirid-shots-'));
const caFile = join(caDir, 'idp-ca.pem');
writeFileSync(caFile, idp.caPem);
const { realm, admin } = await startAdminRealm({ idpCaFile: caFile });
const chromium = await launchChromium();
try {
  await admin.call('idp_add', ['corp-keycloak'], { provider: 'keycloak', organization: 'corp', base_url: 'sso.example.test', client_id: 'dirid', secret: 'not-shown' });
  await admin.call('idp_add', ['github'], { provider: 'github', client_id: 'Iv1.0123456789abcdef', secret: 'not-shown' });
  await admin.call('idp_add', ['entra'], { provider: 'microsoft', organization: 'contoso.example', client_id: '8c1f7a52-0000-4000-8000-00000000d1d1', secret: 'not-shown' });
  await admin.call('idp_add', ['corp-oidc'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid email' });
  await admin.call('user_add', ['alice'], { first: 'Alice', last: 'Liddell' });
  await admin.call('user_mod', ['alice'], { user_auth_type: ['idp'], idp: 'corp-keycloak', idp_user_id: 'alice@example.test' });
  await admin.call('user_add', ['bob'], { first: 'Bob', last: 'Builder' });
  await admin.call('user_mod', ['bob'], { user_auth_type: ['idp'], idp: 'corp-keycloak', idp_user_id: 'bob@example.test' });

  const ctx = await chromium.context();
  const page = await ctx.newPage();
  await page.setViewportSize({ width: 1200, height: 800 });
  await page.goto(`${realm.url}/dirid/ui/`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(realm.adminPassword);
  await page.getByRole('button', { name: 'Log in', exact: true }).click();
  await page.locator('tr[data-idp="corp-keycloak"]').waitFor();
  await page.getByRole('button', { name: 'corp-keycloak', exact: true }).click();
  await page.getByRole('region', { name: 'Details of corp-keycloak' }).waitFor();
  await page.screenshot({ path: `${out}console-list.png` });

  await page.getByRole('button', { name: 'Add IdP reference' }).click();
  await page.getByRole('dialog').getByLabel('Provider').selectOption('okta');
  await page.getByRole('dialog').getByLabel('IdP reference name').fill('okta-staff');
  await page.getByRole('dialog').getByLabel('Organization').fill('default');
  await page.getByRole('dialog').getByLabel('Base URL').fill('staff.okta.example');
  await page.getByRole('dialog').getByLabel('Client identifier').fill('0oa1dirid');
  await page.screenshot({ path: `${out}console-add.png` });
  await page.keyboard.press('Escape');

  await page.getByRole('button', { name: 'Edit corp-oidc' }).click();
  await page.getByRole('dialog').getByLabel('Scope').waitFor();
  await page.screenshot({ path: `${out}console-edit.png` });
  await page.keyboard.press('Escape');

  await page.getByRole('button', { name: 'Users linked to corp-keycloak' }).click();
  await page.getByRole('dialog').getByRole('cell', { name: 'bob@example.test' }).waitFor();
  await page.screenshot({ path: `${out}console-links.png` });
  await page.keyboard.press('Escape');

  await page.getByRole('button', { name: 'Check corp-oidc' }).click();
  await page.getByRole('dialog').getByText(/\d+ passed, \d+ failed, \d+ skipped/).waitFor({ timeout: 30_000 });
  await page.screenshot({ path: `${out}console-check.png` });
  await ctx.close();
  console.log(`saved ${out}console-{list,add,edit,links,check}.png`);
} finally {
  await chromium.close();
  await realm.stop();
  await idp.stop();
  rmSync(caDir, { recursive: true, force: true });
}
