/**
 * Server discovery (specification §4): xmlrpc_uri first, `--server HOST`,
 * then SRV records by priority and RFC 2782 weighted random order, looked
 * up only when the first server failed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { SrvRecord } from 'node:dns';
import { firstServerUrl, orderSrv, serverCandidates, srvServerUrls, type SrvLookup } from '../../src/cli/discovery.js';
import type { ClientConfig } from '../../src/cli/config.js';
import { CliError } from '../../src/cli/errors.js';

const rec = (name: string, priority: number, weight: number, port = 443): SrvRecord => ({ name, priority, weight, port });
/** a sequence of "random" numbers, in order */
const seq = (...xs: number[]) => () => {
  const x = xs.shift();
  assert.ok(x !== undefined, 'more random numbers drawn than expected');
  return x;
};

describe('orderSrv (RFC 2782)', () => {
  it('lower priority first, whatever the weights', () => {
    const out = orderSrv([rec('c', 20, 100), rec('a', 0, 0), rec('b', 10, 5)], () => 0.5);
    assert.deepEqual(out.map((r) => r.name), ['a', 'b', 'c']);
  });
  it('within a priority, the running sum of weights chooses', () => {
    // weights 10, 30, 60 → total 100; 0.35*100 = 35 falls in b's range (10..40]
    const records = [rec('a', 0, 10), rec('b', 0, 30), rec('c', 0, 60)];
    // then a, c remain (total 70): 0.9*70 = 63 → c; then a alone
    assert.deepEqual(orderSrv(records, seq(0.35, 0.9, 0)).map((r) => r.name), ['b', 'c', 'a']);
    assert.deepEqual(orderSrv(records, seq(0, 0, 0)).map((r) => r.name), ['a', 'b', 'c']);
    assert.deepEqual(orderSrv(records, seq(0.99, 0.99, 0)).map((r) => r.name), ['c', 'b', 'a']);
  });
  it('weight is proportional over many draws', () => {
    let state = 12345;
    const lcg = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    const firsts = { heavy: 0, light: 0 };
    for (let i = 0; i < 4000; i++) firsts[orderSrv([rec('light', 1, 1), rec('heavy', 1, 3)], lcg)[0]!.name as 'heavy' | 'light']++;
    const share = firsts.heavy / 4000;
    assert.ok(share > 0.7 && share < 0.8, `heavy first in ${share} of draws, expected about 0.75`);
  });
  it('zero weights: all records still come out, each once', () => {
    const out = orderSrv([rec('a', 0, 0), rec('b', 0, 0), rec('c', 0, 5)], Math.random);
    assert.deepEqual(out.map((r) => r.name).sort(), ['a', 'b', 'c']);
  });
});

const conf: ClientConfig = { xmlrpcUri: 'https://ipa1.example.test:8443/dirid/xml', realm: 'EXAMPLE.TEST', domain: 'example.test', caFile: '/nonexistent/ca.crt', source: 'test' };

function fakeDns(records: Record<string, SrvRecord[]>): SrvLookup & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async resolveSrv(name) {
      asked.push(name);
      const r = records[name];
      if (!r) throw Object.assign(new Error('queryNotFound'), { code: 'ENOTFOUND' });
      return r;
    },
  };
}

describe('server candidates', () => {
  it('--server HOST keeps the configured port and path; HOST:PORT picks a port', () => {
    assert.equal(firstServerUrl(conf), 'https://ipa1.example.test:8443/dirid/xml');
    assert.equal(firstServerUrl(conf, 'ipa2.example.test'), 'https://ipa2.example.test:8443/dirid/xml');
    assert.equal(firstServerUrl(conf, 'ipa2.example.test:9443'), 'https://ipa2.example.test:9443/dirid/xml');
    assert.equal(firstServerUrl(conf, '[::1]:9443'), 'https://[::1]:9443/dirid/xml');
    assert.equal(firstServerUrl({ xmlrpcUri: 'https://a.test/dirid/xml' }, 'b.test'), 'https://b.test/dirid/xml');
    for (const bad of ['evil.test/x', 'user@host', 'a b', '']) assert.throws(() => firstServerUrl(conf, bad), CliError, bad);
  });
  it('SRV: _dirid._tcp (its ports) before _ldap._tcp (the API port), no duplicates, "." skipped', async () => {
    const dns = fakeDns({
      '_dirid._tcp.example.test': [rec('ipa3.example.test.', 10, 0, 7443), rec('ipa2.example.test.', 0, 0, 443)],
      '_ldap._tcp.example.test': [rec('ipa2.example.test.', 0, 0, 389), rec('ldap.example.test.', 0, 0, 389), rec('.', 5, 0, 389)],
    });
    assert.deepEqual(await srvServerUrls(conf, dns), ['https://ipa2.example.test/dirid/xml', 'https://ipa3.example.test:7443/dirid/xml', 'https://ipa2.example.test:8443/dirid/xml', 'https://ldap.example.test:8443/dirid/xml']);
    assert.deepEqual(dns.asked, ['_dirid._tcp.example.test', '_ldap._tcp.example.test']);
  });
  it('DNS is asked only when a second server is wanted; --server is never failed over', async () => {
    const dns = fakeDns({ '_dirid._tcp.example.test': [rec('ipa1.example.test', 0, 0, 8443), rec('ipa2.example.test', 0, 0, 8443)] });
    const it1 = serverCandidates(conf, undefined, dns);
    assert.equal((await it1.next()).value, 'https://ipa1.example.test:8443/dirid/xml');
    assert.deepEqual(dns.asked, []);
    assert.equal((await it1.next()).value, 'https://ipa2.example.test:8443/dirid/xml', 'the configured server is not tried twice');
    assert.equal((await it1.next()).done, true);
    const all: string[] = [];
    for await (const u of serverCandidates(conf, 'ipa9.example.test', dns)) all.push(u);
    assert.deepEqual(all, ['https://ipa9.example.test:8443/dirid/xml']);
  });
  it('no records and DNS failures give no extra servers', async () => {
    assert.deepEqual(await srvServerUrls(conf, fakeDns({})), []);
  });
});
