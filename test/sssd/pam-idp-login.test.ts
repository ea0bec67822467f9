/**
 * A host login through SSSD with the device flow (the path every console,
 * SSH or su login takes): pamtester → pam_sss → sssd_pam → krb5_child with
 * SSSD's idp plugin → our KDC → the test IdP. The PAM conversation shows the
 * URL and code; the user approves at oidc-provider, before pressing ENTER
 * or after it, and pam_authenticate succeeds. A second IdP differs from
 * the first in every way the world varies: ES384 keys, a reference that
 * names only the issuer (endpoints and keys by discovery), Google's answer
 * shapes (`verification_url` and no complete URL, so pam_sss shows a code
 * to type; HTTP 428 while pending) and a 1 s poll interval with a user who
 * takes several polls to approve. SSSD runs in a private mount namespace
 * (test/support/sssd.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { answerInGoogleShapes, startTestIdp, type TestIdp, idpReference } from '../support/oidc-idp.js';
import { sssdHost, type SssdHost } from '../support/sssd.js';
import { createCa } from '../../src/server/pki.js';

/** pam_sss's prompt for the idp mechanism, with the code it shows */
function pamPrompts(out: string): string[] {
  return [...out.matchAll(/Authenticate (?:at (\S+)|with PIN (\S+) at (\S+)) and press ENTER/g)].map((m) => m[2] ?? new URL(m[1]!).searchParams.get('user_code')!);
}

describe('host login through SSSD (pam_sss, krb5_child) with the device flow', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  /** the IdP unlike the first: ES384, discovery, Google's shapes, 1 s interval */
  let other: TestIdp;
  let otherStatuses: number[] = [];
  let host: SssdHost;
  let caFile: string;

  before(async () => {
    const ca = await createCa('Test IdPs CA');
    idp = await startTestIdp({ accounts: ['sam-sub', 'sue-sub'], ca });
    other = await startTestIdp({ accounts: ['gus-sub'], ca, signingAlg: 'ES384', pollInterval: 1, keyIdPrefix: 'other-key' });
    caFile = join(process.env.TMPDIR ?? '/tmp', `sssd-idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    let admin;
    ({ realm, admin } = await startAdminRealm({ idpCaFile: caFile }));
    await admin.call('idp_add', ['hostidp'], idpReference(idp));
    await admin.call('idp_add', ['otheridp'], { client_id: other.clientId, secret: other.clientSecret, issuer_url: other.issuer, scope: 'openid' });
    for (const u of ['sam', 'sue']) {
      await admin.call('user_add', [u], { first: u, last: 'Host' });
      await admin.call('user_mod', [u], { user_auth_type: ['idp'], idp: 'hostidp', idp_user_id: `${u}-sub` });
    }
    await admin.call('user_add', ['gus'], { first: 'Gus', last: 'Host' });
    await admin.call('user_mod', ['gus'], { user_auth_type: ['idp'], idp: 'otheridp', idp_user_id: 'gus-sub' });
    otherStatuses = answerInGoogleShapes(other);
    host = sssdHost({
      realm: 'EXAMPLE.TEST',
      dataDir: join(realm.dataDir, 'realm'),
      hostPrincipal: 'host/localhost@EXAMPLE.TEST',
      users: [
        { name: 'sam', uid: 20001 },
        { name: 'sue', uid: 20002 },
        { name: 'gus', uid: 20003 },
      ],
      authTimeout: 30,
    });
  });
  after(async () => {
    host?.remove();
    await realm?.stop();
    await idp?.stop();
    await other?.stop();
    rmSync(caFile, { force: true });
  });

  it('approved before ENTER: pam_authenticate succeeds', async () => {
    let prompts = 0;
    const r = await host.authenticate('sam', (out, write) => {
      const p = pamPrompts(out);
      if (p.length > prompts) {
        prompts = p.length;
        if (prompts === 1) void idp.approveDevice(p[0]!, 'sam-sub').then(() => write('\n'));
      }
    });
    assert.match(r.out, /successfully authenticated/, `${r.out}\n${r.sssdLog.slice(-4000)}`);
    assert.equal(prompts, 1, r.out);
    assert.ok(realm.log.some((l) => /client=sam@EXAMPLE\.TEST .*outcome=ISSUE .*preauth="idp: hostidp identified/.test(l)), realm.log.filter((l) => l.includes('client=sam@')).join('\n'));
  });

  it('ENTER first, approved while the KDC holds the answer: pam_authenticate succeeds', async () => {
    let prompts = 0;
    const r = await host.authenticate('sue', (out, write) => {
      const p = pamPrompts(out);
      if (p.length > prompts) {
        prompts = p.length;
        if (prompts === 1) {
          write('\n');
          setTimeout(() => void idp.approveDevice(p[0]!, 'sue-sub'), 500);
        }
      }
    });
    assert.match(r.out, /successfully authenticated/, `${r.out}\n${r.sssdLog.slice(-4000)}`);
    assert.ok(realm.log.some((l) => /client=sue@EXAMPLE\.TEST .*outcome=ISSUE/.test(l)), realm.log.filter((l) => l.includes('client=sue@')).join('\n'));
  });

  it('an IdP unlike the first (ES384 by discovery, Google shapes), ENTER first and approved after several polls: pam_authenticate succeeds', async () => {
    let prompts = 0;
    let shown = '';
    const r = await host.authenticate('gus', (out, write) => {
      const p = pamPrompts(out);
      if (p.length > prompts) {
        prompts = p.length;
        if (prompts === 1) {
          shown = out;
          write('\n');
          // about three polls at the 1 s interval, all held in the KDC and answered 428
          setTimeout(() => void other.approveDevice(p[0]!, 'gus-sub'), 3500);
        }
      }
    });
    const gusLog = realm.log.filter((l) => l.includes('client=gus@')).join('\n');
    assert.match(r.out, /successfully authenticated/, `${r.out}\n${gusLog}\n${r.sssdLog.slice(-4000)}`);
    assert.match(shown, new RegExp(`with PIN \\S+ at ${other.issuer.replace(/[.]/g, '\\.')}/device`), `pam_sss showed the code and the page the provider named: ${shown}`);
    assert.ok(otherStatuses.filter((s) => s === 428).length >= 2, `polls were answered pending with HTTP 428: ${otherStatuses.join(' ')}`);
    assert.match(gusLog, /outcome=ISSUE .*preauth="idp: otheridp identified/, gusLog);
  });
});
