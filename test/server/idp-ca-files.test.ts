/**
 * The CAs a server trusts for IdP endpoints (src/server/idp-ca.ts):
 * `--idp-ca-file` given several times trusts every file, as does
 * server.conf's idp_ca_file listing several; a missing file or one holding
 * no PEM certificate (a key, a password file) stops the start with a
 * message naming it, before anything listens.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { initRealm } from '../../src/server/init.js';
import { startServer } from '../../src/server/start.js';
import { createCa, issueServerCert } from '../../src/server/pki.js';
import { OAuthError } from '../../src/oauth/types.js';

const BIN = new URL('../../bin/dirid-server.js', import.meta.url).pathname;
const PORTS = { listen: '127.0.0.1', httpsPort: 0, httpPort: 0, kdcPort: 0, kpasswdPort: 0, ldapPort: 0, ldapsPort: 0 };
const PORT_ARGS = ['--listen', '127.0.0.1', '--https-port', '0', '--http-port', '0', '--kdc-port', '0', '--kpasswd-port', '0', '--ldap-port', '0', '--ldaps-port', '0'];

describe('the IdP CA files of a server', () => {
  let tmp: string;
  let data: string;
  const idps: { url: string; caFile: string; server: Server }[] = [];
  before(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dirid-idp-ca-'));
    data = join(tmp, 'realm');
    await initRealm({ dataDir: data, realm: 'CA.TEST', domain: 'ca.test', hostname: 'localhost', adminPassword: 'Admin-pass-42' });
    for (const name of ['one', 'two']) {
      const ca = await createCa(`IdP ${name} CA`);
      const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
      const server = createServer({ key: tls.keyPem, cert: tls.certPem }, (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
      const caFile = join(tmp, `${name}-ca.pem`);
      writeFileSync(caFile, ca.certPem);
      idps.push({ url: `https://localhost:${(server.address() as AddressInfo).port}/`, caFile, server });
    }
  });
  after(() => {
    for (const { server } of idps) {
      server.closeAllConnections();
      server.close();
    }
    rmSync(tmp, { recursive: true, force: true });
  });

  /** Whether the server's IdP client reaches each IdP over a trusted connection. */
  async function trusted(fetch: (url: string) => Promise<Response>): Promise<boolean[]> {
    return Promise.all(
      idps.map(async ({ url }) => {
        try {
          return (await fetch(url)).status === 200;
        } catch (e) {
          assert.ok(e instanceof OAuthError || e instanceof Error);
          return false;
        }
      }),
    );
  }

  it('trusts every --idp-ca-file given, not only the last', async () => {
    const server = await startServer({ dataDir: data, ...PORTS, log: () => {}, idpCaFile: idps.map((i) => i.caFile) });
    try {
      assert.deepEqual(await trusted((u) => server.idp.fetch(u)), [true, true]);
    } finally {
      await server.stop();
    }
    const one = await startServer({ dataDir: data, ...PORTS, log: () => {}, idpCaFile: idps[1]!.caFile });
    try {
      assert.deepEqual(await trusted((u) => one.idp.fetch(u)), [false, true]);
    } finally {
      await one.stop();
    }
  });

  it('trusts every file server.conf idp_ca_file lists, separated by commas', async () => {
    const conf = readFileSync(join(data, 'server.conf'), 'utf8');
    try {
      appendFileSync(join(data, 'server.conf'), `idp_ca_file = ${idps[0]!.caFile}, ${idps[1]!.caFile}\n`);
      const server = await startServer({ dataDir: data, ...PORTS, log: () => {} });
      try {
        assert.deepEqual(server.config.idpCaFiles, [idps[0]!.caFile, idps[1]!.caFile]);
        assert.deepEqual(await trusted((u) => server.idp.fetch(u)), [true, true]);
      } finally {
        await server.stop();
      }
    } finally {
      writeFileSync(join(data, 'server.conf'), conf, { mode: 0o600 });
    }
  });

  it('refuses to start on a missing file or one without a certificate, naming it', () => {
    const pw = join(tmp, 'admin.pw');
    writeFileSync(pw, 'Admin-pass-42\n', { mode: 0o600 });
    const missing = join(tmp, 'no-such-ca.pem');
    const cases: [string[], RegExp][] = [
      // given before a good file: with the last one winning it went unnoticed
      [[missing, idps[0]!.caFile], new RegExp(`--idp-ca-file ${missing}: cannot read the IdP CA certificates \\(no such file\\)`)],
      [[idps[0]!.caFile, join(data, 'server.key')], new RegExp(`--idp-ca-file ${join(data, 'server.key')}: holds no PEM certificate \\(it holds a private key\\)`)],
      [[pw, idps[1]!.caFile], new RegExp(`--idp-ca-file ${pw}: holds no PEM certificate; give the IdP's CA certificate`)],
    ];
    for (const [files, message] of cases) {
      const r = spawnSync(process.execPath, [BIN, 'start', '--data-dir', data, ...PORT_ARGS, ...files.flatMap((f) => ['--idp-ca-file', f])], { encoding: 'utf8', timeout: 15_000 });
      assert.equal(r.status, 1, `${files.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, message);
      assert.doesNotMatch(r.stderr, /ENOENT/);
      assert.doesNotMatch(r.stdout, /listening/);
    }
  });

  it('names server.conf when its idp_ca_file is the one that is wrong', async () => {
    const conf = readFileSync(join(data, 'server.conf'), 'utf8');
    const missing = join(tmp, 'gone.pem');
    try {
      appendFileSync(join(data, 'server.conf'), `idp_ca_file = ${idps[0]!.caFile}, ${missing}\n`);
      await assert.rejects(startServer({ dataDir: data, ...PORTS, log: () => {} }), (e: unknown) => e instanceof Error && e.message === `${join(data, 'server.conf')}: idp_ca_file ${missing}: cannot read the IdP CA certificates (no such file)`);
    } finally {
      writeFileSync(join(data, 'server.conf'), conf, { mode: 0o600 });
    }
  });

  it('start --help says --idp-ca-file may be given several times', () => {
    const r = spawnSync(process.execPath, [BIN, 'start', '--help'], { encoding: 'utf8' });
    assert.equal(r.status, 0);
    assert.match(r.stdout, /\[--idp-ca-file PEM\]\.\.\./);
    assert.match(r.stdout, /every file is trusted/);
  });
});
