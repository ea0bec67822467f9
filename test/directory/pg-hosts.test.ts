/**
 * Database URLs naming several hosts (src/directory/pg-hosts.ts): how they
 * are split into one URL per host, what target_session_attrs dirid takes,
 * and how server.conf's check and the password-free display treat them.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connectionTargets } from '../../src/directory/pg-hosts.js';
import { databaseUrl, shownDatabase } from '../../src/server/config.js';

describe('database URLs with several hosts', () => {
  it('splits the host list into one URL per host, keeping the user, database and other parameters', () => {
    const t = connectionTargets('postgresql://dirid:s%40cret@db1.example.com:5433,[::1],db3:6000/realm?sslmode=require&target_session_attrs=read-write&connect_timeout=5');
    assert.equal(t.sessionAttrs, 'read-write');
    assert.deepEqual(t.hosts, [{ host: 'db1.example.com', port: 5433 }, { host: '::1' }, { host: 'db3', port: 6000 }]);
    assert.deepEqual(
      t.hosts.map((h) => t.url(h)),
      [
        'postgresql://dirid:s%40cret@db1.example.com:5433/realm?sslmode=require&connect_timeout=5',
        'postgresql://dirid:s%40cret@[::1]/realm?sslmode=require&connect_timeout=5',
        'postgresql://dirid:s%40cret@db3:6000/realm?sslmode=require&connect_timeout=5',
      ],
    );
  });

  it('leaves a one-host URL as it is, with any session', () => {
    const t = connectionTargets('postgres://u@h:5432/d');
    assert.equal(t.sessionAttrs, 'any');
    assert.deepEqual(t.hosts, [{ host: 'h', port: 5432 }]);
    assert.equal(t.url(t.hosts[0]!), 'postgres://u@h:5432/d');
  });

  it('refuses session kinds dirid cannot write through and malformed host lists, without repeating the URL', () => {
    for (const kind of ['read-only', 'standby', 'prefer-standby', 'bogus']) {
      assert.throws(() => connectionTargets(`postgresql://u:pw1234@a,b/d?target_session_attrs=${kind}`), (e: Error) => e.message.includes(kind) && !e.message.includes('pw1234'));
    }
    assert.throws(() => connectionTargets('postgresql://u:pw1234@a:99999,b/d'), (e: Error) => /port out of range/.test(e.message) && !e.message.includes('pw1234'));
    assert.throws(() => connectionTargets('postgresql://u:pw1234@a,,b/d'), (e: Error) => /empty host/.test(e.message) && !e.message.includes('pw1234'));
  });

  it('server.conf takes a URL with a host list, and shows it without its password', () => {
    const url = 'postgresql://dirid:pw1234@127.0.0.1:5432,127.0.0.1:5433/realm?target_session_attrs=read-write';
    assert.equal(databaseUrl(url, 'database'), url);
    assert.equal(shownDatabase(url), 'postgresql://dirid:***@127.0.0.1:5432,127.0.0.1:5433/realm?target_session_attrs=read-write');
    assert.equal(shownDatabase('postgresql://dirid@h1,h2/realm?password=pw1234'), 'postgresql://dirid@h1,h2/realm?password=***');
    assert.throws(() => databaseUrl('mysql://a,b/x', 'database'), /must be a postgresql:\/\/ URL/);
    assert.throws(() => databaseUrl('postgresql://a,b/x?target_session_attrs=standby', 'database'), /target_session_attrs=standby/);
  });
});
