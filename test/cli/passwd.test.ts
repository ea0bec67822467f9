/**
 * `dirid passwd [LOGIN]`: the schema's password argument is prompted for
 * (from standard input when it is not a terminal), never taken from the
 * command line; LOGIN defaults to the caller; one's own password (no LOGIN,
 * or the caller's) needs the current one, asked for first and once (from
 * standard input: the current password's line, then the new one's), while
 * another user's is set without it; a missing required value is
 * refused by the client before anything is sent; no password shows in the
 * output or the errors; on a terminal it is asked for twice, without echo. Unit level against the command's own schema, and
 * end to end against a real server with MIT kinit tickets.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describeCommand, type CommandSpec } from '../../src/framework/api.js';
import { passwdCommand } from '../../src/objects/passwd.js';
import { completeArguments, helpText, parseCommandLine, promptOwnCurrentPassword } from '../../src/cli/args.js';
import { CliError } from '../../src/cli/errors.js';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
const passwd: CommandSpec = describeCommand(passwdCommand);

describe('passwd command line (unit)', () => {
  it('no LOGIN: the password is prompted for and LOGIN is sent as null, not left out', () => {
    const parsed = parseCommandLine(passwd, []);
    assert.deepEqual(
      parsed.prompts.map((p) => [p.spec.name, p.where, p.index]),
      [['password', 'arg', 1]],
    );
    parsed.args[1] = 'New-pass-1';
    completeArguments(passwd, parsed);
    assert.deepEqual(parsed.args, [null, 'New-pass-1']);
    assert.ok(!parsed.args.includes(undefined as never));
    assert.equal(parsed.args.length, 2);
  });
  it('a single positional argument is the LOGIN; the password is still prompted for', () => {
    const parsed = parseCommandLine(passwd, ['bob']);
    assert.equal(parsed.args[0], 'bob');
    assert.deepEqual(parsed.prompts.map((p) => p.spec.name), ['password']);
  });
  it('a password on the command line is refused, without repeating it', () => {
    assert.throws(
      () => parseCommandLine(passwd, ['bob', 'Cmdline-pass-1']),
      (e: unknown) => e instanceof CliError && e.message === "command 'passwd' takes at most 1 argument(s)" && !e.message.includes('Cmdline-pass-1'),
    );
  });
  it("one's own password: the current one is asked for first, once; another user's without it", () => {
    const asked = (argv: string[], caller: string | null) => {
      const parsed = parseCommandLine(passwd, argv);
      promptOwnCurrentPassword(passwd, parsed, caller);
      return parsed.prompts.map((p) => [p.spec.name, p.where, p.once === true]);
    };
    const own = [['current_password', 'option', true], ['password', 'arg', false]];
    assert.deepEqual(asked([], 'bob@EXAMPLE.TEST'), own);
    assert.deepEqual(asked([], null), own);
    assert.deepEqual(asked(['bob'], 'bob@EXAMPLE.TEST'), own);
    assert.deepEqual(asked(['--current-password'], 'bob@EXAMPLE.TEST'), own);
    assert.deepEqual(asked(['bob'], 'admin@EXAMPLE.TEST'), [['password', 'arg', false]]);
    assert.deepEqual(asked(['bob'], 'bob/admin@EXAMPLE.TEST'), [['password', 'arg', false]]);
    assert.deepEqual(asked(['--current-password=Old-pass-1'], 'bob@EXAMPLE.TEST'), [['password', 'arg', false]]);
  });
  it('a required value still missing after the prompts is refused before sending', () => {
    const parsed = parseCommandLine(passwd, []);
    assert.throws(() => completeArguments(passwd, parsed), (e: unknown) => e instanceof CliError && e.message === "'password' is required");
  });
  it('help shows passwd [LOGIN] and says the password is prompted for', () => {
    const text = helpText(passwd);
    assert.equal(text.split('\n')[0], 'Usage: dirid [global-options] passwd [LOGIN] [options]');
    assert.match(text, /\n {2}PASSWORD +New password \(prompted for, not taken from the command line\)\n/);
  });
});

describe('dirid passwd against a server', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[], input?: string): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env, input);
  const kinit = async (who: string, pw: string) => (await runTool('kinit', [who], env, `${pw}\n`)).code;
  const noPassword = (r: ToolResult, ...pws: string[]) => {
    for (const pw of pws) assert.ok(!r.stdout.includes(pw) && !r.stderr.includes(pw), `password shown: ${r.stdout}${r.stderr}`);
  };

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
    assert.equal(await kinit('admin', realm.adminPassword), 0);
    assert.equal((await dirid(['user-add', 'bob', '--first', 'Bob', '--last', 'Builder'])).code, 0);
  });
  after(async () => realm.stop());

  it("an administrator sets another user's password, read from standard input", async () => {
    const r = await dirid(['passwd', 'bob'], 'Bob-pass-1\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Changed password for "bob@EXAMPLE\.TEST"/);
    noPassword(r, 'Bob-pass-1');
  });

  it('without LOGIN, a user changes their own password (the caller)', async () => {
    // the administrator's password has expired: MIT kinit has bob choose his own first
    assert.equal((await runTool('kinit', ['bob'], env, 'Bob-pass-1\nBob-pass-1b\nBob-pass-1b\n')).code, 0);
    const r = await dirid(['passwd'], 'Bob-pass-1b\nBob-pass-2\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Changed password for "bob@EXAMPLE\.TEST"/);
    noPassword(r, 'Bob-pass-1b', 'Bob-pass-2');
    assert.equal(await kinit('bob', 'Bob-pass-2'), 0, 'the new password works');
  });

  it('a wrong current password is refused, and the password stays', async () => {
    const r = await dirid(['passwd', 'bob'], 'Not-the-pass-1\nBob-pass-9\n');
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'dirid: ERROR: Insufficient access: the current password is wrong\n');
    noPassword(r, 'Not-the-pass-1', 'Bob-pass-9');
    const onlyOne = await dirid(['passwd'], 'Bob-pass-2\n');
    assert.equal(onlyOne.code, 1);
    assert.equal(onlyOne.stderr, 'dirid: ERROR: no input on standard input\n');
    assert.equal(await kinit('bob', 'Bob-pass-2'), 0, 'the password did not change');
  });

  it('a single argument is the LOGIN, and a password on the command line is refused before sending', async () => {
    const other = await dirid(['passwd', 'admin'], 'Bob-pass-3\n');
    assert.equal(other.code, 1);
    assert.equal(other.stderr, "dirid: ERROR: Insufficient access: not allowed to change another user's password\n");
    const onLine = await dirid(['passwd', 'bob', 'Bob-pass-3']);
    assert.equal(onLine.code, 1);
    assert.equal(onLine.stderr, "dirid: ERROR: command 'passwd' takes at most 1 argument(s)\n");
    noPassword(onLine, 'Bob-pass-3');
    assert.equal(await kinit('bob', 'Bob-pass-2'), 0, 'the password did not change');
  });

  it('a password refused by the rule is not repeated in the error; no input is an error', async () => {
    const short = await dirid(['passwd'], 'Bob-pass-2\nshort\n');
    assert.equal(short.code, 1);
    assert.equal(short.stderr, "dirid: ERROR: invalid 'password': must be at least 8 characters\n");
    const none = await dirid(['passwd'], '');
    assert.equal(none.code, 1);
    assert.equal(none.stderr, 'dirid: ERROR: no input on standard input\n');
  });

  it('on a terminal: asked twice without echo', async () => {
    const script = `node ${DIRID} -c ${conf} passwd`;
    const child = spawn('script', ['-qfec', script, '/dev/null'], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Current password: $/.test(out)) child.stdin.write('Bob-pass-2\r');
      if (/New password: $/.test(out)) child.stdin.write('Bob-pass-4\r');
      if (/Enter New password again to verify: $/.test(out)) child.stdin.write('Bob-pass-4\r');
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0, out);
    assert.match(out, /Current password: /);
    assert.doesNotMatch(out, /Enter Current password again/, 'the current password is asked once');
    assert.match(out, /Enter New password again to verify: /);
    assert.doesNotMatch(out, /Bob-pass-[24]/, 'no echo');
    assert.match(out, /Changed password for "bob@EXAMPLE\.TEST"/);
    assert.equal(await kinit('bob', 'Bob-pass-4'), 0);
  });

  it('help: passwd [LOGIN]', async () => {
    const r = await dirid(['passwd', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Usage: dirid \[global-options\] passwd \[LOGIN\] \[options\]\n/);
  });
});
