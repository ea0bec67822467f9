/**
 * The one logger (src/log/logger.ts, docs/logging.md): the text line's
 * shape, JSON lines, child loggers, levels, values that cannot forge a line
 * or a field, and secrets that never reach a line.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLogger, isSecretField, REDACTED, type LogFormat } from '../../src/log/logger.js';
import { lineSink } from '../../src/log/sink.js';
import { parseTextLine } from '../support/log-lines.js';

const T = Date.UTC(2026, 10, 29, 1, 27, 2, 123);
const TIME = '2026-11-29T01:27:02.123Z';

function capture(format: LogFormat = 'text') {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l), format, now: () => T });
  return { lines, log };
}

describe('logger: text lines', () => {
  it('writes TIME COMPONENT EVENT and name=value fields, values bare when they can be', () => {
    const { lines, log } = capture();
    log.child({ component: 'kdc' }).info('as_req', { transport: 'udp', client: 'alice@EXAMPLE.TEST', outcome: 'ISSUE', etype: 18, fast: true, duration_ms: 0.53, skipped: undefined });
    assert.deepEqual(lines, [`${TIME} kdc as_req transport=udp client=alice@EXAMPLE.TEST outcome=ISSUE etype=18 fast=true duration_ms=0.53`]);
  });

  it('quotes a value with a space, a quote, = or \\ as a JSON string; null and [] are -; lists join with commas; objects become dotted names', () => {
    const { lines, log } = capture();
    log.info('e', { reason: 'the ticket is for "x"', dn: 'uid=bob,cn=users', path: 'a\\b', none: null, empty: [], list: ['a', 'b'], spaced: ['a b', 'c'], set: { member: ['uid=x,dc=t'], nsAccountLock: ['TRUE'] } });
    assert.equal(
      lines[0],
      `${TIME} server e reason="the ticket is for \\"x\\"" dn="uid=bob,cn=users" path="a\\\\b" none=- empty=- list=a,b spaced="a b,c" set.member="uid=x,dc=t" set.nsAccountLock=TRUE`,
    );
    assert.deepEqual(parseTextLine(lines[0]!).fields, { reason: 'the ticket is for "x"', dn: 'uid=bob,cn=users', path: 'a\\b', none: '-', empty: '-', list: 'a,b', spaced: 'a b,c', 'set.member': 'uid=x,dc=t', 'set.nsAccountLock': 'TRUE' });
  });

  it('a value a client chose cannot forge a second line or another field', () => {
    const { lines, log } = capture();
    const forged = `bob outcome=ok\n${TIME} rpc login user=admin outcome=ok\r\u2028\u2029\u0085 x="y" \u202e`;
    log.child({ component: 'rpc' }).info('login', { user: forged, outcome: 'denied' });
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!, /[\n\r\u2028\u2029\u0085\u202e]/);
    const parsed = parseTextLine(lines[0]!);
    assert.deepEqual(parsed.fields, { user: forged, outcome: 'denied' });
    assert.equal(parsed.event, 'login');
  });

  it('a field name is letters, digits, _ . - only', () => {
    const { lines, log } = capture();
    log.info('e', { 'a b=c\nd': 'v' });
    assert.equal(lines[0], `${TIME} server e a_b_c_d=v`);
  });

  it('a child carries its fields after the event, before the event\'s own; a grandchild adds to them', () => {
    const { lines, log } = capture();
    const conn = log.child({ component: 'ldap', conn: 7 });
    conn.info('open', { from: '127.0.0.1:4000' });
    conn.child({ op: 2 }).info('search', { outcome: 'success(0)' });
    assert.deepEqual(lines, [`${TIME} ldap open conn=7 from=127.0.0.1:4000`, `${TIME} ldap search conn=7 op=2 outcome=success(0)`]);
  });

  it('warn and error lines say their level; info lines do not', () => {
    const { lines, log } = capture();
    log.warn('w', { a: 1 });
    log.error('e');
    assert.deepEqual(lines, [`${TIME} server w level=warn a=1`, `${TIME} server e level=error`]);
  });

  it('the time follows the clock', () => {
    let t = T;
    const lines: string[] = [];
    const log = createLogger({ write: (l) => lines.push(l), now: () => t });
    log.info('a');
    t += 1;
    log.info('b');
    assert.deepEqual(lines, [`${TIME} server a`, `2026-11-29T01:27:02.124Z server b`]);
  });
});

describe('logger: JSON lines', () => {
  it('writes one JSON object per line: time, level, component, event, then the fields as they are', () => {
    const { lines, log } = capture('json');
    const kdc = log.child({ component: 'kdc', listener: 'KDC' });
    kdc.info('as_req', { client: 'alice@EXAMPLE.TEST', etype: 18, list: ['a', 'b'], none: null, set: { member: ['x'] }, skipped: undefined });
    kdc.error('internal', { error: 'boom' });
    assert.equal(lines.length, 2);
    assert.deepEqual(Object.keys(JSON.parse(lines[0]!) as object), ['time', 'level', 'component', 'event', 'listener', 'client', 'etype', 'list', 'none', 'set']);
    assert.deepEqual(JSON.parse(lines[0]!), { time: TIME, level: 'info', component: 'kdc', event: 'as_req', listener: 'KDC', client: 'alice@EXAMPLE.TEST', etype: 18, list: ['a', 'b'], none: null, set: { member: ['x'] } });
    assert.deepEqual(JSON.parse(lines[1]!), { time: TIME, level: 'error', component: 'kdc', event: 'internal', listener: 'KDC', error: 'boom' });
  });

  it('a value a client chose stays one string of one line', () => {
    const { lines, log } = capture('json');
    const forged = 'bob","outcome":"ok"}\n{"event":"login\u2028\u202e';
    log.info('login', { user: forged });
    assert.equal(lines.length, 1);
    assert.doesNotMatch(lines[0]!, /[\n\u2028\u202e]/);
    assert.equal((JSON.parse(lines[0]!) as { user: string }).user, forged);
  });

  it('a format changed at a reload applies to the root and every child made before, from the next line on', () => {
    const lines: string[] = [];
    const root = createLogger({ write: (l) => lines.push(l), now: () => Date.parse(TIME) });
    const conn = root.child({ component: 'ldap', conn: 7 });
    conn.info('bind', { dn: 'uid=a,dc=x' });
    root.setFormat('json');
    assert.equal(root.format, 'json');
    conn.info('search', { base: 'dc=x' });
    root.info('reload');
    root.setFormat('text');
    conn.info('unbind');
    assert.deepEqual(lines, [
      `${TIME} ldap bind conn=7 dn="uid=a,dc=x"`,
      `{"time":"${TIME}","level":"info","component":"ldap","event":"search","conn":7,"base":"dc=x"}`,
      `{"time":"${TIME}","level":"info","component":"server","event":"reload"}`,
      `${TIME} ldap unbind conn=7`,
    ]);
  });
});

describe('logger: secrets', () => {
  const SECRET = 'Hunter2-not-for-logs';
  for (const format of ['text', 'json'] as const) {
    it(`a field named as a secret is written as ${REDACTED}, nested too (${format})`, () => {
      const { lines, log } = capture(format);
      log.child({ cookie: SECRET }).info('write', {
        password: SECRET,
        userPassword: [SECRET],
        dirIdpClientSecret: SECRET,
        krbPrincipalKey: SECRET,
        token: SECRET,
        Authorization: `Negotiate ${SECRET}`,
        set: { userPassword: [SECRET], dirIdpClientSecret: [SECRET], nsAccountLock: ['TRUE'] },
        attrs: ['userPassword', 'dirIdpClientSecret'],
      });
      assert.equal(lines.length, 1);
      assert.ok(!lines[0]!.includes(SECRET), lines[0]);
      // the names stay: what was written is known, not the value
      assert.match(lines[0]!, /userPassword/);
      assert.match(lines[0]!, /dirIdpClientSecret/);
      assert.match(lines[0]!, /nsAccountLock/);
    });
  }

  it('names that say secret, in any letter case', () => {
    for (const n of ['password', 'userPassword', 'new_password', 'passwd', 'dirIdpClientSecret', 'client_secret', 'krbPrincipalKey', 'dirIdpClientKey', 'access_token', 'Cookie', 'credentials', 'authorization', 'dirEnrolmentPassword']) assert.ok(isSecretField(n), n);
    for (const n of ['principal', 'user', 'dn', 'attrs', 'command', 'outcome', 'reason', 'nsAccountLock', 'member', 'client', 'etype', 'preauth']) assert.ok(!isSecretField(n), n);
  });
});

describe('line sink', () => {
  it('gathers the lines of one turn of the event loop into one write', async () => {
    const writes: string[] = [];
    const sink = lineSink((t) => writes.push(t));
    sink.write('a');
    sink.write('b');
    assert.deepEqual(writes, []);
    await new Promise((r) => setImmediate(r));
    sink.write('c');
    sink.flush();
    assert.deepEqual(writes, ['a\nb\n', 'c\n']);
  });
});
