/**
 * A database failover under a running dirid server (docs/postgresql.md,
 * "Several hosts and failover"): a PostgreSQL primary with a hot standby
 * under synchronous streaming replication, the server's database URL
 * naming both with target_session_attrs=read-write. Writes go through the
 * API while the primary is stopped at once (pg_ctl stop -m immediate) and
 * the standby promoted; the server must find the new primary by itself and
 * keep serving: reads and new writes succeed within a bounded time, every
 * write acknowledged before or during the failover is there, and MIT kinit
 * gets tickets from its KDC. A URL naming the standby first reaches the
 * primary all the same. The host name ipa.failover.test resolves to
 * 127.0.0.1 for the tools through a private /etc/hosts (a mount namespace
 * per command), never the machine's own.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dataPaths } from '../../src/server/config.js';
import { initRealm } from '../../src/server/init.js';
import { openRealmStore } from '../../src/server/store.js';
import { startServer, type RunningServer } from '../../src/server/start.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';
import { createDatabase, startReplicatedPostgres, stopPostgres, type ReplicatedPostgres } from '../support/postgres.js';
import { RpcSession, testHosts } from '../support/rpc-client.js';

const PASSWORD = 'Admin-pass-1';
const HOST = 'ipa.failover.test';
/** how long the server may take to serve again after the standby is promoted */
const BOUND_MS = 20_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL failover under a running server', () => {
  let tmp: string;
  let pg: ReplicatedPostgres;
  let server: RunningServer;
  let session: RpcSession;
  let dbName: string;
  const logs: string[] = [];
  const data = () => join(tmp, 'data');
  const hosts = () => join(tmp, 'hosts');
  const tool = (cmd: string, args: string[], input?: string): Promise<ToolResult> =>
    runTool('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', hosts(), cmd, ...args], { KRB5_CONFIG: join(data(), 'krb5.conf') }, input);
  /** the first login of a user the API added: the KDC checks the password the administrator set (its keys are there), which has expired, and the user chooses another through the password service */
  const kinit = (user: string, password: string) => tool('kinit', ['-c', `FILE:${join(tmp, `${user}.cc`)}`, user], `${password}\n${password}-mine\n${password}-mine\n`);
  /** adds a user with a password; true when the server acknowledged it */
  /** what the API answered to writes during the outage */
  const refusals = new Set<string>();
  const addUser = async (name: string): Promise<boolean> => {
    try {
      await session.call('user_add', [name], { first: 'Fail', last: 'Over', password: `${name}-Pass-1` });
      return true;
    } catch (e) {
      refusals.add((e as Error).message);
      return false;
    }
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-failover-'));
    writeFileSync(hosts(), `127.0.0.1 localhost ${HOST}\n`);
    testHosts.set(HOST, '127.0.0.1');
    pg = await startReplicatedPostgres({ synchronous: true });
    const single = await createDatabase(pg.primary, 'realm');
    dbName = new URL(single).pathname.slice(1);
    const database = `postgresql://postgres@127.0.0.1:${pg.primary.port},127.0.0.1:${pg.standby.port}/${dbName}?target_session_attrs=read-write`;
    await initRealm({ dataDir: data(), realm: 'FAILOVER.TEST', domain: 'failover.test', hostname: HOST, adminPassword: PASSWORD, database });
    server = await startServer({ dataDir: data(), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: (l) => logs.push(l) });
    session = new RpcSession(`https://${HOST}:${server.httpsPort}`, readFileSync(join(data(), 'ca.crt'), 'utf8'));
    assert.equal((await session.login('admin', PASSWORD)).status, 200);
  });
  after(async () => {
    await server?.stop();
    stopPostgres();
    testHosts.clear();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('skips a standby named first in the URL: reads and writes go to the primary', async () => {
    const database = `postgresql://postgres@127.0.0.1:${pg.standby.port},127.0.0.1:${pg.primary.port}/${dbName}?target_session_attrs=read-write`;
    const dir = await openRealmStore(dataPaths(data()), { baseDn: server.config.baseDn, database });
    try {
      const admin = `uid=admin,cn=users,cn=accounts,${server.config.baseDn}`;
      await dir.modify(admin, [{ op: 'replace', attr: 'description', values: ['written through a URL naming the standby first'] }]);
      assert.deepEqual((await dir.get(admin, ['description']))?.attrs.description, ['written through a URL naming the standby first']);
    } finally {
      await dir.close();
    }
  });

  it('keeps serving after the primary dies and the standby is promoted, with every acknowledged write kept', async () => {
    // before the failover: users, a group and its members in one call
    for (const u of ['before1', 'before2', 'before3']) assert.ok(await addUser(u), `${u} added`);
    await session.call('group_add', ['crew'], {});
    await session.call('group_add_member', ['crew'], { users: ['before1', 'before2', 'before3'] });
    const k0 = await kinit('before1', 'before1-Pass-1');
    assert.equal(k0.code, 0, k0.stderr);

    // a writer adding users without pause, across the failover
    const acknowledged: string[] = [];
    const failed: string[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        const name = `during${i}`;
        if (await addUser(name)) acknowledged.push(name);
        else {
          failed.push(name);
          await sleep(50);
        }
      }
    })();
    while (acknowledged.length < 5) await sleep(20);

    pg.stopPrimary();
    const stopped = Date.now();
    const ackedAtStop = acknowledged.length;
    // the outage lasts a moment before anyone promotes the standby
    await sleep(1000);
    pg.promoteStandby();
    const promoted = Date.now();

    // reads and writes through the server, tried again until they work
    let readAt: number | undefined;
    let writeAt: number | undefined;
    while ((readAt === undefined || writeAt === undefined) && Date.now() - promoted < BOUND_MS) {
      if (readAt === undefined) {
        try {
          const r = await session.call('user_show', ['before2']);
          if (r.result.uid?.[0] === 'before2') readAt = Date.now();
        } catch {
          // not yet
        }
      }
      if (writeAt === undefined && acknowledged.length > ackedAtStop) writeAt = Date.now();
      if (readAt === undefined || writeAt === undefined) await sleep(100);
    }
    const ackedNow = acknowledged.length;
    while (acknowledged.length < ackedNow + 5 && Date.now() - promoted < BOUND_MS + 5000) await sleep(20);
    writing = false;
    await writer;
    assert.ok(readAt !== undefined, `a read works within ${BOUND_MS} ms of the promotion; server log:\n${logs.join('\n')}`);
    assert.ok(writeAt !== undefined, `a write works within ${BOUND_MS} ms of the promotion; server log:\n${logs.join('\n')}`);
    console.log(
      `# failover: primary stopped, standby promoted after ${promoted - stopped} ms; reads again ${readAt - promoted} ms and writes ${writeAt - promoted} ms after the promotion; ` +
        `${acknowledged.length} writes acknowledged (${ackedAtStop} before the stop), ${failed.length} refused meanwhile (${[...refusals].join(' | ')})`,
    );

    // the outage is answered as such, never as an internal error
    assert.deepEqual([...refusals], failed.length ? ['the directory database cannot be reached: try again shortly'] : []);

    // every acknowledged write is there, whole
    for (const u of ['before1', 'before2', 'before3', ...acknowledged]) {
      const r = (await session.call('user_show', [u], { all: true })).result;
      assert.deepEqual(r.uid, [u]);
      assert.ok(r.uidnumber?.length === 1, `${u} has its uidNumber`);
      assert.ok(r.krbprincipalname?.length === 1, `${u} has its principal`);
    }
    const crew = (await session.call('group_show', ['crew'])).result;
    assert.deepEqual([...crew.member_user].sort(), ['before1', 'before2', 'before3']);
    // the writes refused meanwhile may or may not have landed (a connection lost during COMMIT), but never half
    for (const u of failed) {
      const r = await session.call('user_show', [u], { all: true }).then(
        (x) => x.result,
        () => null,
      );
      if (r) assert.ok(r.uidnumber?.length === 1 && r.krbprincipalname?.length === 1, `${u} is whole`);
    }

    // the KDC reads the new primary: a user from before the failover and one from after
    const k1 = await kinit('before3', 'before3-Pass-1');
    assert.equal(k1.code, 0, k1.stderr);
    const last = acknowledged.at(-1)!;
    const k2 = await kinit(last, `${last}-Pass-1`);
    assert.equal(k2.code, 0, k2.stderr);
    // and a new write after it all
    assert.ok(await addUser('after1'));
    const k3 = await kinit('after1', 'after1-Pass-1');
    assert.equal(k3.code, 0, k3.stderr);
  });
});
