/**
 * The names a dirid server accepts tickets for (server/acceptor-names.ts):
 * its own HTTP/ and ldap/ at once, those of a server recorded later after
 * one read of the recorded servers, nothing else; an unknown name reads
 * them again at most once per interval, concurrent ones share one read,
 * and a failed read keeps the names known. In-process, with a stand-in for
 * the directory's list of servers and a clock the test moves.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AcceptorNames } from '../../src/server/acceptor-names.js';
import { serverPrincipalNames } from '../../src/server/kerberos-init.js';
import type { ServerNames } from '../../src/server/servers.js';
import { capturedLog } from '../support/log-lines.js';

const REALM = 'EXAMPLE.TEST';
const server = (name: string): ServerNames => ({ server: name, names: serverPrincipalNames(name, REALM, [name]) });

function acceptor(recorded: () => ServerNames[] | Error) {
  let clock = 1_000_000;
  let reads = 0;
  const { lines: log, log: logger } = capturedLog();
  const names = new AcceptorNames({
    initial: [server('one.example.test')],
    load: async () => {
      reads++;
      const r = recorded();
      if (r instanceof Error) throw r;
      return r;
    },
    minRefreshMs: 10_000,
    now: () => clock,
    log: logger,
  });
  return { names, log, reads: () => reads, advance: (ms: number) => (clock += ms) };
}

describe('the names a server accepts tickets for', () => {
  it("accepts its own HTTP/ for the API and ldap/ for LDAP without reading, and neither for the other service", async () => {
    const a = acceptor(() => [server('one.example.test')]);
    assert.equal(await a.names.accepts('http', 'HTTP/one.example.test@EXAMPLE.TEST'), true);
    assert.equal(await a.names.accepts('ldap', 'ldap/one.example.test@EXAMPLE.TEST'), true);
    assert.equal(a.reads(), 0);
    assert.equal(await a.names.accepts('ldap', 'HTTP/one.example.test@EXAMPLE.TEST'), false);
    assert.equal(await a.names.accepts('http', 'ldap/one.example.test@EXAMPLE.TEST'), false);
    assert.equal(await a.names.accepts('http', 'host/one.example.test@EXAMPLE.TEST'), false);
  });

  it('refuses every name outside the set, however much it looks like one of ours', async () => {
    const a = acceptor(() => [server('one.example.test')]);
    for (const name of ['HTTP/web.example.test@EXAMPLE.TEST', 'HTTP/one.example.test@OTHER.TEST', 'HTTP/ONE.example.test@EXAMPLE.TEST', 'HTTP/one.example.test.evil@EXAMPLE.TEST', 'HTTP/one.example.test', 'HTTP/one.example.test/x@EXAMPLE.TEST']) {
      assert.equal(await a.names.accepts('http', name), false, name);
    }
    assert.equal(await a.names.accepts('ldap', 'ldap/other.example.test@EXAMPLE.TEST'), false);
  });

  it('accepts the names of a server recorded after it started, once it reads the recorded servers again', async () => {
    let recorded = [server('one.example.test')];
    const a = acceptor(() => recorded);
    assert.equal(await a.names.accepts('http', 'HTTP/two.example.test@EXAMPLE.TEST'), false);
    assert.equal(a.reads(), 1);
    recorded = [server('one.example.test'), server('two.example.test')];
    a.advance(10_000);
    assert.equal(await a.names.accepts('http', 'HTTP/two.example.test@EXAMPLE.TEST'), true);
    assert.equal(await a.names.accepts('ldap', 'ldap/two.example.test@EXAMPLE.TEST'), true);
    assert.equal(a.reads(), 2, 'the second name was known after the read');
    assert.equal(await a.names.accepts('http', 'HTTP/one.example.test@EXAMPLE.TEST'), true);
  });

  it('reads again at most once per interval, however many unknown names come, and concurrent ones share a read', async () => {
    let recorded = [server('one.example.test')];
    const a = acceptor(() => recorded);
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => a.names.accepts('http', `HTTP/web${i}.example.test@EXAMPLE.TEST`)));
    assert.ok(many.every((x) => !x));
    assert.equal(a.reads(), 1, 'one read for fifty names at once');
    for (let i = 0; i < 20; i++) assert.equal(await a.names.accepts('ldap', `ldap/x${i}.example.test@EXAMPLE.TEST`), false);
    a.advance(9_999);
    recorded = [server('one.example.test'), server('two.example.test')];
    assert.equal(await a.names.accepts('http', 'HTTP/two.example.test@EXAMPLE.TEST'), false, 'not read again within the interval');
    assert.equal(a.reads(), 1);
    a.advance(1);
    assert.equal(await a.names.accepts('http', 'HTTP/two.example.test@EXAMPLE.TEST'), true);
    assert.equal(a.reads(), 2);
  });

  it('a failed read keeps the names it knew, refuses the unknown one and says so in the log', async () => {
    const a = acceptor(() => new Error('connection refused'));
    assert.equal(await a.names.accepts('http', 'HTTP/two.example.test@EXAMPLE.TEST'), false);
    assert.equal(await a.names.accepts('http', 'HTTP/one.example.test@EXAMPLE.TEST'), true);
    assert.equal(a.log.length, 1);
    assert.match(a.log[0]!, /^\S+ server servers_unread level=warn error="connection refused" effect="tickets for servers recorded since the last read are refused"$/);
  });
});
