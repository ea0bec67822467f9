/**
 * `dirid keytab-get -k FILE` where FILE already holds keys (a host's
 * /etc/krb5.keytab with its host/ key; a service's keytab before a key
 * rotation), and where FILE cannot be written. As with ipa-getkeytab and
 * kadmin's ktadd, the other principals' keys and the previous key version
 * stay in the file, so the host still authenticates and tickets issued before
 * the rotation are still accepted; a keytab that cannot be written leaves the
 * principal's keys as they were. Checked with MIT klist, kinit and kvno.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('keytab-get into an existing keytab', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[]): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env);

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    assert.equal((await dirid(['host-add', 'web.example.test'])).code, 0);
    assert.equal((await dirid(['service-add', 'nfs/web.example.test'])).code, 0);
  });
  after(async () => realm.stop());

  it('keeps the host key already in the file when a service key is added to it', async () => {
    const kt = join(realm.dataDir, 'krb5.keytab');
    assert.equal((await dirid(['keytab-get', 'host/web.example.test', '-k', kt])).code, 0);
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    const listed = await runTool('klist', ['-k', kt], env);
    assert.match(listed.stdout, /host\/web\.example\.test@EXAMPLE\.TEST/, listed.stdout);
    assert.match(listed.stdout, /nfs\/web\.example\.test@EXAMPLE\.TEST/, listed.stdout);
    const k = await runTool('kinit', ['-k', '-t', kt, '-c', join(realm.dataDir, 'host.cc'), 'host/web.example.test'], env);
    assert.equal(k.code, 0, k.stderr);
  });

  it('keeps the previous key version, so a ticket issued before the rotation is still accepted', async () => {
    const kt = join(realm.dataDir, 'nfs.keytab');
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    const cc = join(realm.dataDir, 'before.cc');
    assert.equal((await runTool('kinit', ['-c', cc, 'admin'], env, `${realm.adminPassword}\n`)).code, 0);
    assert.equal((await runTool('kvno', ['-c', cc, 'nfs/web.example.test'], env)).code, 0);
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    const r = await runTool('kvno', ['-c', cc, '-k', kt, 'nfs/web.example.test'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });

  it('changes no key when the keytab cannot be written', async () => {
    const kt = join(realm.dataDir, 'ok.keytab');
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    const bad = await dirid(['keytab-get', 'nfs/web.example.test', '-k', join(realm.dataDir, 'no-such-dir', 'x.keytab')]);
    assert.equal(bad.code, 1);
    const cc = join(realm.dataDir, 'after.cc');
    assert.equal((await runTool('kinit', ['-c', cc, 'admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const r = await runTool('kvno', ['-c', cc, '-k', kt, 'nfs/web.example.test'], env);
    assert.equal(r.code, 0, `the service's keytab no longer matches: ${r.stdout}${r.stderr}`);
  });

  it('says in plain words why the keytab cannot be written, and writes the keytab with mode 0600', async () => {
    const missing = join(realm.dataDir, 'no-such-dir');
    const bad = await dirid(['keytab-get', 'nfs/web.example.test', '-k', join(missing, 'x.keytab')]);
    assert.match(bad.stderr, new RegExp(`the directory ${missing} does not exist; no keys were changed`), bad.stderr);
    assert.doesNotMatch(bad.stderr, /ENOENT/);
    const kt = join(realm.dataDir, 'mode.keytab');
    writeFileSync(kt, Buffer.alloc(0), { mode: 0o644 });
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    assert.equal(statSync(kt).mode & 0o777, 0o600);
  });

  it('leaves a file that is not a keytab alone, and changes no key', async () => {
    const kt = join(realm.dataDir, 'current.keytab');
    assert.equal((await dirid(['keytab-get', 'nfs/web.example.test', '-k', kt])).code, 0);
    const notKeytab = join(realm.dataDir, 'notes.txt');
    writeFileSync(notKeytab, 'not a keytab\n');
    const bad = await dirid(['keytab-get', 'nfs/web.example.test', '-k', notKeytab]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /is not a keytab file/, bad.stderr);
    assert.equal(readFileSync(notKeytab, 'utf8'), 'not a keytab\n');
    const cc = join(realm.dataDir, 'after2.cc');
    assert.equal((await runTool('kinit', ['-c', cc, 'admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const r = await runTool('kvno', ['-c', cc, '-k', kt, 'nfs/web.example.test'], env);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  });
});
