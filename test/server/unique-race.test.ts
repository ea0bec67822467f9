/**
 * Two servers of one realm on one PostgreSQL database racing, through their
 * APIs, to give one principal name to two users (user-mod --addattr
 * krbPrincipalName) or to link two users to one IdP subject (user-mod
 * --idp --idp-user-id): each round one command succeeds and the other is
 * DuplicateEntry (4002) naming the user that won, and the directory ends
 * with one holder. The rule is checked where the write commits, inside its
 * transaction (directory/unique.ts), not read before it: a check read
 * before the write lets both through when the two writes come at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { prepareReplica } from '../../src/server/replica.js';
import { startServer, type RunningServer } from '../../src/server/start.js';
import { createDatabase, startPostgres, stopPostgres } from '../support/postgres.js';
import { RpcSession, testHosts } from '../support/rpc-client.js';

const PASSWORD = 'Admin-pass-1';
const ROUNDS = 15;

describe('two servers racing for one key', () => {
  let tmp: string;
  let one: RunningServer;
  let two: RunningServer;
  let a: RpcSession;
  let b: RpcSession;
  const session = async (server: RunningServer, host: string) => {
    const s = new RpcSession(`https://${host}:${server.httpsPort}`, readFileSync(join(tmp, 'one', 'ca.crt'), 'utf8'));
    const r = await s.login('admin', PASSWORD);
    assert.equal(r.status, 200, r.body);
    return s;
  };
  /** Both calls at once: one succeeds, the other is DuplicateEntry in `words` naming the user that won; returns its login. */
  const oneWins = async (calls: [Promise<unknown>, Promise<unknown>], logins: [string, string], words: (winner: string) => string) => {
    const [x, y] = await Promise.allSettled(calls);
    assert.equal([x, y].filter((r) => r.status === 'fulfilled').length, 1, `exactly one of ${logins.join(' and ')} succeeded`);
    const [winner, lost] = x.status === 'fulfilled' ? [logins[0], y] : [logins[1], x];
    const e = (lost as PromiseRejectedResult).reason as { code: number; message: string };
    assert.equal(e.code, 4002, e.message);
    assert.equal(e.message, words(winner));
    return winner;
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-unique-race-'));
    testHosts.set('one.example.test', '127.0.0.1').set('two.example.test', '127.0.0.1');
    const database = await createDatabase(await startPostgres(), 'realm');
    await initRealm({ dataDir: join(tmp, 'one'), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'one.example.test', adminPassword: PASSWORD, database });
    const ports = { listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {} };
    one = await startServer({ dataDir: join(tmp, 'one'), ...ports });
    await prepareReplica({ dataDir: join(tmp, 'one'), hostname: 'two.example.test', out: join(tmp, 'two') });
    two = await startServer({ dataDir: join(tmp, 'two'), ...ports });
    a = await session(one, 'one.example.test');
    b = await session(two, 'two.example.test');
    await a.call('idp_add', ['corp'], { provider: 'keycloak', organization: 'main', base_url: 'kc.example.test', client_id: 'dirid', secret: 'Corp-secret-1' });
    const logins = Array.from({ length: ROUNDS }, (_, i) => [`pa${i}`, `pb${i}`, `la${i}`, `lb${i}`]).flat();
    for (const login of logins) await a.call('user_add', [login], { first: 'Race', last: login });
  });
  after(async () => {
    await one?.stop();
    await two?.stop();
    stopPostgres();
    testHosts.clear();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('one principal name given to two users at once: one gets it, the other is told who holds it', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const name = `race${i}@EXAMPLE.TEST`;
      const logins: [string, string] = [`pa${i}`, `pb${i}`];
      const alias = { addattr: [`krbPrincipalName=${name}`] };
      const winner = await oneWins([a.call('user_mod', [logins[0]], alias), b.call('user_mod', [logins[1]], alias)], logins, (w) => `principal name "${name}" is already held by user "${w}"`);
      const holders = (await b.call('user_find', [], { all: true })).result.filter((u: { krbprincipalname?: string[] }) => u.krbprincipalname?.includes(name));
      assert.deepEqual(holders.map((u: { uid: string[] }) => u.uid[0]), [winner]);
    }
  });

  it('one IdP subject linked to two users at once: one is linked, the other is told to whom', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const sub = `subject-${i}`;
      const logins: [string, string] = [`la${i}`, `lb${i}`];
      const link = { user_auth_type: ['idp'], idp: 'corp', idp_user_id: sub };
      const winner = await oneWins([a.call('user_mod', [logins[0]], link), b.call('user_mod', [logins[1]], link)], logins, (w) => `IdP user ID "${sub}" of IdP reference "corp" is already linked to user "${w}"`);
      const linked = (await a.call('user_find', [], { idp_user_id: sub })).result;
      assert.deepEqual(linked.map((u: { uid: string[] }) => u.uid[0]), [winner]);
    }
  });
});
