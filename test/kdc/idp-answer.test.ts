/**
 * One ENTER is enough (issue: a device-flow answer must never be answered
 * without asking the IdP). MIT kinit with SSSD's idp plugin, armored with a
 * host ticket, on a pseudo-terminal: the user approves at oidc-provider
 * before pressing ENTER, or presses ENTER first and approves while the KDC
 * holds the answer; either way the login completes on that one ENTER. A
 * user who does not approve in time gets the prompt again, and only after
 * the KDC has asked the IdP.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { idpPrompts, pty } from '../support/pty.js';

describe('device-flow answers: the KDC asks the IdP before it answers', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let env: NodeJS.ProcessEnv;
  let armor: string;
  let caFile: string;

  before(async () => {
    idp = await startTestIdp({ accounts: ['ann-sub'] });
    caFile = join(process.env.TMPDIR ?? '/tmp', `idp-answer-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    let admin;
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
    const data = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(data, 'krb5.conf') };
    await admin.call('idp_add', ['answers'], idpReference(idp));
    await admin.call('user_add', ['ann'], { first: 'Ann', last: 'A' });
    await admin.call('user_mod', ['ann'], { user_auth_type: ['idp'], idp: 'answers', idp_user_id: 'ann-sub' });
    armor = await hostArmor(realm, env);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
    rmSync(caFile, { force: true });
  });

  /** kinit -T on a PTY; `onPrompt(n, code, enter)` decides what the user does at the n-th prompt. */
  function kinit(cc: string, onPrompt: (n: number, code: string, enter: () => void) => void) {
    let seen = 0;
    return pty(`kinit -T ${armor} -c ${cc} ann`, env, (out, write) => {
      const prompts = idpPrompts(out);
      while (seen < prompts.length) {
        seen++;
        onPrompt(seen, prompts[seen - 1]!, () => write('\r'));
      }
    });
  }

  const kdcLines = () => realm.log.filter((l) => / kdc as_req .*client=ann@/.test(l));

  it('approved before ENTER: the first ENTER completes the login, inside the poll interval', async () => {
    const cc = `FILE:${join(realm.dataDir, 'before.cc')}`;
    const started = Date.now();
    let approvedAt = 0;
    const r = await kinit(cc, (n, code, enter) => {
      if (n === 1) void idp.approveDevice(code, 'ann-sub').then(() => ((approvedAt = Date.now()), enter()));
    });
    assert.equal(r.code, 0, r.out);
    assert.equal(idpPrompts(r.out).length, 1, `one prompt, one ENTER:\n${r.out}`);
    // the ENTER came before the IdP's 5 s interval had passed: the KDC waited it out and polled
    assert.ok(approvedAt - started < 5000, `approval took ${approvedAt - started} ms`);
    const l = await runTool('klist', ['-c', cc], env);
    assert.match(l.stdout, /Default principal: ann@EXAMPLE\.TEST/);
  });

  it('ENTER before approving: the KDC holds the answer, polls, and the login completes on that ENTER', async () => {
    const cc = `FILE:${join(realm.dataDir, 'after.cc')}`;
    const r = await kinit(cc, (n, code, enter) => {
      if (n !== 1) return;
      enter();
      setTimeout(() => void idp.approveDevice(code, 'ann-sub'), 500);
    });
    assert.equal(r.code, 0, r.out);
    assert.equal(idpPrompts(r.out).length, 1, `one prompt, one ENTER:\n${r.out}`);
  });

  it('not approved within the hold: the prompt comes again only after the KDC asked the IdP, and a later ENTER completes', async () => {
    const cc = `FILE:${join(realm.dataDir, 'late.cc')}`;
    const before = kdcLines().length;
    let pendingAt = 0;
    const r = await kinit(cc, (n, code, enter) => {
      if (n === 1) enter();
      if (n === 2) {
        pendingAt = Date.now();
        void idp.approveDevice(code, 'ann-sub').then(enter);
      }
    });
    assert.equal(r.code, 0, r.out);
    assert.equal(idpPrompts(r.out).length, 2, r.out);
    const lines = kdcLines().slice(before);
    const pending = lines.find((l) => /outcome=KDC_ERR_MORE_PREAUTH_DATA_REQUIRED/.test(l));
    assert.ok(pending, lines.join('\n'));
    const polls = Number(/after (\d+) poll\(s\)/.exec(pending)?.[1] ?? '0');
    assert.ok(polls >= 1, `the pending answer was given without asking the IdP: ${pending}`);
    assert.ok(pendingAt > 0);
    // one log line per held request: retransmissions joined it instead of being answered apart
    assert.equal(lines.filter((l) => /outcome=KDC_ERR_MORE_PREAUTH_DATA_REQUIRED/.test(l)).length, 1, lines.join('\n'));
  });
});
