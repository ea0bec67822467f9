/**
 * The sudo commands from the `dirid` client, as an administrator types them
 * (a ticket from MIT kinit): options from the schema (`--sudooption` with a
 * leading `!`, a command with spaces as one argument), membership output
 * with what failed, the labels of a rule, enable and disable, and errors
 * with their exit codes.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid sudorule, sudocmd and sudocmdgroup commands', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[]): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env);
  const ok = async (args: string[]) => {
    const r = await dirid(args);
    assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
  });
  after(async () => realm.stop());

  it('adds commands and a command group', async () => {
    assert.match(await ok(['sudocmd-add', '/usr/bin/systemctl restart nginx', '--description=restart the web server']), /^-+\nAdded Sudo Command "\/usr\/bin\/systemctl restart nginx"\n-+\n  Sudo Command: \/usr\/bin\/systemctl restart nginx\n  Description: restart the web server\n$/);
    await ok(['sudocmd-add', '/usr/bin/less']);
    await ok(['sudocmdgroup-add', 'viewers']);
    assert.match(await ok(['sudocmdgroup-add-member', 'viewers', '--sudocmds=/usr/bin/less']), /^  Member Sudo commands: \/usr\/bin\/less$/m);
    const bad = await dirid(['sudocmd-add', 'less']);
    assert.deepEqual([bad.code, bad.stderr], [1, "dirid: ERROR: invalid 'command': must be a full path (or sudoedit), then the arguments if any (at most 1024 characters)\n"]);
  });

  it('builds a rule with its members, an option and an order, and shows it', async () => {
    await ok(['sudorule-add', 'web', '--order=3', '--runasgroupcat=all']);
    await ok(['user-add', 'alice', '--first=Alice', '--last=L']);
    const users = await dirid(['sudorule-add-user', 'web', '--users=alice', '--users=nobody']);
    assert.equal(users.code, 1, 'a member that failed');
    assert.match(users.stdout, /^  Users: alice\n  Failed members:\n    memberuser user: nobody: no such entry\n-+\nNumber of members added 1\n-+\n$/m);
    await ok(['sudorule-add-host', 'web', '--hosts=localhost']);
    await ok(['sudorule-add-allow-command', 'web', '--sudocmds=/usr/bin/systemctl restart nginx', '--sudocmdgroups=viewers']);
    await ok(['sudorule-add-deny-command', 'web', '--sudocmds=/usr/bin/less']);
    await ok(['sudorule-add-runasuser', 'web', '--users=alice']);
    assert.match(await ok(['sudorule-add-option', 'web', '--sudooption=!authenticate']), /^Added option "!authenticate" to Sudo Rule "web"$/m);
    const show = await ok(['sudorule-show', 'web']);
    assert.equal(
      show,
      [
        '  Rule name: web',
        '  Enabled: True',
        '  RunAs Group category: all',
        '  Sudo order: 3',
        '  Sudo Option: !authenticate',
        '  Users: alice',
        '  Hosts: localhost',
        '  Sudo Allow Commands: /usr/bin/systemctl restart nginx',
        '  Sudo Allow Command Groups: viewers',
        '  Sudo Deny Commands: /usr/bin/less',
        '  RunAs Users: alice',
        '',
      ].join('\n'),
    );
    assert.match(await ok(['sudorule-find', 'web']), /^1 Sudo Rule matched$/m);
  });

  it('disables and enables a rule, and says why a change is refused', async () => {
    assert.match(await ok(['sudorule-disable', 'web']), /^Disabled Sudo Rule "web"$/m);
    const again = await dirid(['sudorule-disable', 'web']);
    assert.deepEqual([again.code, again.stderr], [1, 'dirid: ERROR: This entry is already disabled\n']);
    await ok(['sudorule-enable', 'web']);
    const all = await dirid(['sudorule-mod', 'web', '--usercat=all']);
    assert.deepEqual([all.code, all.stderr], [1, "dirid: ERROR: user category cannot be set to 'all' while there are allowed users\n"]);
    const used = await dirid(['sudocmd-del', '/usr/bin/less']);
    assert.deepEqual([used.code, used.stderr], [1, 'dirid: ERROR: This entry is being referenced by other entries\n']);
    assert.match(await ok(['sudorule-remove-option', 'web', '--sudooption=!authenticate']), /^Removed option "!authenticate" from Sudo Rule "web"$/m);
    await ok(['sudorule-del', 'web']);
    await ok(['sudocmd-del', '/usr/bin/less']);
  });
});
