/**
 * The LDAP service's connection handling, with a raw client sending what
 * the OpenLDAP tools never do: a malformed request answered on its own
 * message, an undecodable stream and an oversized length answered with a
 * Notice of Disconnection (the server keeps serving others), limits on
 * connections, operations at once and idle time, abandon (before the search
 * starts and while it streams), unbind, critical controls, paged cookies
 * that are not ours, StartTLS refused over TLS, and the notice a stopping
 * service sends. A second service on the test realm's store runs with small
 * limits so they can be reached.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Accounts } from '../../src/account/state.js';
import { ControlOid, ExtendedOid, ResultCode } from '../../src/ldap/codes.js';
import { decodePagedResultsValue, pagedResultsControl } from '../../src/ldap/controls.js';
import { encodeMessage, type OutgoingMessage } from '../../src/ldap/protocol.js';
import { simpleBind, type SearchRequest } from '../../src/ldap/protocol-requests.js';
import { LdapService } from '../../src/ldap-server/server.js';
import { buildRegistry } from '../../src/objects/index.js';
import { startTestRealm, type TestRealm } from '../support/realm.js';
import { RawLdap, type Received } from '../support/ldap-client.js';
import { createLogger } from '../../src/log/logger.js';

const BASE = 'dc=example,dc=test';
const ADMIN = `uid=admin,cn=users,cn=accounts,${BASE}`;
const GROUPS = `cn=groups,cn=accounts,${BASE}`;

const searchOf = (baseObject: string, scope: SearchRequest['scope'], filter: SearchRequest['filter'] = { kind: 'present', attr: 'objectClass' }): SearchRequest => ({
  op: 'searchRequest',
  baseObject,
  scope,
  derefAliases: 'neverDerefAliases',
  sizeLimit: 0,
  timeLimit: 0,
  typesOnly: false,
  filter,
  attributes: ['cn'],
});
const rootDse = searchOf('', 'baseObject');
const whoAmI = { op: 'extendedReq', requestName: ExtendedOid.whoAmI } as const;

const encodeMessageOf = (messageId: number, protocolOp: OutgoingMessage['protocolOp']) => encodeMessage({ messageId, protocolOp });
const decodeCookie = (value: Buffer) => decodePagedResultsValue(value).cookie;

function code(m: Received | null): number | undefined {
  return m && 'resultCode' in m.protocolOp ? m.protocolOp.resultCode : undefined;
}

describe('LDAP connections: malformed input, limits, abandon', () => {
  let realm: TestRealm;
  let small: LdapService;
  let port: number;
  let tlsPort: number;
  let ca: string;
  const log: string[] = [];

  before(async () => {
    realm = await startTestRealm();
    ca = realm.ca;
    const dir = realm.server.dir;
    // groups enough for a search that takes several turns of the event loop
    await dir.batch(
      Array.from({ length: 300 }, (_, i) => ({ kind: 'add' as const, dn: `cn=bulk-${i},${GROUPS}`, attrs: { objectClass: ['top', 'dirGroup'], cn: [`bulk-${i}`], description: ['bulk group for the abandon test'] } })),
    );
    const data = join(realm.dataDir, 'realm');
    small = new LdapService({
      dir,
      accounts: new Accounts(dir),
      realm: 'EXAMPLE.TEST',
      registry: buildRegistry(),
      server: { version: '0', apiVersion: '0', realm: 'EXAMPLE.TEST', domain: 'example.test', searchSizeLimit: 100, searchTimeLimit: 2 },
      tls: { key: readFileSync(join(data, 'server.key')), cert: readFileSync(join(data, 'server.crt')) },
      limits: { maxMessageSize: 4096, maxConnections: 3, maxOperations: 2, idleTimeout: 2, pduTimeout: 30, sizeLimit: 250, timeLimit: 10 },
      acceptsTicketFor: async (name) => name === 'ldap/localhost@EXAMPLE.TEST',
      log: createLogger({ write: (l) => log.push(l), component: 'ldap' }),
    });
    ({ ldapPort: port, ldapsPort: tlsPort } = await small.listen(0, 0, '127.0.0.1'));
  });
  after(async () => {
    await small.close();
    await realm.stop();
  });

  /** A connection bound as admin over LDAPS. */
  async function adminConnection(): Promise<RawLdap> {
    const c = await RawLdap.connect(tlsPort, ca);
    c.send({ messageId: 1, protocolOp: simpleBind(ADMIN, realm.adminPassword) });
    assert.equal(code(await c.next()), ResultCode.success);
    return c;
  }

  it('answers a malformed request on its own message and keeps the connection', async () => {
    const c = await RawLdap.connect(port);
    // a SearchRequest whose scope is 7
    const good = encodeMessageOf(5, rootDse);
    const at = good.indexOf(Buffer.from([0x04, 0x00, 0x0a, 0x01, 0x00]));
    assert.ok(at > 0);
    const bad = Buffer.from(good);
    bad[at + 4] = 7;
    c.send(bad);
    const m = await c.next();
    assert.equal(m?.messageId, 5);
    assert.equal(m?.protocolOp.op, 'searchResDone');
    assert.equal(code(m), ResultCode.protocolError);
    c.send({ messageId: 6, protocolOp: whoAmI });
    const w = await c.next();
    assert.equal(w?.messageId, 6);
    assert.equal(code(w), ResultCode.success);
    c.close();
  });

  it('ends an undecodable stream with a Notice of Disconnection, and serves the next client', async () => {
    const c = await RawLdap.connect(port);
    c.send(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
    const n = await c.next();
    assert.equal(n?.messageId, 0);
    assert.equal(n?.protocolOp.op, 'extendedResp');
    assert.equal(n?.protocolOp.op === 'extendedResp' && n.protocolOp.responseName, ExtendedOid.noticeOfDisconnection);
    assert.equal(code(n), ResultCode.protocolError);
    await c.closed;
    const d = await RawLdap.connect(port);
    d.send({ messageId: 1, protocolOp: rootDse });
    const replies = await d.until(1);
    assert.equal(replies.length, 2);
    assert.equal(code(replies[1]!), ResultCode.success);
    d.close();
  });

  it('refuses a message announced over the size limit from its length octets', async () => {
    const c = await RawLdap.connect(port);
    c.send(Buffer.from([0x30, 0x84, 0x00, 0x10, 0x00, 0x00, 0x02, 0x01]));
    const n = await c.next();
    assert.equal(n?.messageId, 0);
    assert.equal(code(n), ResultCode.protocolError);
    assert.match(n && 'diagnosticMessage' in n.protocolOp ? n.protocolOp.diagnosticMessage : '', /over the limit of 4096/);
    await c.closed;
    const d = await RawLdap.connect(port);
    d.send({ messageId: 2, protocolOp: whoAmI });
    assert.equal(code(await d.next()), ResultCode.success);
    d.close();
  });

  it('answers busy past the operations allowed at once on a connection', async () => {
    const c = await RawLdap.connect(port);
    // three requests in one write: the third arrives while two are under way
    c.send(Buffer.concat([1, 2, 3].map((id) => encodeMessageOf(id, rootDse))));
    const got = new Map<number, number | undefined>();
    for (let i = 0; i < 5; i++) {
      const m = await c.next();
      if (m && m.protocolOp.op === 'searchResDone') got.set(m.messageId, code(m));
    }
    assert.deepEqual([...got.entries()].sort(), [
      [1, ResultCode.success],
      [2, ResultCode.success],
      [3, ResultCode.busy],
    ]);
    c.close();
  });

  it('closes connections past the limit with a Notice of Disconnection busy', async () => {
    const open = [await RawLdap.connect(port), await RawLdap.connect(tlsPort, ca), await RawLdap.connect(port)];
    for (const c of open) {
      c.send({ messageId: 1, protocolOp: whoAmI });
      assert.equal(code(await c.next()), ResultCode.success);
    }
    const extra = await RawLdap.connect(port);
    const n = await extra.next();
    assert.equal(n?.messageId, 0);
    assert.equal(code(n), ResultCode.busy);
    await extra.closed;
    open[0]!.close();
    await open[0]!.closed;
    await new Promise((r) => setTimeout(r, 50));
    const again = await RawLdap.connect(port);
    again.send({ messageId: 1, protocolOp: whoAmI });
    assert.equal(code(await again.next()), ResultCode.success);
    for (const c of [...open.slice(1), again]) {
      c.close();
      await c.closed;
    }
  });

  it('closes an idle connection', async () => {
    await new Promise((r) => setTimeout(r, 100));
    const c = await RawLdap.connect(port);
    c.send({ messageId: 1, protocolOp: whoAmI });
    assert.equal(code(await c.next()), ResultCode.success);
    const started = Date.now();
    assert.equal(await c.next(5000), null);
    await c.closed;
    assert.ok(Date.now() - started >= 1500, 'not before the idle time');
  });

  it('abandon stops a search before it starts, and its answer never comes', async () => {
    const c = await adminConnection();
    c.send(Buffer.concat([encodeMessageOf(2, searchOf(GROUPS, 'singleLevel')), encodeMessageOf(3, { op: 'abandonRequest', idToAbandon: 2 }), encodeMessageOf(4, whoAmI)]));
    const first = await c.next();
    assert.equal(first?.messageId, 4, `got ${first?.protocolOp.op} of ${first?.messageId}`);
    assert.equal(await c.next(300), null);
    c.close();
  });

  it('abandon stops a search while it streams entries', async () => {
    const c = await adminConnection();
    c.send({ messageId: 2, protocolOp: searchOf(GROUPS, 'singleLevel') });
    const firstEntry = await c.next();
    assert.equal(firstEntry?.protocolOp.op, 'searchResEntry');
    c.send({ messageId: 3, protocolOp: { op: 'abandonRequest', idToAbandon: 2 } });
    let entries = 1;
    let doneSeen = false;
    for (let m = await c.next(300); m; m = await c.next(300)) {
      if (m.protocolOp.op === 'searchResEntry') entries++;
      if (m.protocolOp.op === 'searchResDone') doneSeen = true;
    }
    assert.equal(doneSeen, false);
    assert.ok(entries < 300, `${entries} entries came`);
    c.send({ messageId: 4, protocolOp: whoAmI });
    assert.equal(code(await c.next()), ResultCode.success);
    c.close();
  });

  it('stops at the server\'s size limit when the client asks for more, paged or not', async () => {
    const c = await adminConnection();
    const bulk = searchOf(GROUPS, 'singleLevel', { kind: 'sub', attr: 'cn', initial: 'bulk-', any: [] });
    c.send({ messageId: 2, protocolOp: { ...bulk, sizeLimit: 1000 } });
    const all = await c.until(2);
    assert.equal(all.length, 251);
    assert.equal(code(all.at(-1)!), ResultCode.sizeLimitExceeded);
    c.send({ messageId: 3, protocolOp: { ...bulk, sizeLimit: 10 } });
    const few = await c.until(3);
    assert.equal(few.length, 11);
    assert.equal(code(few.at(-1)!), ResultCode.sizeLimitExceeded);
    // paged: pages of 200 until the limit, which the last page reports
    let cookie: Buffer = Buffer.alloc(0);
    let entries = 0;
    for (let id = 4; ; id++) {
      c.send({ messageId: id, protocolOp: bulk, controls: [pagedResultsControl({ size: 200, cookie })] });
      const page = await c.until(id);
      entries += page.length - 1;
      const done = page.at(-1)!;
      cookie = decodeCookie(done.controls.find((x) => x.type === ControlOid.pagedResults)!.value!);
      if (cookie.length === 0) {
        assert.equal(code(done), ResultCode.sizeLimitExceeded);
        break;
      }
      assert.equal(code(done), ResultCode.success);
    }
    assert.equal(entries, 250);
    c.close();
  });

  it('closes on unbind', async () => {
    const c = await RawLdap.connect(port);
    c.send({ messageId: 1, protocolOp: { op: 'unbindRequest' } });
    await c.closed;
    assert.equal(c.isClosed, true);
  });

  it('refuses an unknown critical control, and ignores it when not critical', async () => {
    const c = await RawLdap.connect(port);
    const control = { type: '1.2.3.4.5', criticality: true };
    c.send({ messageId: 1, protocolOp: rootDse, controls: [control] });
    assert.equal(code((await c.until(1)).at(-1)!), ResultCode.unavailableCriticalExtension);
    c.send({ messageId: 2, protocolOp: rootDse, controls: [{ ...control, criticality: false }] });
    assert.equal(code((await c.until(2)).at(-1)!), ResultCode.success);
    c.close();
  });

  it('refuses a paged results cookie it did not give out, and one of another search', async () => {
    const c = await adminConnection();
    const paged = (id: number, s: SearchRequest, cookie: Buffer) => c.send({ messageId: id, protocolOp: s, controls: [pagedResultsControl({ size: 10, cookie })] });
    paged(2, searchOf(GROUPS, 'singleLevel'), Buffer.from('not-a-cookie'));
    assert.equal(code((await c.until(2)).at(-1)!), ResultCode.unwillingToPerform);
    paged(3, searchOf(GROUPS, 'singleLevel'), Buffer.alloc(0));
    const page = await c.until(3);
    assert.equal(page.length, 11);
    const done = page.at(-1)!;
    const ctl = done.controls.find((x) => x.type === ControlOid.pagedResults);
    assert.ok(ctl?.value);
    const cookie = decodeCookie(ctl.value);
    assert.ok(cookie.length > 0);
    paged(4, searchOf(BASE, 'wholeSubtree'), cookie);
    assert.equal(code((await c.until(4)).at(-1)!), ResultCode.unwillingToPerform);
    c.close();
  });

  it('refuses StartTLS when TLS is already in force', async () => {
    const c = await RawLdap.connect(tlsPort, ca);
    c.send({ messageId: 1, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.startTls } });
    const m = await c.next();
    assert.equal(code(m), ResultCode.operationsError);
    c.send({ messageId: 2, protocolOp: whoAmI });
    assert.equal(code(await c.next()), ResultCode.success);
    c.close();
  });

  it('refuses the write operations with a message pointing to the API', async () => {
    const c = await adminConnection();
    c.send({ messageId: 2, protocolOp: { op: 'delRequest', entry: `cn=bulk-1,${GROUPS}` } });
    const m = await c.next();
    assert.equal(m?.protocolOp.op, 'delResponse');
    assert.equal(code(m), ResultCode.unwillingToPerform);
    assert.match(m && 'diagnosticMessage' in m.protocolOp ? m.protocolOp.diagnosticMessage : '', /use the dirid API/);
    assert.ok(await realm.server.dir.get(`cn=bulk-1,${GROUPS}`));
    c.close();
  });

  it('tells its clients when it stops', async () => {
    const c = await RawLdap.connect(port);
    const closing = small.close();
    const n = await c.next();
    assert.equal(n?.messageId, 0);
    assert.equal(code(n), ResultCode.unavailable);
    await closing;
    await c.closed;
  });
});
