/**
 * The `dirid` client when the server ends its cached session (issue 27
 * item 4): after `dirid passwd` changes the user's own password through the
 * cached session cookie, or an administrator resets it, the server refuses
 * that cookie (401), and the next command drops it, logs in again with the
 * user's Kerberos ticket (Negotiate) and caches the new session, without the
 * user seeing anything of it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid falls back to its ticket when the server ended its session', () => {
  let realm: TestRealm;
  let admin: (args: string[], input?: string) => Promise<ToolResult>;
  let carol: (args: string[], input?: string) => Promise<ToolResult>;
  let carolCache: string;

  before(async () => {
    realm = await startTestRealm();
    const { conf, env } = cliClient(realm);
    admin = (args, input) => runTool(process.execPath, [DIRID, '-c', conf, ...args], env, input);
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const add = await admin(['user-add', 'carol', '--first=Carol', '--last=C', '--password'], 'Carol-temp-00\nCarol-temp-00\n');
    assert.equal(add.code, 0, add.stderr);
    // carol has her own ticket cache and session cache
    carolCache = join(realm.dataDir, 'carol-cache');
    const carolEnv = { ...env, KRB5CCNAME: `FILE:${join(realm.dataDir, 'carol.cc')}`, XDG_CACHE_HOME: carolCache };
    carol = (args, input) => runTool(process.execPath, [DIRID, '-c', conf, ...args], carolEnv, input);
    // the administrator's password has expired: at her first login carol chooses her own, as MIT kinit asks
    assert.equal((await runTool('kinit', ['carol'], carolEnv, 'Carol-temp-00\nCarol-pass-01\nCarol-pass-01\n')).code, 0);
  });
  after(async () => realm.stop());

  /** The session cookie carol's client has cached. */
  const cached = (): string => {
    const dir = join(carolCache, 'dirid', 'sessions');
    const [file] = readdirSync(dir);
    return (JSON.parse(readFileSync(join(dir, file!), 'utf8')) as { cookie: string }).cookie;
  };
  const negotiations = () => realm.log.filter((l) => / login method=negotiate principal=carol@EXAMPLE\.TEST outcome=ok/.test(l)).length;
  /** What the server answers the cookie now. */
  const statusOf = async (cookie: string): Promise<number> => {
    const s = new RpcSession(realm.url, realm.ca);
    s.cookie = cookie;
    return (await s.raw('ping')).status;
  };

  it("after `dirid passwd` through the cached session, the next command logs in again with the ticket", async () => {
    assert.equal((await carol(['ping'])).code, 0);
    const before = cached();
    const logins = negotiations();
    const pw = await carol(['passwd'], 'Carol-pass-01\nCarol-pass-02\n');
    assert.equal(pw.code, 0, pw.stderr);
    assert.equal(negotiations(), logins, 'passwd ran on the cached session');
    assert.equal(await statusOf(before), 401, 'the server refuses the session the password change ended');
    const show = await carol(['user-show', 'carol']);
    assert.equal(show.code, 0, show.stderr);
    assert.equal(show.stderr, '');
    assert.match(show.stdout, /User login: carol/);
    assert.equal(negotiations(), logins + 1, 'one Negotiate login replaced the session');
    const after = cached();
    assert.notEqual(after, before);
    assert.equal(await statusOf(after), 200);
  });

  it("after an administrator's reset, the same", async () => {
    assert.equal((await carol(['ping'])).code, 0);
    const before = cached();
    const reset = await admin(['passwd', 'carol'], 'Carol-pass-03\n');
    assert.equal(reset.code, 0, reset.stderr);
    const r = await carol(['ping']);
    assert.equal(r.code, 0, r.stderr);
    assert.notEqual(cached(), before);
    assert.equal(await statusOf(before), 401);
  });
});
