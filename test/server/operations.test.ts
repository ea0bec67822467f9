/**
 * Running dirid-server as a service (issue 33, docs/operations.md), on a
 * server process of its own:
 * - GET /dirid/health answers without login (curl over HTTPS): the version,
 *   the store, every listener;
 * - GET /dirid/metrics is Prometheus text with what MIT kinit, API calls,
 *   ldapsearch and a device-flow login did (requests, outcomes and latency
 *   per KDC exchange, API command and LDAP operation, IdP outcomes per
 *   reference, store latency), served to server.conf's metrics_allow
 *   networks only: from 127.0.0.2 it is refused while 127.0.0.1 is allowed;
 * - SIGHUP reads server.conf again: the IdP CA file read again (idp-check
 *   fails before, passes after the file holds the IdP's CA), the hold time
 *   and metrics_allow applied, a port change named as needing a restart; a
 *   server.conf that does not read changes nothing and the server serves on;
 * - log lines reach standard output one line per event (a line break inside
 *   a value is escaped); SIGHUP applies a changed log_format (JSON lines
 *   from the next line on).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { createCa } from '../../src/server/pki.js';
import { dataPaths, readServerConfig, writeServerConfig } from '../../src/server/config.js';
import { createLogger, errorFields } from '../../src/log/logger.js';
import { lineSink } from '../../src/log/sink.js';
import { parseTextLine } from '../support/log-lines.js';
import { hostArmor, runTool } from '../support/mit-tools.js';
import { idpReference, startTestIdp, type TestIdp } from '../support/oidc-idp.js';
import { kinitViaIdp } from '../support/pty.js';
import { ADMIN_PASSWORD, addActiveUser } from '../support/realm.js';
import { RpcSession } from '../support/rpc-client.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

function curl(args: string[]): { status: number; body: string } {
  const r = spawnSync('curl', ['-sS', '-w', '\n%{http_code}', ...args], { encoding: 'utf8', timeout: 20_000 });
  const cut = r.stdout.lastIndexOf('\n');
  return { status: Number(r.stdout.slice(cut + 1)), body: r.stdout.slice(0, cut) };
}

/** The value of one series in a Prometheus text exposition (undefined when absent). */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) if (line.startsWith(series + ' ')) return Number(line.slice(series.length + 1));
  return undefined;
}

