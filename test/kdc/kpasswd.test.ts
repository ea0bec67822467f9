/**
 * The password service (kdc/kpasswd.ts, docs/kpasswd.md) with stock MIT
 * tools: kpasswd changes a password user's password over TCP, and over UDP
 * when TCP is refused (the new password works and the old one no longer
 * does, the key version goes up), prints the soft error of a password the
 * rule refuses, and the access-denied answer for a user whose login is an
 * IdP's; kinit with an expired password changes it through kadmin/changepw
 * and logs in. Our own client sends what MIT's tools do not: version 0xff80
 * requests naming another user, a ticket without the INITIAL flag, and
 * malformed datagrams and TCP frames, which get an error or nothing while
 * the service keeps answering. A realm made before the password service
 * gets kadmin/changepw when its server starts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addActiveUser, startAdminRealm, startTestRealm, type TestRealm } from '../support/realm.js';
import { startServer } from '../../src/server/start.js';
import { findPrincipal } from '../../src/account/lookup.js';
import { runTool } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';
import { versionRecordDn } from '../../src/server/upgrade.js';
import { changepwTicket, kpasswdRequest, readKpasswdReply, CHANGEPW } from '../support/kpasswd-client.js';
import { sendTcp, sendUdp } from '../../src/kerberos/transport.js';
import { asWithPassword } from '../../src/kerberos/client.js';
import { ErrorCode, flagBit, KpasswdResult, KpasswdVersion, NameType, TicketFlag } from '../../src/kerberos/iana.js';
import { makeTicket } from '../../src/kdc/tickets.js';
import { profile } from '../../src/kerberos/crypto/index.js';

const PAST = '20000101000000Z';

/** One datagram, and the first answer within `ms`, or null. */
function udpOnce(port: number, msg: Buffer, ms = 700): Promise<Buffer | null> {
  return new Promise((resolve) => {
    const s = createSocket('udp4');
    const t = setTimeout(() => {
      s.close();
      resolve(null);
    }, ms);
    s.on('message', (m) => {
      clearTimeout(t);
      s.close();
      resolve(m);
    });
    s.send(msg, port, '127.0.0.1');
  });
}

/** Raw bytes over TCP: everything the server sends until it closes the connection (or `ms` pass). */
function tcpRaw(port: number, bytes: Buffer, ms = 3000): Promise<{ data: Buffer; closed: boolean }> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const t = setTimeout(() => {
      s.destroy();
      resolve({ data, closed: false });
    }, ms);
    s.on('connect', () => s.write(bytes));
    s.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    s.on('close', () => {
      clearTimeout(t);
      resolve({ data, closed: true });
    });
    s.on('error', () => {});
  });
}

/** A TCP message: the 4-byte length, then the message. */
const tcpFrame = (msg: Buffer) => Buffer.concat([Buffer.from([msg.length >>> 24, (msg.length >>> 16) & 0xff, (msg.length >>> 8) & 0xff, msg.length & 0xff]), msg]);

