/**
 * `dirid-server init` and `start` as an administrator runs them: the real
 * executables, a temporary data directory, ephemeral ports.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { parseIni } from '../../src/cli/ini.js';
import { RpcSession } from '../support/rpc-client.js';
import { RawLdap } from '../support/ldap-client.js';
import { ExtendedOid, ResultCode } from '../../src/ldap/codes.js';

const BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;

describe('dirid-server init and start', () => {
  let tmp: string;
  let data: string;
  before(() => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-life-'));
    data = join(tmp, 'realm');
    writeFileSync(join(tmp, 'pw'), 'Admin-pass-42\n', { mode: 0o600 });
  });
  after(() => rmSync(tmp, { recursive: true, force: true }));

  const init = (...extra: string[]) =>
    spawnSync(process.execPath, [BIN, 'init', '--data-dir', data, '--realm', 'LIFE.TEST', '--domain', 'life.test', '--hostname', 'ipa.life.test', '--admin-password-file', join(tmp, 'pw'), ...extra], {
      encoding: 'utf8',
    });

  it('creates a realm with a private master key, a CA, a server certificate and client files', () => {
    const r = init();
    assert.equal(r.status, 0, r.stderr);
    assert.equal(statSync(join(data, 'master.key')).mode & 0o777, 0o600);
    assert.equal(statSync(join(data, 'master.key')).size, 32);
    assert.equal(statSync(join(data, 'server.key')).mode & 0o777, 0o600);
    const ca = new X509Certificate(readFileSync(join(data, 'ca.crt')));
    assert.equal(ca.ca, true);
    const cert = new X509Certificate(readFileSync(join(data, 'server.crt')));
    assert.ok(cert.checkIssued(ca));
    assert.ok(cert.verify(ca.publicKey));
    for (const san of ['DNS:ipa.life.test', 'DNS:localhost', 'IP Address:127.0.0.1']) assert.ok(cert.subjectAltName?.includes(san), cert.subjectAltName);
    const conf = parseIni(readFileSync(join(data, 'default.conf'), 'utf8'));
    assert.equal(conf.global?.realm, 'LIFE.TEST');
    assert.equal(conf.global?.xmlrpc_uri, 'https://ipa.life.test/dirid/xml');
    assert.ok(!readFileSync(join(data, 'default.conf'), 'utf8').includes('Admin-pass-42'));
  });

  it('writes client files that name the data directory absolutely when init is given a relative --data-dir', () => {
    const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', 'rel-realm', '--realm', 'REL.TEST', '--domain', 'rel.test', '--hostname', 'localhost', '--admin-password-file', join(tmp, 'pw')], { encoding: 'utf8', cwd: tmp });
    assert.equal(r.status, 0, r.stderr);
    const conf = parseIni(readFileSync(join(tmp, 'rel-realm', 'default.conf'), 'utf8'));
    // the client reads ca_file from wherever default.conf is: a relative path would point nowhere
    assert.equal(conf.global?.ca_file, join(tmp, 'rel-realm', 'ca.crt'));
    assert.match(readFileSync(join(tmp, 'rel-realm', 'krb5.conf'), 'utf8'), new RegExp(`FILE:${join(tmp, 'rel-realm', 'ca.crt').replace(/[.]/g, '\\.')}`));
  });

  it('refuses to overwrite an existing realm', () => {
    const before = readFileSync(join(data, 'master.key'));
    const r = init();
    assert.equal(r.status, 1);
    assert.match(r.stderr, /already holds a realm/);
    assert.deepEqual(readFileSync(join(data, 'master.key')), before);
  });

  it('rejects bad arguments with a clear message', () => {
    const r = spawnSync(process.execPath, [BIN, 'init', '--data-dir', join(tmp, 'x'), '--realm', 'lower', '--domain', 'x.test', '--admin-password-file', join(tmp, 'pw')], { encoding: 'utf8' });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /dirid-server: ERROR: invalid realm/);
    assert.equal(existsSync(join(tmp, 'x', 'master.key')), false);
    const u = spawnSync(process.execPath, [BIN, 'start', '--bogus'], { encoding: 'utf8' });
    assert.equal(u.status, 1);
  });

  it('starts on a free port, writes it back, serves, and stops cleanly on SIGTERM', async () => {
    const child = spawn(process.execPath, [BIN, 'start', '--data-dir', data, '--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 15000);
      child.once('exit', (c) => {
        clearTimeout(t);
        reject(new Error(`server exited with ${c}: ${out}`));
      });
      child.stdout.on('data', () => {
        const m = / service=https url=https:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
        if (m && / server started /.test(out)) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
    });
    assert.ok(port > 0);
    const ldaps = / service=ldaps url=ldaps:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
    assert.ok(ldaps, out);
    const c = await RawLdap.connect(Number(ldaps[1]), readFileSync(join(data, 'ca.crt'), 'utf8'));
    c.send({ messageId: 1, protocolOp: { op: 'extendedReq', requestName: ExtendedOid.whoAmI } });
    const who = await c.next();
    assert.equal(who?.protocolOp.op === 'extendedResp' && who.protocolOp.resultCode, ResultCode.success);
    c.close();
    // the ports chosen are logged, not written back: server.conf keeps the configured ones
    assert.match(readFileSync(join(data, 'server.conf'), 'utf8'), /^ldap_port\s*=\s*389$/m);
    const conf = parseIni(readFileSync(join(data, 'default.conf'), 'utf8'));
    assert.equal(conf.global?.xmlrpc_uri, `https://ipa.life.test:${port}/dirid/xml`);
    const s = new RpcSession(`https://localhost:${port}`, readFileSync(join(data, 'ca.crt'), 'utf8'));
    assert.equal((await s.login('admin', 'Admin-pass-42')).status, 200);
    assert.match((await s.call('ping')).summary, /^dirid server version /);
    const code = await new Promise<number | null>((resolve) => {
      child.on('exit', (c) => resolve(c));
      child.kill('SIGTERM');
    });
    assert.equal(code, 0, out);
    assert.match(out, / server stopped realm=/);
  });
});
