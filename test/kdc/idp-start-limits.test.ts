/**
 * Device flows cannot be started in a flood (issue 27 item 6;
 * docs/device-flow.md, "Starting a login"). A realm that lets anonymous
 * armor (kinit -n) start IdP logins (server.conf idp_anonymous_armor =
 * allow), the test OpenID Provider counting its device authorization
 * requests, and armored AS-REQs sent in bursts by our own client from
 * chosen loopback addresses (127.0.0.0/8 is all the loopback's), armored
 * with anonymous tickets and with the host's:
 * - 40 logins for one user in a burst under one anonymous ticket make 3
 *   device authorizations; the other 37 are KDC_ERR_POLICY, each logged.
 *   Before the limits every one of them was a device authorization.
 * - the count per user is kept apart for anonymous armor: the same user
 *   still logs in through a host's armor;
 * - one armor ticket starts 20 at most, one address 20 at most;
 * - a flow that ends (a TGT) stops counting;
 * - a device code is never handed to another request: a second request gets
 *   a code of its own, while a retransmission of the very same request gets
 *   its own answer back and costs the IdP nothing;
 * - MIT kinit -n then kinit -T: the device flow with anonymous armor where
 *   the realm allows it, and "KDC policy rejects request" past the limit.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { idpReference, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { runTool } from '../support/mit-tools.js';
import { kinitViaIdp, pty } from '../support/pty.js';
import { RpcSession } from '../support/rpc-client.js';
import { anonymousRequest, processAnonymousReply } from '../support/pkinit-client.js';
import { asReqBody, asWithKeys, type Credentials } from '../../src/kerberos/client.js';
import { armoredAsReq, parseIdpChallenge, processArmored, type ArmoredReply } from '../../src/kerberos/fast-client.js';
import { readKeytab } from '../../src/kerberos/keytab.js';
import { sendTcp } from '../../src/kerberos/transport.js';
import { ErrorCode, PaType } from '../../src/kerberos/iana.js';
import type { PaData } from '../../src/kerberos/asn1/primitives.js';

const REALM = 'EXAMPLE.TEST';

/** One UDP request to the KDC from the local address `from` (any of 127.0.0.0/8), and its answer. */
function sendFrom(from: string, port: number, msg: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const sock = createSocket('udp4');
    const t = setTimeout(() => {
      sock.close();
      reject(new Error(`no answer from the KDC to ${from}`));
    }, 20_000);
    sock.on('message', (m) => {
      clearTimeout(t);
      sock.close();
      resolve(m);
    });
    sock.on('error', reject);
    sock.bind(0, from, () => sock.send(msg, port, '127.0.0.1'));
  });
}

