/**
 * Our KDC with stock MIT krb5 clients (Debian krb5-user): kinit with a
 * password, klist, kvno for a service, wrong password and unknown user
 * messages, each enctype forced through krb5.conf, TCP, and garbage packets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { addActiveUser, startTestRealm, type TestRealm } from '../support/realm.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';

describe('KDC interop with MIT kinit, klist and kvno', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  before(async () => {
    realm = await startTestRealm();
    dataDir = join(realm.dataDir, 'realm');
    env = { KRB5_CONFIG: join(dataDir, 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'cc')}`, KRB5_TRACE: '' };
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'Liddell' });
    await admin.call('user_add', ['dora'], { first: 'Dora', last: 'Disabled', password: 'Dora-pass-12', disabled: true });
  });
  after(async () => realm.stop());

  it('kinit admin, then klist shows krbtgt/REALM@REALM', async () => {
    const k = await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
    const l = await runTool('klist', [], env);
    assert.match(l.stdout, /Default principal: admin@EXAMPLE\.TEST/);
    assert.match(l.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
    assert.ok(realm.log.some((x) => /kdc as_req transport=udp client=admin@EXAMPLE.TEST .*outcome=ISSUE/.test(x)));
  });

  it('kvno gets a service ticket for HTTP/<hostname>', async () => {
    const v = await runTool('kvno', ['HTTP/localhost'], env);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /HTTP\/localhost@EXAMPLE\.TEST: kvno = 1/);
    const l = await runTool('klist', [], env);
    assert.match(l.stdout, /HTTP\/localhost@EXAMPLE\.TEST/);
    const unknown = await runTool('kvno', ['HTTP/nowhere.example.test'], env);
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /not found in Kerberos database/);
  });

  it('a user added through the API logs in with the password set there', async () => {
    const k = await runTool('kinit', ['-c', `FILE:${join(realm.dataDir, 'alice.cc')}`, 'alice'], env, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
  });

  it('wrong password, unknown user and disabled user get MIT\'s messages', async () => {
    const wrong = await runTool('kinit', ['alice'], env, 'not-the-password\n');
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /Password incorrect while getting initial credentials/);
    const unknown = await runTool('kinit', ['nobody'], env, 'x\n');
    assert.match(unknown.stderr, /Client 'nobody@EXAMPLE\.TEST' not found in Kerberos database/);
    const disabled = await runTool('kinit', ['dora'], env, 'Dora-pass-12\n');
    assert.match(disabled.stderr, /revoked/i);
  });

  for (const etype of ['aes256-cts-hmac-sha1-96', 'aes128-cts-hmac-sha1-96', 'aes256-cts-hmac-sha384-192', 'aes128-cts-hmac-sha256-128']) {
    it(`works with ${etype} forced`, async () => {
      const conf = join(realm.dataDir, `krb5-${etype}.conf`);
      writeFileSync(conf, readFileSync(join(dataDir, 'krb5.conf'), 'utf8').replace('[libdefaults]', `[libdefaults]\n default_tkt_enctypes = ${etype}\n default_tgs_enctypes = ${etype}\n permitted_enctypes = ${etype}`));
      const e = { ...env, KRB5_CONFIG: conf, KRB5CCNAME: `FILE:${join(realm.dataDir, `cc-${etype}`)}` };
      const k = await runTool('kinit', ['alice'], e, 'Alice-pass-1\n');
      assert.equal(k.code, 0, k.stderr);
      const v = await runTool('kvno', ['HTTP/localhost'], e);
      assert.equal(v.code, 0, v.stderr);
      const l = await runTool('klist', ['-e'], e);
      const lines = l.stdout.split('\n').filter((x) => x.includes('Etype'));
      assert.equal(lines.length, 2);
      for (const line of lines) assert.ok(line.includes(`${etype}, `), line);
    });
  }

  it('dirid kinit writes a ccache MIT klist and kvno use; dirid klist reads MIT\'s', async () => {
    const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
    const cc = `FILE:${join(realm.dataDir, 'dirid.cc')}`;
    const k = await runTool(process.execPath, [DIRID, 'kinit', '-c', cc, 'alice'], env, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const l = await runTool('klist', ['-C', '-c', cc], env);
    assert.equal(l.code, 0, l.stderr);
    assert.match(l.stdout, /Default principal: alice@EXAMPLE\.TEST/);
    assert.match(l.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
    assert.match(l.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 2/);
    const v = await runTool('kvno', ['-c', cc, 'HTTP/localhost'], env);
    assert.equal(v.code, 0, v.stderr);
    const ours = await runTool(process.execPath, [DIRID, 'klist', '-c', cc], env);
    assert.match(ours.stdout, /HTTP\/localhost@EXAMPLE\.TEST/, 'dirid reads the ccache after MIT kvno appended to it');
    const mitCc = `FILE:${join(realm.dataDir, 'mit.cc')}`;
    assert.equal((await runTool('kinit', ['-c', mitCc, 'alice'], env, 'Alice-pass-1\n')).code, 0);
    const theirs = await runTool(process.execPath, [DIRID, 'klist', '-c', mitCc], env);
    assert.equal(theirs.code, 0, theirs.stderr);
    assert.match(theirs.stdout, /Default principal: alice@EXAMPLE\.TEST/);
    const wrong = await runTool(process.execPath, [DIRID, 'kinit', '-c', cc, 'alice'], env, 'wrong\n');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /^dirid: ERROR: Password incorrect while getting initial credentials$/m);
    const unknown = await runTool(process.execPath, [DIRID, 'kinit', '-c', cc, 'nobody'], env, 'x\n');
    assert.match(unknown.stderr, /Client 'nobody@EXAMPLE\.TEST' not found in Kerberos database/);
    const noKdc = await runTool(process.execPath, [DIRID, 'kinit', '-c', cc, 'alice@OTHER.TEST'], env, 'x\n');
    assert.match(noKdc.stderr, /Cannot find KDC for realm "OTHER\.TEST"/);
  });

  it('host.keytab from init, service principals and exported keytabs verify with MIT tools', async () => {
    const hostCc = `FILE:${join(realm.dataDir, 'host.cc')}`;
    const h = await runTool('kinit', ['-k', '-t', join(dataDir, 'host.keytab'), '-c', hostCc, 'host/localhost'], env);
    assert.equal(h.code, 0, h.stderr);
    const admin = new RpcSession(realm.url, realm.ca);
    await admin.login('admin', realm.adminPassword);
    const added = await admin.call('service_add', ['HTTP/web.example.test'], { force: true });
    assert.equal(added.summary, 'Added service "HTTP/web.example.test@EXAMPLE.TEST"');
    const kt = await admin.call('keytab_get', ['HTTP/web.example.test']);
    assert.equal(kt.result.kvno, 2, 'new random keys with the next key version');
    const ktFile = join(realm.dataDir, 'web.keytab');
    writeFileSync(ktFile, kt.result.keytab as Buffer, { mode: 0o600 });
    const listed = await runTool('klist', ['-k', '-e', ktFile], env);
    assert.match(listed.stdout, /2 HTTP\/web\.example\.test@EXAMPLE\.TEST \(aes256-cts-hmac-sha1-96\)/);
    const v = await runTool('kvno', ['-k', ktFile, 'HTTP/web.example.test'], env);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /kvno = 2, keytab entry valid/);
    const host = await admin.call('host_add', ['client1.example.test']);
    assert.deepEqual(host.result.principal, ['host/client1.example.test@EXAMPLE.TEST']);
    const user = new RpcSession(realm.url, realm.ca);
    await user.login('alice', 'Alice-pass-1');
    const denied = await user.raw('keytab_get', ['HTTP/web.example.test']);
    assert.equal(denied.response.error?.code, 2100);
    const userKt = await admin.raw('keytab_get', ['alice']);
    assert.equal(userKt.response.error?.code, 3009);
  });

  it('passwd re-derives the keys: the new password works, the old one does not', async () => {
    const alice = new RpcSession(realm.url, realm.ca);
    await alice.login('alice', 'Alice-pass-1');
    const r = await alice.call('passwd', [null, 'Alice-pass-2'], { current_password: 'Alice-pass-1' });
    assert.equal(r.summary, 'Changed password for "alice@EXAMPLE.TEST"');
    const old = await runTool('kinit', ['-c', `FILE:${join(realm.dataDir, 'pw.cc')}`, 'alice'], env, 'Alice-pass-1\n');
    assert.match(old.stderr, /Password incorrect/);
    const fresh = await runTool('kinit', ['-c', `FILE:${join(realm.dataDir, 'pw.cc')}`, 'alice'], env, 'Alice-pass-2\n');
    assert.equal(fresh.code, 0, fresh.stderr);
    // the change ended alice's session (docs/access.md): she logs in again with the new password
    assert.equal((await alice.raw('ping')).status, 401);
    assert.equal((await alice.login('alice', 'Alice-pass-2')).status, 200);
    assert.equal((await alice.raw('passwd', ['admin', 'Hijack-pass-1'])).response.error?.code, 2100);
    const back = await alice.call('passwd', ['alice', 'Alice-pass-1'], { current_password: 'Alice-pass-2' });
    assert.match(back.summary, /Changed password/);
  });

  it('FAST: kinit -T with a host armor ccache uses encrypted challenge; klist -C shows fast_avail', async () => {
    const armor = await hostArmor(realm, env);
    const fastCc = `FILE:${join(realm.dataDir, 'fast.cc')}`;
    const k = await runTool('kinit', ['-T', armor, '-c', fastCc, 'alice'], env, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const l = await runTool('klist', ['-C', '-c', fastCc], env);
    assert.match(l.stdout, /config: fast_avail\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = yes/);
    assert.match(l.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 138/);
    assert.ok(realm.log.some((x) => /client=alice@EXAMPLE.TEST .*outcome=ISSUE .*preauth=encrypted-challenge/.test(x)));
    // a FAST-capable TGT makes MIT wrap its TGS requests (implicit armor)
    const v = await runTool('kvno', ['-c', fastCc, 'HTTP/localhost'], env);
    assert.equal(v.code, 0, v.stderr);
    const missing = await runTool('kvno', ['-c', fastCc, 'HTTP/nowhere.example.test'], env);
    assert.match(missing.stderr, /Server HTTP\/nowhere\.example\.test@EXAMPLE\.TEST not found in Kerberos database/, 'armored errors reach the user');
    const wrong = await runTool('kinit', ['-T', armor, '-c', fastCc, 'alice'], env, 'wrong-password\n');
    assert.match(wrong.stderr, /Password incorrect while getting initial credentials/);
    const unknown = await runTool('kinit', ['-T', armor, '-c', fastCc, 'nobody'], env, 'x\n');
    assert.match(unknown.stderr, /Client 'nobody@EXAMPLE\.TEST' not found in Kerberos database/);
    // without armor, RFC 6806 enc-pa-rep still tells kinit that FAST is available
    const plainCc = `FILE:${join(realm.dataDir, 'plain.cc')}`;
    assert.equal((await runTool('kinit', ['-c', plainCc, 'alice'], env, 'Alice-pass-1\n')).code, 0);
    assert.match((await runTool('klist', ['-C', '-c', plainCc], env)).stdout, /fast_avail\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = yes/);
  });

  it('answers over TCP and survives garbage on UDP and TCP', async () => {
    const tcpConf = join(realm.dataDir, 'krb5-tcp.conf');
    writeFileSync(tcpConf, readFileSync(join(dataDir, 'krb5.conf'), 'utf8').replace('[libdefaults]', '[libdefaults]\n udp_preference_limit = 1'));
    const k = await runTool('kinit', ['-c', `FILE:${join(realm.dataDir, 'tcp.cc')}`, 'alice'], { ...env, KRB5_CONFIG: tcpConf }, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    assert.ok(realm.log.some((x) => /kdc as_req transport=tcp client=alice@EXAMPLE.TEST .*outcome=ISSUE/.test(x)));
    const port = realm.server.kdcPort;
    const udp = createSocket('udp4');
    for (const junk of [Buffer.from('hello'), Buffer.alloc(3000, 0x6a), Buffer.from('6a8201', 'hex'), Buffer.from('6a03020105', 'hex')]) udp.send(junk, port, '127.0.0.1');
    await new Promise((r) => setTimeout(r, 200));
    udp.close();
    const reply = await new Promise<Buffer>((resolve, reject) => {
      const s = connect(port, '127.0.0.1', () => s.write(Buffer.concat([Buffer.from([0, 0, 0, 5]), Buffer.from('junk!')])));
      let got = Buffer.alloc(0);
      s.on('data', (d: Buffer) => {
        got = Buffer.concat([got, d]);
        if (got.length >= 4 && got.length >= 4 + got.readUInt32BE(0)) {
          s.end();
          resolve(got);
        }
      });
      s.on('error', reject);
    });
    assert.equal(reply[4], 0x7e, 'a KRB-ERROR (APPLICATION 30) over TCP');
    const again = await runTool('kinit', ['alice'], env, 'Alice-pass-1\n');
    assert.equal(again.code, 0, again.stderr);
  });
});
