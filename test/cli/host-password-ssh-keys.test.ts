/**
 * What the `dirid` client shows of one-time passwords and SSH keys, run as
 * an administrator would with an MIT ticket: `host-add --random` prints the
 * password once with Password and Keytab, `host-show` never the password;
 * `user-add --sshpubkey` (repeated) prints the fingerprints under FreeIPA's
 * label, and a private key given by mistake is refused without being
 * printed back.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid: one-time passwords and SSH keys', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[]): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env);

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
  });
  after(async () => realm.stop());

  it('host-add --random prints the password once; host-show says Password and Keytab', async () => {
    const added = await dirid(['host-add', 'cli.example.test', '--random']);
    assert.equal(added.code, 0, added.stderr);
    const m = /^ {2}Random password: ([A-Za-z0-9_-]{24})$/m.exec(added.stdout);
    assert.ok(m, added.stdout);
    assert.match(added.stdout, /^ {2}Password: True$/m);
    assert.match(added.stdout, /^ {2}Keytab: False$/m);
    const shown = await dirid(['host-show', 'cli.example.test', '--all']);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /^ {2}Password: True$/m);
    assert.ok(!shown.stdout.includes(m[1]!) && !shown.stdout.includes('Random password'), shown.stdout);
  });

  it('user-add --sshpubkey prints fingerprints; a private key is refused and not printed', async () => {
    const dir = join(realm.dataDir, 'k');
    const made = await runTool('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'carol@laptop', '-f', dir], {});
    assert.equal(made.code, 0, made.stderr);
    const made2 = await runTool('ssh-keygen', ['-q', '-t', 'ecdsa', '-N', '', '-C', 'carol@desk', '-f', `${dir}2`], {});
    assert.equal(made2.code, 0, made2.stderr);
    const fp = async (f: string) => /^\d+ (SHA256:\S+)/.exec((await runTool('ssh-keygen', ['-l', '-f', f], {})).stdout)![1]!;
    const r = await dirid(['user-add', 'carol', '--first', 'Carol', '--last', 'C', `--sshpubkey=${readFileSync(`${dir}.pub`, 'utf8').trim()}`, '--sshpubkey', readFileSync(`${dir}2.pub`, 'utf8').trim()]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(r.stdout.includes(`  SSH public key fingerprint: ${await fp(`${dir}.pub`)} carol@laptop (ssh-ed25519), ${await fp(`${dir}2.pub`)} carol@desk (ecdsa-sha2-nistp256)\n`), r.stdout);
    const secret = readFileSync(dir, 'utf8');
    const bad = await dirid(['user-mod', 'carol', `--sshpubkey=${secret.replace(/\n/g, ' ')}`]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "dirid: ERROR: invalid 'sshpubkey': this is a private key: give the public key (the .pub file), and keep the private key to yourself\n");
    assert.equal(bad.stdout, '');
  });
});
