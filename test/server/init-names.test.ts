/**
 * The server's certificate names every name hosts reach it by
 * (server/cert-names.ts): `init --san` names and addresses besides the
 * realm's hostname, the machine's name and its network addresses; a TLS
 * client that checks the name it dialled (curl over HTTPS, OpenSSL over
 * LDAP StartTLS as SSSD does) is satisfied by each. A realm whose hostname
 * no other host can reach (`--hostname localhost`, as the quickstart
 * makes) is said in words at init, on standard error.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { startServer, type RunningServer } from '../../src/server/start.js';
import { runTool } from '../support/mit-tools.js';

const SERVER = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
const PASSWORD = 'Secret123-admin';

describe('the names of the server certificate', () => {
  const dirs: string[] = [];
  let server: RunningServer | undefined;
  after(async () => {
    await server?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const tmp = () => {
    const d = mkdtempSync(join(tmpdir(), 'dirid-names-'));
    dirs.push(d);
    return d;
  };

  it('carries every --san, and clients checking those names connect over HTTPS and LDAP StartTLS', async () => {
    const data = join(tmp(), 'realm');
    const log: string[] = [];
    await initRealm({ dataDir: data, realm: 'EXAMPLE.TEST', domain: 'example.test', hostname: 'dirid.example.test', adminPassword: PASSWORD, sans: ['LDAP.example.test', '192.0.2.7'] }, (l) => log.push(l));
    assert.ok(!log.some((l) => l.includes('WARNING')), log.join('\n'));
    const san = new X509Certificate(readFileSync(join(data, 'server.crt'))).subjectAltName ?? '';
    for (const name of ['DNS:dirid.example.test', 'DNS:ldap.example.test', 'IP Address:192.0.2.7', 'DNS:localhost', 'IP Address:127.0.0.1']) assert.ok(san.includes(name), `${name} in ${san}`);
    // the machine's own addresses, by which hosts on its networks reach it
    for (const a of Object.values(networkInterfaces()).flatMap((l) => l ?? []).filter((a) => !a.internal && a.family === 'IPv4')) assert.ok(san.includes(`IP Address:${a.address}`), `${a.address} in ${san}`);
    server = await startServer({ dataDir: data, listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0, log: () => {} });
    const ca = join(data, 'ca.crt');
    for (const name of ['dirid.example.test', 'ldap.example.test']) {
      const https = await runTool('curl', ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '--cacert', ca, '--resolve', `${name}:${server.httpsPort}:127.0.0.1`, `https://${name}:${server.httpsPort}/dirid/`], {});
      assert.equal(https.code, 0, `${name}: ${https.stderr}`);
      assert.equal(https.stdout, '200');
      const starttls = await runTool('openssl', ['s_client', '-starttls', 'ldap', '-connect', `127.0.0.1:${server.ldapPort}`, '-servername', name, '-verify_hostname', name, '-CAfile', ca, '-verify_return_error', '-brief'], {}, '');
      assert.equal(starttls.code, 0, `${name}: ${starttls.stderr}`);
      assert.match(starttls.stderr, /Verification: OK/);
    }
    // a name the certificate does not carry fails, as SSSD's StartTLS would
    const other = await runTool('openssl', ['s_client', '-starttls', 'ldap', '-connect', `127.0.0.1:${server.ldapPort}`, '-verify_hostname', 'elsewhere.example.test', '-CAfile', ca, '-verify_return_error', '-brief'], {}, '');
    assert.notEqual(other.code, 0);
  });

  it('init --hostname localhost says that no other host can reach the realm, on standard error', () => {
    const dir = tmp();
    const pw = join(dir, 'pw');
    writeFileSync(pw, `${PASSWORD}\n`, { mode: 0o600 });
    const args = ['init', '--data-dir', join(dir, 'realm'), '--realm', 'DEMO.TEST', '--domain', 'demo.test', '--hostname', 'localhost', '--admin-password-file', pw, '--san', 'demo.example.test'];
    const r = spawnSync(process.execPath, [SERVER, ...args], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stderr, /^dirid-server: WARNING: the realm names this server "localhost" in krb5\.conf, sssd\.conf and default\.conf \(the certificate also names demo\.example\.test\): no other host can reach it by that name, so no host can join this realm/m);
    assert.match(r.stderr, /run init with --hostname set to the name they reach this server by/);
    assert.ok(!r.stdout.includes('WARNING'));
    assert.ok(new X509Certificate(readFileSync(join(dir, 'realm', 'server.crt'))).subjectAltName?.includes('DNS:demo.example.test'));
    const bad = spawnSync(process.execPath, [SERVER, ...args.slice(0, 2), join(dir, 'other'), ...args.slice(3, -1), 'not a name!'], { encoding: 'utf8', timeout: 20_000 });
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /invalid --san 'not a name!': give a host name or an IP address/);
  });
});