describe('dirid-server as a service: health, metrics, reload, log lines', () => {
  let tmp: string;
  let idp: TestIdp;
  let server: ServerProcess;
  let caPem: string;
  const realmDir = () => join(tmp, 'realm');
  const caFile = () => join(tmp, 'idp-ca.pem');
  const url = (path: string) => `https://localhost:${server.port}${path}`;
  const tls = () => ['--cacert', join(realmDir(), 'ca.crt')];
  let admin: RpcSession;

  /** SIGHUP, then the server's `reload` line (docs/operations.md), its time left out */
  const hup = async (expect: RegExp): Promise<string> => {
    const before = server.out().length;
    server.child.kill('SIGHUP');
    for (let i = 0; i < 200; i++) {
      const m = /^\S+ (server reload [^\n]*)$|^(\{"time[^\n]*"event":"reload"[^\n]*)$/m.exec(server.out().slice(before));
      if (m) {
        const line = m[1] ?? m[2]!;
        assert.match(line, expect);
        return line;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.fail(`no reload line: ${server.out().slice(before)}`);
  };

  const editConf = (edit: (text: string) => string) => {
    const p = dataPaths(realmDir()).serverConf;
    writeFileSync(p, edit(readFileSync(p, 'utf8')), { mode: 0o600 });
  };

  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-ops-'));
    const ca = await createCa('Test IdP CA');
    caPem = ca.certPem;
    idp = await startTestIdp({ accounts: ['ida-sub'], ca });
    // server.conf names a CA file that does not (yet) hold the IdP's CA
    writeFileSync(caFile(), (await createCa('Some other CA')).certPem);
    await initRealm({ dataDir: realmDir(), realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'localhost', adminPassword: ADMIN_PASSWORD }, () => {});
    const paths = dataPaths(realmDir());
    writeServerConfig(paths, { ...readServerConfig(paths), idpCaFiles: [caFile()] });
    server = await startServerProcess(realmDir());
    admin = new RpcSession(`https://localhost:${server.port}`, readFileSync(join(realmDir(), 'ca.crt'), 'utf8'));
    assert.equal((await admin.login('admin', ADMIN_PASSWORD)).status, 200);
  });
  after(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      const gone = new Promise((r) => server.child.once('exit', r));
      server.child.kill('SIGTERM');
      await gone;
    }
    await idp?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('GET /dirid/health answers without login: the version, the store and every listener', () => {
    const r = curl([...tls(), url('/dirid/health')]);
    assert.equal(r.status, 200, r.body);
    const h = JSON.parse(r.body);
    assert.equal(h.status, 'ok');
    assert.equal(h.version, JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version);
    assert.equal(h.store, 'ok');
    assert.deepEqual(Object.keys(h.listeners).sort(), ['http', 'https', 'kdc', 'kpasswd', 'ldap', 'ldaps']);
    assert.ok(Object.values(h.listeners).every((v) => v === true));
  });

  it('SIGHUP reads the IdP CA file again, applies the hold time, and names what needs a restart', async () => {
    await admin.call('idp_add', ['corp'], idpReference(idp));
    const check = async () => (await admin.call('idp_check', ['corp'])).result as Array<{ check: string; status: string; message: string }>;
    // not trusted yet: the file holds another CA
    const untrusted = await check();
    assert.ok(untrusted.some((l) => l.status === 'FAIL' && /certificate/i.test(l.message)), JSON.stringify(untrusted));
    writeFileSync(caFile(), caPem);
    editConf((t) => t.replace(/^idp_hold_seconds = .*$/m, 'idp_hold_seconds = 3').replace(/^kdc_port = .*$/m, 'kdc_port = 8888'));
    await hup(/^server reload realm=EXAMPLE\.TEST applied="idp_ca_file \(1 file read again\),idp_hold_seconds 10 -> 3" restart_needed=kdc_port$/);
    const line = (await check()).find((l) => l.check === 'Device authorization')!;
    assert.equal(line.status, 'PASS', line.message);
    // a server.conf that does not read changes nothing; the server serves on
    editConf((t) => t.replace('[server]', '[server]\nno_such_setting = 1'));
    await hup(/^server reload level=warn realm=EXAMPLE\.TEST error=".*unknown setting 'no_such_setting'.*" effect="the settings in force stay"$/);
    editConf((t) => t.replace('no_such_setting = 1\n', ''));
    assert.equal(curl([...tls(), url('/dirid/health')]).status, 200);
  });

  it('GET /dirid/metrics counts KDC exchanges, API commands, LDAP operations, IdP steps per reference and store calls', async () => {
    await addActiveUser(admin, 'alice', 'Alice-pass-1', { first: 'Alice', last: 'L' });
    await admin.call('user_add', ['ida'], { first: 'Ida', last: 'L' });
    await admin.call('user_mod', ['ida'], { user_auth_type: ['idp'], idp: 'corp', idp_user_id: 'ida-sub' });
    await admin.raw('no_such_command', []);
    const env = { KRB5_CONFIG: join(realmDir(), 'krb5.conf'), KRB5CCNAME: `FILE:${join(tmp, 'alice.cc')}` };
    assert.equal((await runTool('kinit', ['alice'], env, 'Alice-pass-1\n')).code, 0);
    const armor = await hostArmor({ dataDir: tmp }, env);
    const k = await kinitViaIdp({ idp, armor, env }, 'ida', 'ida-sub', `FILE:${join(tmp, 'ida.cc')}`);
    assert.equal(k.code, 0, k.out);
    const ldapPort = / service=ldap url=ldap:\/\/127\.0\.0\.1:(\d+)\//.exec(server.out())![1];
    assert.equal((await runTool('ldapsearch', ['-x', '-H', `ldap://127.0.0.1:${ldapPort}`, '-b', '', '-s', 'base', 'namingContexts'], {})).code, 0);

    const r = curl([...tls(), url('/dirid/metrics')]);
    assert.equal(r.status, 200, r.body);
    const m = r.body;
    assert.match(m, /^# TYPE dirid_kdc_requests_total counter$/m);
    assert.ok(sample(m, 'dirid_kdc_requests_total{exchange="AS_REQ",transport="udp",outcome="ISSUE"}')! >= 1, m);
    assert.ok(sample(m, 'dirid_kdc_requests_total{exchange="AS_REQ",transport="udp",outcome="KDC_ERR_PREAUTH_REQUIRED"}')! >= 1);
    assert.ok(sample(m, 'dirid_kdc_request_duration_seconds_count{exchange="AS_REQ"}')! >= 2);
    assert.ok(sample(m, 'dirid_kdc_request_duration_seconds_bucket{le="+Inf",exchange="AS_REQ"}')! >= 2);
    assert.equal(sample(m, 'dirid_idp_requests_total{idp="corp",outcome="started"}'), 1);
    assert.equal(sample(m, 'dirid_idp_requests_total{idp="corp",outcome="authenticated"}'), 1);
    assert.equal(sample(m, 'dirid_idp_pending_device_flows'), 0);
    assert.ok(sample(m, 'dirid_api_requests_total{command="user_add",outcome="ok"}')! >= 2);
    assert.equal(sample(m, 'dirid_api_requests_total{command="unknown",outcome="CommandError"}'), 1);
    assert.ok(sample(m, 'dirid_api_request_duration_seconds_count{command="idp_check"}')! >= 1);
    assert.ok(sample(m, 'dirid_ldap_operations_total{operation="searchRequest",outcome="success"}')! >= 1);
    assert.ok(sample(m, 'dirid_ldap_operation_duration_seconds_count{operation="searchRequest"}')! >= 1);
    assert.ok(sample(m, 'dirid_store_call_duration_seconds_count{call="write"}')! >= 3);
    assert.ok(sample(m, 'dirid_store_call_duration_seconds_count{call="read_secret"}')! >= 1);
  });

  it('serves the metrics to metrics_allow networks only, read again at a reload', async () => {
    const from = (addr: string) => curl(['--interface', addr, ...tls(), url('/dirid/metrics')]);
    assert.equal(from('127.0.0.1').status, 200);
    const refused = from('127.0.0.2');
    assert.equal(refused.status, 403);
    assert.match(refused.body, /metrics_allow/);
    editConf((t) => t.replace('[server]', '[server]\nmetrics_allow = 127.0.0.2/32'));
    await hup(/ applied="[^"]*metrics_allow 127\.0\.0\.2\/32"/);
    assert.equal(from('127.0.0.2').status, 200);
    assert.equal(from('127.0.0.1').status, 403);
    // health stays open to every address
    assert.equal(curl(['--interface', '127.0.0.1', ...tls(), url('/dirid/health')]).status, 200);
  });

  it('writes one line per event: a line break inside a value is escaped', async () => {
    const written: string[] = [];
    const sink = lineSink((t) => written.push(t));
    const log = createLogger({ write: sink.write, component: 'kdc' });
    const boom = new Error('boom');
    boom.stack = 'Error: boom\n    at f (x.js:1:1)';
    log.error('internal_error', errorFields(boom));
    log.info('next');
    await new Promise((r) => setImmediate(r));
    assert.equal(written.length, 1, 'the lines of one turn in one write');
    assert.match(written[0]!, /^\S+ kdc internal_error level=error error=boom stack="Error: boom\\n    at f \(x\.js:1:1\)"\n\S+ kdc next\n$/);
    // and what the server wrote so far: no ANSI escapes, every line as docs/logging.md reads it
    const out = server.out();
    assert.ok(!out.includes('\u001b['));
    for (const line of out.split('\n').filter((l) => /^\d{4}-/.test(l))) parseTextLine(line);
  });

  it('SIGHUP applies a changed log_format: JSON lines from the next line on, text again after', async () => {
    editConf((t) => t.replace('[server]', '[server]\nlog_format = json'));
    const line = await hup(/"event":"reload"/);
    const reload = JSON.parse(line);
    assert.equal(reload.component, 'server');
    assert.ok(reload.applied.includes('log_format text -> json'), line);
    const before = server.out().length;
    await admin.call('ping', []);
    let request: { component: string; event: string; command: string } | undefined;
    for (let i = 0; i < 200 && !request; i++) {
      request = server
        .out()
        .slice(before)
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l))
        .find((j) => j.event === 'request' && j.command === 'ping');
      if (!request) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(request?.component, 'rpc', server.out().slice(before));
    editConf((t) => t.replace('log_format = json\n', ''));
    await hup(/^server reload realm=EXAMPLE\.TEST applied="[^"]*log_format json -> text"( |$)/);
  });
});
