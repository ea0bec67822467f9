/**
 * A dirid server accepts tickets for its own names only (docs/access.md,
 * "Tickets a dirid server accepts"). The realm holds two other services,
 * HTTP/web.example.test (an intranet web application) and
 * ldap/other.example.test. An administrator's MIT ticket cache reaches the
 * web application with real `curl --negotiate`; the Authorization header it
 * sent there, replayed to dirid's API, is refused (401, no session), and
 * so is a ticket naming admin forged with the web application's key; a real
 * `ldapwhoami -Y GSSAPI` that reaches dirid's LDAP port under the other
 * LDAP service's name is refused (invalidCredentials). Each refusal is
 * logged naming the ticket's server. The same tickets made for dirid's own
 * names (HTTP/localhost, ldap/localhost) are accepted. The host name
 * other.example.test resolves to 127.0.0.1 for ldapwhoami through a
 * private /etc/hosts (a mount namespace of its own), never the machine's.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startAdminRealm, type TestRealm } from '../support/realm.js';
import { runTool } from '../support/mit-tools.js';
import { ldapTools, type LdapTools } from '../support/ldap-tools.js';
import { httpsPost, type RpcSession } from '../support/rpc-client.js';
import { makeTicket } from '../../src/kdc/tickets.js';
import { makeApReq } from '../../src/kerberos/ap-exchange.js';
import { encodeGssChecksum, encodeKrb5Token, GssFlag, Oid, TokId } from '../../src/kerberos/asn1/gss.js';
import { encodeNegTokenInit } from '../../src/kerberos/asn1/spnego.js';
import { profile } from '../../src/kerberos/crypto/index.js';
import { flagBit, NameType, TicketFlag } from '../../src/kerberos/iana.js';

const REALM = 'EXAMPLE.TEST';
const ADMIN_DN = 'uid=admin,cn=users,cn=accounts,dc=example,dc=test';

/** A web application that asks for Negotiate and keeps every Authorization header its clients send. */
async function negotiateSite(): Promise<{ server: Server; port: number; headers: string[] }> {
  const headers: string[] = [];
  const server = createServer((req, res) => {
    const auth = req.headers.authorization;
    if (!auth) {
      res.writeHead(401, { 'WWW-Authenticate': 'Negotiate' }).end();
      return;
    }
    headers.push(auth);
    res.writeHead(200, { 'Content-Type': 'text/plain' }).end('welcome\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, headers };
}

describe("tickets for another service of the realm are refused by dirid's API and LDAP", () => {
  let realm: TestRealm;
  let admin: RpcSession;
  let tools: LdapTools;
  let env: NodeJS.ProcessEnv;
  let site: Awaited<ReturnType<typeof negotiateSite>>;
  const body = '{"method":"ping","params":[[],{}],"id":1}';
  const post = (path: string, authorization: string) =>
    httpsPost(`${realm.url}${path}`, realm.ca, body, { 'Content-Type': 'application/json', Referer: `${realm.url}/dirid/`, Authorization: authorization });
  const refusalLogged = (service: string) => realm.log.some((l) => l.includes(`login method=negotiate outcome=denied reason="the ticket is for ${service}@${REALM}, a service this server does not run"`));

  before(async () => {
    ({ realm, admin } = await startAdminRealm());
    await admin.call('service_add', ['HTTP/web.example.test'], { force: true });
    await admin.call('service_add', ['ldap/other.example.test'], { force: true });
    tools = ldapTools(realm);
    env = { KRB5_CONFIG: join(realm.dataDir, 'realm', 'krb5.conf'), KRB5CCNAME: `FILE:${join(realm.dataDir, 'admin.cc')}` };
    const k = await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`);
    assert.equal(k.code, 0, k.stderr);
    site = await negotiateSite();
    writeFileSync(join(realm.dataDir, 'hosts'), '127.0.0.1 localhost other.example.test\n');
  });
  after(async () => {
    site?.server.close();
    await realm?.stop();
  });

  it("a Negotiate header the administrator's curl sent to another web application, replayed to the API, is refused", async () => {
    const visit = await runTool('curl', ['-s', '-S', '-o', '/dev/null', '-w', '%{http_code}', '--negotiate', '-u', ':', '--resolve', `web.example.test:${site.port}:127.0.0.1`, `http://web.example.test:${site.port}/`], env);
    assert.equal(visit.code, 0, visit.stderr);
    assert.equal(visit.stdout, '200');
    assert.equal(site.headers.length, 1, 'the web application got a Negotiate header');
    const captured = site.headers[0]!;
    assert.match(captured, /^Negotiate [A-Za-z0-9+/=]+$/);
    const klist = await runTool('klist', [], env);
    assert.match(klist.stdout, /HTTP\/web\.example\.test@EXAMPLE\.TEST/, 'curl got a ticket for the web application');

    const replayed = await post('/dirid/json', captured);
    assert.equal(replayed.status, 401, replayed.body);
    assert.equal(replayed.headers['set-cookie'], undefined, 'no session');
    assert.match(replayed.body, /"message":"Insufficient access: not authenticated"/);
    assert.equal((await post('/dirid/session/login_kerberos', captured)).status, 401);
    assert.ok(refusalLogged('HTTP/web.example.test'), realm.log.filter((l) => l.includes('method=negotiate')).join('\n'));

    // the same ticket cache reaches the API under the API's own name
    const own = await runTool('curl', ['-s', '-S', '--negotiate', '-u', ':', '--cacert', join(realm.dataDir, 'realm', 'ca.crt'), '-H', `Referer: ${realm.url}/dirid/`, '-H', 'Content-Type: application/json', '--data-binary', body, `${realm.url}/dirid/json`], env);
    assert.equal(own.code, 0, own.stderr);
    assert.match(own.stdout, /"principal":"admin@EXAMPLE.TEST"/);
  });

  it("a ticket naming admin forged with another HTTP/ service's key is refused; one sealed with the API's key is accepted", async () => {
    const forged = async (host: string) => {
      const server = (await realm.server.kdc.db.find(`HTTP/${host}@${REALM}`))!;
      const now = new Date(Math.floor(Date.now() / 1000) * 1000);
      const sessionKey = profile(18).randomKey();
      const client = { nameType: NameType.PRINCIPAL, nameString: ['admin'] };
      const ticket = makeTicket({
        crealm: REALM,
        cname: client,
        server,
        srealm: REALM,
        sname: { nameType: NameType.SRV_HST, nameString: ['HTTP', host] },
        flags: flagBit(TicketFlag.PRE_AUTHENT),
        authtime: now,
        endtime: new Date(now.getTime() + 600_000),
        sessionKey: { etype: 18, value: sessionKey.value },
      });
      const { apReq } = makeApReq({ ticket, sessionKey, client, crealm: REALM, checksum: { type: 0x8003, value: encodeGssChecksum({ bindings: Buffer.alloc(16), flags: GssFlag.MUTUAL }) }, mutual: true });
      return `Negotiate ${encodeNegTokenInit({ mechTypes: [Oid.KRB5], mechToken: encodeKrb5Token(TokId.AP_REQ, apReq) }).toString('base64')}`;
    };
    const foreign = await post('/dirid/json', await forged('web.example.test'));
    assert.equal(foreign.status, 401, foreign.body);
    assert.equal(foreign.headers['set-cookie'], undefined);
    const own = await post('/dirid/json', await forged('localhost'));
    assert.equal(own.status, 200, own.body);
    assert.match(own.body, /"principal":"admin@EXAMPLE.TEST"/);
  });

  it('an LDAP GSSAPI bind with a ticket for another ldap/ service is refused; under the service\'s own name it binds', async () => {
    /** ldapwhoami -Y GSSAPI naming the server as `host` (-N: as written, not by reverse DNS), in a namespace with the test's /etc/hosts */
    const whoami = (host: string) =>
      tools.run('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', join(realm.dataDir, 'hosts'), 'ldapwhoami', '-Q', '-N', '-Y', 'GSSAPI', '-H', `ldap://${host}:${realm.server.ldapPort}`], { env });
    const foreign = await whoami('other.example.test');
    assert.notEqual(foreign.code, 0, foreign.stdout);
    assert.match(foreign.stderr, /Invalid credentials \(49\)/);
    assert.doesNotMatch(foreign.stdout, /dn:/);
    const klist = await runTool('klist', [], env);
    assert.match(klist.stdout, /ldap\/other\.example\.test@EXAMPLE\.TEST/, 'ldapwhoami got a ticket for the other LDAP service');
    assert.ok(
      realm.log.some((l) => / ldap bind conn=\d+ op=\d+ method=sasl\/GSSAPI principal=- outcome=invalidCredentials\(49\) .*reason="GSSAPI: the ticket is for ldap\/other\.example\.test@EXAMPLE\.TEST, a service this server does not run"/.test(l)),
      realm.log.filter((l) => l.includes(' ldap bind ')).join('\n'),
    );

    const own = await whoami('localhost');
    assert.equal(own.code, 0, own.stderr);
    assert.equal(own.stdout.trim(), `dn:${ADMIN_DN}`);
  });
});
