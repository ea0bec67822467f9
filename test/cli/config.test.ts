/**
 * Client configuration files: -c FILE, the default locations (later files
 * win), defaults for ca_file and domain, and clear errors for missing or
 * invalid configuration.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheDir, loadClientConfig } from '../../src/cli/config.js';
import { CliError } from '../../src/cli/errors.js';

describe('client configuration', () => {
  let dir: string;
  const savedHome = process.env.HOME;
  const write = (name: string, text: string) => {
    const f = join(dir, name);
    mkdirSync(join(f, '..'), { recursive: true });
    writeFileSync(f, text);
    return f;
  };
  const fails = (f: () => unknown, message: string) => assert.throws(f, (e: unknown) => e instanceof CliError && e.exitCode === 1 && e.message === message);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dirid-conf-'));
  });
  after(() => {
    process.env.HOME = savedHome;
    rmSync(dir, { recursive: true, force: true });
  });

  it('-c FILE: keys of [global], ca.crt next to the file, domain from the realm', () => {
    const f = write('a/default.conf', '# client\n[global]\nxmlrpc_uri = https://ipa.example.test:8443/dirid/xml\nrealm = EXAMPLE.TEST\nserver = ipa.example.test\n');
    assert.deepEqual(loadClientConfig(f, {}), {
      xmlrpcUri: 'https://ipa.example.test:8443/dirid/xml',
      realm: 'EXAMPLE.TEST',
      domain: 'example.test',
      server: 'ipa.example.test',
      caFile: join(dir, 'a', 'ca.crt'),
      source: f,
    });
  });
  it('ca_file relative to the file; dns_server, overridden by DIRID_DNS_SERVER', () => {
    const f = write('b/default.conf', '[global]\nxmlrpc_uri = https://h.test/dirid/xml\nrealm = R.TEST\ndomain = other.test\nca_file = certs/ca.pem\ndns_server = 127.0.0.1:5353\n');
    const c = loadClientConfig(f, {});
    assert.equal(c.caFile, join(dir, 'b', 'certs', 'ca.pem'));
    assert.equal(c.domain, 'other.test');
    assert.equal(c.dnsServer, '127.0.0.1:5353');
    assert.equal(loadClientConfig(f, { DIRID_DNS_SERVER: '127.0.0.1:53' }).dnsServer, '127.0.0.1:53');
  });
  it('~/.dirid/default.conf when there is no -c', () => {
    process.env.HOME = join(dir, 'home');
    fails(() => loadClientConfig(undefined, {}), `no client configuration: create /etc/dirid/default.conf or ${join(dir, 'home', '.dirid', 'default.conf')}, or use -c FILE`);
    write('home/.dirid/default.conf', '[global]\nxmlrpc_uri = https://home.test/dirid/xml\nrealm = HOME.TEST\n');
    const c = loadClientConfig(undefined, {});
    assert.equal(c.xmlrpcUri, 'https://home.test/dirid/xml');
    assert.equal(c.caFile, join(dir, 'home', '.dirid', 'ca.crt'));
  });
  it('clear errors: missing file, bad syntax, missing keys, not https', () => {
    fails(() => loadClientConfig(join(dir, 'nope.conf'), {}), `cannot read the configuration file ${join(dir, 'nope.conf')}: no such file`);
    const bad = write('c/bad.conf', '[global]\nxmlrpc_uri https://x\n');
    fails(() => loadClientConfig(bad, {}), `${bad}, line 2: expected "key = value" or "[section]"`);
    const noRealm = write('c/norealm.conf', '[global]\nxmlrpc_uri = https://x.test/dirid/xml\n');
    fails(() => loadClientConfig(noRealm, {}), `${noRealm}: missing "realm" in [global]`);
    const http = write('c/http.conf', '[global]\nxmlrpc_uri = http://x.test/dirid/xml\nrealm = X\n');
    fails(() => loadClientConfig(http, {}), `${http}: xmlrpc_uri must be an https:// URL with a host`);
    const notUrl = write('c/noturl.conf', '[global]\nxmlrpc_uri = x.test\nrealm = X\n');
    fails(() => loadClientConfig(notUrl, {}), `${notUrl}: xmlrpc_uri is not a URL`);
  });
  it('cache directory: $XDG_CACHE_HOME/dirid when absolute, else ~/.cache/dirid', () => {
    process.env.HOME = join(dir, 'home');
    assert.equal(cacheDir({ XDG_CACHE_HOME: '/var/tmp/xdg' }), '/var/tmp/xdg/dirid');
    assert.equal(cacheDir({ XDG_CACHE_HOME: 'relative' }), join(dir, 'home', '.cache', 'dirid'));
    assert.equal(cacheDir({}), join(dir, 'home', '.cache', 'dirid'));
  });
});
