/**
 * The `dirid` client driven as a user would: a real server on ephemeral
 * ports, tickets from MIT kinit and from dirid kinit, every IdP/link
 * scenario of the specification's §3, output conventions and exit codes,
 * the secret prompt on a pseudo-terminal, the schema cache, -v, trust
 * failures, and failover to a server found through DNS SRV (dnsmasq).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { cliClient, startTestRealm, type TestRealm } from '../support/realm.js';
import { runTool, type ToolResult } from '../support/mit-tools.js';
import { createCa } from '../../src/server/pki.js';
import { freeUdpPort } from '../support/mit-realm.js';
import { startSrvDns } from '../support/srv-dns.js';

const DIRID = new URL('../../bin/dirid.js', import.meta.url).pathname;

describe('dirid command-line client', () => {
  let realm: TestRealm;
  let env: NodeJS.ProcessEnv;
  let conf: string;
  const dirid = (args: string[], input?: string, extra: NodeJS.ProcessEnv = {}): Promise<ToolResult> => runTool(process.execPath, [DIRID, '-c', conf, ...args], { ...env, ...extra }, input);

  before(async () => {
    realm = await startTestRealm();
    ({ conf, env } = cliClient(realm));
  });
  after(async () => realm.stop());

  it('without a ticket: "Insufficient access: not authenticated", exit 1', async () => {
    const r = await dirid(['ping']);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, 'dirid: ERROR: Insufficient access: not authenticated\n');
  });

  it('ping with a ticket from MIT kinit, and -v progress lines', async () => {
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const r = await dirid(['-v', 'ping']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^-+\ndirid server version \d+\.\d+\.\d+\. API version \d+\.\d+\.\n-+\n$/);
    assert.match(r.stderr, new RegExp(`dirid: INFO: trying ${realm.url}/dirid/xml`));
    assert.match(r.stderr, new RegExp(`dirid: INFO: Forwarding 'schema' to server '${realm.url}/dirid/xml'`));
    assert.match(r.stderr, /dirid: INFO: Forwarding 'ping' to server/);
  });

  it('keeps the schema in the per-user cache and refreshes it when the cache is deleted', async () => {
    const again = await dirid(['-v', 'ping']);
    assert.doesNotMatch(again.stderr, /Forwarding 'schema'/, 'the cached schema is reused');
    rmSync(join(realm.dataDir, 'cache', 'dirid', 'schema'), { recursive: true, force: true });
    const fresh = await dirid(['-v', 'ping']);
    assert.match(fresh.stderr, /Forwarding 'schema'/);
    assert.ok(existsSync(join(realm.dataDir, 'cache', 'dirid', 'schema')));
  });

  it('idp-add with each template, show, find, mod, rename, delete', async () => {
    const add = await dirid(['idp-add', 'keycloak', '--provider=keycloak', '--organization', 'main', '--base-url', 'kc.example.test', '--client-id', 'dirid', '--secret'], 'kc-secret-1\n');
    assert.equal(add.code, 0, add.stderr);
    assert.match(add.stdout, /^-+\nAdded IdP reference "keycloak"\n-+\n  IdP reference name: keycloak\n  Provider: keycloak\n  Client identifier: dirid\n  Authorization URI: https:\/\/kc\.example\.test\/realms\/main\/protocol\/openid-connect\/auth\n/);
    assert.doesNotMatch(add.stdout, /kc-secret-1/);
    for (const [name, extra] of [
      ['gh', ['--provider', 'github']],
      ['goog', ['--provider', 'google']],
      ['entra', ['--provider', 'microsoft', '--organization', 'contoso.example']],
      ['okta', ['--provider', 'okta', '--organization', 'default', '--base-url', 'dev.okta.example']],
      ['plain', ['--auth-uri', 'https://idp.example/auth', '--token-uri', 'https://idp.example/token', '--scope', 'openid email']],
    ] as const) {
      const r = await dirid(['idp-add', name, ...extra, '--client-id', 'c', '--secret=s3'], '');
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
    }
    const bad = await dirid(['idp-add', 'x', '--provider', 'facebook', '--client-id', 'c', '--secret=s']);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr, "dirid: ERROR: invalid 'provider': must be one of 'keycloak', 'github', 'google', 'microsoft', 'okta', 'oidc'\n");
    const show = await dirid(['idp-show', 'keycloak', '--all', '--raw']);
    assert.match(show.stdout, /^  dn: cn=keycloak,cn=idp,dc=example,dc=test\n/);
    assert.match(show.stdout, /^  diridpclientid: dirid$/m);
    assert.doesNotMatch(show.stdout, /secret/i);
    const rights = await dirid(['idp-show', 'keycloak', '--all', '--rights']);
    assert.match(rights.stdout, /attributelevelrights: .*diridpclientid: rscwo/);
    const find = await dirid(['idp-find', '--sizelimit=2']);
    assert.match(find.stdout, /^-+\n2 IdP references matched\n-+\n/);
    assert.match(find.stdout, /Number of entries returned 2\n-+\n/);
    const none = await dirid(['idp-find', 'no-such']);
    assert.equal(none.code, 1);
    assert.match(none.stdout, /0 IdP references matched/);
    const mod = await dirid(['idp-mod', 'plain', '--scope', 'openid']);
    assert.match(mod.stdout, /Modified IdP reference "plain"/);
    const ren = await dirid(['idp-mod', 'plain', '--rename', 'renamed']);
    assert.match(ren.stdout, /Modified IdP reference "renamed"/);
    const missing = await dirid(['idp-show', 'plain']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, 'dirid: ERROR: plain: IdP reference not found\n');
    const del = await dirid(['idp-del', 'renamed', 'gh']);
    assert.match(del.stdout, /^-+\nDeleted IdP reference "renamed,gh"\n-+\n$/);
  });

  it('links, refuses a second link and deletion while linked, unlinks', async () => {
    assert.equal((await dirid(['user-add', 'alice', '--first', 'Alice', '--last', 'Liddell'])).code, 0);
    const link = await dirid(['user-mod', 'alice', '--user-auth-type=idp', '--idp=keycloak', '--idp-user-id=alice@example.test']);
    assert.equal(link.code, 0, link.stderr);
    assert.match(link.stdout, /External IdP configuration: keycloak/);
    const second = await dirid(['user-mod', 'alice', '--idp=goog', '--idp-user-id=alice@example.test']);
    assert.equal(second.stderr, 'dirid: ERROR: dirIdpConfigLink: Only one value allowed.\n');
    const del = await dirid(['idp-del', 'keycloak']);
    assert.equal(del.stderr, 'dirid: ERROR: This entry is being referenced by other entries: IdP reference "keycloak" is still linked to user alice; change that with user-mod first\n');
    const all = await dirid(['user-show', 'alice', '--all']);
    assert.match(all.stdout, /objectclass: .*dirIdpUser/);
    assert.match(all.stdout, /External IdP user identifier: alice@example\.test/);
    const unlink = await dirid(['user-mod', 'alice', '--user-auth-type=password', '--delattr=dirIdpConfigLink=keycloak', '--delattr=dirIdpSub=alice@example.test']);
    assert.equal(unlink.code, 0, unlink.stderr);
    assert.doesNotMatch(unlink.stdout, /External IdP/);
    assert.equal((await dirid(['idp-del', 'keycloak'])).code, 0);
  });

  it("a server's error: exit 2 when what was named does not exist, 1 for any other", async () => {
    const missing = await dirid(['user-show', 'nosuchuser']);
    assert.equal(missing.code, 2, missing.stderr);
    assert.equal(missing.stderr, 'dirid: ERROR: nosuchuser: user not found\n');
    const twice = await dirid(['user-add', 'alice', '--first', 'Alice', '--last', 'Again']);
    assert.equal(twice.code, 1);
    assert.equal(twice.stderr, 'dirid: ERROR: user with name "alice" already exists\n');
    const nothing = await dirid(['user-mod', 'alice', '--first', 'Alice']);
    assert.equal(nothing.code, 1);
    assert.equal(nothing.stderr, 'dirid: ERROR: no modifications to be performed\n');
  });

  it('prompts twice without echo for --secret on a terminal', async () => {
    const script = `node ${DIRID} -c ${conf} idp-add ptyidp --provider github --client-id c --secret`;
    const child = spawn('script', ['-qfec', script, '/dev/null'], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Secret: $/.test(out)) child.stdin.write('pty-secret-9\r');
      if (/Enter Secret again to verify: $/.test(out)) child.stdin.write('pty-secret-9\r');
    });
    const code = await new Promise<number | null>((r) => child.on('exit', r));
    assert.equal(code, 0, out);
    assert.match(out, /Secret: /);
    assert.match(out, /Enter Secret again to verify: /);
    assert.doesNotMatch(out, /pty-secret-9/, 'no echo');
    assert.match(out, /Added IdP reference "ptyidp"/);
  });

  it('keytab-get writes the keytab with -k FILE, --keytab FILE and --keytab=FILE, as its help shows; klist reads it', async () => {
    assert.equal((await runTool('kinit', ['admin'], env, `${realm.adminPassword}\n`)).code, 0);
    assert.equal((await dirid(['service-add', 'HTTP/kt.example.test', '--force'])).code, 0);
    assert.match((await dirid(['keytab-get', '--help'])).stdout, /-k, --keytab=FILE/);
    for (const [i, form] of [['-k'], ['--keytab'], ['--keytab=']].entries()) {
      const file = join(realm.dataDir, `kt${i}.keytab`);
      const args = form[0]!.endsWith('=') ? [`${form[0]}${file}`] : [form[0]!, file];
      const r = await dirid(['keytab-get', 'HTTP/kt.example.test', ...args]);
      assert.equal(r.code, 0, `${form[0]}: ${r.stderr}`);
      const listed = await runTool('klist', ['-k', file], env);
      assert.match(listed.stdout, /HTTP\/kt\.example\.test@EXAMPLE\.TEST/, `${form[0]}: ${listed.stdout}${listed.stderr}`);
    }
    const missing = await dirid(['keytab-get', 'HTTP/kt.example.test', '--keytab']);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /--keytab option requires an argument/);
  });

  it('ping --server HOST chooses the server', async () => {
    const deadConf = join(realm.dataDir, 'dead.conf');
    writeFileSync(deadConf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, 'xmlrpc_uri = https://localhost:1/dirid/xml'));
    const r = await runTool(process.execPath, [DIRID, '-c', deadConf, '-v', 'ping', '--server', `localhost:${realm.server.httpsPort}`], { ...env, XDG_CACHE_HOME: join(realm.dataDir, 'cache-srv') });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, new RegExp(`dirid: INFO: trying https://localhost:${realm.server.httpsPort}/dirid/xml`));
    assert.doesNotMatch(r.stderr, /localhost:1\//);
  });

  it('works with a ticket from dirid kinit', async () => {
    const cc = { KRB5CCNAME: `FILE:${join(realm.dataDir, 'dirid.cc')}` };
    assert.equal((await runTool(process.execPath, [DIRID, 'kinit', 'admin'], { ...env, ...cc }, `${realm.adminPassword}\n`)).code, 0);
    const r = await dirid(['ping'], undefined, { ...cc, XDG_CACHE_HOME: join(realm.dataDir, 'cache2') });
    assert.equal(r.code, 0, r.stderr);
  });

  it('refuses a server certificate from another CA: "certificate verification failure"', async () => {
    const other = await createCa('Someone Else');
    const otherConf = join(realm.dataDir, 'other.conf');
    writeFileSync(join(realm.dataDir, 'other-ca.crt'), other.certPem);
    writeFileSync(otherConf, readFileSync(conf, 'utf8').replace(/ca_file = .*/, `ca_file = ${join(realm.dataDir, 'other-ca.crt')}`));
    const r = await runTool(process.execPath, [DIRID, '-c', otherConf, 'ping'], { ...env, XDG_CACHE_HOME: join(realm.dataDir, 'cache3') });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /certificate verification failure/);
  });

  it('says "Cannot contact any KDC for realm" when the KDC is down', async () => {
    const deadKdc = join(realm.dataDir, 'krb5-dead.conf');
    const port = await freeUdpPort();
    writeFileSync(deadKdc, readFileSync(env.KRB5_CONFIG!, 'utf8').replace(/^ *kdc = .*$/m, `  kdc = 127.0.0.1:${port}`));
    const cc = `FILE:${join(realm.dataDir, 'tgt-only.cc')}`;
    assert.equal((await runTool('kinit', ['-c', cc, 'admin'], env, `${realm.adminPassword}\n`)).code, 0);
    const r = await runTool(process.execPath, [DIRID, '-c', conf, 'ping'], { ...env, KRB5_CONFIG: deadKdc, KRB5CCNAME: cc, XDG_CACHE_HOME: join(realm.dataDir, 'cache4') });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Cannot contact any KDC for realm 'EXAMPLE\.TEST'/);
  });

  it('fails over from a dead server to one found through DNS SRV records', async () => {
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', () => r()));
    const deadPort = (dead.address() as { port: number }).port;
    await new Promise<void>((r) => dead.close(() => r()));
    const dns = await startSrvDns([{ name: '_dirid._tcp.example.test', target: 'localhost', port: realm.server.httpsPort }]);
    try {
      const failConf = join(realm.dataDir, 'failover.conf');
      writeFileSync(failConf, readFileSync(conf, 'utf8').replace(/xmlrpc_uri = .*/, `xmlrpc_uri = https://localhost:${deadPort}/dirid/xml`));
      mkdirSync(join(realm.dataDir, 'cache5'), { recursive: true });
      const r = await runTool(process.execPath, [DIRID, '-c', failConf, '-v', 'ping'], { ...env, DIRID_DNS_SERVER: dns.server, XDG_CACHE_HOME: join(realm.dataDir, 'cache5') });
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, new RegExp(`dirid: INFO: trying https://localhost:${deadPort}/dirid/xml`));
      assert.match(r.stderr, new RegExp(`dirid: WARNING: Connection to https://localhost:${deadPort}/dirid/xml failed`));
      assert.match(r.stderr, new RegExp(`dirid: INFO: trying https://localhost:${realm.server.httpsPort}/dirid/xml`));
      assert.match(r.stdout, /dirid server version/);
    } finally {
      dns.stop();
    }
  });
});
