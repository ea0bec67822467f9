/**
 * A headless Chromium for the tests that need a real browser (the web
 * console, the "other device" step of the device flow): Debian's
 * /usr/bin/chromium driven by playwright-core, which downloads nothing.
 * The flags keep Chromium off the network (this machine has none: without
 * them it keeps trying Google's hosts); playwright gives each launch an
 * empty temporary profile. Contexts accept the certificates of the CAs the
 * tests made for their loopback servers (the system store does not know
 * them); nothing else is ever loaded.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.DIRID_TEST_CHROMIUM ?? '/usr/bin/chromium';

export interface TestBrowser {
  browser: Browser;
  /** A fresh context (own cookies). */
  context(): Promise<BrowserContext>;
  close(): Promise<void>;
}

/** Launches headless Chromium; close() ends it. */
export async function launchChromium(): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: scripts/install-deps.sh installs Debian's chromium`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-default-apps',
      '--disable-dev-shm-usage',
    ],
  });
  return {
    browser,
    context: () => browser.newContext({ ignoreHTTPSErrors: true }),
    async close() {
      await browser.close().catch(() => {});
    },
  };
}
