/**
 * Backup and restore of a realm on PostgreSQL (docs/backup.md): without
 * --pg-dump the file holds everything but the database and the command
 * says how to dump it; with --pg-dump it holds pg_dump's dump, restore
 * leaves it in the new data directory and says how to load it, and a server
 * started on the database it was loaded into (pg_restore, as the message
 * says) serves the realm's entries and passwords, and its health check
 * says 503 once the database is gone. The database URL's password never
 * shows in what the commands print.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { backupRealm, pgConnection } from '../../src/server/backup.js';
import { restoreRealm } from '../../src/server/restore.js';
import { dataPaths, readServerConfig, writeServerConfig } from '../../src/server/config.js';
import { startServer } from '../../src/server/start.js';
import { backends } from '../support/backends.js';
import { createDatabase, startPostgres, stopPostgres, type PgCluster } from '../support/postgres.js';
import { ADMIN_PASSWORD, addActiveUser } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { RpcSession } from '../support/rpc-client.js';

const postgresql = backends.some((b) => b.name === 'postgresql');

describe('pgConnection', () => {
  it('takes the password out of the URL for PGPASSWORD', () => {
    assert.deepEqual(pgConnection('postgresql://dirid:p%40ss@db1:5432,db2/realm?sslmode=require'), { dbname: 'postgresql://dirid@db1:5432,db2/realm?sslmode=require', password: 'p@ss' });
    assert.deepEqual(pgConnection('postgres://db/realm?password=s3cret&sslmode=verify-full'), { dbname: 'postgres://db/realm?sslmode=verify-full', password: 's3cret' });
    assert.deepEqual(pgConnection('postgresql://dirid@db/realm'), { dbname: 'postgresql://dirid@db/realm', password: undefined });
  });
});

describe('backup and restore of a realm on PostgreSQL', { skip: !postgresql && 'DIRID_TEST_BACKENDS leaves PostgreSQL out' }, () => {
  let tmp: string;
  let cluster: PgCluster;
  let database: string;
  const realm = () => join(tmp, 'realm');

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-backup-pg-'));
    cluster = await startPostgres();
    // the cluster trusts local connections; the password is there to be kept out of sight
    database = (await createDatabase(cluster, 'backup')).replace('postgres@', 'postgres:Hidden-pw-9@');
    await initRealm({ dataDir: realm(), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost', adminPassword: ADMIN_PASSWORD, database }, () => {});
    const server = await startServer({ dataDir: realm(), listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {} });
    try {
      const admin = new RpcSession(`https://localhost:${server.httpsPort}`, readFileSync(join(realm(), 'ca.crt'), 'utf8'));
      await admin.login('admin', ADMIN_PASSWORD);
      await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'L' });
    } finally {
      await server.stop();
    }
  });
  after(() => {
    stopPostgres();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('without --pg-dump: everything but the database, and how to dump it', async () => {
    const said: string[] = [];
    const { manifest } = await backupRealm({ dataDir: realm(), out: join(tmp, 'files.backup') }, (l) => said.push(l));
    assert.equal(manifest.store, 'postgresql');
    assert.ok(!manifest.files.some((f) => f.name === 'dirid.db' || f.name === 'database.pgdump'));
    assert.ok(manifest.files.some((f) => f.name === 'master.key'));
    const text = said.join('\n');
    assert.match(text, /the realm's entries are in PostgreSQL .* which this file does not hold/);
    assert.match(text, /pg_dump --format=custom --file=dirid\.pgdump 'postgresql:\/\/postgres@127\.0\.0\.1:\d+\/backup_\d+_\d+'/);
    assert.doesNotMatch(text, /Hidden-pw-9/);
  });

  it('with --pg-dump: a dump that pg_restore loads into a new database a restored server serves', async () => {
    const said: string[] = [];
    await backupRealm({ dataDir: realm(), out: join(tmp, 'full.backup'), pgDump: true }, (l) => said.push(l));
    assert.match(said.join('\n'), /store: the PostgreSQL database .* dumped by pg_dump --format=custom/);
    assert.doesNotMatch(said.join('\n'), /Hidden-pw-9/);
    const target = join(tmp, 'restored');
    const restored: string[] = [];
    await restoreRealm({ in: join(tmp, 'full.backup'), dataDir: target }, (l) => restored.push(l));
    assert.match(restored.join('\n'), /load it into an empty database before start: pg_restore --no-owner --dbname=URL .*database\.pgdump/);
    assert.doesNotMatch(restored.join('\n'), /Hidden-pw-9/);
    const fresh = await createDatabase(cluster, 'restored');
    const r = spawnSync('pg_restore', ['--no-owner', `--dbname=${fresh}`, join(target, 'database.pgdump')], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const paths = dataPaths(target);
    writeServerConfig(paths, { ...readServerConfig(paths), database: fresh });
    const server = await startServer({ dataDir: target, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {} });
    try {
      const alice = new RpcSession(`https://localhost:${server.httpsPort}`, readFileSync(join(target, 'ca.crt'), 'utf8'));
      assert.equal((await alice.login('alice', 'Alice-pass-1')).status, 200);
      assert.deepEqual((await alice.call('user_show', ['alice'])).result.uid, ['alice']);
      // the health check reaches the database: with PostgreSQL gone it says so, 503
      // (curl asynchronously: the server runs in this process)
      const health = async () => (await runTool('curl', ['-sS', '--max-time', '10', '-w', '\n%{http_code}', '--cacert', join(target, 'ca.crt'), `https://localhost:${server.httpsPort}/dirid/health`], {})).stdout;
      assert.match(await health(), /"status":"ok".*"store":"ok".*\n200$/s);
      stopPostgres();
      const down = await health();
      assert.match(down, /"status":"unavailable".*"store":"unreachable: .*\n503$/s, down);
    } finally {
      await server.stop();
    }
  });
});
