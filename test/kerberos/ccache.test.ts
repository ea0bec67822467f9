/**
 * Credential caches: MIT-written files (v4 and v3, with fast_avail and
 * pa_type config entries) parse and re-serialise byte for byte; a cache we
 * write is listed by MIT klist, config entries included; names resolve
 * like KRB5CCNAME; damaged files raise CcacheError.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CcacheError, configEntries, configEntry, CONF_REALM, kdcTimeOffset, loadCcacheFile, readCcache, resolveCcacheName, saveCcacheFile, writeCcache, type Ccache } from '../../src/kerberos/ccache.js';
import { decodeTicket } from '../../src/kerberos/asn1/ticket.js';

const mit = (name: string) => readFileSync(new URL(`../data/kerberos/mit/${name}`, import.meta.url));

describe('MIT-written ccaches', () => {
  for (const file of ['alice.ccache', 'alice-fast.ccache', 'armor.ccache', 'bob-sha384.ccache', 'alice-v3.ccache']) {
    it(`${file} round-trips byte for byte`, () => {
      const raw = mit(file);
      const cc = readCcache(raw);
      assert.deepEqual(writeCcache(cc), raw);
      for (const c of cc.credentials.filter((x) => x.server.realm !== CONF_REALM)) assert.equal(decodeTicket(c.ticket).realm, 'EXAMPLE.TEST');
    });
  }

  it('alice.ccache: principal, TGT then service ticket, config entries, KDC time offset', () => {
    const cc = readCcache(mit('alice.ccache'));
    assert.equal(cc.version, 4);
    assert.deepEqual(cc.principal, { nameType: 1, realm: 'EXAMPLE.TEST', components: ['alice'] });
    const real = cc.credentials.filter((c) => c.server.realm !== CONF_REALM);
    assert.deepEqual(real.map((c) => c.server.components.join('/')), ['krbtgt/EXAMPLE.TEST', 'HTTP/server.example.test']);
    const tgt = real[0]!;
    assert.ok(tgt.endtime > tgt.authtime && tgt.renewTill > tgt.endtime);
    assert.ok([17, 18, 19, 20].includes(tgt.key.etype));
    assert.equal(tgt.isSkey, false);
    const conf = configEntries(cc);
    assert.deepEqual(conf.map((e) => [e.name, e.principal, e.value.toString()]).sort(), [
      ['fast_avail', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST', 'yes'],
      ['pa_type', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST', '2'],
    ]);
    assert.ok(kdcTimeOffset(cc), 'kinit records the KDC time offset header');
  });

  it('the FAST login records pa_type 138 (encrypted challenge)', () => {
    const pa = configEntries(readCcache(mit('alice-fast.ccache'))).find((e) => e.name === 'pa_type');
    assert.equal(pa?.value.toString(), '138');
  });

  it('version 3: no header, same credentials', () => {
    const cc = readCcache(mit('alice-v3.ccache'));
    assert.equal(cc.version, 3);
    assert.deepEqual(cc.headers, []);
    assert.deepEqual(cc.principal.components, ['alice']);
  });

  it('every truncation of a ccache is a CcacheError', () => {
    const raw = mit('alice.ccache');
    for (let len = 0; len < raw.length; len++) {
      try {
        // only a cut exactly between two credentials is a valid, shorter ccache
        assert.deepEqual(writeCcache(readCcache(raw.subarray(0, len))), raw.subarray(0, len), `cut at ${len}`);
      } catch (e) {
        assert.ok(e instanceof CcacheError, String(e));
      }
    }
    assert.throws(() => readCcache(Buffer.from('0505', 'hex')), CcacheError);
    assert.throws(() => readCcache(Buffer.from('0504ffff', 'hex')), CcacheError);
  });
});

describe('ccaches we write, read by MIT klist', () => {
  const klist = (args: string[]) => spawnSync('klist', args, { encoding: 'utf8', env: { ...process.env, KRB5_CONFIG: '/dev/null' } });

  it('klist lists our principals and klist -C our config entries', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ccache-test-'));
    try {
      const src = readCcache(mit('alice-fast.ccache'));
      const client = { nameType: 1, realm: 'EXAMPLE.TEST', components: ['carol'] };
      const cc: Ccache = {
        version: 4,
        headers: src.headers,
        principal: client,
        credentials: [
          configEntry(client, 'fast_avail', 'yes', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST'),
          configEntry(client, 'pa_type', '152', 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST'),
          ...src.credentials.filter((c) => c.server.realm !== CONF_REALM).map((c) => ({ ...c, client })),
        ],
      };
      const path = join(dir, 'cc');
      saveCcacheFile(path, cc);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.deepEqual(loadCcacheFile(path), cc);
      const out = klist(['-C', '-c', `FILE:${path}`]);
      assert.equal(out.status, 0, out.stderr);
      assert.match(out.stdout, /Default principal: carol@EXAMPLE\.TEST/);
      assert.match(out.stdout, /krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST/);
      assert.match(out.stdout, /HTTP\/server\.example\.test@/);
      assert.match(out.stdout, /config: fast_avail\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = yes/);
      assert.match(out.stdout, /config: pa_type\(krbtgt\/EXAMPLE\.TEST@EXAMPLE\.TEST\) = 152/);
      const v3 = join(dir, 'cc3');
      saveCcacheFile(v3, { ...cc, version: 3, headers: [] });
      const out3 = klist(['-c', `FILE:${v3}`]);
      assert.equal(out3.status, 0, out3.stderr);
      assert.match(out3.stdout, /Default principal: carol@EXAMPLE\.TEST/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ccache names', () => {
  it('FILE: prefix, plain paths, the default, and unsupported types', () => {
    assert.equal(resolveCcacheName('FILE:/tmp/x'), '/tmp/x');
    assert.equal(resolveCcacheName('/tmp/y'), '/tmp/y');
    assert.equal(resolveCcacheName(undefined, 1234), '/tmp/krb5cc_1234');
    assert.equal(resolveCcacheName('', 7), '/tmp/krb5cc_7');
    for (const n of ['KEYRING:persistent:0', 'KCM:', 'MEMORY:x', 'DIR:/tmp/d', 'API:']) assert.throws(() => resolveCcacheName(n), (e: Error) => e instanceof CcacheError && /not supported/.test(e.message));
    assert.throws(() => loadCcacheFile('/nonexistent/ccache'), CcacheError);
  });
});
