/**
 * The realm PKI (src/server/pki.ts) as TLS clients see it: a server
 * certificate issued by our CA is accepted by Node's https client and by
 * curl with that CA as the only trust anchor, for its DNS name and its IP
 * address, and refused with an unrelated CA. IdP test servers rely on it.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, request, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { createCa, issueServerCert } from '../../src/server/pki.js';

describe('realm PKI', () => {
  let server: Server;
  let port: number;
  let ca: { certPem: string; keyPem: string };
  let unrelated: { certPem: string; keyPem: string };
  let dir: string;
  before(async () => {
    ca = await createCa('PKI test CA');
    unrelated = await createCa('Unrelated CA');
    const tls = await issueServerCert(ca, { commonName: 'localhost', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    server = createServer({ key: tls.keyPem, cert: tls.certPem }, (_req, res) => res.end('hello'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
    dir = mkdtempSync(join(tmpdir(), 'pki-test-'));
    writeFileSync(join(dir, 'ca.pem'), ca.certPem);
    writeFileSync(join(dir, 'unrelated.pem'), unrelated.certPem);
  });
  after(() => {
    server.closeAllConnections();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const nodeGet = (host: string, caPem: string) =>
    new Promise<string>((resolve) => {
      const req = request(`https://${host}:${port}/`, { ca: caPem }, (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve(`ok ${body}`));
      });
      req.on('error', (e: NodeJS.ErrnoException) => resolve(`error ${e.code}`));
      req.end();
    });
  const curl = (caFile: string) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile('curl', ['-sS', '--max-time', '10', '--cacert', caFile, `https://localhost:${port}/`], (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr })),
    );

  it('makes a CA certificate and a server certificate with the expected extensions', () => {
    const c = new X509Certificate(ca.certPem);
    assert.ok(c.ca);
    assert.equal(c.subject, 'CN=PKI test CA');
    const years = (Date.parse(c.validTo) - Date.now()) / (365 * 24 * 3600_000);
    assert.ok(years > 9.9 && years < 10.1, String(years));
    assert.match(ca.keyPem, /^-----BEGIN PRIVATE KEY-----\n/);
  });

  it("is accepted by Node's https client with the CA as the only trust anchor, by name and by IP", async () => {
    assert.equal(await nodeGet('localhost', ca.certPem), 'ok hello');
    assert.equal(await nodeGet('127.0.0.1', ca.certPem), 'ok hello');
    assert.match(await nodeGet('localhost', unrelated.certPem), /^error /);
  });

  it('is accepted by curl --cacert, and refused with an unrelated CA', async () => {
    const good = await curl(join(dir, 'ca.pem'));
    assert.deepEqual(good, { code: 0, out: 'hello' });
    const bad = await curl(join(dir, 'unrelated.pem'));
    assert.equal(bad.code, 60, bad.out); // CURLE_PEER_FAILED_VERIFICATION
  });
});
