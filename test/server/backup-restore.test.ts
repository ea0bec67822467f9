/**
 * `dirid-server backup` while the server serves and writes go on, then
 * `dirid-server restore` into another data directory and a server started
 * there (issue 33, docs/backup.md). The realm has users with passwords, a
 * user linked to an IdP reference whose client secret is sealed, and a
 * service whose keytab was exported. Two API clients add users the whole
 * time the backup runs. After the restore, with the first server stopped:
 * - every user whose add was acknowledged before the backup began is there;
 * - MIT kinit gets a TGT with a password, and with the keytab exported
 *   before the backup; kvno checks that keytab against a service ticket,
 *   and gets one with a TGT the first server issued (the same ticket key);
 * - idp-check's device authorization passes, which sends the reference's
 *   client secret to the IdP: the sealed secret opened with the restored
 *   master key;
 * - the restored store passes `dirid-server check` (SQLite integrity_check,
 *   foreign keys, every sealed secret).
 * And the file itself: mode 0600, the command says it holds the realm's
 * keys, it is encrypted with the passphrase (a wrong one is refused, and
 * leaves no data directory behind); a restore over a realm is refused
 * without --force, and over a running server's data directory even with it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { createCa } from '../../src/server/pki.js';
import { runTool } from '../support/mit-tools.js';
import { startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { ADMIN_PASSWORD, addActiveUser } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { SERVER_BIN, startServerProcess, type ServerProcess } from '../support/server-process.js';

function server(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [SERVER_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    c.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    c.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function stopProcess(p: ServerProcess | undefined): Promise<void> {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const gone = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await gone;
}

describe('backup while the server serves, and restore into another data directory', () => {
  let tmp: string;
  let idp: TestIdp;
  let caFile: string;
  let first: ServerProcess | undefined;
  let restored: ServerProcess | undefined;
  const realmDir = () => join(tmp, 'realm');
  const restoredDir = () => join(tmp, 'restored');
  const backupFile = () => join(tmp, 'realm.backup');
  const passFile = () => join(tmp, 'passphrase');
  const session = async (p: ServerProcess, dir: string) => {
    const s = new RpcSession(`https://localhost:${p.port}`, readFileSync(join(dir, 'ca.crt'), 'utf8'));
    assert.equal((await s.login('admin', ADMIN_PASSWORD)).status, 200);
    return s;
  };
  /** users whose add the first server acknowledged, with when */
  const acked: Array<{ name: string; at: number }> = [];
  let backupBegan = 0;

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-backup-'));
    const ca = await createCa('Test IdP CA');
    idp = await startTestIdp({ accounts: ['ida-sub'], ca });
    caFile = join(tmp, 'idp-ca.pem');
    writeFileSync(caFile, ca.certPem);
    writeFileSync(passFile(), 'correct horse battery staple\n', { mode: 0o600 });
    await initRealm({ dataDir: realmDir(), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost', adminPassword: ADMIN_PASSWORD }, () => {});
    first = await startServerProcess(realmDir(), ['--idp-ca-file', caFile]);
  });
  after(async () => {
    await stopProcess(first);
    await stopProcess(restored);
    await idp?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('backs up while writes go on: mode 0600, says it holds the keys, encrypted', async () => {
    const admin = await session(first!, realmDir());
    await admin.call('idp_add', ['corp'], { issuer_url: idp.issuer, client_id: idp.clientId, secret: idp.clientSecret, scope: 'openid' });
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'Liddell' });
    await admin.call('user_add', ['ida'], { first: 'Ida', last: 'Linked' });
    await admin.call('user_mod', ['ida'], { user_auth_type: ['idp'], idp: 'corp', idp_user_id: 'ida-sub' });
    await admin.call('service_add', ['HTTP/web.example.test'], { force: true });
    writeFileSync(join(tmp, 'web.keytab'), (await admin.call('keytab_get', ['HTTP/web.example.test'])).result.keytab as Buffer, { mode: 0o600 });
    // a TGT from the first server: the restored KDC has the same krbtgt key
    const tgt = await runTool('kinit', ['-c', `FILE:${join(tmp, 'before.cc')}`, 'alice'], { KRB5_CONFIG: join(realmDir(), 'krb5.conf') }, 'Alice-pass-1\n');
    assert.equal(tgt.code, 0, tgt.stderr);

    let writing = true;
    let n = 0;
    const writer = async (who: string) => {
      const s = await session(first!, realmDir());
      while (writing) {
        const name = `w${who}${n++}`;
        await s.call('user_add', [name], { first: 'W', last: name });
        acked.push({ name, at: Date.now() });
      }
    };
    const writers = [writer('a'), writer('b')];
    while (acked.length < 10) await new Promise((r) => setTimeout(r, 20));
    backupBegan = Date.now();
    const b = await server(['backup', '--data-dir', realmDir(), '--out', backupFile(), '--passphrase-file', passFile()]);
    const writesDuring = acked.filter((a) => a.at > backupBegan).length;
    writing = false;
    await Promise.all(writers);
    assert.equal(b.code, 0, b.stderr);
    assert.ok(writesDuring > 0, 'writes were acknowledged while the backup ran');
    assert.equal(statSync(backupFile()).mode & 0o777, 0o600);
    assert.match(b.stdout, /holds the realm's keys \(master key, CA key, server and KDC keys\), encrypted with the passphrase/);
    assert.match(b.stdout, /integrity check: ok/);
    const bytes = readFileSync(backupFile());
    assert.ok(bytes.subarray(0, 22).toString() === 'age-encryption.org/v1\n', 'an age file');
    assert.ok(!bytes.includes(readFileSync(join(realmDir(), 'master.key'))), 'the master key is not in the clear');
  });

  it('refuses a wrong passphrase and leaves nothing behind', async () => {
    writeFileSync(join(tmp, 'wrong'), 'not the passphrase\n');
    const r = await server(['restore', '--in', backupFile(), '--data-dir', restoredDir(), '--passphrase-file', join(tmp, 'wrong')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /^dirid-server: ERROR: the passphrase does not open this backup$/m);
    assert.ok(!existsSync(restoredDir()));
  });

  it('refuses to restore over a realm without --force, and over a running server with it', async () => {
    const over = await server(['restore', '--in', backupFile(), '--data-dir', realmDir(), '--passphrase-file', passFile()]);
    assert.equal(over.code, 1);
    assert.match(over.stderr, /holds a realm \(server\.conf, master\.key, dirid\.db\): restore does not replace it; give --force/);
    const forced = await server(['restore', '--in', backupFile(), '--data-dir', realmDir(), '--passphrase-file', passFile(), '--force']);
    assert.equal(forced.code, 1);
    assert.match(forced.stderr, /is in use by another dirid-server/);
  });

  it('restores a data directory that serves every acknowledged write, passwords, keytabs and IdP secrets', async () => {
    await stopProcess(first);
    const r = await server(['restore', '--in', backupFile(), '--data-dir', restoredDir(), '--passphrase-file', passFile()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /restored realm EXAMPLE\.TEST into .* from the backup of localhost/);
    assert.match(r.stdout, /sealed secrets that open with its master key; integrity check: ok/);
    restored = await startServerProcess(restoredDir(), ['--idp-ca-file', caFile]);
    const admin = await session(restored, restoredDir());

    const before = acked.filter((a) => a.at < backupBegan);
    assert.ok(before.length >= 10);
    for (const { name } of before) {
      const u = await admin.call('user_show', [name]);
      assert.deepEqual(u.result.uid, [name]);
    }
    const ida = await admin.call('user_show', ['ida']);
    assert.deepEqual(ida.result.diridpsub, ['ida-sub']);

    const env = { KRB5_CONFIG: join(restoredDir(), 'krb5.conf'), KRB5CCNAME: `FILE:${join(tmp, 'alice.cc')}` };
    const k = await runTool('kinit', ['alice'], env, 'Alice-pass-1\n');
    assert.equal(k.code, 0, k.stderr);
    const kt = await runTool('kinit', ['-k', '-t', join(tmp, 'web.keytab'), '-c', `FILE:${join(tmp, 'web.cc')}`, 'HTTP/web.example.test'], env);
    assert.equal(kt.code, 0, kt.stderr);
    const v = await runTool('kvno', ['-k', join(tmp, 'web.keytab'), 'HTTP/web.example.test'], env);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, /keytab entry valid/);

    // the TGT the first server issued before the backup gets a service ticket from the restored KDC
    const old = await runTool('kvno', ['-c', `FILE:${join(tmp, 'before.cc')}`, 'HTTP/web.example.test'], { KRB5_CONFIG: join(restoredDir(), 'krb5.conf') });
    assert.equal(old.code, 0, old.stderr);

    const check = (await admin.call('idp_check', ['corp'])).result as Array<{ check: string; status: string; message: string }>;
    const device = check.find((l) => l.check === 'Device authorization')!;
    assert.equal(device.status, 'PASS', device.message);

    const c = await server(['check', '--data-dir', restoredDir()]);
    assert.equal(c.code, 0, c.stdout + c.stderr);
    assert.match(c.stdout, /sealed secrets; integrity check: ok$/m);
  });
});
