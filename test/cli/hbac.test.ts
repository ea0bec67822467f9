/**
 * Host-based access from the `dirid` client (docs/hbac.md): the commands
 * with their CLI options, and hbactest's exit status a script can use: 0
 * when access is granted, 1 when it is denied, 2 when the user or host
 * does not exist; the summary says which, the rules that matched and those
 * that did not follow.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid hbactest and the HBAC commands', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (...args: string[]): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env);
  const ok = async (...args: string[]) => {
    const r = await dirid(...args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    await ok('user-add', 'alice', '--first=Alice', '--last=L');
    await ok('host-add', 'web1.example.test');
    await ok('host-add', 'db1.example.test');
  });
  after(async () => realm.stop());

  it('host groups, rules and their members through CLI options', async () => {
    await ok('hostgroup-add', 'webservers', '--description=Web servers');
    const m = await ok('hostgroup-add-member', 'webservers', '--hosts=web1.example.test');
    assert.match(m.stdout, /^ {2}Member hosts: web1\.example\.test$/m);
    assert.match(m.stdout, /Number of members added 1/);
    await ok('hbacrule-add', 'alice_web', '--servicecat=all');
    await ok('hbacrule-add-user', 'alice_web', '--users=alice');
    const r = await ok('hbacrule-add-host', 'alice_web', '--hostgroups=webservers');
    assert.match(r.stdout, /^ {2}Host Groups: webservers$/m);
    const show = await ok('hbacrule-show', 'alice_web');
    assert.match(show.stdout, /^ {2}Rule name: alice_web\n {2}Service category: all\n {2}Enabled: True\n {2}Users: alice\n {2}Host Groups: webservers\n$/m);
    const refused = await dirid('hbacrule-add-user', 'alice_web', '--groups=admins', '--users=alice');
    assert.equal(refused.code, 1);
    assert.match(refused.stdout, /^    memberuser user: alice: This entry is already a member$/m);
  });

  it('hbactest exits 0 when access is granted, 1 when denied, 2 when the user or host is unknown', async () => {
    const granted = await dirid('hbactest', '--user=alice', '--host=db1.example.test', '--service=sshd');
    assert.equal(granted.code, 0, granted.stderr);
    assert.equal(granted.stdout, '--------------------\nAccess granted: True\n--------------------\n  matched: allow_all\n  notmatched: alice_web, allow_systemd-user\n');
    await ok('hbacrule-disable', 'allow_all');
    const denied = await dirid('hbactest', '--user=alice', '--host=db1.example.test', '--service=sshd');
    assert.equal(denied.code, 1, denied.stderr);
    assert.equal(denied.stdout, '---------------------\nAccess granted: False\n---------------------\n  notmatched: alice_web, allow_systemd-user\n');
    assert.equal(denied.stderr, '');
    const web = await dirid('hbactest', '--user=alice', '--host=web1.example.test', '--service=su', '--rules=alice_web');
    assert.equal(web.code, 0, web.stderr);
    assert.match(web.stdout, /^ {2}matched: alice_web$/m);
    const unknown = await dirid('hbactest', '--user=nobody', '--host=web1.example.test', '--service=sshd');
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr, 'dirid: ERROR: nobody: user not found\n');
    assert.equal((await dirid('hbactest', '--user=alice', '--host=ghost.example.test', '--service=sshd')).code, 2);
  });
});
