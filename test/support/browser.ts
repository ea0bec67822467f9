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
 * the ticket cache and krb5.conf the environment names, and by default
 * marked as having met Negotiate before (see KerberosBrowserOptions).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** How launchChromiumWithKerberos sets up its profile. */
export interface KerberosBrowserOptions {
  /**
   * Whether the profile has met a Negotiate challenge before (default true).
   * Chromium on Linux records the first challenge a profile ever receives in
   * its Local State (`net.received_http_auth_negotiate_headers`) and leaves
   * that challenge unanswered: it restarts its network service with the
   * GSS-API library allowed, and answers from then on. A browser its user
   * has logged in with before has the mark; false starts a profile that never
   * met one, as on a first visit.
   */
  metNegotiate?: boolean;
}

/**
 * A browser that logs in with Kerberos: a persistent context on a temporary
 * profile, Negotiate allowed for `hosts` (e.g. "localhost"), `env` giving
 * KRB5CCNAME and KRB5_CONFIG; close() ends it and removes the profile.
 * authEvents() reads Chromium's net log so far: each HTTP-auth step, to say
 * why a login did not happen.
 */
export async function launchChromiumWithKerberos(
  hosts: string,
  env: Record<string, string>,
  options: KerberosBrowserOptions = {},
): Promise<{ context: BrowserContext; authEvents(): string[]; close(): Promise<void> }> {
  checkChromium();
  const profile = mkdtempSync(join(tmpdir(), 'dirid-chromium-'));
  if (options.metNegotiate ?? true) writeFileSync(join(profile, 'Local State'), JSON.stringify({ net: { received_http_auth_negotiate_headers: true } }));
  const netLog = join(profile, 'net-log.json');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [...ARGS, `--auth-server-allowlist=${hosts}`, `--log-net-log=${netLog}`],
    env: { ...process.env, ...env } as Record<string, string>,
    ignoreHTTPSErrors: true,
  });
  return {
    context,
    authEvents: () => authEventsOf(netLog),
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The HTTP-auth events of a Chromium net log, read while Chromium still
 * writes it: the first line holds the constants, then one event per line.
 * Each as "NAME[ BEGIN|END][ net_error][ params]".
 */
function authEventsOf(path: string): string[] {
  let lines: string[];
  try {
    lines = readFileSync(path, 'utf8').split('\n');
  } catch (e) {
    return [`no net log: ${String(e)}`];
  }
  let types: Map<number, string>;
  let errors: Map<number, string>;
  try {
    const constants = (JSON.parse(`${lines[0]!.replace(/,\s*$/, '')}}`) as { constants: { logEventTypes: Record<string, number>; netError: Record<string, number> } }).constants;
    types = new Map(Object.entries(constants.logEventTypes).map(([k, v]) => [v, k]));
    errors = new Map(Object.entries(constants.netError).map(([k, v]) => [v, k]));
  } catch (e) {
    return [`net log unreadable: ${String(e)}`];
  }
  const out: string[] = [];
  for (const line of lines.slice(1)) {
    if (!line.startsWith('{')) continue;
    let ev: { type: number; phase?: number; params?: Record<string, unknown> };
    try {
      ev = JSON.parse(line.replace(/,\s*$/, '')) as typeof ev;
    } catch {
      continue;
    }
    const name = types.get(ev.type) ?? String(ev.type);
    if (!name.startsWith('AUTH_')) continue;
    const { net_error: err, ...params } = ev.params ?? {};
    const phase = ev.phase === 1 ? ' BEGIN' : ev.phase === 2 ? ' END' : '';
    const error = typeof err === 'number' ? ` ${errors.get(err) ?? err}` : '';
    const rest = Object.keys(params).length > 0 ? ` ${JSON.stringify(params).slice(0, 200)}` : '';
    out.push(`${name}${phase}${error}${rest}`);
  }
  return out;
}