describe('device-flow starts are limited per user, per armor ticket and per address', () => {
  let realm: TestRealm;
  let idp: TestIdp;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let hostArmor: Credentials;
  const devAuths = () => idp.stats().requests['/device/auth'] ?? 0;
  const users = Array.from({ length: 25 }, (_, i) => `u${i}`);

  before(async () => {
    idp = await startTestIdp({ accounts: ['alice-sub', 'nora-sub'], pollInterval: 1 });
    const caFile = join(process.env.TMPDIR ?? '/tmp', `limits-idp-ca-${process.pid}.pem`);
    writeFileSync(caFile, idp.caPem);
    realm = await startTestRealm({ idpCaFile: caFile, serverConf: { idp_anonymous_armor: 'allow' } });
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf') };
    admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await admin.call('idp_add', ['testidp'], idpReference(idp));
    for (const u of ['alice', 'mia', ...users]) {
      await admin.call('user_add', [u], { first: u, last: 'L' });
      await admin.call('user_mod', [u], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: `${u}-sub` });
    }
    const keys = readKeytab(readFileSync(join(realm.dataDir, 'realm', 'host.keytab'))).map((k) => ({ etype: k.etype, value: k.key }));
    hostArmor = await asWithKeys((m) => sendTcp({ host: '127.0.0.1', port: realm.server.kdcPort }, m), { nameType: 3, nameString: ['host', 'localhost'] }, REALM, keys);
  });
  after(async () => {
    await realm?.stop();
    await idp?.stop();
  });

  /** A fresh anonymous TGT (anonymous PKINIT, as kinit -n gets one). */
  async function anonymousArmor(): Promise<Credentials> {
    const req = anonymousRequest({ realm: REALM });
    return processAnonymousReply(await sendTcp({ host: '127.0.0.1', port: realm.server.kdcPort }, req.msg), req).creds;
  }

  /** The first AS-REQ of a login of `user`, armored with `armor`, sent from `from`; `padata` for an answer. */
  async function login(user: string, armor: Credentials, from: string, padata: PaData[] = []): Promise<ArmoredReply & { msg: Buffer }> {
    const body = asReqBody({ nameType: 1, nameString: [user] }, REALM, {});
    const req = armoredAsReq(armor, body, padata);
    return { ...processArmored(await sendFrom(from, realm.server.kdcPort, req.msg), req, body, req.armorKey), msg: req.msg };
  }
  const codeOf = (r: ArmoredReply): number => (r.kind === 'error' ? r.error.errorCode : 0);
  const userCodeOf = (r: ArmoredReply): string => parseIdpChallenge((r as Extract<ArmoredReply, { kind: 'error' }>).padata.find((p) => p.type === PaType.REDHAT_IDP_OAUTH2)!.value).user_code;
  const eTextOf = (r: ArmoredReply): string => (r.kind === 'error' ? (r.error.eText ?? '') : '');

  it('40 logins of one user in a burst under one anonymous ticket: 3 device authorizations, 37 refusals (KDC policy), each logged', async () => {
    const armor = await anonymousArmor();
    const before = devAuths();
    const since = realm.log.length;
    const replies = await Promise.all(Array.from({ length: 40 }, () => login('alice', armor, '127.0.0.2')));
    const started = replies.filter((r) => codeOf(r) === ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    const refused = replies.filter((r) => codeOf(r) === ErrorCode.KDC_ERR_POLICY);
    assert.equal(started.length, 3, replies.map((r) => `${codeOf(r)} ${eTextOf(r)}`).join('\n'));
    assert.equal(refused.length, 37);
    assert.equal(devAuths() - before, 3, 'device authorizations at the IdP');
    assert.equal(new Set(started.map(userCodeOf)).size, 3, 'each start has a code of its own');
    for (const r of refused) assert.match(eTextOf(r), /^too many IdP logins pending for alice@EXAMPLE\.TEST under anonymous armor \(at most 3\): finish one, or try again in (9|10) min$/);
    const lines = realm.log.slice(since).filter((l) => /client=alice@EXAMPLE\.TEST .*outcome=KDC_ERR_POLICY .*preauth="idp: not started: too many IdP logins pending for alice@EXAMPLE\.TEST under anonymous armor \(at most 3\).*\(armor anonymous, from 127\.0\.0\.2\)"/.test(l));
    assert.equal(lines.length, 37, realm.log.slice(since).join('\n'));
    assert.equal(realm.log.slice(since).filter((l) => /preauth="idp: device authorization started \(testidp; armor anonymous, from 127\.0\.0\.2\)"/.test(l)).length, 3);
  });

  it("anonymous starts do not use up a user's starts through a host's armor", async () => {
    const r = await login('alice', hostArmor, '127.0.0.3');
    assert.equal(codeOf(r), ErrorCode.KDC_ERR_PREAUTH_REQUIRED, eTextOf(r));
    assert.ok(realm.log.some((l) => /client=alice@EXAMPLE\.TEST .*preauth="idp: device authorization started \(testidp; armor host\/localhost@EXAMPLE\.TEST, from 127\.0\.0\.3\)"/.test(l)));
  });

  it('a flow that ends stops counting: once one login of the user got its TGT, another may start', async () => {
    const armor = await anonymousArmor();
    const full = await login('alice', armor, '127.0.0.4');
    assert.equal(codeOf(full), ErrorCode.KDC_ERR_POLICY, 'three anonymous flows of alice are pending');
    // a fourth flow, from the host's armor, is finished: approved at the IdP and answered
    const first = await login('alice', hostArmor, '127.0.0.4');
    assert.equal(codeOf(first), ErrorCode.KDC_ERR_PREAUTH_REQUIRED, eTextOf(first));
    // alice's own anonymous ones: approve one and answer it with its cookie
    const mine = await login('alice', armor, '127.0.0.4');
    assert.equal(codeOf(mine), ErrorCode.KDC_ERR_POLICY);
    assert.ok(first.kind === 'error');
    await idp.approveDevice(userCodeOf(first), 'alice-sub');
    const cookie = first.padata.find((p) => p.type === PaType.FX_COOKIE)!;
    const done = await login('alice', hostArmor, '127.0.0.4', [{ type: PaType.REDHAT_IDP_OAUTH2, value: Buffer.alloc(0) }, cookie]);
    assert.equal(done.kind, 'rep', eTextOf(done));
    // the host's count of alice is free again; the anonymous one is not
    assert.equal(codeOf(await login('alice', hostArmor, '127.0.0.4')), ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    assert.equal(codeOf(await login('alice', armor, '127.0.0.4')), ErrorCode.KDC_ERR_POLICY);
  });

  it('one armor ticket starts 20 flows at most, whatever the users and addresses', async () => {
    const before = devAuths();
    const replies = await Promise.all(users.map((u, i) => login(u, hostArmor, `127.0.1.${i + 1}`)));
    const refused = replies.filter((r) => codeOf(r) === ErrorCode.KDC_ERR_POLICY);
    // the host's ticket already carries the two pending flows of alice above
    assert.equal(replies.length - refused.length, 18, replies.map((r) => `${codeOf(r)} ${eTextOf(r)}`).join('\n'));
    assert.equal(devAuths() - before, 18);
    for (const r of refused) assert.match(eTextOf(r), /^too many IdP logins pending under this armor ticket \(at most 20\): try again in (9|10) min$/);
  });

  it('one address starts 20 flows at most, whatever the users and armor tickets', async () => {
    const armors = await Promise.all(users.map(() => anonymousArmor()));
    const before = devAuths();
    const since = realm.log.length;
    const replies = await Promise.all(users.map((u, i) => login(u, armors[i]!, '127.0.2.1')));
    const refused = replies.filter((r) => codeOf(r) === ErrorCode.KDC_ERR_POLICY);
    assert.equal(refused.length, 5, replies.map((r) => `${codeOf(r)} ${eTextOf(r)}`).join('\n'));
    assert.equal(devAuths() - before, 20);
    for (const r of refused) assert.match(eTextOf(r), /^too many IdP logins pending from 127\.0\.2\.1 \(at most 20\): try again in (9|10) min$/);
    assert.equal(realm.log.slice(since).filter((l) => /outcome=KDC_ERR_POLICY .*preauth="idp: not started: too many IdP logins pending from 127\.0\.2\.1/.test(l)).length, 5);
  });

  it("a device code is never another request's: a second request gets its own, a retransmission its own answer again", async () => {
    const armor = await anonymousArmor();
    const before = devAuths();
    const body = asReqBody({ nameType: 1, nameString: ['mia'] }, REALM, {});
    const req = armoredAsReq(armor, body, []);
    const once = await sendFrom('127.0.3.1', realm.server.kdcPort, req.msg);
    const twice = await sendFrom('127.0.3.1', realm.server.kdcPort, req.msg);
    assert.ok(twice.equals(once), 'the same request got the same answer');
    const first = processArmored(once, req, body, req.armorKey);
    const other = await login('mia', armor, '127.0.3.1');
    assert.equal(codeOf(first), ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    assert.equal(codeOf(other), ErrorCode.KDC_ERR_PREAUTH_REQUIRED);
    assert.notEqual(userCodeOf(other), userCodeOf(first), 'another request got the first one\'s code');
    assert.equal(devAuths() - before, 2, 'the retransmission made a device authorization');
  });

  it('MIT kinit -n then kinit -T: an IdP login under anonymous armor where the realm allows it, and "KDC policy rejects request" past the limit', async () => {
    const anon = `FILE:${join(realm.dataDir, 'anon.cc')}`;
    const n = await runTool('kinit', ['-n', '-c', anon], env);
    assert.equal(n.code, 0, n.stderr);
    await admin.call('user_add', ['nora'], { first: 'Nora', last: 'N' });
    await admin.call('user_mod', ['nora'], { user_auth_type: ['idp'], idp: 'testidp', idp_user_id: 'nora-sub' });
    const cc = `FILE:${join(realm.dataDir, 'nora.cc')}`;
    const ok = await kinitViaIdp({ idp, armor: anon, env }, 'nora', 'nora-sub', cc);
    assert.equal(ok.code, 0, ok.out);
    assert.match((await runTool('klist', ['-c', cc], env)).stdout, /Default principal: nora@EXAMPLE\.TEST/);
    // alice has three anonymous flows pending: kinit is refused at once, without a prompt
    const r = await pty(`kinit -T ${anon} -c FILE:${join(realm.dataDir, 'alice.cc')} alice`, env, () => {});
    assert.notEqual(r.code, 0);
    assert.doesNotMatch(r.out, /press ENTER/);
    assert.match(r.out, /kinit: KDC policy rejects request while getting initial credentials/);
  });
});