describe('the password service with MIT kpasswd and kinit', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let env: NodeJS.ProcessEnv;
  let kdcPort: number;
  let port: number;

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    kdcPort = realm.server.kdcPort;
    port = realm.server.kpasswdPort;
    // no credential cache: kpasswd would otherwise use one for FAST
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'none.cc')}` };
  });
  after(async () => realm?.stop());

  const ccache = (user: string) => `FILE:${join(realm.dataDir, `${user}.cc`)}`;
  const kinit = (user: string, input: string, e: NodeJS.ProcessEnv = env) => runTool('kinit', ['-c', ccache(user), user], e, input);
  const kpasswd = (user: string, input: string, e: NodeJS.ProcessEnv = env) => runTool('kpasswd', [user], e, input);
  /** The user's key version as the KDC holds it (kvno may not ask: no ticket is issued for a user, test/kdc/no-user-tickets.test.ts). */
  const kvnoOf = async (user: string) => {
    const p = await realm.server.kdc.db.find(`${user}@EXAMPLE.TEST`);
    assert.ok(p && p.keys.length > 0, `${user} has keys`);
    return Math.max(...p.keys.map((k) => k.kvno));
  };
  /** A user with a password of its own (one an administrator sets has expired: the user replaced it). */
  const addUser = (user: string, password: string) => addActiveUser(admin, user, password, { first: user, last: 'Test' });
  const lines = (re: RegExp) => realm.log.filter((l) => re.test(l));

  it('is written to krb5.conf (kpasswd_server) and sssd.conf with the port it chose, and logged', () => {
    assert.ok(port > 0 && port !== kdcPort);
    const conf = readFileSync(join(realm.dataDir, 'realm', 'krb5.conf'), 'utf8');
    assert.match(conf, new RegExp(`^  kdc = localhost:${kdcPort}\\n  kpasswd_server = localhost:${port}$`, 'm'));
    assert.match(readFileSync(join(realm.dataDir, 'realm', 'sssd.conf'), 'utf8'), new RegExp(`^krb5_kpasswd = localhost:${port}$`, 'm'));
    assert.ok(lines(new RegExp(` server listening realm=EXAMPLE\\.TEST service=kpasswd address=127\\.0\\.0\\.1 port=${port} transports=udp,tcp$`)).length === 1);
  });

  it('kpasswd changes a password: the new one logs in, the old one no longer does, the key version goes up', async () => {
    await addUser('alice', 'Alice-old-1');
    assert.equal((await kinit('alice', 'Alice-old-1\n')).code, 0);
    assert.equal(await kvnoOf('alice'), 2, "the administrator's key version 1, hers 2");
    const r = await kpasswd('alice', 'Alice-old-1\nAlice-new-22\nAlice-new-22\n');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Password for alice@EXAMPLE\.TEST: \nEnter new password: \nEnter it again: \nPassword changed\.\n$/);
    assert.equal(lines(/kpasswd chpw transport=tcp client=alice@EXAMPLE\.TEST target=alice@EXAMPLE\.TEST outcome=SUCCESS/).length, 1, 'MIT sends it over TCP first');
    assert.ok(lines(/kdc as_req transport=udp client=alice@EXAMPLE\.TEST server=kadmin\/changepw@EXAMPLE\.TEST outcome=ISSUE/).length > 0, 'with an initial ticket for kadmin/changepw');
    // the audit trail: the change is a write by alice, through passwd, of her entry, named but never shown (docs/logging.md)
    const audit = lines(/ kpasswd write principal=alice@EXAMPLE\.TEST command=passwd change=modify dn="uid=alice,cn=users,cn=accounts,dc=example,dc=test" attrs=\S*userPassword/);
    assert.equal(audit.length, 1, lines(/ write /).join('\n'));
    assert.ok(!realm.log.some((l) => l.includes('Alice-new-22')));
    const old = await kinit('alice', 'Alice-old-1\n');
    assert.notEqual(old.code, 0);
    assert.match(old.stderr, /Password incorrect/);
    const k = await kinit('alice', 'Alice-new-22\n');
    assert.equal(k.code, 0, k.stderr);
    assert.equal(await kvnoOf('alice'), 3);
    // the directory password (API login) changed with the keys
    assert.equal((await new RpcSession(realm.url, realm.ca).login('alice', 'Alice-new-22')).status, 200);
  });

  it('a new password the rule refuses: kpasswd prints the soft error and exits 2; nothing changes', async () => {
    await addUser('sam', 'Sam-pass-123');
    const r = await kpasswd('sam', 'Sam-pass-123\nshort\nshort\n');
    assert.equal(r.code, 2);
    assert.match(r.stdout, /^Password change rejected: invalid 'password': must be at least 8 characters$/m);
    assert.ok(lines(/kpasswd chpw transport=tcp client=sam@EXAMPLE\.TEST .*outcome=SOFTERROR/).length === 1);
    assert.equal((await kinit('sam', 'Sam-pass-123\n')).code, 0, 'the old password still works');
    assert.equal(await kvnoOf('sam'), 2);
  });

  it('kpasswd over UDP, when TCP is refused (MIT tries UDP only then)', async () => {
    await addUser('udo', 'Udo-pass-123');
    // a relay that forwards datagrams to the service and has no TCP listener on its port
    const front = createSocket('udp4');
    const back = createSocket('udp4');
    await new Promise<void>((r) => front.bind(0, '127.0.0.1', () => r()));
    await new Promise<void>((r) => back.bind(0, '127.0.0.1', () => r()));
    let client: { port: number; address: string } | undefined;
    let relayed = 0;
    front.on('message', (m, rinfo) => {
      client = rinfo;
      relayed++;
      back.send(m, port, '127.0.0.1');
    });
    back.on('message', (m) => client && front.send(m, client.port, client.address));
    try {
      const conf = readFileSync(join(realm.dataDir, 'realm', 'krb5.conf'), 'utf8').replace(/kpasswd_server = .*/, `kpasswd_server = localhost:${front.address().port}`);
      const confFile = join(realm.dataDir, 'krb5-udp.conf');
      writeFileSync(confFile, conf);
      const r = await kpasswd('udo', 'Udo-pass-123\nUdo-new-4567\nUdo-new-4567\n', { ...env, KRB5_CONFIG: confFile });
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Password changed\./);
      assert.ok(relayed >= 1);
      assert.equal(lines(/kpasswd chpw transport=udp client=udo@EXAMPLE\.TEST .*outcome=SUCCESS/).length, 1);
      assert.equal((await kinit('udo', 'Udo-new-4567\n')).code, 0);
    } finally {
      front.close();
      back.close();
    }
  });

  it('a user whose login is an IdP gets access denied, with the reason', async () => {
    await addUser('ivan', 'Ivan-pass-123');
    await admin.call('idp_add', ['corp'], { client_id: 'dirid', secret: 'idp-secret', auth_uri: 'https://idp.example.test/device', token_uri: 'https://idp.example.test/token' });
    await admin.call('user_mod', ['ivan'], { user_auth_type: ['idp'], idp: 'corp', idp_user_id: 'ivan-sub' });
    // the keys of the old password still get the kadmin/changepw ticket; the service says no
    const r = await kpasswd('ivan', 'Ivan-pass-123\nIvan-new-4567\nIvan-new-4567\n');
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stdout, /^Access denied: ivan logs in through an external identity provider \(user authentication type idp\), not with a password: change it there$/m);
    assert.equal(lines(/kpasswd chpw transport=tcp client=ivan@EXAMPLE\.TEST .*outcome=ACCESSDENIED/).length, 1);
    assert.notEqual((await kinit('ivan', 'Ivan-new-4567\n')).code, 0, 'the password did not change');
  });

  it('kinit with an expired password asks for a new one, changes it through kadmin/changepw and logs in', async () => {
    await addUser('pete', 'Pete-old-123');
    await admin.call('user_mod', ['pete'], { setattr: [`krbPasswordExpiration=${PAST}`] });
    // a password the rule refuses first: kinit prints the soft error and asks again
    const k = await kinit('pete', 'Pete-old-123\nshort\nshort\nPete-new-4567\nPete-new-4567\n');
    assert.equal(k.code, 0, k.stdout + k.stderr);
    assert.match(k.stdout, /Password expired\.  You must change it now\./);
    assert.match(k.stdout, /Password change rejected: invalid 'password': must be at least 8 characters\.  Please try again\./);
    assert.ok(lines(/kdc as_req transport=udp client=pete@EXAMPLE\.TEST server=krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST outcome=KDC_ERR_KEY_EXPIRED/).length > 0);
    assert.ok(lines(/kdc as_req transport=udp client=pete@EXAMPLE\.TEST server=kadmin\/changepw@EXAMPLE\.TEST outcome=ISSUE/).length > 0, 'the expired password still gets the ticket that changes it');
    assert.deepEqual(
      lines(/kpasswd chpw transport=tcp client=pete@/).map((l) => /outcome=(\w+)/.exec(l)![1]),
      ['SOFTERROR', 'SUCCESS'],
    );
    assert.match((await runTool('klist', ['-c', ccache('pete')], env)).stdout, /Default principal: pete@EXAMPLE\.TEST[\s\S]*krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
    // the expiry went with the old password; the new one logs in plainly
    assert.equal((await admin.call('user_show', ['pete'], { all: true, raw: true })).result.krbpasswordexpiration, undefined);
    const again = await kinit('pete', 'Pete-new-4567\n');
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.doesNotMatch(again.stdout, /expired/);
    assert.match((await kinit('pete', 'Pete-old-123\n')).stderr, /Password incorrect/);
  });

  it('version 0xff80: an administrator sets another user\'s password; a user may not; a user sets their own', async () => {
    await addUser('bob', 'Bob-pass-123');
    await addUser('carl', 'Carl-pass-123');
    const adminTicket = await changepwTicket(kdcPort, 'EXAMPLE.TEST', 'admin', realm.adminPassword);
    const set = kpasswdRequest(adminTicket, 'Bob-set-4567', { version: KpasswdVersion.SET_PASSWORD, target: { name: 'bob', realm: 'EXAMPLE.TEST' } });
    assert.deepEqual(readKpasswdReply(await sendUdp({ host: '127.0.0.1', port }, set.msg), set), { code: KpasswdResult.SUCCESS, text: 'Password changed' });
    assert.equal(lines(/kpasswd setpw transport=udp client=admin@EXAMPLE\.TEST target=bob@EXAMPLE\.TEST outcome=SUCCESS/).length, 1);
    // the administrator's password has expired: kinit has bob choose his own
    const first = await kinit('bob', 'Bob-set-4567\nBob-mine-7890\nBob-mine-7890\n');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /Password expired\.  You must change it now\./);

    const carlTicket = await changepwTicket(kdcPort, 'EXAMPLE.TEST', 'carl', 'Carl-pass-123');
    const other = kpasswdRequest(carlTicket, 'Bob-by-carl-1', { version: KpasswdVersion.SET_PASSWORD, target: { name: 'bob', realm: 'EXAMPLE.TEST' } });
    assert.deepEqual(readKpasswdReply(await sendTcp({ host: '127.0.0.1', port }, other.msg), other), {
      code: KpasswdResult.ACCESSDENIED,
      text: "not allowed to change another user's password",
    });
    const own = kpasswdRequest(carlTicket, 'Carl-own-4567', { version: KpasswdVersion.SET_PASSWORD });
    assert.deepEqual(readKpasswdReply(await sendTcp({ host: '127.0.0.1', port }, own.msg), own), { code: KpasswdResult.SUCCESS, text: 'Password changed' });
    assert.equal((await kinit('carl', 'Carl-own-4567\n')).code, 0);
    assert.equal((await kinit('bob', 'Bob-mine-7890\n')).code, 0, "bob's password is his own");
  });

  it('tickets for kadmin/changepw come from the password only: none from a TGT, and one without INITIAL may not change its own password', async () => {
    await addUser('tina', 'Tina-pass-123');
    assert.equal((await kinit('tina', 'Tina-pass-123\n')).code, 0);
    const v = await runTool('kvno', ['-c', ccache('tina'), 'kadmin/changepw@EXAMPLE.TEST'], env);
    assert.notEqual(v.code, 0);
    assert.ok(lines(/kdc tgs_req .*client=tina@EXAMPLE\.TEST server=kadmin\/changepw@EXAMPLE\.TEST outcome=KDC_ERR_POLICY/).length > 0);
    // a ticket like a TGS would make (this KDC makes none): sealed with kadmin/changepw's key, without INITIAL
    const server = (await realm.server.kdc.db.find('kadmin/changepw@EXAMPLE.TEST'))!;
    const now = new Date(Math.floor(Date.now() / 1000) * 1000);
    const sessionKey = profile(18).randomKey();
    const client = { nameType: NameType.PRINCIPAL, nameString: ['tina'] };
    const ticket = makeTicket({
      crealm: 'EXAMPLE.TEST',
      cname: client,
      server,
      srealm: 'EXAMPLE.TEST',
      sname: CHANGEPW,
      flags: flagBit(TicketFlag.PRE_AUTHENT),
      authtime: now,
      endtime: new Date(now.getTime() + 300_000),
      sessionKey: { etype: 18, value: sessionKey.value },
    });
    const call = kpasswdRequest({ ticket, sessionKey, client, crealm: 'EXAMPLE.TEST' }, 'Tina-new-4567');
    const answer = readKpasswdReply(await sendTcp({ host: '127.0.0.1', port }, call.msg), call);
    assert.equal(answer.code, KpasswdResult.INITIAL_FLAG_NEEDED);
    assert.match(answer.text, /needs a ticket obtained with that password/);
    assert.equal((await kinit('tina', 'Tina-pass-123\n')).code, 0, 'unchanged');
  });

  it('malformed requests get an error reply (or nothing over UDP) and the service keeps answering', async () => {
    await addUser('mia', 'Mia-pass-1234');
    // not a password-change request at all: dropped over UDP, MALFORMED over TCP
    assert.equal(await udpOnce(port, Buffer.from('garbage')), null);
    assert.equal(await udpOnce(port, Buffer.from([0x00, 0x20, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00])), null, 'length field larger than the datagram');
    const tcpGarbage = await sendTcp({ host: '127.0.0.1', port }, Buffer.from('garbage'));
    assert.deepEqual(readKpasswdReply(tcpGarbage), { code: KpasswdResult.MALFORMED, text: 'request length field does not match its size', errorCode: ErrorCode.KRB_ERR_GENERIC });
    const lengthMismatch = await sendTcp({ host: '127.0.0.1', port }, Buffer.from([0x00, 0x20, 0x00, 0x01, 0x00, 0x01, 0x30, 0x00]));
    assert.equal(readKpasswdReply(lengthMismatch).code, KpasswdResult.MALFORMED);
    // well framed: an unknown version, an AP-REQ that is not one
    const frame = (version: number, apReq: Buffer, rest: Buffer) => {
      const head = Buffer.alloc(6);
      head.writeUInt16BE(6 + apReq.length + rest.length, 0);
      head.writeUInt16BE(version, 2);
      head.writeUInt16BE(apReq.length, 4);
      return Buffer.concat([head, apReq, rest]);
    };
    const badVersion = readKpasswdReply((await udpOnce(port, frame(2, Buffer.from([0x30, 0x00]), Buffer.from([0x30, 0x00]))))!);
    assert.deepEqual(badVersion, { code: KpasswdResult.BAD_VERSION, text: 'protocol version 2 is not supported (1 and 0xff80 are)', errorCode: ErrorCode.KDC_ERR_BAD_PVNO });
    const badApReq = readKpasswdReply((await udpOnce(port, frame(1, Buffer.from([0x6e, 0x02, 0x30, 0x00]), Buffer.from([0x75, 0x00]))))!);
    assert.equal(badApReq.code, KpasswdResult.MALFORMED);
    assert.match(badApReq.text, /^malformed AP-REQ/);
    // a real AP-REQ with a KRB-PRIV that is not one: answered in a KRB-PRIV after the AP-REP
    const t = await changepwTicket(kdcPort, 'EXAMPLE.TEST', 'mia', 'Mia-pass-1234');
    const good = kpasswdRequest(t, 'Mia-new-45678');
    const apReqOf = (msg: Buffer) => msg.subarray(6, 6 + msg.readUInt16BE(4));
    const badPriv = readKpasswdReply((await udpOnce(port, frame(1, apReqOf(good.msg), Buffer.from([0x75, 0x03, 0x30, 0x01, 0x00]))))!, good);
    assert.equal(badPriv.code, KpasswdResult.MALFORMED);
    assert.match(badPriv.text, /^malformed KRB-PRIV/);
    // the same authenticator again (another KRB-PRIV): a replay
    const replay = kpasswdRequest(t, 'Mia-other-4567');
    const replayed = frame(1, apReqOf(good.msg), replay.msg.subarray(6 + replay.msg.readUInt16BE(4)));
    const refused = readKpasswdReply((await udpOnce(port, replayed))!);
    assert.deepEqual(refused, { code: KpasswdResult.AUTHERROR, text: 'request is a replay', errorCode: ErrorCode.KRB_AP_ERR_REPEAT });
    // TCP lengths the service will not read: MALFORMED, and the connection closes
    for (const len of [Buffer.from([0x7f, 0xff, 0xff, 0xff]), Buffer.from([0x80, 0x00, 0x00, 0x10])]) {
      const r = await tcpRaw(port, len);
      assert.ok(r.closed);
      assert.equal(readKpasswdReply(r.data.subarray(4)).code, KpasswdResult.MALFORMED);
    }
    // a garbage frame and a good request on one connection: both answered
    const call = kpasswdRequest(await changepwTicket(kdcPort, 'EXAMPLE.TEST', 'mia', 'Mia-pass-1234'), 'Mia-tcp-45678');
    const both = await tcpRaw(port, Buffer.concat([tcpFrame(Buffer.from('xx')), tcpFrame(call.msg)]), 1500);
    const replies: Buffer[] = [];
    for (let off = 0; off + 4 <= both.data.length; off += 4 + both.data.readUInt32BE(off)) replies.push(both.data.subarray(off + 4, off + 4 + both.data.readUInt32BE(off)));
    assert.deepEqual(replies.map((x) => readKpasswdReply(x, call).code).sort(), [KpasswdResult.SUCCESS, KpasswdResult.MALFORMED]);
    // and the service still changes passwords, for MIT kpasswd too
    const r = await kpasswd('mia', 'Mia-tcp-45678\nMia-last-45678\nMia-last-45678\n');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await kinit('mia', 'Mia-last-45678\n')).code, 0);
  });

  it('takes a ticket for kadmin/changepw only: an initial ticket for another service of the realm is refused, naming it', async () => {
    await addUser('walt', 'Walt-pass-1234');
    await admin.call('service_add', ['HTTP/web.example.test'], { force: true });
    const client = { nameType: NameType.PRINCIPAL, nameString: ['walt'] };
    const web = await asWithPassword((m) => sendUdp({ host: '127.0.0.1', port: kdcPort }, m), client, 'EXAMPLE.TEST', 'Walt-pass-1234', { sname: { nameType: NameType.SRV_HST, nameString: ['HTTP', 'web.example.test'] }, forwardable: false });
    const call = kpasswdRequest({ ticket: web.ticket, sessionKey: web.sessionKey, client, crealm: 'EXAMPLE.TEST' }, 'Walt-new-45678');
    const answer = readKpasswdReply(await sendTcp({ host: '127.0.0.1', port }, call.msg));
    assert.deepEqual(answer, { code: KpasswdResult.AUTHERROR, text: 'the ticket is for HTTP/web.example.test@EXAMPLE.TEST, a service this server does not run', errorCode: ErrorCode.KRB_AP_ERR_NOT_US });
    assert.ok(lines(/kpasswd .*outcome=.*the ticket is for HTTP\/web\.example\.test@EXAMPLE\.TEST, a service this server does not run/).length > 0, realm.log.filter((l) => l.includes('kpasswd')).join('\n'));
    assert.equal((await kinit('walt', 'Walt-pass-1234\n')).code, 0, 'unchanged');
  });

  it('a retransmitted datagram gets the same reply and changes the password once', async () => {
    await addUser('rex', 'Rex-pass-1234');
    const t = await changepwTicket(kdcPort, 'EXAMPLE.TEST', 'rex', 'Rex-pass-1234');
    const call = kpasswdRequest(t, 'Rex-new-45678');
    const first = (await udpOnce(port, call.msg))!;
    const second = (await udpOnce(port, call.msg))!;
    assert.deepEqual(second, first);
    assert.equal(readKpasswdReply(first, call).code, KpasswdResult.SUCCESS);
    assert.equal(lines(/kpasswd chpw transport=udp client=rex@EXAMPLE\.TEST/).length, 1);
    assert.equal((await kinit('rex', 'Rex-new-45678\n')).code, 0);
    assert.equal(await kvnoOf('rex'), 3);
  });
});

describe('a realm made before the password service', () => {
  it('gets kadmin/changepw from the upgrade when its server starts, and kpasswd works', async () => {
    const realm = await startTestRealm();
    try {
      const changepw = await findPrincipal(realm.server.dir, 'kadmin/changepw@EXAMPLE.TEST');
      assert.ok(changepw, 'init made it');
      // such a realm has neither the principal nor a version record (made before both)
      await realm.server.dir.delete(changepw.dn);
      await realm.server.dir.delete(versionRecordDn(realm.server.dir.baseDn));
      await realm.server.stop();
      const log: string[] = [];
      const server = await startServer({ dataDir: join(realm.dataDir, 'realm'), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => log.push(l) });
      try {
        assert.ok(await findPrincipal(server.dir, 'kadmin/changepw@EXAMPLE.TEST'), 'start added it');
        assert.ok(log.some((l) => / upgrade step realm=EXAMPLE\.TEST version=1 name=".*kadmin\/changepw.*" did="added kadmin\/changepw@EXAMPLE\.TEST"/.test(l)), log.join('\n'));
        const env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'none.cc')}` };
        const r = await runTool('kpasswd', ['admin'], env, `${realm.adminPassword}\nAdmin-new-4567\nAdmin-new-4567\n`);
        assert.equal(r.code, 0, r.stdout + r.stderr);
        assert.match(r.stdout, /Password changed\./);
      } finally {
        await server.stop();
      }
    } finally {
      await realm.stop();
    }
  });
});
