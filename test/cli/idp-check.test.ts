/**
 * `dirid idp-check NAME` as an administrator runs it (docs/device-flow.md,
 * "Checking an IdP reference"): the command comes from the server's schema;
 * one PASS/FAIL/SKIP line per check and the summary on standard output;
 * exit 0 when nothing failed, 1 when a check failed (the lines still
 * printed, nothing on standard error), 2 for an unknown reference. The
 * client secret is never printed.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid idp-check', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const caFile = join(process.env.TMPDIR ?? '/tmp', `cli-idp-check-ca-${process.pid}.pem`);
  const wrongSecret = 'a-stale-secret-0123';
  const dirid = (args: string[], input?: string): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env, input, 60_000);

  before(async () => {
    idp = await startTestIdp();
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile });
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    for (const [name, secret] of [
      ['good', idp.clientSecret],
      ['stale', wrongSecret],
    ] as const) {
      const r = await dirid(['idp-add', name, '--issuer-url', idp.issuer, '--client-id', idp.clientId, `--secret=${secret}`, '--scope', 'openid email']);
      assert.equal(r.code, 0, r.stderr);
    }
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    rmSync(caFile, { force: true });
  });

  it('a good reference: a PASS line per check and the summary, exit 0', async () => {
    const r = await dirid(['idp-check', 'good']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stderr, '');
    const lines = r.stdout.split('\n');
    assert.deepEqual(
      lines.slice(0, 8).map((l) => /^(PASS|FAIL|SKIP) ([^:]+):/.exec(l)?.slice(1).join(' ')),
      ['PASS Discovery', 'PASS Authorization URI', 'PASS Device authorization URI', 'PASS Token URI', 'PASS User info URI', 'PASS JWKS endpoint', 'PASS Signing keys', 'PASS Device authorization'],
      r.stdout,
    );
    assert.equal(lines[7], 'PASS Device authorization: the IdP accepted client "dirid-kdc" with the stored secret and scope "openid email" and issued a device code, left unused to expire (in 600 s)');
    assert.match(r.stdout, /\n-+\nChecked IdP reference "good": 8 passed, 0 failed, 0 skipped\n-+\n$/);
    assert.ok(!r.stdout.includes(idp.clientSecret));
  });

  it('a stale secret: the FAIL line says invalid_client in plain words, exit 1, nothing on standard error', async () => {
    const r = await dirid(['idp-check', 'stale']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /\nFAIL Device authorization: invalid_client: the IdP does not accept client "dirid-kdc" with the stored secret in the request body \(a wrong or expired secret, an unknown client ID, or an IdP that takes the secret only in an HTTP Basic header: --client-auth=client_secret_basic\)/);
    assert.match(r.stdout, /\nChecked IdP reference "stale": 7 passed, 1 failed, 0 skipped\n/);
    assert.ok(!r.stdout.includes(wrongSecret));
  });

  it('an unknown reference: not found, exit 2; its help comes from the schema', async () => {
    const r = await dirid(['idp-check', 'nosuch']);
    assert.equal(r.code, 2);
    assert.equal(r.stderr, 'dirid: ERROR: nosuch: IdP reference not found\n');
    const help = await dirid(['idp-check', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /idp-check NAME/);
  });
});
