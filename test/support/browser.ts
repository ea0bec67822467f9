/**
 * A headless Chromium for the tests that need a real browser (the web
 * console, the "other device" step of the device flow): Debian's
 * /usr/bin/chromium driven by playwright-core, which downloads nothing.
 * The flags keep Chromium off the network (this machine has none: without
 * them it keeps trying Google's hosts); playwright gives each launch an
 * empty temporary profile. Contexts accept the certificates of the CAs the
 * tests made for their loopback servers (the system store does not know
 * them); nothing else is ever loaded.
 *
 * Kerberos (HTTP Negotiate) needs a regular profile: Chromium never offers
 * ambient credentials in an off-the-record one, which every playwright
 * context is, so `launchChromiumWithKerberos` starts a persistent context
 * on a temporary profile, allowed to authenticate to the given hosts, with
 * the ticket cache and krb5.conf the environment names.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.DIRID_TEST_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (own cookies). */
  context(): Promise<BrowserContext>;
  close(): Promise<void>;
}

const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-dev-shm-usage',
];

function checkChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: scripts/install-deps.sh installs Debian's chromium`);
}

/** Launches headless Chromium; close() ends it. */
export async function launchChromium(): Promise<TestBrowser> {
  checkChromium();
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  return {
    browser,
    context: () => browser.newContext({ ignoreHTTPSErrors: true }),
    async close() {
      await browser.close().catch(() => {});
    },
  };
}

/**
 * A browser that logs in with Kerberos: a persistent context on a temporary
 * profile, Negotiate allowed for `hosts` (e.g. "localhost"), `env` giving
 * KRB5CCNAME and KRB5_CONFIG; close() ends it and removes the profile.
 */
export async function launchChromiumWithKerberos(hosts: string, env: Record<string, string>): Promise<{ context: BrowserContext; close(): Promise<void> }> {
  checkChromium();
  const profile = mkdtempSync(join(tmpdir(), 'dirid-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, `--auth-server-allowlist=${hosts}`],
    env: { ...process.env, ...env } as Record<string, string>,
    ignoreHTTPSErrors: true,
  });
  return {
    context,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
