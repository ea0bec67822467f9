/**
 * Every way a password is set holds it to the same password rules
 * (src/account/credentials.ts): user-add --password and user-mod --password
 * refuse a short one as passwd does, with the same public error naming the
 * rule, over the API and from the `dirid` command (the password read from
 * standard input); nothing is written, the old password keeps working.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { cliClient, startAdminRealm, type TestRealm } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;
const RULE = "invalid 'password': must be at least 8 characters";

describe('password rules on user-add and user-mod', () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let conf: string;
  let env: NodeJS.ProcessEnv;
  const dirid = (args: string[], input?: string): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], env, input);
  const refusedByRule = (e: Error & { code?: number; name?: string }) => e.code === 3009 && e.message === RULE;
  /** Whether `password` is the user's: the login takes it, or (set by an administrator, so expired at once) refuses it as expired, not as wrong. */
  const logsIn = async (login: string, password: string) => {
    const r = await new RpcSession(realm.url, realm.ca).login(login, password);
    return r.status === 200 || r.headers['x-dirid-rejection-reason'] === 'password-expired';
  };
  const exists = async (login: string) => (await admin.call('user_find', [login], {})).result.some((u: { uid: string[] }) => u.uid[0] === login);

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    ({ conf, env } = cliClient(realm));
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
  });
  after(async () => realm.stop());

  it('user-add --password abc is refused over the API, and no user is made', async () => {
    await assert.rejects(admin.call('user_add', ['amy'], { first: 'Amy', last: 'A', password: 'abc' }), refusedByRule);
    assert.equal(await exists('amy'), false);
  });

  it('user-mod --password x is refused over the API; the old password stays', async () => {
    await admin.call('user_add', ['bob'], { first: 'Bob', last: 'B', password: 'Bob-pass-123' });
    const before = (await admin.call('user_show', ['bob'], { all: true, raw: true })).result.krblastpwdchange;
    await assert.rejects(admin.call('user_mod', ['bob'], { password: 'x' }), refusedByRule);
    assert.deepEqual((await admin.call('user_show', ['bob'], { all: true, raw: true })).result.krblastpwdchange, before);
    assert.ok(await logsIn('bob', 'Bob-pass-123'));
    assert.ok(!(await logsIn('bob', 'x')));
    // a password the rules take is still set
    await admin.call('user_mod', ['bob'], { password: 'Bob-pass-456' });
    assert.ok(await logsIn('bob', 'Bob-pass-456'));
  });

  it('dirid user-add NAME --password reads it from standard input and refuses a short one', async () => {
    const r = await dirid(['user-add', 'cat', '--first', 'Cat', '--last', 'C', '--password'], 'abc\n');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr, `dirid: ERROR: ${RULE}\n`);
    assert.equal(await exists('cat'), false);
    const ok = await dirid(['user-add', 'cat', '--first', 'Cat', '--last', 'C', '--password'], 'Cat-pass-123\n');
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(await logsIn('cat', 'Cat-pass-123'));
  });

  it('dirid user-mod NAME --password refuses a short one; the old password stays', async () => {
    const r = await dirid(['user-mod', 'cat', '--password'], 'short\n');
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(r.stderr, `dirid: ERROR: ${RULE}\n`);
    assert.ok(await logsIn('cat', 'Cat-pass-123'));
  });
});
